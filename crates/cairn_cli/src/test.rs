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

use serde_json::{Map, Value, json};

use crate::build::{BuildFlags, Purpose, Stopped, build};
use crate::output::Output;
use crate::process::{OUTPUT_CAP, ended, escaped, exit_code, limit, wait_captured};

/// One test's place in the selection, its record, and whether it passed.
type Outcome = (usize, Map<String, Value>, bool);

/// `cairn test` options.
pub struct TestFlags {
    pub filter: String,
    pub test: String,
    pub jobs: usize,
    pub timeout: u64,
    pub memory_mib: u64,
    pub build: BuildFlags,
}

pub fn run(path: &Path, flags: &TestFlags, out: Output) -> u8 {
    if flags.jobs > 64 || !(1..=300).contains(&flags.timeout) || !(64..=65536).contains(&flags.memory_mib) {
        out.environment("--jobs is 0..64, --timeout 1..300 seconds and --memory-mib 64..65536.");
        return 2;
    }
    let built = match build(path, Purpose::Tests, &flags.build, out) {
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
                    let (record, passed) =
                        run_one(&built.artifact, &built.program.root, index, name, file, *line, flags);
                    results.lock().expect("the results").push((position, record, passed));
                }
            });
        }
    });
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
    let mut blocks = Map::new();
    blocks.insert("status".into(), json!(block_status));
    blocks.insert("tests".into(), Value::Array(results.iter().map(|(_, r, _)| Value::Object(r.clone())).collect()));
    blocks.insert("passed".into(), json!(passed));
    blocks.insert("failed".into(), json!(failed));
    blocks.insert(
        "build".into(),
        json!({"status": "native-built", "artifact": built.artifact.display().to_string(), "directory": built.directory.display().to_string(), "exit_code": 0, "stderr": "", "message": ""}),
    );
    blocks.insert("workers".into(), json!(workers));
    let ok = failed == 0;
    let mut record = Map::new();
    record.insert("status".into(), json!(if ok { "passed-finite-tests" } else { "tests-not-passed" }));
    record.insert("tests".into(), json!([]));
    record.insert("blocks".into(), Value::Object(blocks));
    record.insert("formal_status".into(), json!("not-verified"));
    let detail = format!("{passed} passed, {failed} failed");
    out.summary(&record, ok, &detail);
    if matches!(out.format, crate::output::FormatChoice::Human) {
        for (_, test, passed) in &results {
            if !passed {
                let name = test.get("name").and_then(Value::as_str).unwrap_or("");
                let reason = test.get("reason").and_then(Value::as_str).unwrap_or("");
                eprintln!("failed: {name}: {reason}");
            }
        }
    }
    std::mem::forget(built.workspace);
    if ok { 0 } else { 1 }
}

fn run_one(
    artifact: &Path,
    root: &Path,
    index: usize,
    name: &str,
    file: &str,
    line: u32,
    flags: &TestFlags,
) -> (Map<String, Value>, bool) {
    let started = Instant::now();
    let mut command = Command::new(artifact);
    command.arg(index.to_string()).current_dir(root).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    limit(&mut command, Some(flags.memory_mib));
    let mut record = Map::new();
    record.insert("name".into(), json!(name));
    record.insert("file".into(), json!(file));
    record.insert("line".into(), json!(line));
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            record.insert("status".into(), json!("failed"));
            record.insert("reason".into(), json!(format!("could not start: {e}")));
            return (record, false);
        }
    };
    let deadline = Duration::from_secs(flags.timeout);
    let captured = wait_captured(child, deadline, OUTPUT_CAP);
    let (status, stdout, stderr, timed_out) = (captured.status, captured.stdout, captured.stderr, captured.timed_out);
    let passed = !timed_out && !captured.capped && status.as_ref().is_some_and(|s| s.success());
    record.insert("status".into(), json!(if passed { "passed" } else { "failed" }));
    let code = match &status {
        Some(s) if !timed_out => exit_code(s),
        _ => 128 + libc::SIGKILL,
    };
    record.insert("exit_code".into(), json!(code));
    if !passed {
        let stderr_text = String::from_utf8_lossy(&stderr);
        let reason = if timed_out {
            format!("timed out after {} s", flags.timeout)
        } else if captured.capped {
            format!("wrote more than {OUTPUT_CAP} bytes of output and was stopped")
        } else if let Some(line) = stderr_text.lines().rev().find(|l| l.starts_with("assertion failed ")) {
            line.to_string()
        } else {
            status.as_ref().map(ended).unwrap_or_default()
        };
        record.insert("reason".into(), json!(reason));
    }
    record.insert("stdout".into(), json!(escaped(&stdout).chars().take(8000).collect::<String>()));
    record.insert("stderr".into(), json!(escaped(&stderr).chars().take(8000).collect::<String>()));
    record.insert("elapsed_seconds".into(), json!((started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0));
    (record, passed)
}
