//! `cairn.investigation/1` (protocol §7.3): the state of one function's performance work, built
//! from the candidate history as it holds for the function now — what was searched, measured,
//! validated, failed or tried per candidate, the stale records counted by the part that moved and
//! never shown. What `cairn state --symbol F` prints and the MCP `state` tool answers with
//! `symbol`.

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::history::{Record, base_as_written, compiler, host_target, judged};

/// The most candidates an investigation lists.
const CANDIDATES: usize = 24;
/// The most searches it lists.
const SEARCHES: usize = 4;

const TERMS: &str = "Entries hold for the function as it is now, this compiler and this host; records that no longer hold are counted under stale, never shown. Do not re-run what is kept: cite it.";

#[derive(Serialize)]
pub struct Investigation {
    pub protocol: &'static str,
    pub function: String,
    pub signature: String,
    pub effects: Vec<String>,
    pub plan: String,
    pub regions: Vec<RegionEntry>,
    pub identity: IdentityView,
    pub searches: Vec<Map<String, Value>>,
    pub candidates: BTreeMap<String, CandidateEntry>,
    pub not_shown: usize,
    /// Unconfirmed explanations (`cairn tune --compare`): `{candidate, id, at, claim}`, newest first.
    pub hypotheses: Vec<Map<String, Value>>,
    /// Runs that would test them: `{candidate, id, at, run, tests, done}` — done once both compared
    /// candidates have a current measurement at the size the run names.
    pub experiments: Vec<Map<String, Value>>,
    pub stale: Stale,
    pub terms: &'static str,
    pub digest: String,
}

#[derive(Serialize)]
pub struct RegionEntry {
    pub id: String,
    pub kind: &'static str,
    pub binder: String,
}

#[derive(Serialize)]
pub struct IdentityView {
    pub as_written: String,
    pub compiler: String,
    pub targets: BTreeMap<&'static str, String>,
}

#[derive(Serialize, Default)]
pub struct CandidateEntry {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<Map<String, Value>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub validated: Vec<Map<String, Value>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<Map<String, Value>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiled: Vec<Map<String, Value>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tried: Vec<Map<String, Value>>,
}

#[derive(Serialize, Default)]
pub struct Stale {
    pub records: usize,
    pub by_part: BTreeMap<&'static str, usize>,
}

/// A brief record: its id and time, and its detail.
fn brief(record: &Record) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("id".into(), Value::from(record.id.clone()));
    out.insert("at".into(), Value::from(record.at.clone()));
    for (key, value) in &record.detail {
        if key != "analysis" && key != "inner" {
            out.insert(key.clone(), value.clone());
        }
    }
    out
}

/// Whether the experiment `record` (about `A vs B`) was run: both candidates have a current
/// run of the kind it asks — a profile when its run names `--profiler`, else a measurement — at
/// the size its run names (`--at n=SIZE`).
fn experiment_done(record: &Record, current: &[&Record]) -> bool {
    let run = record.detail.get("run").and_then(Value::as_str).unwrap_or_default();
    let kind = if run.contains("--profiler") { "profile" } else { "measurement" };
    let size = run
        .split("--at ")
        .nth(1)
        .and_then(|at| at.split_whitespace().next())
        .and_then(|at| at.rsplit('=').next())
        .and_then(|n| n.parse::<u64>().ok());
    let Some(size) = size else { return false };
    let measured_at = |label: &str| {
        current.iter().any(|r| {
            r.kind == kind
                && r.candidate == label
                && r.detail
                    .get("sizes")
                    .and_then(Value::as_array)
                    .is_some_and(|sizes| sizes.iter().any(|s| s.as_u64() == Some(size)))
        })
    };
    record.candidate.split(" vs ").filter(|l| !l.is_empty()).all(measured_at) && record.candidate.contains(" vs ")
}

/// `cairn.investigation-delta/1` (protocol §7.3): from a saved investigation to `after`, the
/// candidates whose entry changed (`null`: no longer shown) and every other top-level field that
/// changed, whole. Two equal investigations give no candidates and `since == digest`.
pub fn investigation_delta(
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    for (which, value) in [("saved", before), ("current", after)] {
        if value.get("protocol").and_then(Value::as_str) != Some("cairn.investigation/1") {
            return Err(format!("The {which} record is not a cairn.investigation/1."));
        }
    }
    let empty = Map::new();
    let entries = |m: &Map<String, Value>| {
        m.get("candidates").and_then(Value::as_object).cloned().unwrap_or_else(|| empty.clone())
    };
    let (old, new) = (entries(before), entries(after));
    let mut candidates = Map::new();
    for label in old.keys().chain(new.keys()).collect::<std::collections::BTreeSet<_>>() {
        match (old.get(label), new.get(label)) {
            (Some(a), Some(b)) if a == b => {}
            (_, Some(b)) => {
                candidates.insert(label.clone(), b.clone());
            }
            (Some(_), None) => {
                candidates.insert(label.clone(), Value::Null);
            }
            (None, None) => {}
        }
    }
    let mut out = Map::new();
    out.insert("protocol".into(), Value::from("cairn.investigation-delta/1"));
    out.insert("since".into(), before.get("digest").cloned().unwrap_or(Value::Null));
    out.insert("digest".into(), after.get("digest").cloned().unwrap_or(Value::Null));
    out.insert("candidates".into(), Value::Object(candidates));
    for (key, value) in after {
        if !["protocol", "digest", "candidates"].contains(&key.as_str()) && before.get(key) != Some(value) {
            out.insert(key.clone(), value.clone());
        }
    }
    Ok(out)
}

/// The investigation of `item` in the accepted program of `workspace`, from `records`.
pub fn investigation(workspace: &Workspace, item: Item, records: &[Record]) -> Investigation {
    let db = workspace.db();
    let function = cairn_hir::Resolver::new(db).full_name(item).to_string();
    let base = base_as_written(workspace, item).unwrap_or_default();
    let mut judged = judged(records, &function, &base, &[], &[host_target()]);
    // A record about an implementation that changed since (or is gone) is stale by `source`.
    let identities: BTreeMap<String, Option<String>> = crate::tune::implementation_symbols(workspace, item)
        .into_iter()
        .map(|symbol| {
            let identity = crate::tune::current_identity(workspace, &symbol);
            (symbol, identity)
        })
        .collect();
    let holds_variant = |variant: &Value| -> bool {
        let Some(symbol) = variant.get("use").and_then(Value::as_str) else { return true };
        let cited = variant.get("identity").and_then(Value::as_str);
        identities.get(symbol).is_some_and(|now| now.is_some() && now.as_deref() == cited)
    };
    // A comparison's records name both sides: each must hold.
    let holds = |record: &Record| -> bool {
        match &record.variant {
            Value::Array(sides) => sides.iter().all(holds_variant),
            variant => holds_variant(variant),
        }
    };
    let (holding, moved): (Vec<&Record>, Vec<&Record>) = judged.current.iter().partition(|r| holds(r));
    judged.stale_records += moved.len();
    if !moved.is_empty() {
        *judged.stale.entry("source").or_default() += moved.len();
    }
    let mut current: Vec<&Record> = holding;
    // Most recent first.
    current.sort_by(|a, b| b.at.cmp(&a.at));
    let searches = current
        .iter()
        .filter(|r| r.kind == "attempt" && r.candidate == "search")
        .take(SEARCHES)
        .map(|r| brief(r))
        .collect();
    // A comparison's records are about a pair, not a candidate: its hypothesis and experiment are
    // listed on their own, its observation is kept in the history only.
    let about_a_pair = |r: &Record| r.variant.is_array();
    let with_candidate = |r: &Record| {
        let mut entry = brief(r);
        entry.insert("candidate".into(), Value::from(r.candidate.clone()));
        entry
    };
    let hypotheses =
        current.iter().filter(|r| r.kind == "hypothesis" && about_a_pair(r)).map(|r| with_candidate(r)).collect();
    let experiments = current
        .iter()
        .filter(|r| r.kind == "experiment" && about_a_pair(r))
        .map(|r| {
            let mut entry = with_candidate(r);
            entry.insert("done".into(), Value::Bool(experiment_done(r, &current)));
            entry
        })
        .collect();
    let mut candidates: BTreeMap<String, CandidateEntry> = BTreeMap::new();
    for record in current.iter().filter(|r| r.candidate != "search" && !about_a_pair(r)) {
        let entry = candidates.entry(record.candidate.clone()).or_default();
        let list = match record.kind.as_str() {
            "measurement" => &mut entry.measured,
            "validation" => &mut entry.validated,
            "failure" => &mut entry.failed,
            "profile" => &mut entry.profiled,
            _ => &mut entry.tried,
        };
        list.push(brief(record));
    }
    let not_shown = candidates.len().saturating_sub(CANDIDATES);
    let candidates: BTreeMap<String, CandidateEntry> = candidates.into_iter().take(CANDIDATES).collect();
    let source = crate::program::source_of(workspace, item);
    let signature = source.lines().next().unwrap_or_default().trim_end_matches('{').trim().to_string();
    let effects = workspace
        .last_rows()
        .and_then(|rows| rows.row(item).map(|r| r.iter().map(|e| e.to_string()).collect()))
        .unwrap_or_default();
    let items = crate::plans::plan_items(workspace, item);
    let regions = cairn_hir::regions::fn_regions(db, item)
        .iter()
        .map(|r| RegionEntry { id: r.id.to_string(), kind: r.kind, binder: r.binder.to_string() })
        .collect();
    let short = |s: &str| s.chars().take(16).collect::<String>();
    let mut investigation = Investigation {
        protocol: "cairn.investigation/1",
        function: function.clone(),
        signature,
        effects,
        plan: crate::plans::selection_label(workspace, item)
            .unwrap_or_else(|| crate::plans::plan_text(&function, &items)),
        regions,
        identity: IdentityView {
            as_written: short(&base),
            compiler: short(&compiler()),
            targets: [("host", short(&crate::history::history_digest(&Value::from(host_target()))))]
                .into_iter()
                .collect(),
        },
        searches,
        candidates,
        not_shown,
        hypotheses,
        experiments,
        stale: Stale { records: judged.stale_records, by_part: judged.stale },
        terms: TERMS,
        digest: String::new(),
    };
    let sealed = serde_json::to_value(&investigation).unwrap_or_default();
    investigation.digest = crate::canonical::digest(&sealed);
    investigation
}
