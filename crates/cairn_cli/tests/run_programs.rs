//! Execution tests: every `tests/run/*.cairn` is a small complete program that `cairn run` builds with
//! LLVM and runs. Expectations are `//` comments at the top of each file: `// exit: N` (required, the
//! status in the run record: 134 for a failed guard), `// stdout: TEXT` once per expected output line
//! (joined with "\n" and ended by a final "\n" unless the file says `// stdout-no-final-newline`; no
//! such line means standard output is empty), and `// stderr-contains: TEXT` (a substring of standard
//! error, e.g. the guard's `overflow guard failed at FILE:LINE:`). Other comment lines are prose.
//! Programs under `tests/run/pending/` state the specification's answer where the compiler still
//! disagrees; they are not run here. Every program is run (on two threads) and all mismatches are
//! reported together at the end.
//!
//! Memory safety: every built program is run a second time under valgrind's memcheck (Debian's
//! package, installed by the set-up), which must report no invalid access and, for a program that
//! ends normally, no definitely or indirectly lost block — the evidence that generated code,
//! owners and their drop glue included, is memory-safe and leak-free. A program that ends by a
//! trap is held to the first rule only (an abort releases nothing, by design). A program whose
//! header says `// memcheck: no` is not run under valgrind (the stack-overflow test: valgrind runs
//! programs on a stack of its own).
//!
//! Device programs: a header `// flags: --emulate --device-target sm_90` passes those flags to
//! `cairn run` (device work runs emulated on host threads, language §41).
//!
//! Parallel programs: a header `// lanes: 1 2 3 7` runs the built program again with each of
//! those `CAIRN_LANES` values, which must give the same ending and output (the number of lanes
//! never changes a result, language §24), and once under valgrind's helgrind with three lanes and
//! fair scheduling (so that the lanes really interleave under valgrind), which must report no
//! data race. `the_lane_pool_is_race_free` shows the helgrind check can fail: a racy lane
//! function driven through the runtime's pool is reported, a race-free one is not.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one program's header asks for.
struct Expectation {
    exit: Option<i64>,
    stdout_lines: Vec<String>,
    final_newline: bool,
    stderr_contains: Vec<String>,
    /// False when the header says `// memcheck: no`.
    memcheck: bool,
    /// The `CAIRN_LANES` values a parallel program is run again with (`// lanes: 1 2 3 7`).
    lanes: Vec<u32>,
    /// What the program reads on standard input (`// stdin: LINE`, each line ending in `\n`).
    stdin: String,
    /// The program's arguments (`// args: a b c`, split at spaces).
    args: Vec<String>,
    /// Flags for `cairn run` (`// flags: --emulate --device-target sm_90`).
    flags: Vec<String>,
}

impl Expectation {
    fn stdout(&self) -> String {
        let mut text = self.stdout_lines.join("\n");
        if self.final_newline && !self.stdout_lines.is_empty() {
            text.push('\n');
        }
        text
    }
}

/// Reads the leading `//` block of a program.
fn parse_header(source: &str) -> Result<Expectation, String> {
    let mut expectation = Expectation {
        exit: None,
        stdout_lines: Vec::new(),
        final_newline: true,
        stderr_contains: Vec::new(),
        memcheck: true,
        lanes: Vec::new(),
        stdin: String::new(),
        args: Vec::new(),
        flags: Vec::new(),
    };
    for line in source.lines() {
        let Some(comment) = line.strip_prefix("//") else { break };
        if let Some(value) = comment.strip_prefix(" exit:") {
            let value = value.trim();
            let code = value.parse::<i64>().map_err(|_| format!("`// exit:` needs a number, got `{value}`"))?;
            if expectation.exit.replace(code).is_some() {
                return Err("more than one `// exit:` line".to_string());
            }
        } else if let Some(text) = comment.strip_prefix(" stdout:") {
            // `// stdout: TEXT` gives TEXT exactly; `// stdout:` alone is an empty line.
            expectation.stdout_lines.push(text.strip_prefix(' ').unwrap_or(text).to_string());
        } else if let Some(counts) = comment.strip_prefix(" lanes:") {
            for count in counts.split_whitespace() {
                let count =
                    count.parse::<u32>().map_err(|_| format!("`// lanes:` takes lane counts, got `{count}`"))?;
                expectation.lanes.push(count);
            }
        } else if let Some(text) = comment.strip_prefix(" stdin:") {
            expectation.stdin.push_str(text.strip_prefix(' ').unwrap_or(text));
            expectation.stdin.push('\n');
        } else if let Some(flags) = comment.strip_prefix(" flags:") {
            expectation.flags.extend(flags.split_whitespace().map(str::to_string));
        } else if let Some(args) = comment.strip_prefix(" args:") {
            expectation.args.extend(args.split_whitespace().map(str::to_string));
        } else if comment.trim_end() == " memcheck: no" {
            expectation.memcheck = false;
        } else if comment.trim_end() == " stdout-no-final-newline" {
            expectation.final_newline = false;
        } else if let Some(text) = comment.strip_prefix(" stderr-contains:") {
            let text = text.strip_prefix(' ').unwrap_or(text);
            if text.is_empty() {
                return Err("empty `// stderr-contains:`".to_string());
            }
            expectation.stderr_contains.push(text.to_string());
        }
    }
    if expectation.exit.is_none() {
        return Err("no `// exit: N` line at the top".to_string());
    }
    Ok(expectation)
}

fn run_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/run")
}

fn programs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(run_dir())
        .expect("tests/run exists")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "cairn"))
        .collect();
    files.sort();
    files
}

/// Shows text with its control characters escaped, so that differences in whitespace are visible.
fn shown(text: &str) -> String {
    format!("{text:?}")
}

/// Runs one program and returns what is wrong with its result (empty when it matches).
fn check_program(path: &Path, out_dir: &Path) -> Vec<String> {
    let source = match std::fs::read_to_string(path) {
        Ok(source) => source,
        Err(error) => return vec![format!("cannot read the program: {error}")],
    };
    let expected = match parse_header(&source) {
        Ok(expected) => expected,
        Err(problem) => return vec![format!("bad header: {problem}")],
    };
    let output = match common::run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("run")
            .arg(path)
            .args(["--format", "json", "--out"])
            .arg(out_dir)
            .args(&expected.flags)
            .arg("--")
            .args(&expected.args)
            .env_remove("CAIRN_FORMAT")
            .env("NO_COLOR", "1"),
        &expected.stdin,
    ) {
        Ok(output) => output,
        Err(error) => return vec![format!("cannot start cairn: {error}")],
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let record: serde_json::Value = match serde_json::from_str(stdout.trim()) {
        Ok(record) => record,
        Err(_) => {
            return vec![format!(
                "cairn printed no JSON record (status {:?})\n      stdout: {}\n      stderr: {}",
                output.status.code(),
                shown(&stdout),
                shown(&String::from_utf8_lossy(&output.stderr)),
            )];
        }
    };
    if record["status"] != "program-exited" {
        let what = match (record["code"].as_str(), record["message"].as_str()) {
            (Some(code), Some(message)) => format!("{code}: {message}"),
            _ => record.to_string(),
        };
        return vec![format!("the program did not run: {what}")];
    }

    let mut problems = Vec::new();
    let exit_code = record["exit_code"].as_i64();
    if exit_code != expected.exit {
        problems.push(format!(
            "exit: expected {}, got {}",
            expected.exit.unwrap_or_default(),
            match exit_code {
                Some(code) => code.to_string(),
                None => format!("no exit_code in {record}"),
            }
        ));
    }
    let got_stdout = record["stdout"].as_str().unwrap_or_default();
    let want_stdout = expected.stdout();
    if got_stdout != want_stdout {
        problems.push(format!("stdout:\n      expected {}\n      got      {}", shown(&want_stdout), shown(got_stdout)));
    }
    let got_stderr = record["stderr"].as_str().unwrap_or_default();
    for needle in &expected.stderr_contains {
        if !got_stderr.contains(needle.as_str()) {
            problems.push(format!("stderr: expected to contain {}, got {}", shown(needle), shown(got_stderr)));
        }
    }
    let binary = executable_in(Path::new(record["build_directory"].as_str().unwrap_or_default()));
    if problems.is_empty() && expected.memcheck {
        match &binary {
            Some(binary) => problems.extend(memcheck(binary, &expected)),
            None => problems.push("memcheck: no executable in the build directory".to_string()),
        }
    }
    if problems.is_empty() && !expected.lanes.is_empty() {
        match &binary {
            Some(binary) => problems.extend(lane_counts(binary, &expected)),
            None => problems.push("lanes: no executable in the build directory".to_string()),
        }
    }
    problems
}

/// True when a run ended as `expected` says (a trap: SIGABRT, or 134 through a shell).
fn ended_as(status: &std::process::ExitStatus, expected: &Expectation) -> bool {
    use std::os::unix::process::ExitStatusExt;
    if expected.exit == Some(134) {
        status.signal() == Some(6) || status.code() == Some(134)
    } else {
        status.code().map(i64::from) == expected.exit
    }
}

/// Runs the program at each lane count of its header, then under helgrind.
fn lane_counts(binary: &Path, expected: &Expectation) -> Vec<String> {
    let mut problems = Vec::new();
    for &lanes in &expected.lanes {
        let output = match common::run_with_stdin(
            Command::new(binary).args(&expected.args).env("CAIRN_LANES", lanes.to_string()),
            &expected.stdin,
        ) {
            Ok(output) => output,
            Err(error) => return vec![format!("lanes: cannot run the program: {error}")],
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !ended_as(&output.status, expected) || stdout != expected.stdout() {
            problems.push(format!("CAIRN_LANES={lanes}: status {:?}, stdout {}", output.status, shown(&stdout)));
        }
        for needle in &expected.stderr_contains {
            if !stderr.contains(needle.as_str()) {
                problems.push(format!("CAIRN_LANES={lanes}: stderr lacks {}: {}", shown(needle), shown(&stderr)));
            }
        }
    }
    // Valgrind runs a program on a stack of its own: a program that overflows its stack on
    // purpose (`// memcheck: no`) is not run under helgrind either.
    if !expected.memcheck {
        return problems;
    }
    let args: Vec<&str> = expected.args.iter().map(String::as_str).collect();
    match common::helgrind_args(binary, 3, &args) {
        Ok(checked) => {
            if !ended_as(&checked.status, expected) || !checked.reports.is_empty() {
                problems.push(format!(
                    "helgrind: status {:?}, reports:\n{}",
                    checked.status,
                    checked.reports.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
                ));
            }
        }
        Err(problem) => problems.push(problem),
    }
    problems
}

/// The one executable a build directory holds (beside its object file and receipt).
fn executable_in(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.is_file() && p.metadata().is_ok_and(|m| m.permissions().mode() & 0o111 != 0))
}

/// Runs the built program under valgrind's memcheck: what it reports, and any difference from
/// the plain run's output and ending.
fn memcheck(binary: &Path, expected: &Expectation) -> Vec<String> {
    let trapped = expected.exit == Some(134);
    let args: Vec<&str> = expected.args.iter().map(String::as_str).collect();
    let checked = match common::memcheck_with(binary, trapped, &args, Some(&expected.stdin)) {
        Ok(checked) => checked,
        Err(problem) => return vec![problem],
    };
    let ended_as_expected = if trapped {
        use std::os::unix::process::ExitStatusExt;
        checked.status.signal() == Some(6) || checked.status.code() == Some(134)
    } else {
        checked.status.code().map(i64::from) == expected.exit
    };
    let mut problems = Vec::new();
    if !ended_as_expected || !checked.reports.is_empty() {
        problems.push(format!(
            "memcheck: status {:?}, reports:\n{}",
            checked.status,
            checked.reports.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
        ));
    }
    if checked.stdout != expected.stdout() {
        problems.push("memcheck: standard output differs under valgrind".to_string());
    }
    problems
}

#[test]
fn run_programs() {
    let files = programs();
    assert!(!files.is_empty(), "no programs in {}", run_dir().display());
    let out_dir = std::env::temp_dir().join(format!("cairn-run-tests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).expect("create the build parent");

    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(index) else { break };
                    let problems = check_program(path, &out_dir);
                    if !problems.is_empty() {
                        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                        failures.lock().unwrap_or_else(|e| e.into_inner()).push((name, problems));
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&out_dir);

    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort();
    if !failures.is_empty() {
        let mut report = format!("{} of {} programs in tests/run failed:\n", failures.len(), files.len());
        for (name, problems) in &failures {
            report.push_str(&format!("\n  {name}\n"));
            for problem in problems {
                report.push_str(&format!("    {problem}\n"));
            }
        }
        panic!("{report}");
    }
}

/// A C driver of the runtime's pool: `racy` sums into one shared word from every lane (a data
/// race), `clean` writes each index's own element.
const POOL_DRIVER: &str = r#"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void cairn_rt_parallel(void (*fn)(void *, uint64_t, uint64_t), void *env, uint64_t count, uint64_t work,
                       uint64_t grain, int32_t lanes);
static uint64_t shared_total;
static void racy(void *env, uint64_t lo, uint64_t hi) { (void)env; for (uint64_t i = lo; i < hi; i++) shared_total += i; }
static void own(void *env, uint64_t lo, uint64_t hi) { uint64_t *out = env; for (uint64_t i = lo; i < hi; i++) out[i] = i * 2; }
int main(int argc, char **argv) {
    uint64_t n = 3000000;
    uint64_t *out = calloc(n, 8);
    if (argc > 1 && argv[1][0] == 'r') cairn_rt_parallel(racy, NULL, n, n, 0, 0);
    cairn_rt_parallel(own, out, n, n, 0, 0);
    cairn_rt_parallel(own, out, n, n, 0, 3);
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) s += out[i];
    printf("%llu\n", (unsigned long long)s);
    free(out);
    return 0;
}
"#;

#[test]
fn the_lane_pool_is_race_free() {
    let dir = std::env::temp_dir().join(format!("cairn-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    std::fs::write(dir.join("driver.c"), POOL_DRIVER).expect("write the driver");
    std::fs::write(dir.join("host.c"), cairn_codegen::RUNTIME_C).expect("write the runtime");
    let built = Command::new("cc")
        .args(["-O2", "-std=c11", "-pthread", "-o"])
        .arg(dir.join("driver"))
        .arg(dir.join("driver.c"))
        .arg(dir.join("host.c"))
        .arg("-lm")
        .output()
        .expect("run cc");
    assert!(built.status.success(), "the driver did not build: {}", String::from_utf8_lossy(&built.stderr));
    let binary = dir.join("driver");
    let clean = common::helgrind_args(&binary, 3, &["clean"]).expect("helgrind runs");
    assert!(clean.status.success(), "the clean driver failed: {:?}", clean.status);
    assert_eq!(clean.stdout.trim(), "8999997000000");
    assert!(clean.reports.is_empty(), "helgrind reported the pool itself:\n{}", clean.reports.join("\n"));
    // Whether the racy lanes overlap depends on the schedule: on a loaded machine one lane may
    // take every claim before the others start. Up to three runs must see the race at least once.
    let seen = (0..3).any(|_| {
        let racy = common::helgrind_args(&binary, 3, &["racy"]).expect("helgrind runs");
        racy.reports.iter().any(|line| line.contains("Possible data race"))
    });
    assert!(seen, "helgrind did not see the racy lane function in three runs: the check could not fail");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn headers_parse() {
    let e = parse_header("// exit: 134\n// stdout: a b\n// stdout:\n// stdout-no-final-newline\n// stderr-contains: x y\n// prose\nfn main() -> i32 { return 0; }\n// exit: 9\n")
        .expect("parses");
    assert_eq!(e.exit, Some(134));
    assert_eq!(e.stdout(), "a b\n");
    assert_eq!(e.stderr_contains, vec!["x y".to_string()]);
    let e = parse_header("// exit: 0\n// stdout: one\n// stdout: two \n").expect("parses");
    assert_eq!(e.stdout(), "one\ntwo \n");
    assert!(parse_header("// stdout: x\nfn main() -> i32 { return 0; }\n").is_err());
    assert!(parse_header("// exit: 0\n// exit: 1\n").is_err());
    let e = parse_header("// exit: 0\n// lanes: 1 2 3 7\n").expect("parses");
    assert_eq!(e.lanes, vec![1, 2, 3, 7]);
    assert!(parse_header("// exit: 0\n// lanes: two\n").is_err());
}
