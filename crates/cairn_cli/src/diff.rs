//! `cairn diff OLD NEW`: classify every function between two versions of a program and say what
//! establishes each class (tools.md §3.12), and `cairn verify` (§3.21) on the same machinery.
//!
//! A side is a path, or a git revision of the repository around the working directory read into
//! a scratch directory with `git archive` (never checked out). Classes: `identical-code` (the
//! same MIR up to renaming, itself and its callees), `smt-equivalent` (cairn_smt), `behavior-
//! changed` (a witness replayed on the MIR evaluator, then natively: both versions compiled with
//! a replay entry, linked and run; a native run that disagrees with the evaluator makes the
//! answer `unknown`), `signature-changed`, `added`, `removed`, `renamed`, `unknown` (with a
//! reason). Solver work runs in this process under Z3's per-query timeout and a budget for the
//! whole diff (docs/decisions.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_agent::equiv::{self, Lowered};
use cairn_codegen::{Entry, Site};
use cairn_diagnostics::record::refusal_record;
use cairn_hir::{ItemKind, Workspace};
use cairn_mir::{FnKind, Function};
use cairn_smt::{Observed, Options, Query, Verdict, WValue};
use serde_json::{Map, Value, json};

use crate::check::load_workspace;
use crate::output::{FormatChoice, Output};

/// `cairn diff` flags.
#[derive(Debug, clap::Args)]
pub struct DiffFlags {
    /// The old side: a path, or a git revision of the repository here.
    pub old: String,
    /// The new side: a path, or a git revision of the repository here.
    pub new: String,
    /// The project inside the repository, for revision sides.
    #[arg(long = "in", value_name = "PATH", default_value = ".")]
    pub within: PathBuf,
    /// Z3's limit per query, in milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub timeout_ms: u32,
    /// The solver budget of the whole diff, in seconds (functions past it are unknown).
    #[arg(long, default_value_t = 60)]
    pub budget_s: u64,
    /// How many witnesses are replayed natively (each compiles and runs both versions).
    #[arg(long, default_value_t = 8)]
    pub replays: usize,
    /// Exit 1 unless every function is identical-code (identical) or also smt-equivalent (equivalent).
    #[arg(long, value_parser = ["identical", "equivalent"])]
    pub require: Option<String>,
    /// Also write a pull-request section in Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Leave out the predicted cost ratios.
    #[arg(long)]
    pub no_predict: bool,
    /// Write every SMT-LIB query to DIR.
    #[arg(long, value_name = "DIR")]
    pub obligations: Option<PathBuf>,
}

/// One side, resolved to a directory or file to load.
struct SideSpec {
    named: String,
    kind: &'static str,
    commit: Option<String>,
    path: PathBuf,
    scratch: Option<PathBuf>,
}

impl Drop for SideSpec {
    fn drop(&mut self) {
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn resolve(arg: &str, within: &Path, which: &str) -> Result<SideSpec, String> {
    if Path::new(arg).exists() {
        return Ok(SideSpec { named: arg.into(), kind: "path", commit: None, path: PathBuf::from(arg), scratch: None });
    }
    let commit = git(&["rev-parse", "--verify", "--quiet", &format!("{arg}^{{commit}}")])
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("{arg} is neither a path nor a git revision of the repository here"))?;
    let prefix = git(&["rev-parse", "--show-prefix"]).unwrap_or_default();
    let scratch = std::env::temp_dir().join(format!("cairn-diff-{}-{which}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let archive = Command::new("git")
        .args(["archive", "--format=tar", &commit])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let status = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(&scratch)
        .stdin(archive.stdout.ok_or("git archive gave no output")?)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(format!("could not read revision {arg} into a scratch directory"));
    }
    let path = scratch.join(prefix).join(within);
    Ok(SideSpec { named: arg.into(), kind: "revision", commit: Some(commit), path, scratch: Some(scratch) })
}

/// A loaded, accepted side.
struct Loaded {
    workspace: Workspace,
    lowered: Lowered,
}

fn load(spec: &SideSpec, which: &str, out: Output) -> Result<Loaded, u8> {
    let program = cairn_vfs::load(&spec.path).map_err(|error| {
        out.environment(&format!("{which} side ({}): {}", spec.named, error.message));
        2
    })?;
    let mut workspace = load_workspace(&program);
    if let Some(refusal) = workspace.check().refusal {
        let diagnostic = refusal_record(&refusal);
        match out.format {
            FormatChoice::Json => {
                let mut record = Map::new();
                record.insert("schema".into(), json!("cairn.diff/1"));
                record.insert("status".into(), json!("refused"));
                record.insert("side".into(), json!(which));
                record.insert(which.into(), json!({"named": spec.named, "kind": spec.kind, "commit": spec.commit}));
                record.insert("diagnostic".into(), Value::Object(diagnostic));
                out.json(&record);
            }
            FormatChoice::Human => {
                say(out, &format!("the {which} side ({}) does not compile:", spec.named));
                let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
                out.refusal(&diagnostic, &lines);
            }
        }
        return Err(1);
    }
    let lowered = Lowered::of(&workspace).ok_or_else(|| {
        out.environment(&format!("internal error (E-INTERNAL): the {which} side could not be lowered"));
        2
    })?;
    Ok(Loaded { workspace, lowered })
}

/// What the diff knows of one function of one side.
struct Fact {
    symbol: Arc<str>,
    signature: String,
    /// The signature up to names (what decides `signature-changed`).
    key: String,
    row: Vec<String>,
    sites: BTreeMap<String, u32>,
    digest: String,
    insts: usize,
}

fn facts(side: &Loaded) -> BTreeMap<String, Fact> {
    let mut out = BTreeMap::new();
    let digests = side.lowered.code_digests();
    for fact in side.workspace.function_facts() {
        if fact.library || fact.kind != ItemKind::Fn {
            continue;
        }
        let full =
            if fact.module.is_empty() { fact.name.to_string() } else { format!("{}.{}", fact.module, fact.name) };
        let Some(item) = side.workspace.function_named(&full) else { continue };
        let symbol = equiv::symbol_of(&side.workspace, item);
        let signature = cairn_hir::render::signature_text(side.workspace.db(), item, true);
        let key = equiv::signature_key(&side.workspace, item);
        let insts = side.lowered.get(&symbol).map_or(0, |f| f.blocks.iter().map(|b| b.insts.len() + 1).sum());
        out.insert(
            full,
            Fact {
                digest: digests.get(&*symbol).cloned().unwrap_or_default(),
                symbol,
                signature,
                key,
                row: fact.row.unwrap_or_default().iter().map(|e| e.to_string()).collect(),
                sites: fact.sites.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
                insts,
            },
        );
    }
    out
}

/// Runs a witness natively: both programs compiled with a replay entry, linked, run.
pub fn native_replay(functions: &[Arc<Function>], target: &Function, inputs: &[WValue], work: &Path) -> Observed {
    let entry = match cairn_smt::replay::entry(target, inputs) {
        Ok(entry) => entry,
        Err(why) => return Observed::NotRun(why),
    };
    let mut all: Vec<Arc<Function>> = functions.iter().filter(|f| f.kind != FnKind::Test).cloned().collect();
    all.push(Arc::new(entry));
    let site = |_: &Function, _: Option<cairn_mir::Anchor>| Site { file: None, line: 0, column: 0 };
    let compiled = match cairn_codegen::compile(
        &all,
        &Entry::Main(cairn_smt::replay::ENTRY.into()),
        &site,
        cairn_codegen::Options::default(),
    ) {
        Ok(c) => c,
        Err(why) => return Observed::NotRun(format!("the replay did not compile: {why}")),
    };
    if let Err(why) = std::fs::create_dir_all(work) {
        return Observed::NotRun(format!("cannot create {}: {why}", work.display()));
    }
    let exe = work.join("replay");
    if let Err(why) = cairn_codegen::link(&compiled.object, &exe, work) {
        return Observed::NotRun(format!("the replay did not link: {why}"));
    }
    let mut child = match Command::new(&exe).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn() {
        Ok(c) => c,
        Err(why) => return Observed::NotRun(format!("the replay did not start: {why}")),
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > Duration::from_secs(10) => {
                let _ = child.kill();
                let _ = child.wait();
                return Observed::NotRun("the replay ran past 10 seconds".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(why) => return Observed::NotRun(format!("the replay could not be waited for: {why}")),
        }
    };
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stdout);
    }
    use std::os::unix::process::ExitStatusExt;
    // A failed guard aborts (the runtime's trap calls `abort`).
    if status.signal() == Some(SIGABRT) {
        return Observed::Trap;
    }
    if status.code() != Some(0) {
        return Observed::NotRun(format!("the replay ended with {status}"));
    }
    cairn_smt::replay::read_back(target, inputs, &stdout).unwrap_or_else(Observed::NotRun)
}

const SIGABRT: i32 = 6;

/// One line of human output.
pub fn say(out: Output, text: &str) {
    out.text(&format!("{text}\n"));
}

/// Replays a witness natively (both versions compiled, linked and run in `work`) and judges
/// it against what the evaluator showed: `{"status": "reproduced" | "not-run" | "disagrees", …}`.
pub fn replay_witness(
    old_functions: &[Arc<Function>],
    old: &Function,
    new_functions: &[Arc<Function>],
    new: &Function,
    witness: &cairn_smt::Witness,
    work: &Path,
) -> Value {
    let values: Vec<WValue> = witness.inputs.iter().map(|(_, v)| v.clone()).collect();
    let before = native_replay(old_functions, old, &values, &work.join("old"));
    let after = native_replay(new_functions, new, &values, &work.join("new"));
    match (&before, &after) {
        (Observed::NotRun(why), _) | (_, Observed::NotRun(why)) => json!({"status": "not-run", "reason": why}),
        _ if before == witness.before && after == witness.after => {
            json!({"status": "reproduced", "compiler": "cairn-rs llvm-19 -O2"})
        }
        _ => json!({
            "status": "disagrees",
            "before": equiv::observed_json(&before, old),
            "after": equiv::observed_json(&after, old),
        }),
    }
}

/// The solver's receipt of one comparison.
pub fn receipt(old: &str, new: &str, domain: &str, queries: &[Query], files: &[String]) -> Value {
    json!({
        "reference_sha256": old,
        "candidate_sha256": new,
        "domain": domain,
        "queries": queries.iter().map(|q| json!({"purpose": q.purpose, "sha256": q.sha256(), "answer": q.answer})).collect::<Vec<_>>(),
        "obligations": files,
        "z3": cairn_smt::z3_version(),
    })
}

/// Writes each query to `dir` and returns the file names.
pub fn write_obligations(dir: Option<&Path>, name: &str, queries: &[Query]) -> Result<Vec<String>, String> {
    let Some(dir) = dir else { return Ok(Vec::new()) };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for (i, query) in queries.iter().enumerate() {
        let file = format!("{name}.{i}.{}.smt2", query.purpose);
        let text = format!("; cairn obligation: {name}, {} (expected {})\n{}", query.purpose, query.answer, query.smt2);
        std::fs::write(dir.join(&file), text).map_err(|e| format!("cannot write {file}: {e}"))?;
        names.push(file);
    }
    Ok(names)
}

/// `cairn diff`.
pub fn run(flags: &DiffFlags, out: Output) -> u8 {
    let old_spec = match resolve(&flags.old, &flags.within, "old") {
        Ok(s) => s,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    let new_spec = match resolve(&flags.new, &flags.within, "new") {
        Ok(s) => s,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    let old = match load(&old_spec, "old", out) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let new = match load(&new_spec, "new", out) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let old_facts = facts(&old);
    let new_facts = facts(&new);
    let options = Options { timeout_ms: flags.timeout_ms, ..Options::default() };
    let started = Instant::now();
    let work = std::env::temp_dir().join(format!("cairn-diff-replay-{}", std::process::id()));
    let mut replays_left = flags.replays;
    let mut functions: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut reasons_major: Vec<String> = Vec::new();
    let mut minor = false;
    let mut lines: Vec<String> = Vec::new();
    let mut predicted: Vec<String> = Vec::new();

    // Renames: a function only on one side whose code and signature (up to its name) match one
    // only on the other side.
    let removed: Vec<&String> = old_facts.keys().filter(|k| !new_facts.contains_key(*k)).collect();
    let added: Vec<&String> = new_facts.keys().filter(|k| !old_facts.contains_key(*k)).collect();
    let mut renamed: BTreeMap<String, String> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for name in &removed {
        let fact = &old_facts[*name];
        if let Some(to) = added
            .iter()
            .find(|a| !taken.contains(**a) && new_facts[**a].digest == fact.digest && new_facts[**a].key == fact.key)
        {
            taken.insert((*to).clone());
            renamed.insert((*name).clone(), (*to).clone());
        }
    }

    for (name, fact) in &old_facts {
        let mut entry = Map::new();
        let Some(now) = new_facts.get(name) else {
            if let Some(to) = renamed.get(name) {
                entry.insert("class".into(), json!("renamed"));
                entry.insert("to".into(), json!(to));
                reasons_major.push(format!("{name} renamed to {to}"));
                lines.push(format!("renamed  {name}  now {to}, the same code"));
            } else {
                entry.insert("class".into(), json!("removed"));
                reasons_major.push(format!("{name} removed"));
                lines.push(format!("removed  {name}"));
            }
            functions.insert(name.clone(), entry);
            continue;
        };
        let mut changes = Map::new();
        if now.signature != fact.signature {
            changes.insert("signature".into(), json!({"before": fact.signature, "after": now.signature}));
        }
        if now.row != fact.row {
            let gained: Vec<&String> = now.row.iter().filter(|e| !fact.row.contains(e)).collect();
            let lost: Vec<&String> = fact.row.iter().filter(|e| !now.row.contains(e)).collect();
            if !gained.is_empty() {
                reasons_major.push(format!(
                    "{name} gained {}",
                    gained.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
            changes.insert(
                "effects".into(),
                json!({"before": fact.row, "after": now.row, "gained": gained, "lost": lost}),
            );
        }
        if now.sites != fact.sites {
            changes.insert("guards".into(), json!({"before": fact.sites, "after": now.sites}));
        }
        let (class, evidence) = if now.key != fact.key {
            reasons_major.push(format!("{name} re-signed"));
            ("signature-changed".to_string(), format!("{} -> {}", fact.signature, now.signature))
        } else if now.digest == fact.digest {
            ("identical-code".to_string(), "the same emitted code, itself and its callees".to_string())
        } else if started.elapsed() > Duration::from_secs(flags.budget_s) {
            entry
                .insert("reason".into(), json!("the diff's solver budget (--budget-s) was spent before this function"));
            ("unknown".to_string(), "solver budget spent".to_string())
        } else {
            let comparison =
                equiv::compare(&old.lowered, &fact.symbol, &new.lowered, &now.symbol, None, false, options);
            let files = match write_obligations(flags.obligations.as_deref(), name, &comparison.queries) {
                Ok(f) => f,
                Err(message) => {
                    out.environment(&message);
                    return 2;
                }
            };
            entry.insert(
                "receipt".into(),
                receipt(&fact.digest, &now.digest, "all inputs", &comparison.queries, &files),
            );
            let old_fn = old.lowered.get(&fact.symbol).expect("the symbol was lowered").clone();
            match comparison.verdict {
                Verdict::Equivalent => (
                    "smt-equivalent".to_string(),
                    format!("Z3 found no input where they differ ({} queries)", comparison.queries.len()),
                ),
                Verdict::Differs(witness) => {
                    let mut shown = equiv::witness_json(&witness, &old_fn);
                    let new_fn = new.lowered.get(&now.symbol).expect("the symbol was lowered").clone();
                    let native = if replays_left > 0 {
                        replays_left -= 1;
                        replay_witness(
                            &old.lowered.functions,
                            &old_fn,
                            &new.lowered.functions,
                            &new_fn,
                            &witness,
                            &work,
                        )
                    } else {
                        json!({"status": "not-run", "reason": "the --replays budget was spent"})
                    };
                    let disagrees = (native["status"] == "disagrees").then(|| native.clone());
                    let mut replay = Map::new();
                    replay.insert("evaluator".into(), json!("reproduced"));
                    replay.insert("native".into(), native);
                    if disagrees.is_some() {
                        shown["replay"] = Value::Object(replay);
                        entry.insert("witness".into(), shown);
                        entry.insert(
                            "reason".into(),
                            json!("the native replay of the witness disagrees with the model"),
                        );
                        ("unknown".to_string(), "the native replay disagrees with the model".to_string())
                    } else {
                        shown["replay"] = Value::Object(replay);
                        let sentence = equiv::witness_sentence(&witness, &old_fn);
                        entry.insert("witness".into(), shown);
                        reasons_major.push(format!("{name} has a witness"));
                        ("behavior-changed".to_string(), sentence)
                    }
                }
                Verdict::Unknown(reason) => {
                    entry.insert("reason".into(), json!(reason));
                    ("unknown".to_string(), reason)
                }
                Verdict::ReferenceTraps(_) | Verdict::EmptyDomain => {
                    entry.insert("reason".into(), json!("unexpected solver answer"));
                    ("unknown".to_string(), "unexpected solver answer".to_string())
                }
            }
        };
        let mut ordered = Map::new();
        ordered.insert("class".into(), json!(class));
        ordered.append(&mut entry);
        let mut entry = ordered;
        if !changes.is_empty() {
            entry.insert("changes".into(), Value::Object(changes));
        }
        if !flags.no_predict && fact.insts > 0 {
            let ratio = (now.insts as f64 / fact.insts as f64 * 100.0).round() / 100.0;
            entry.insert("predicted_cost_ratio".into(), json!(ratio));
            if (ratio - 1.0).abs() > f64::EPSILON {
                predicted.push(format!("{name} {ratio:.2}x"));
            }
        }
        if class != "identical-code" {
            lines.push(format!("{class}  {name}  {evidence}"));
        }
        functions.insert(name.clone(), entry);
    }
    for name in &added {
        if taken.contains(*name) {
            continue;
        }
        minor = true;
        functions.insert((*name).clone(), {
            let mut m = Map::new();
            m.insert("class".into(), json!("added"));
            m
        });
        lines.push(format!("added  {name}"));
    }
    let _ = std::fs::remove_dir_all(&work);

    // Public types changed: the declarations of records and enums, as text.
    let types = |side: &Loaded| -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        for file in side.workspace.files() {
            if file.library {
                continue;
            }
            for entry in &file.items {
                if let Some(text) = cairn_hir::render::declaration_text(side.workspace.db(), entry.item)
                    && matches!(entry.key.kind, ItemKind::Struct | ItemKind::Enum)
                {
                    map.insert(side.workspace.full_name(entry.item).to_string(), text);
                }
            }
        }
        map
    };
    let (old_types, new_types) = (types(&old), types(&new));
    for (name, text) in &old_types {
        if new_types.get(name) != Some(text) {
            reasons_major.push(format!("type {name} changed"));
        }
    }

    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for entry in functions.values() {
        *counts.entry(entry["class"].as_str().unwrap_or("unknown").to_string()).or_default() += 1;
    }
    let any_unknown = counts.contains_key("unknown");
    let proven = if !reasons_major.is_empty() {
        "major"
    } else if minor {
        "minor"
    } else {
        "patch"
    };
    let mut semver = Map::new();
    if any_unknown && proven != "major" {
        semver.insert("level".into(), json!("unknown"));
        semver.insert("at_least".into(), json!(proven));
    } else {
        semver.insert("level".into(), json!(proven));
    }
    semver.insert("reasons".into(), json!(reasons_major));

    let all_equivalent =
        functions.values().all(|e| matches!(e["class"].as_str(), Some("identical-code" | "smt-equivalent")));
    let all_identical = functions.values().all(|e| e["class"].as_str() == Some("identical-code"));
    let required = match flags.require.as_deref() {
        Some("identical") => Some(all_identical),
        Some("equivalent") => Some(all_equivalent),
        _ => None,
    };

    let side_json = |s: &SideSpec| json!({"named": s.named, "kind": s.kind, "commit": s.commit});
    let mut record = Map::new();
    record.insert("schema".into(), json!("cairn.diff/1"));
    record.insert("old".into(), side_json(&old_spec));
    record.insert("new".into(), side_json(&new_spec));
    record.insert(
        "functions".into(),
        Value::Object(functions.iter().map(|(k, v)| (k.clone(), Value::Object(v.clone()))).collect()),
    );
    record.insert("counts".into(), json!(counts));
    record.insert("semver".into(), Value::Object(semver.clone()));
    if !flags.no_predict {
        record
            .insert("predicted".into(), json!("predicted, not measured (MIR instructions of the function's own body)"));
    }
    if let Some(ok) = required {
        record.insert("require".into(), json!({"level": flags.require, "met": ok}));
    }
    record.insert("formal_status".into(), json!("not-verified"));

    let summary = counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    let semver_line = match semver["level"].as_str() {
        Some("unknown") => format!("semver: unknown (at least {proven}): {} function(s) unknown", counts["unknown"]),
        Some(level) if !reasons_major.is_empty() => format!("semver: {level}: {}", reasons_major.join("; ")),
        Some(level) => format!("semver: {level}"),
        None => String::new(),
    };
    if let Some(path) = &flags.markdown {
        let mut md = format!("### cairn diff `{}` → `{}`\n\n{summary}\n\n", old_spec.named, new_spec.named);
        if !lines.is_empty() {
            md.push_str("| class | function | evidence |\n|---|---|---|\n");
            for line in &lines {
                let parts: Vec<&str> = line.splitn(3, "  ").collect();
                md.push_str(&format!(
                    "| {} | `{}` | {} |\n",
                    parts.first().unwrap_or(&""),
                    parts.get(1).unwrap_or(&""),
                    parts.get(2).unwrap_or(&"").replace('|', "\\|")
                ));
            }
            md.push('\n');
        }
        md.push_str(&format!("{semver_line}\n"));
        if let Err(e) = std::fs::write(path, md) {
            out.environment(&format!("cannot write {}: {e}", path.display()));
            return 2;
        }
    }
    match out.format {
        FormatChoice::Json => out.json(&record),
        FormatChoice::Human => {
            say(out, &format!("{} -> {}: {summary}", old_spec.named, new_spec.named));
            for line in &lines {
                say(out, line);
            }
            if !flags.no_predict && !predicted.is_empty() {
                say(out, &format!("predicted, not measured (MIR instructions): {}", predicted.join(", ")));
            }
            say(out, &semver_line);
        }
    }
    std::mem::forget(old);
    std::mem::forget(new);
    u8::from(required == Some(false))
}
