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

use cairn_agent::equiv::{self, Assumption, Lowered};
use cairn_hir::{ItemKind, SourceText, Workspace};
use cairn_smt::{Observed, Options, Verdict, WValue};
use serde_json::{Map, Value, json};

use crate::diff::{native_replay, say};
use crate::output::{FormatChoice, Output};

pub struct VerifyFlags {
    pub reference: PathBuf,
    pub candidate: PathBuf,
    pub symbol: Option<String>,
    pub all: bool,
    pub timeout_ms: u32,
    pub assume: Vec<String>,
    pub allow_reference_traps: bool,
    pub obligations: Option<PathBuf>,
}

const LIMIT: u64 = 64_000;

fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.len() > LIMIT {
        return Err(format!("{} is {} bytes; verify reads files of at most {LIMIT} bytes", path.display(), meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    Ok(text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text))
}

struct Side {
    sources: Vec<SourceText>,
    workspace: Workspace,
    lowered: Option<Lowered>,
    sha256: String,
    refusal: Option<Map<String, Value>>,
}

fn side(path: &Path) -> Result<Side, String> {
    let text = read(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "program.cairn".into());
    let sources = vec![SourceText { name, text: text.clone() }];
    let mut workspace = Workspace::new(sources.clone());
    let refusal = workspace.check().refusal.map(|r| cairn_diagnostics::record::refusal_record(&r));
    let lowered = if refusal.is_none() { Lowered::of(&workspace) } else { None };
    Ok(Side { sources, workspace, lowered, sha256: equiv::sha256(text.as_bytes()), refusal })
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
        Some(text) => match equiv::assumption(&reference.sources, symbol, text) {
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
    let mut files = Vec::new();
    if let Some(dir) = &flags.obligations {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (i, q) in comparison.queries.iter().enumerate() {
            let file = format!("{symbol}.{i}.{}.smt2", q.purpose);
            std::fs::write(
                dir.join(&file),
                format!("; cairn obligation: {symbol}, {} (expected {})\n{}", q.purpose, q.answer, q.smt2),
            )
            .map_err(|e| format!("cannot write {file}: {e}"))?;
            files.push(file);
        }
    }
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
            let values: Vec<WValue> = witness.inputs.iter().map(|(_, v)| v.clone()).collect();
            let work = std::env::temp_dir().join(format!("cairn-verify-{}", std::process::id()));
            let before = native_replay(&old.functions, &old_fn, &values, &work.join("old"));
            let after = native_replay(&new.functions, &new_fn, &values, &work.join("new"));
            let _ = std::fs::remove_dir_all(&work);
            let native = match (&before, &after) {
                (Observed::NotRun(why), _) | (_, Observed::NotRun(why)) => json!({"status": "not-run", "reason": why}),
                _ if before == witness.before && after == witness.after => json!({"status": "reproduced"}),
                _ => json!({"status": "disagrees"}),
            };
            let shown = equiv::witness_json(witness, &old_fn);
            if native["status"] == "disagrees" {
                status(&mut entry, "unknown");
                entry
                    .insert("reason".into(), json!("the native replay of the counterexample disagrees with the model"));
            } else {
                status(&mut entry, "counterexample");
                entry.insert("counterexample".into(), shown["inputs"].clone());
                entry.insert("expected".into(), shown["before"].clone());
                entry.insert("actual".into(), shown["after"].clone());
                entry.insert("concrete_replay".into(), json!(true));
                entry.insert("native_replay".into(), native);
                entry.insert("hint".into(), json!(equiv::witness_sentence(witness, &old_fn)));
            }
        }
    }
    entry.insert(
        "receipt".into(),
        json!({
            "reference_sha256": reference.sha256,
            "candidate_sha256": candidate.sha256,
            "domain": assume.unwrap_or("true"),
            "queries": comparison.queries.iter().map(|q| json!({"purpose": q.purpose, "sha256": q.sha256(), "answer": q.answer})).collect::<Vec<_>>(),
            "obligations": files,
            "z3": cairn_smt::z3_version(),
        }),
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
