//! `cairn diff OLD NEW`: classify every function between two versions of a program and say what
//! establishes each class (tools.md §3.12), and the native replay `cairn verify` (§3.21) shares.
//!
//! This file is the command's IO and rendering only: resolving a side (a path, or a git revision
//! of the repository around the working directory read into a scratch directory with `git
//! archive`, never checked out), loading and checking it, the `cairn.diff/1` record, the human
//! and Markdown renderings, and what the decisions ask of the outside world
//! ([`cairn_agent::diff::Host`]): the solver budget's clock, the SMT-LIB obligations written
//! to a directory, and witnesses replayed natively (both versions compiled with a replay entry,
//! linked and run). The decisions — renames, classes, semver — are `cairn_agent::diff`'s.
//! Solver work runs in this process under Z3's per-query timeout and a budget for the whole diff
//! (docs/decisions.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use cairn_agent::diff::{Config, Diff, FunctionDiff, Native, Note, Outcome, Replayed, Semver, Side, judge_replay};
use cairn_agent::equiv::Lowered;
use cairn_codegen::{Entry, Site};
use cairn_diagnostics::record::RefusalRecord;
use cairn_hir::Workspace;
use cairn_mir::{FnKind, Function};
use cairn_smt::{Observed, Options, Query, WValue};
use serde::Serialize;

use crate::check::load_workspace;
pub use crate::cli::DiffFlags;
use crate::output::{FormatChoice, Output, to_map};

/// The schema of the diff's records.
const SCHEMA: &str = "cairn.diff/1";

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
        let diagnostic = RefusalRecord::of(&refusal);
        match out.format {
            FormatChoice::Json => {
                let named = SideRecord::of(spec);
                let (old, new) = if which == "old" { (Some(named), None) } else { (None, Some(named)) };
                let record = Refused { schema: SCHEMA, status: "refused", side: which, old, new, diagnostic };
                out.json(&to_map(&record));
            }
            FormatChoice::Human => {
                say(out, &format!("the {which} side ({}) does not compile:", spec.named));
                let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
                out.refusal(&to_map(&diagnostic), &lines);
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
    if let Err(why) = cairn_codegen::link(&compiled.object, &exe, work, &[]) {
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
/// it against what the evaluator showed ([`judge_replay`]).
pub fn replay_witness(
    old_functions: &[Arc<Function>],
    old: &Function,
    new_functions: &[Arc<Function>],
    new: &Function,
    witness: &cairn_smt::Witness,
    work: &Path,
) -> Native {
    let values: Vec<WValue> = witness.inputs.iter().map(|(_, v)| v.clone()).collect();
    let before = native_replay(old_functions, old, &values, &work.join("old"));
    let after = native_replay(new_functions, new, &values, &work.join("new"));
    judge_replay(&before, &after, witness, old)
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
    let status = match classify(flags, &old, &new) {
        Ok(outcome) => render(flags, out, &old_spec, &new_spec, &outcome),
        Err(message) => {
            out.environment(&message);
            2
        }
    };
    // The process ends here: tearing down both compiles would only cost time.
    std::mem::forget(old);
    std::mem::forget(new);
    status
}

/// The decisions of the diff ([`cairn_agent::diff`]) over two loaded sides, with this
/// process as their [`cairn_agent::diff::Host`].
fn classify(flags: &DiffFlags, old: &Loaded, new: &Loaded) -> Result<Outcome, String> {
    let diff = Diff::new(
        Side { workspace: &old.workspace, lowered: &old.lowered },
        Side { workspace: &new.workspace, lowered: &new.lowered },
    );
    let config = Config {
        options: Options { timeout_ms: flags.timeout_ms, ..Options::default() },
        replays: flags.replays,
        predict: !flags.no_predict,
    };
    let mut host = NativeHost {
        obligations: flags.obligations.as_deref(),
        started: Instant::now(),
        budget: Duration::from_secs(flags.budget_s),
        work: std::env::temp_dir().join(format!("cairn-diff-replay-{}", std::process::id())),
    };
    let outcome = diff.classify(&config, &mut host);
    let _ = std::fs::remove_dir_all(&host.work);
    outcome
}

/// Writes the outcome (`--markdown`, then the record or the human lines) and says the exit
/// status: 1 when `--require` is not met.
fn render(flags: &DiffFlags, out: Output, old: &SideSpec, new: &SideSpec, outcome: &Outcome) -> u8 {
    let required = match flags.require.as_deref() {
        Some("identical") => Some(outcome.all_identical()),
        Some("equivalent") => Some(outcome.all_equivalent()),
        _ => None,
    };
    let lines: Vec<String> = outcome.notes.iter().map(note_line).collect();
    let summary = outcome.counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    let semver_line = semver_line(outcome);
    if let Some(path) = &flags.markdown
        && let Err(e) = std::fs::write(path, markdown(old, new, &summary, &lines, &semver_line))
    {
        out.environment(&format!("cannot write {}: {e}", path.display()));
        return 2;
    }
    match out.format {
        FormatChoice::Json => out.json(&to_map(&record(old, new, outcome, flags, required))),
        FormatChoice::Human => {
            say(out, &format!("{} -> {}: {summary}", old.named, new.named));
            for line in &lines {
                say(out, line);
            }
            if !flags.no_predict && !outcome.predicted.is_empty() {
                let predicted: Vec<String> =
                    outcome.predicted.iter().map(|(name, ratio)| format!("{name} {ratio:.2}x")).collect();
                say(out, &format!("predicted, not measured (MIR instructions): {}", predicted.join(", ")));
            }
            say(out, &semver_line);
        }
    }
    u8::from(required == Some(false))
}

/// What the diff's decisions ask of this process: the budget's clock, the obligations written
/// to `--obligations DIR`, and native replays built and run in `work`.
struct NativeHost<'a> {
    obligations: Option<&'a Path>,
    started: Instant,
    budget: Duration,
    work: PathBuf,
}

impl cairn_agent::diff::Host for NativeHost<'_> {
    fn budget_spent(&self) -> bool {
        self.started.elapsed() > self.budget
    }

    fn obligations(&mut self, name: &str, queries: &[Query]) -> Result<Vec<String>, String> {
        write_obligations(self.obligations, name, queries)
    }

    fn replay(&mut self, old: Replayed<'_>, new: Replayed<'_>, inputs: &[WValue]) -> (Observed, Observed) {
        let before = native_replay(old.functions, old.target, inputs, &self.work.join("old"));
        let after = native_replay(new.functions, new.target, inputs, &self.work.join("new"));
        (before, after)
    }
}

/// The `cairn.diff/1` record of a diff whose sides both compiled.
#[derive(Serialize)]
struct DiffRecord<'a> {
    schema: &'static str,
    old: SideRecord<'a>,
    new: SideRecord<'a>,
    functions: &'a BTreeMap<String, FunctionDiff>,
    counts: &'a BTreeMap<&'static str, usize>,
    semver: &'a Semver,
    /// What the per-function ratios are (absent with `--no-predict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted: Option<&'static str>,
    /// Only with `--require`.
    #[serde(skip_serializing_if = "Option::is_none")]
    require: Option<Required<'a>>,
    formal_status: &'static str,
}

/// The `cairn.diff/1` record of a side that does not compile: which side, and its refusal.
/// Exactly one of `old` and `new` is present, the refused side's, under its own name.
#[derive(Serialize)]
struct Refused<'a> {
    schema: &'static str,
    status: &'static str,
    /// `old` or `new`.
    side: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    old: Option<SideRecord<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    new: Option<SideRecord<'a>>,
    diagnostic: RefusalRecord<'a>,
}

/// A side as the record names it: as given, a path or a revision, and the revision's commit.
#[derive(Serialize)]
struct SideRecord<'a> {
    named: &'a str,
    kind: &'static str,
    commit: Option<&'a str>,
}

impl SideRecord<'_> {
    fn of(spec: &SideSpec) -> SideRecord<'_> {
        SideRecord { named: &spec.named, kind: spec.kind, commit: spec.commit.as_deref() }
    }
}

/// The level `--require` asked for, and whether the diff met it.
#[derive(Serialize)]
struct Required<'a> {
    level: Option<&'a str>,
    met: bool,
}

/// The `cairn.diff/1` record.
fn record<'a>(
    old: &'a SideSpec,
    new: &'a SideSpec,
    outcome: &'a Outcome,
    flags: &'a DiffFlags,
    required: Option<bool>,
) -> DiffRecord<'a> {
    DiffRecord {
        schema: SCHEMA,
        old: SideRecord::of(old),
        new: SideRecord::of(new),
        functions: &outcome.functions,
        counts: &outcome.counts,
        semver: &outcome.semver,
        predicted: (!flags.no_predict)
            .then_some("predicted, not measured (MIR instructions of the function's own body)"),
        require: required.map(|met| Required { level: flags.require.as_deref(), met }),
        formal_status: "not-verified",
    }
}

/// A function's line in the human and Markdown renderings: class, name and evidence, two
/// spaces apart.
fn note_line(note: &Note) -> String {
    match &note.evidence {
        Some(evidence) => format!("{}  {}  {evidence}", note.class.name(), note.name),
        None => format!("{}  {}", note.class.name(), note.name),
    }
}

/// The semver line: the level, and why (or how many functions are unknown).
fn semver_line(outcome: &Outcome) -> String {
    let semver = &outcome.semver;
    match (semver.level, semver.at_least) {
        ("unknown", Some(proven)) => format!(
            "semver: unknown (at least {proven}): {} function(s) unknown",
            outcome.counts.get("unknown").copied().unwrap_or(0)
        ),
        (level, _) if !semver.reasons.is_empty() => format!("semver: {level}: {}", semver.reasons.join("; ")),
        (level, _) => format!("semver: {level}"),
    }
}

/// The pull-request section `--markdown` writes.
fn markdown(old: &SideSpec, new: &SideSpec, summary: &str, lines: &[String], semver_line: &str) -> String {
    let mut md = format!("### cairn diff `{}` → `{}`\n\n{summary}\n\n", old.named, new.named);
    if !lines.is_empty() {
        md.push_str("| class | function | evidence |\n|---|---|---|\n");
        for line in lines {
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
    md
}
