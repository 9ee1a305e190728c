//! What the cli crate's tests share: running a built program under valgrind's memcheck (the
//! memory-safety evidence of `run_programs.rs` and `differential_owners.rs`) and helgrind (the
//! race-freedom evidence of the parallel programs in `run_programs.rs`).

use std::path::Path;
use std::process::{Command, ExitStatus};

/// One memcheck run of a built program.
pub struct Memcheck {
    pub status: ExitStatus,
    pub stdout: String,
    /// memcheck's own report lines (`==PID== …`); the program's standard error is left out.
    pub reports: Vec<String>,
}

/// Runs `binary` under memcheck: invalid accesses always reported; lost blocks (definitely or
/// indirectly) reported unless the program is expected to trap (an abort releases nothing).
#[allow(dead_code)]
pub fn memcheck(binary: &Path, trapped: bool) -> Result<Memcheck, String> {
    memcheck_with(binary, trapped, &[], None)
}

/// [`memcheck`] with arguments for the program and text on its standard input.
#[allow(dead_code)]
pub fn memcheck_with(binary: &Path, trapped: bool, args: &[&str], stdin: Option<&str>) -> Result<Memcheck, String> {
    let leaks = if trapped { "--leak-check=no" } else { "--leak-check=full" };
    let output = run_with_stdin(
        Command::new("valgrind")
            .args(["-q", "--error-exitcode=99", leaks, "--show-leak-kinds=definite,indirect"])
            .args(["--errors-for-leak-kinds=definite,indirect"])
            .arg(binary)
            .args(args),
        stdin.unwrap_or_default(),
    )
    .map_err(|error| format!("cannot start valgrind ({error}): ./scripts/setup.sh installs it"))?;
    let reports = valgrind_lines(&String::from_utf8_lossy(&output.stderr));
    Ok(Memcheck { status: output.status, stdout: String::from_utf8_lossy(&output.stdout).to_string(), reports })
}

/// Runs `binary` under valgrind's helgrind with `lanes` lanes and fair scheduling (valgrind runs
/// one thread at a time; fair scheduling makes the lanes take turns, so that they interleave).
#[allow(dead_code)]
pub fn helgrind(binary: &Path, lanes: u32) -> Result<Memcheck, String> {
    helgrind_args(binary, lanes, &[])
}

/// [`helgrind`] with arguments for the program.
#[allow(dead_code)]
pub fn helgrind_args(binary: &Path, lanes: u32, args: &[&str]) -> Result<Memcheck, String> {
    let output = Command::new("valgrind")
        .args(["-q", "--tool=helgrind", "--fair-sched=yes", "--error-exitcode=99"])
        .arg(binary)
        .args(args)
        .env("CAIRN_LANES", lanes.to_string())
        .output()
        .map_err(|error| format!("cannot start valgrind ({error}): ./scripts/setup.sh installs it"))?;
    let reports = valgrind_lines(&String::from_utf8_lossy(&output.stderr));
    Ok(Memcheck { status: output.status, stdout: String::from_utf8_lossy(&output.stdout).to_string(), reports })
}

/// Valgrind's own lines (`==PID== …`) of a run's standard error; the program's are left out.
fn valgrind_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            l.strip_prefix("==").and_then(|r| r.split_once("==")).is_some_and(|(pid, _)| pid.parse::<u32>().is_ok())
        })
        .map(str::to_string)
        .collect()
}

/// Runs `command` with `stdin` on its standard input (an empty text: the input is at its end)
/// and collects its output.
#[allow(dead_code)]
pub fn run_with_stdin(command: &mut Command, stdin: &str) -> std::io::Result<std::process::Output> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    if let Some(mut input) = child.stdin.take() {
        // A program that stops reading early closes the pipe: that is its business.
        let _ = input.write_all(stdin.as_bytes());
    }
    child.wait_with_output()
}
