//! `cairn verify REFERENCE CANDIDATE (--symbol S | --all)`: SMT source equivalence of one
//! function, or of every function of a module, within the modelled fragment (tools.md §3.21).
//!
//! Statuses: `smt-equivalent`; `counterexample` (a witness, replayed on the evaluator and
//! natively); `rejected` (the candidate does not compile); `invalid-reference` (the reference
//! does not compile, or traps on an allowed input, unless `--allow-reference-traps`);
//! `invalid-contract` (the symbol is missing on a side, or the signatures differ);
//! `invalid-domain` (an `--assume` that does not check as a `bool` over the parameters, or
//! that no input satisfies); `unknown` (with the reason). Exit with `--symbol`: 0
//! equivalent, 1 counterexample/rejected/invalid-*, 2 otherwise; with `--all`: 0 when every
//! function is equivalent, else 2.

use std::collections::BTreeMap;
use std::path::Path;

use cairn_agent::diff::Native;
use cairn_agent::equiv::{self, Assumption, Lowered, OutcomeRecord, Receipt};
use cairn_diagnostics::Refusal;
use cairn_diagnostics::record::RefusalRecord;
use cairn_hir::{ItemKind, SourceText, Workspace};
use cairn_smt::{Options, Verdict};
use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::cli::VerifyFlags;
use crate::diff::{replay_witness, say, write_obligations};
use crate::output::{FormatChoice, Named, Output, to_map};

/// The schema of the verify record.
const SCHEMA: &str = "cairn.verify/1";

const LIMIT: u64 = 64_000;

fn read(path: &Path) -> Result<String, String> {
    // Only a regular file (a FIFO or device is refused without blocking), within the limit.
    let bytes = cairn_vfs::read_user_file(path, LIMIT).map_err(|e| {
        format!("cannot read {}: {e} (verify reads regular files of at most {LIMIT} bytes)", path.display())
    })?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    Ok(text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text))
}

struct Side {
    workspace: Workspace,
    lowered: Option<Lowered>,
    sha256: String,
    refusal: Option<Refusal>,
}

fn side(path: &Path) -> Result<Side, String> {
    let text = read(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "program.cairn".into());
    let sources = vec![SourceText { name, text: text.clone() }];
    let mut workspace = Workspace::new(sources);
    let refusal = workspace.check().refusal;
    let lowered = if refusal.is_none() { Lowered::of(&workspace) } else { None };
    Ok(Side { workspace, lowered, sha256: equiv::sha256(text.as_bytes()), refusal })
}

/// One function's verification, as a record entry and its status.
fn verify_one(
    reference: &Side,
    candidate: &Side,
    symbol: &str,
    assume: Option<&str>,
    flags: &VerifyFlags,
) -> Result<Entry, String> {
    let (old, new) = (reference.lowered.as_ref().expect("checked"), candidate.lowered.as_ref().expect("checked"));
    // A function, or one instance of a template (`twice[u8]`): what has code on both sides.
    let ((old_item, old_symbol), (new_item, new_symbol)) = match (
        equiv::named_code(&reference.workspace, old, symbol),
        equiv::named_code(&candidate.workspace, new, symbol),
    ) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(why), _) | (_, Err(why)) => {
            return Ok(Entry::with_reason(
                "invalid-contract",
                format!("{symbol} is not a function of both programs: {why}"),
            ));
        }
    };
    let old_sig = cairn_hir::render::signature_text(reference.workspace.db(), old_item, true);
    let new_sig = cairn_hir::render::signature_text(candidate.workspace.db(), new_item, true);
    if equiv::signature_key(&reference.workspace, old_item) != equiv::signature_key(&candidate.workspace, new_item) {
        return Ok(Entry::with_reason("invalid-contract", format!("the signatures differ: {old_sig} / {new_sig}")));
    }
    let assumption: Option<Assumption> = match assume {
        None => None,
        Some(text) => match equiv::assumption(&reference.workspace, symbol, text) {
            Ok(a) => a,
            Err(bad) => return Ok(Entry::with_reason("invalid-domain", bad.0)),
        },
    };
    let options = Options { timeout_ms: flags.timeout_ms, ..Options::default() };
    let comparison =
        equiv::compare(old, &old_symbol, new, &new_symbol, assumption.as_ref(), !flags.allow_reference_traps, options);
    let files = write_obligations(flags.obligations.as_deref(), symbol, &comparison.queries)?;
    let (Some(old_fn), Some(new_fn)) = (old.get(&old_symbol).cloned(), new.get(&new_symbol).cloned()) else {
        return Ok(Entry::with_reason("unknown", format!("{symbol} has no code to compare")));
    };
    let mut entry = match &comparison.verdict {
        Verdict::Equivalent => Entry::new("smt-equivalent"),
        Verdict::EmptyDomain => Entry::with_reason("invalid-domain", "no input satisfies the assumption".into()),
        Verdict::ReferenceTraps(witness) => Entry {
            counterexample: Some(equiv::witness_record(witness, &old_fn).inputs),
            ..Entry::with_reason("invalid-reference", "the reference traps on an allowed input".into())
        },
        Verdict::Unknown(reason) => Entry::with_reason("unknown", reason.clone()),
        Verdict::Differs(witness) => {
            let work = std::env::temp_dir().join(format!("cairn-verify-{}", std::process::id()));
            let native = replay_witness(&old.functions, &old_fn, &new.functions, &new_fn, witness, &work);
            let _ = std::fs::remove_dir_all(&work);
            let shown = equiv::witness_record(witness, &old_fn);
            if matches!(native, Native::Disagrees { .. }) {
                Entry::with_reason("unknown", "the native replay of the counterexample disagrees with the model".into())
            } else {
                Entry {
                    counterexample: Some(shown.inputs),
                    expected: Some(shown.before),
                    actual: Some(shown.after),
                    concrete_replay: Some(true),
                    native_replay: Some(native),
                    hint: Some(equiv::witness_sentence(witness, &old_fn)),
                    ..Entry::new("counterexample")
                }
            }
        }
    };
    entry.receipt = Some(equiv::receipt(
        &reference.sha256,
        &candidate.sha256,
        assume.unwrap_or("true"),
        &comparison.queries,
        Some(files),
    ));
    Ok(entry)
}

pub fn run(flags: &VerifyFlags, out: Output) -> u8 {
    if flags.all == flags.symbol.is_some() {
        out.environment("cairn verify needs exactly one of --symbol S and --all");
        return 2;
    }
    let mut assumes: BTreeMap<String, String> = BTreeMap::new();
    for a in &flags.assume {
        let Some((symbol, expr)) = a.split_once('=') else {
            out.environment(&format!("--assume {a}: write SYMBOL=EXPR"));
            return 2;
        };
        if assumes.insert(symbol.trim().to_string(), expr.to_string()).is_some() {
            out.environment(&format!("--assume names {symbol} twice; give one assumption per function"));
            return 2;
        }
    }
    let (reference, candidate) = match (side(&flags.reference), side(&flags.candidate)) {
        (Ok(r), Ok(c)) => (r, c),
        (Err(message), _) | (_, Err(message)) => {
            out.environment(&message);
            return 2;
        }
    };
    let finish = |record: Map<String, Value>, code: u8, line: String| -> u8 {
        match out.format {
            FormatChoice::Json => out.json(&record),
            FormatChoice::Human => say(out, &line),
        }
        code
    };
    if let Some(refusal) = &reference.refusal {
        let record = Stopped {
            schema: SCHEMA,
            status: "invalid-reference",
            reason: "the reference does not compile".into(),
            diagnostic: Some(RefusalRecord::of(refusal)),
        };
        return finish(
            to_map(&record),
            if flags.all { 2 } else { 1 },
            "invalid-reference: the reference does not compile".into(),
        );
    }
    if let Some(refusal) = &candidate.refusal {
        let record = Stopped {
            schema: SCHEMA,
            status: "rejected",
            reason: "the candidate does not compile".into(),
            diagnostic: Some(RefusalRecord::of(refusal)),
        };
        return finish(
            to_map(&record),
            if flags.all { 2 } else { 1 },
            "rejected: the candidate does not compile".into(),
        );
    }
    if reference.lowered.is_none() || candidate.lowered.is_none() {
        out.environment("internal error (E-INTERNAL): a program could not be lowered");
        return 2;
    }
    for symbol in assumes.keys() {
        let named = flags
            .symbol
            .as_deref()
            .map_or_else(|| reference.workspace.function_named(symbol).is_some(), |s| s == symbol);
        if !named {
            let record = Stopped {
                schema: SCHEMA,
                status: "invalid-domain",
                reason: format!("--assume names {symbol}, which is not verified here"),
                diagnostic: None,
            };
            return finish(
                to_map(&record),
                if flags.all { 2 } else { 1 },
                format!("invalid-domain: --assume names {symbol}"),
            );
        }
    }
    match &flags.symbol {
        Some(symbol) => {
            let entry = match verify_one(&reference, &candidate, symbol, assumes.get(symbol).map(|s| s.as_str()), flags)
            {
                Ok(e) => e,
                Err(message) => {
                    out.environment(&message);
                    return 2;
                }
            };
            let status = entry.status;
            let code = match status {
                "smt-equivalent" => 0,
                "counterexample" | "rejected" | "invalid-contract" | "invalid-domain" | "invalid-reference" => 1,
                _ => 2,
            };
            let detail = entry.hint.as_ref().or(entry.reason.as_ref()).map(|s| format!(": {s}")).unwrap_or_default();
            let record = OneFunction {
                schema: SCHEMA,
                symbol,
                assume: assumes.get(symbol).map(String::as_str),
                entry,
                formal_status: "not-verified",
            };
            finish(to_map(&record), code, format!("{status}: {symbol}{detail}"))
        }
        None => {
            let mut functions: Named<Entry> = Named::default();
            let mut all = true;
            for fact in reference.workspace.function_facts() {
                if fact.library || !matches!(fact.kind, ItemKind::Fn | ItemKind::Method) {
                    continue;
                }
                // Named as an agent names it: `module.name`, a method of a trait's impl
                // `Area.Rect.area`.
                let full = reference.workspace.full_name(fact.item).to_string();
                // A template is verified through each instance the reference makes; one that
                // makes none has no code to verify and is left out.
                let mut names = vec![full.clone()];
                let item = fact.item;
                if let Some(lowered) = &reference.lowered
                    && !cairn_hir::generics::fn_generics(reference.workspace.db(), item).is_empty()
                {
                    let base = equiv::symbol_of(&reference.workspace, item).len();
                    names = equiv::instance_symbols(&reference.workspace, lowered, item)
                        .iter()
                        .map(|s| format!("{full}{}", &s[base..]))
                        .collect();
                }
                for name in names {
                    let entry = match verify_one(
                        &reference,
                        &candidate,
                        &name,
                        assumes.get(&name).map(|s| s.as_str()),
                        flags,
                    ) {
                        Ok(e) => e,
                        Err(message) => {
                            out.environment(&message);
                            return 2;
                        }
                    };
                    all &= entry.status == "smt-equivalent";
                    functions.insert(name, entry);
                }
            }
            let status = if all { "smt-module-equivalent" } else { "not-smt-module-equivalent" };
            let mut lines = vec![status.to_string()];
            for (name, entry) in functions.iter() {
                lines.push(format!("  {}  {name}", entry.status));
            }
            let record = Module { schema: SCHEMA, status, functions, formal_status: "not-verified" };
            finish(to_map(&record), if all { 0 } else { 2 }, lines.join("\n"))
        }
    }
}

/// One function's verification: its status, then what establishes it. Which fields are present
/// depends on the status (a counterexample has the witness and its replays, a refusal or an
/// `unknown` a reason), in this one order; `receipt` is there once the solver was asked.
#[derive(Serialize)]
struct Entry {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The witness's inputs, as `cairn_agent::equiv` writes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    counterexample: Option<Named<Value>>,
    /// What the reference does on the witness.
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<OutcomeRecord>,
    /// What the candidate does on the witness.
    #[serde(skip_serializing_if = "Option::is_none")]
    actual: Option<OutcomeRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    concrete_replay: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    native_replay: Option<Native>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt: Option<Receipt>,
}

impl Entry {
    /// An entry with its status and nothing else yet.
    fn new(status: &'static str) -> Entry {
        Entry {
            status,
            reason: None,
            counterexample: None,
            expected: None,
            actual: None,
            concrete_replay: None,
            native_replay: None,
            hint: None,
            receipt: None,
        }
    }

    /// An entry with its status and why.
    fn with_reason(status: &'static str, reason: String) -> Entry {
        Entry { reason: Some(reason), ..Entry::new(status) }
    }
}

/// The record of a verification that stopped before any function was compared: a side that does
/// not compile (with its refusal), or an `--assume` that names nothing verified.
#[derive(Serialize)]
struct Stopped<'a> {
    schema: &'static str,
    status: &'static str,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnostic: Option<RefusalRecord<'a>>,
}

/// The record of `--symbol`: the function, its assumption, then its entry's fields.
#[derive(Serialize)]
struct OneFunction<'a> {
    schema: &'static str,
    symbol: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    assume: Option<&'a str>,
    #[serde(flatten)]
    entry: Entry,
    formal_status: &'static str,
}

/// The record of `--all`: every function of the reference by qualified name.
#[derive(Serialize)]
struct Module {
    schema: &'static str,
    status: &'static str,
    functions: Named<Entry>,
    formal_status: &'static str,
}
