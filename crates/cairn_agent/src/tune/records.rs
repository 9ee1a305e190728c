//! What a search reads from and adds to the candidate history (protocol §18): the `measurement`
//! and `attempt` records it writes, the kept measurement that spares a run, and the citation rule
//! that makes an implementation a candidate (a current, strict validation of it as it is).

use cairn_hir::Workspace;

use super::{Candidate, TuneRecord};

/// What a search adds to the candidate history: a `measurement` per candidate measured anew and
/// an `attempt` for the search itself.
pub(super) fn history_records(record: &TuneRecord, base: &str, sizes: &[u64]) -> Vec<crate::history::Record> {
    use serde_json::{Map, Value};
    let measured_now = |c: &&Candidate| c.same_code.is_none() && !c.measured_ns.is_empty() && c.measurement.is_none();
    let mut out: Vec<_> = record
        .candidates
        .iter()
        .filter(measured_now)
        .filter_map(|c| measurement(&record.function, c, base, sizes))
        .collect();
    let mut detail = Map::new();
    detail.insert("by".into(), Value::from("cairn tune"));
    detail.insert("configurations".into(), Value::from(record.space.configurations));
    detail.insert("legal".into(), Value::from(record.space.legal));
    detail.insert("chosen".into(), Value::from(record.chosen.clone()));
    detail.insert("measured_best".into(), serde_json::to_value(&record.fastest).unwrap_or_default());
    detail.insert("ranked".into(), serde_json::to_value(&record.measured_order).unwrap_or_default());
    out.extend(history_record("attempt", &record.function, "search", serde_json::Value::Null, base, detail));
    out
}

/// The `measurement` record of `candidate`'s times at `sizes`.
pub(super) fn measurement(
    function: &str,
    candidate: &Candidate,
    base: &str,
    sizes: &[u64],
) -> Option<crate::history::Record> {
    use serde_json::{Map, Value};
    let mut detail = Map::new();
    detail.insert(
        "procedure".into(),
        Value::from("setup-subtracted wall time of repeated calls, one process at a time on this host; the median of the halving rounds the candidate survived"),
    );
    detail.insert("measured_ns".into(), serde_json::to_value(&candidate.measured_ns).unwrap_or_default());
    detail.insert("sizes".into(), serde_json::to_value(sizes).unwrap_or_default());
    history_record("measurement", function, &candidate.plan, variant_of(candidate), base, detail)
}

/// A record of `kind` about `function`'s candidate `label` (made from `variant`), on this host
/// with this build; `None` when the kind's required details are missing.
pub(super) fn history_record(
    kind: &str,
    function: &str,
    label: &str,
    variant: serde_json::Value,
    base: &str,
    detail: serde_json::Map<String, serde_json::Value>,
) -> Option<crate::history::Record> {
    use crate::history::{Identity, Record, compiler, contract, host_target, now, source};
    let identity = Identity {
        source: source(base, &variant),
        contract: contract(&serde_json::Value::from(
            "a plan changes no result; an implementation holds under its validation",
        )),
        target: host_target(),
        compiler: compiler(),
        artifact: None,
    };
    Record::new(kind, function, label, variant, identity, detail, now()).ok()
}

/// A candidate as its history records name it: its plan's items, or the implementation it
/// selects with that implementation's widened identity.
pub(super) fn variant_of(candidate: &Candidate) -> serde_json::Value {
    use serde_json::{Map, Value};
    let mut variant = Map::new();
    match &candidate.selects {
        Some(symbol) => {
            variant.insert("use".into(), Value::from(symbol.clone()));
            variant.insert("identity".into(), candidate.identity.clone().map(Value::from).unwrap_or(Value::Null));
        }
        None => {
            variant.insert("plan".into(), serde_json::to_value(&candidate.items).unwrap_or_default());
        }
    }
    Value::Object(variant)
}

/// The newest current measurement of `candidate` at `sizes` on this host and build that the
/// history keeps (protocol §18: a kept measurement is free), if any.
pub(super) fn kept_measurement(
    history: &[crate::history::Record],
    function: &str,
    base: &str,
    candidate: &Candidate,
    sizes: &[u64],
) -> Option<Vec<u64>> {
    let variant = variant_of(candidate);
    // Timing runs on this host: its measurements are under the host's target.
    let judged = crate::history::judged(history, function, base, &[], &[crate::history::host_target()]);
    judged
        .current
        .iter()
        .filter(|r| r.kind == "measurement" && r.variant == variant)
        .filter(|r| {
            r.detail.get("sizes").and_then(|s| serde_json::from_value::<Vec<u64>>(s.clone()).ok()).as_deref()
                == Some(sizes)
        })
        .max_by(|a, b| a.at.cmp(&b.at))
        .and_then(|r| serde_json::from_value::<Vec<u64>>(r.detail.get("measured_ns")?.clone()).ok())
        .filter(|times| times.len() == sizes.len())
}

/// The implementations of `item` as validations name them: each implementation, or each instance
/// a `tune` list names.
pub fn implementation_symbols(workspace: &Workspace, item: cairn_hir::Item) -> Vec<String> {
    let db = workspace.db();
    let scope = cairn_hir::Resolver::new(db);
    let mut out = Vec::new();
    for g in cairn_hir::implementations::implementations_of(db, item) {
        let tuned = cairn_hir::implementations::tuned_instances(db, g);
        if tuned.is_empty() {
            out.push(scope.full_name(g).to_string());
        } else {
            out.extend(tuned.into_iter().map(|args| cairn_hir::instance::Instance::new(db, g, args).display(db)));
        }
    }
    out
}

/// The widened identity now of the implementation (instance) `symbol` names.
pub fn current_identity(workspace: &Workspace, symbol: &str) -> Option<String> {
    crate::history::widened_identity(workspace, crate::validate::instance_named(workspace, symbol)?)
}

/// Whether the history holds a current validation of `symbol` against `function` (protocol
/// §18.5's citation rule): a `validation` record of this implementation as it is now (its widened
/// identity), of the function as it is now, by this build, under a policy at least as strict as
/// the default (as many cases, no tolerance looser than exact), and no failure of it kept since.
pub(super) fn validation_holds(
    workspace: &Workspace,
    history: &[crate::history::Record],
    function: &str,
    symbol: &str,
    base: &str,
    accept_emulated: bool,
) -> Result<(), String> {
    let Some(widened) = current_identity(workspace, symbol) else {
        return Err("its identity could not be computed".into());
    };
    // Emulated validations are judged for the emulated targets the history names: current or
    // stale by the same parts, accepted only when asked.
    let mut targets = vec![crate::history::host_target()];
    let emulation = crate::history::emulation_target("");
    for record in history.iter().filter(|r| r.function == function && r.identity.target.starts_with(&emulation)) {
        if !targets.contains(&record.identity.target) {
            targets.push(record.identity.target.clone());
        }
    }
    let judged = crate::history::judged(history, function, base, &[], &targets);
    let about = |r: &crate::history::Record| {
        r.variant.get("identity").and_then(serde_json::Value::as_str) == Some(widened.as_str())
    };
    if judged.current.iter().any(|r| about(r) && r.kind == "failure") {
        return Err("the history keeps a failed validation of it as it is".into());
    }
    // A validation counts only as this toolchain writes one: a passed finite run that ran the
    // implementation, under a policy it can read — anything else in the file is not trusted.
    let strict = |r: &crate::history::Record| {
        let finite = r.detail.get("finite");
        let passed = finite.and_then(|f| f.get("status")).and_then(serde_json::Value::as_str) == Some("passed")
            && finite
                .and_then(|f| f.get("implementation_ran"))
                .and_then(serde_json::Value::as_u64)
                .is_some_and(|n| n > 0);
        let policy =
            r.detail.get("policy").and_then(|p| serde_json::from_value::<crate::validate::Policy>(p.clone()).ok());
        let strict_enough = policy.is_some_and(|p| {
            p.budget >= crate::validate::Policy::default().budget
                && p.tolerance.absolute == 0.0
                && p.tolerance.relative == 0.0
        });
        passed && strict_enough
    };
    let emulated = |r: &crate::history::Record| {
        r.detail.get("evidence").and_then(serde_json::Value::as_str) == Some(crate::validate::FINITE_EMULATED)
    };
    let current: Vec<_> = judged.current.iter().filter(|r| about(r) && r.kind == "validation" && strict(r)).collect();
    match current.iter().find(|r| accept_emulated || !emulated(r)) {
        Some(_) => Ok(()),
        None if !current.is_empty() => Err(
            "its only current validation is finite-tested-emulated (its device code ran on host threads): pass --accept-emulated to choose it anyway, or validate it natively".into(),
        ),
        None => {
            Err(format!("no current validation in the history (run `cairn validate --symbol {symbol} --history …`)"))
        }
    }
}
