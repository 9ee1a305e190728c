//! `cairn test`: every `test` block of the program, each in its own process, several at once
//! (tools.md §3.4). The blocks are built into one runner whose first argument picks the test;
//! a block passes only when its process exits 0. Task contracts (`--contract`, the manifest's
//! `tests`) belong to a later issue: a manifest that lists them is refused with a clear message.
//!
//! Exit: 0 passed, 1 not passed (or a refused program), 2 environment.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::build::{BuildFlags, Purpose, Stopped, build};
use crate::output::{Output, to_map};
use crate::process::{OUTPUT_CAP, ended, escaped, exit_code, limit, wait_captured_watching};
use crate::sandbox::{Limits, Report, Workspace, report};

/// One test's place in the selection, its record, and whether it passed.
type Outcome = (usize, TestRecord, bool);

/// `cairn test` options.
pub struct TestFlags {
    pub filter: String,
    pub test: String,
    pub jobs: usize,
    pub timeout: u64,
    pub memory_mib: u64,
    /// Run each block confined in a disposable copy of the project (`--sandbox`).
    pub sandbox: bool,
    pub build: BuildFlags,
}

pub fn run(path: &Path, flags: &TestFlags, out: Output) -> u8 {
    if flags.jobs > 64 || !(1..=300).contains(&flags.timeout) || !(64..=65536).contains(&flags.memory_mib) {
        out.environment("--jobs is 0..64, --timeout 1..300 seconds and --memory-mib 64..65536.");
        return 2;
    }
    // Confined, the build goes outside the tree too: the project stays byte-identical.
    let scratch = std::env::temp_dir().join(format!("cairn-sandbox-test-{}", std::process::id()));
    let mut build_flags = flags.build.clone();
    if flags.sandbox && build_flags.out.is_none() {
        build_flags.out = Some(scratch.join("build"));
    }
    let built = match build(path, Purpose::Tests, &build_flags, out) {
        Ok(built) => built,
        Err(Stopped(status)) => return status,
    };
    if !built.program.tests.is_empty() {
        out.environment("Task contracts (the manifest's `tests`) are not run by this version of cairn; run the test blocks without them.");
        return 2;
    }
    let selected: Vec<(usize, &(String, String, u32))> = built
        .tests
        .iter()
        .enumerate()
        .filter(|(_, (name, _, _))| {
            if !flags.test.is_empty() {
                name == &flags.test || name.rsplit('.').next() == Some(flags.test.as_str())
            } else {
                name.contains(&flags.filter)
            }
        })
        .collect();
    if built.tests.is_empty() {
        out.environment("No tests to run: write a test block.");
        return 2;
    }
    let workers =
        if flags.jobs == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()).min(8) } else { flags.jobs };
    let results: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..workers.min(selected.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let position = {
                        let mut guard = next.lock().expect("the work counter");
                        let position = *guard;
                        *guard += 1;
                        position
                    };
                    let Some(&(index, (name, file, line))) = selected.get(position) else { break };
                    let place = if flags.sandbox {
                        Place::Confined(&built.program, &scratch)
                    } else {
                        Place::Root(&built.program.root)
                    };
                    let (record, passed) = run_one(&built.artifact, place, position, index, name, file, *line, flags);
                    results.lock().expect("the results").push((position, record, passed));
                }
            });
        }
    });
    if flags.sandbox {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(position, _, _)| *position);
    let passed = results.iter().filter(|(_, _, ok)| *ok).count();
    let failed = results.len() - passed;
    let block_status = if selected.is_empty() {
        "no-test-blocks"
    } else if failed == 0 {
        "passed-test-blocks"
    } else {
        "test-blocks-failed"
    };
    let ok = failed == 0;
    let record = TestsRecord {
        status: if ok { "passed-finite-tests" } else { "tests-not-passed" },
        tests: Vec::new(),
        blocks: Blocks {
            status: block_status,
            tests: results.iter().map(|(_, test, _)| test).collect(),
            passed,
            failed,
            build: BlocksBuild {
                status: "native-built",
                artifact: built.artifact.display().to_string(),
                directory: built.directory.display().to_string(),
                exit_code: 0,
                stderr: "",
                message: "",
            },
            workers,
            emulation: built.record.get("emulation").cloned(),
        },
        formal_status: "not-verified",
        security_sandbox: flags.sandbox
            && results.iter().all(|(_, test, _)| test.sandbox.as_ref().is_some_and(|s| s.sandboxed)),
    };
    let detail = format!("{passed} passed, {failed} failed");
    out.summary(&to_map(&record), ok, &detail);
    if matches!(out.format, crate::output::FormatChoice::Human) {
        for (_, test, passed) in &results {
            if !passed {
                let reason = test.reason().unwrap_or("");
                eprintln!("failed: {}: {reason}", test.name);
            }
        }
    }
    std::mem::forget(built.workspace);
    if ok { 0 } else { 1 }
}

/// Where a block runs: in the program's root with the user's rights, or confined in a disposable
/// copy of the program under the scratch directory.
#[derive(Clone, Copy)]
enum Place<'a> {
    Root(&'a Path),
    Confined(&'a cairn_vfs::Program, &'a Path),
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    artifact: &Path,
    place: Place<'_>,
    position: usize,
    index: usize,
    name: &str,
    file: &str,
    line: u32,
    flags: &TestFlags,
) -> (TestRecord, bool) {
    let started = Instant::now();
    let record = |status: &'static str, run: TestRun| TestRecord {
        name: name.to_string(),
        file: file.to_string(),
        line,
        status,
        run,
        sandbox: None,
    };
    let limits = Limits::for_run(flags.timeout, flags.memory_mib);
    let (mut command, workspace, sandboxed) = match place {
        Place::Root(root) => {
            let mut command = Command::new(artifact);
            command.arg(index.to_string()).current_dir(root);
            limit(&mut command, Some(flags.memory_mib));
            (command, None, false)
        }
        Place::Confined(program, scratch) => {
            let workspace = match Workspace::of_program(program, &scratch.join("runs"), &format!("test-{position}")) {
                Ok(workspace) => workspace,
                Err(e) => {
                    let reason = format!("could not make its disposable workspace: {e}");
                    return (record("failed", TestRun::NotStarted { reason }), false);
                }
            };
            let (command, sandboxed) = workspace.command(artifact, &[index.to_string()], &limits);
            (command, Some(workspace), sandboxed)
        }
    };
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return (record("failed", TestRun::NotStarted { reason: format!("could not start: {e}") }), false);
        }
    };
    let deadline = Duration::from_secs(flags.timeout);
    let disk_cap = limits.disk_mib << 20;
    let captured = wait_captured_watching(child, deadline, OUTPUT_CAP, &|| {
        workspace.as_ref().is_some_and(|w| w.disk_bytes() > disk_cap)
    });
    let watched = captured.watched;
    let confinement = workspace.map(|w| {
        let stopped = watched.then(|| format!("its workspace passed {} MiB", limits.disk_mib));
        report(sandboxed, limits, w.finish(), stopped)
    });
    let (status, stdout, stderr, timed_out) = (captured.status, captured.stdout, captured.stderr, captured.timed_out);
    let passed = !timed_out && !captured.capped && !watched && status.as_ref().is_some_and(|s| s.success());
    let code = match &status {
        Some(s) if !timed_out => exit_code(s),
        _ => 128 + libc::SIGKILL,
    };
    let reason = (!passed).then(|| {
        let stderr_text = String::from_utf8_lossy(&stderr);
        if timed_out {
            format!("timed out after {} s", flags.timeout)
        } else if captured.capped {
            format!("wrote more than {OUTPUT_CAP} bytes of output and was stopped")
        } else if watched {
            format!("filled its workspace past {} MiB and was stopped", limits.disk_mib)
        } else if let Some(line) = stderr_text.lines().rev().find(|l| l.starts_with("assertion failed ")) {
            line.to_string()
        } else {
            status.as_ref().map(ended).unwrap_or_default()
        }
    });
    let run = TestRun::Started {
        exit_code: code,
        reason,
        stdout: escaped(&stdout).chars().take(8000).collect(),
        stderr: escaped(&stderr).chars().take(8000).collect(),
        elapsed_seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    };
    let mut test = record(if passed { "passed" } else { "failed" }, run);
    test.sandbox = confinement;
    (test, passed)
}

/// The record of tools.md §3.4.
#[derive(Serialize)]
struct TestsRecord<'a> {
    status: &'static str,
    /// One entry per task contract, each `{"contract": <file name>, …the task evaluation's
    /// record}`: the evaluation's fields are its own, so an entry is open-ended. This version
    /// runs no contract, so the list is empty.
    tests: Vec<Map<String, Value>>,
    blocks: Blocks<'a>,
    formal_status: &'static str,
    /// True only when every block ran under bubblewrap (`--sandbox`).
    security_sandbox: bool,
}

/// The test blocks: their status, each test in source order, the counts, the runner's build.
#[derive(Serialize)]
struct Blocks<'a> {
    status: &'static str,
    tests: Vec<&'a TestRecord>,
    passed: usize,
    failed: usize,
    build: BlocksBuild,
    /// The parallelism used.
    workers: usize,
    /// How device work was emulated, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    emulation: Option<Value>,
}

/// The build of the test runner, as `blocks.build` reports it.
#[derive(Serialize)]
struct BlocksBuild {
    status: &'static str,
    artifact: String,
    directory: String,
    exit_code: i32,
    stderr: &'static str,
    message: &'static str,
}

/// One test block's record.
#[derive(Serialize)]
struct TestRecord {
    name: String,
    file: String,
    line: u32,
    /// `passed` or `failed`.
    status: &'static str,
    #[serde(flatten)]
    run: TestRun,
    /// With `--sandbox`: how the block was confined and what it changed in its workspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    sandbox: Option<Report>,
}

/// How a test's process went: started (then its end and output), or not even started.
#[derive(Serialize)]
#[serde(untagged)]
enum TestRun {
    Started {
        /// A timed-out test reads as killed by SIGKILL.
        exit_code: i32,
        /// Failed tests only.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The first 8000 characters.
        stdout: String,
        /// The first 8000 characters.
        stderr: String,
        elapsed_seconds: f64,
    },
    NotStarted {
        reason: String,
    },
}

impl TestRecord {
    /// Why the test failed, if it did.
    fn reason(&self) -> Option<&str> {
        match &self.run {
            TestRun::Started { reason, .. } => reason.as_deref(),
            TestRun::NotStarted { reason } => Some(reason),
        }
    }
}
