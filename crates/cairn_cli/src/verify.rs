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
use std::path::{Path, PathBuf};

use cairn_agent::diff::Native;
use cairn_agent::equiv::{self, Assumption, Lowered};
use cairn_hir::{ItemKind, SourceText, Workspace};
use cairn_smt::{Options, Verdict};
use serde_json::{Map, Value, json};

use crate::diff::{replay_witness, say, write_obligations};
use crate::output::{FormatChoice, Output};

/// `cairn verify` flags.
#[derive(Debug, clap::Args)]
pub struct VerifyFlags {
    /// The reference program (a .cairn file of at most 64,000 bytes).
    pub reference: PathBuf,
    /// The candidate program (a .cairn file of at most 64,000 bytes).
    pub candidate: PathBuf,
    /// The function to verify (`name` or `module.name`).
    #[arg(long)]
    pub symbol: Option<String>,
    /// Verify every function of the reference.
    #[arg(long)]
    pub all: bool,
    /// Z3's limit per query, in milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub timeout_ms: u32,
    /// A precondition, `SYMBOL=EXPR` over the function's parameters (one per function).
    #[arg(long)]
    pub assume: Vec<String>,
    /// Accept a reference that traps on an allowed input (a trap is then an outcome to match).
    #[arg(long)]
    pub allow_reference_traps: bool,
    /// Write every SMT-LIB query to DIR.
    #[arg(long, value_name = "DIR")]
    pub obligations: Option<PathBuf>,
}

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
    refusal: Option<Map<String, Value>>,
}

fn side(path: &Path) -> Result<Side, String> {
    let text = read(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "program.cairn".into());
    let sources = vec![SourceText { name, text: text.clone() }];
    let mut workspace = Workspace::new(sources);
    let refusal = workspace.check().refusal.map(|r| cairn_diagnostics::record::refusal_record(&r));
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
) -> Result<Map<String, Value>, String> {
    let mut entry = Map::new();
    let status = |entry: &mut Map<String, Value>, s: &str| {
        entry.insert("status".into(), json!(s));
    };
    let (Some(old_item), Some(new_item)) =
        (reference.workspace.function_named(symbol), candidate.workspace.function_named(symbol))
    else {
        status(&mut entry, "invalid-contract");
        entry.insert("reason".into(), json!(format!("{symbol} is not a function of both programs")));
        return Ok(entry);
    };
    let old_sig = cairn_hir::render::signature_text(reference.workspace.db(), old_item, true);
    let new_sig = cairn_hir::render::signature_text(candidate.workspace.db(), new_item, true);
    if equiv::signature_key(&reference.workspace, old_item) != equiv::signature_key(&candidate.workspace, new_item) {
        status(&mut entry, "invalid-contract");
        entry.insert("reason".into(), json!(format!("the signatures differ: {old_sig} / {new_sig}")));
        return Ok(entry);
    }
    let assumption: Option<Assumption> = match assume {
        None => None,
        Some(text) => match equiv::assumption(&reference.workspace, symbol, text) {
            Ok(a) => a,
            Err(bad) => {
                status(&mut entry, "invalid-domain");
                entry.insert("reason".into(), json!(bad.0));
                return Ok(entry);
            }
        },
    };
    let (old, new) = (reference.lowered.as_ref().expect("checked"), candidate.lowered.as_ref().expect("checked"));
    let old_symbol = equiv::symbol_of(&reference.workspace, old_item);
    let new_symbol = equiv::symbol_of(&candidate.workspace, new_item);
    let options = Options { timeout_ms: flags.timeout_ms, ..Options::default() };
    let comparison =
        equiv::compare(old, &old_symbol, new, &new_symbol, assumption.as_ref(), !flags.allow_reference_traps, options);
    let files = write_obligations(flags.obligations.as_deref(), symbol, &comparison.queries)?;
    let old_fn = old.get(&old_symbol).expect("lowered").clone();
    let new_fn = new.get(&new_symbol).expect("lowered").clone();
    match &comparison.verdict {
        Verdict::Equivalent => status(&mut entry, "smt-equivalent"),
        Verdict::EmptyDomain => {
            status(&mut entry, "invalid-domain");
            entry.insert("reason".into(), json!("no input satisfies the assumption"));
        }
        Verdict::ReferenceTraps(witness) => {
            status(&mut entry, "invalid-reference");
            entry.insert("reason".into(), json!("the reference traps on an allowed input"));
            entry.insert("counterexample".into(), equiv::witness_json(witness, &old_fn)["inputs"].clone());
        }
        Verdict::Unknown(reason) => {
            status(&mut entry, "unknown");
            entry.insert("reason".into(), json!(reason));
        }
        Verdict::Differs(witness) => {
            let work = std::env::temp_dir().join(format!("cairn-verify-{}", std::process::id()));
            let native = replay_witness(&old.functions, &old_fn, &new.functions, &new_fn, witness, &work);
            let _ = std::fs::remove_dir_all(&work);
            let shown = equiv::witness_json(witness, &old_fn);
            if matches!(native, Native::Disagrees { .. }) {
                status(&mut entry, "unknown");
                entry
                    .insert("reason".into(), json!("the native replay of the counterexample disagrees with the model"));
            } else {
                status(&mut entry, "counterexample");
                entry.insert("counterexample".into(), shown["inputs"].clone());
                entry.insert("expected".into(), shown["before"].clone());
                entry.insert("actual".into(), shown["after"].clone());
                entry.insert("concrete_replay".into(), json!(true));
                entry.insert("native_replay".into(), json!(native));
                entry.insert("hint".into(), json!(equiv::witness_sentence(witness, &old_fn)));
            }
        }
    }
    entry.insert(
        "receipt".into(),
        json!(equiv::receipt(
            &reference.sha256,
            &candidate.sha256,
            assume.unwrap_or("true"),
            &comparison.queries,
            Some(files),
        )),
    );
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
    let mut record = Map::new();
    record.insert("schema".into(), json!("cairn.verify/1"));
    let finish = |record: &Map<String, Value>, code: u8, line: String| -> u8 {
        match out.format {
            FormatChoice::Json => out.json(record),
            FormatChoice::Human => say(out, &line),
        }
        code
    };
    if let Some(refusal) = &reference.refusal {
        record.insert("status".into(), json!("invalid-reference"));
        record.insert("reason".into(), json!("the reference does not compile"));
        record.insert("diagnostic".into(), Value::Object(refusal.clone()));
        return finish(
            &record,
            if flags.all { 2 } else { 1 },
            "invalid-reference: the reference does not compile".into(),
        );
    }
    if let Some(refusal) = &candidate.refusal {
        record.insert("status".into(), json!("rejected"));
        record.insert("reason".into(), json!("the candidate does not compile"));
        record.insert("diagnostic".into(), Value::Object(refusal.clone()));
        return finish(&record, if flags.all { 2 } else { 1 }, "rejected: the candidate does not compile".into());
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
            record.insert("status".into(), json!("invalid-domain"));
            record.insert("reason".into(), json!(format!("--assume names {symbol}, which is not verified here")));
            return finish(&record, if flags.all { 2 } else { 1 }, format!("invalid-domain: --assume names {symbol}"));
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
            let status = entry["status"].as_str().unwrap_or("unknown").to_string();
            record.insert("symbol".into(), json!(symbol));
            if let Some(a) = assumes.get(symbol) {
                record.insert("assume".into(), json!(a));
            }
            for (k, v) in entry {
                record.insert(k, v);
            }
            record.insert("formal_status".into(), json!("not-verified"));
            let code = match status.as_str() {
                "smt-equivalent" => 0,
                "counterexample" | "rejected" | "invalid-contract" | "invalid-domain" | "invalid-reference" => 1,
                _ => 2,
            };
            let detail = record
                .get("hint")
                .or_else(|| record.get("reason"))
                .and_then(Value::as_str)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            finish(&record, code, format!("{status}: {symbol}{detail}"))
        }
        None => {
            let mut functions = Map::new();
            let mut all = true;
            for fact in reference.workspace.function_facts() {
                if fact.library || fact.kind != ItemKind::Fn {
                    continue;
                }
                let full = if fact.module.is_empty() {
                    fact.name.to_string()
                } else {
                    format!("{}.{}", fact.module, fact.name)
                };
                let entry =
                    match verify_one(&reference, &candidate, &full, assumes.get(&full).map(|s| s.as_str()), flags) {
                        Ok(e) => e,
                        Err(message) => {
                            out.environment(&message);
                            return 2;
                        }
                    };
                all &= entry["status"] == "smt-equivalent";
                functions.insert(full, Value::Object(entry));
            }
            let status = if all { "smt-module-equivalent" } else { "not-smt-module-equivalent" };
            record.insert("status".into(), json!(status));
            record.insert("functions".into(), Value::Object(functions.clone()));
            record.insert("formal_status".into(), json!("not-verified"));
            let mut lines = vec![status.to_string()];
            for (name, entry) in &functions {
                lines.push(format!("  {}  {name}", entry["status"].as_str().unwrap_or("unknown")));
            }
            finish(&record, if all { 0 } else { 2 }, lines.join("\n"))
        }
    }
}
