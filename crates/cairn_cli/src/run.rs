//! `cairn run`: build the executable, then run it under process limits (tools.md §3.3).
//!
//! Arguments after `--` go to the program. The memory cap (`--memory-mib`, default 1024) is an
//! address-space limit set in the child before it starts; core dumps are off. `--timeout S`
//! (default 60) bounds the build and the run together: a program still running then is stopped
//! and reported as an environment record (exit 2). Human mode hands the terminal to the program
//! and, when it ends badly, writes `error: <project> …` on standard error; JSON mode captures
//! its output into a `program-exited` record, each stream capped at 16 MiB (past it the program
//! is stopped, and the environment record says so). Exit: 0 when the program exited 0, 1 when
//! it exited otherwise or was stopped by a signal, 2 when the build failed or a limit stopped it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_diagnostics::record::EnvironmentRecord;
use serde::Serialize;

use crate::build::{BuildFlags, Purpose, Stopped, build};
use crate::output::{FormatChoice, Output, to_map};
use crate::process::{OUTPUT_CAP, ended, escaped, exit_code, limit, wait, wait_captured, wait_captured_watching};
use crate::sandbox::{Limits, Report, Workspace, report};

pub fn run(path: &Path, flags: &BuildFlags, memory_mib: u64, args: &[String], out: Output) -> u8 {
    if !(64..=65536).contains(&memory_mib) {
        out.environment("Native memory limit must be 64..65536 MiB.");
        return 2;
    }
    let started = Instant::now();
    let built = match build(path, Purpose::Executable, flags, out) {
        Ok(built) => built,
        Err(Stopped(status)) => return status,
    };
    // What is left of the time limit after the build.
    let deadline = Duration::from_secs(flags.timeout).saturating_sub(started.elapsed());
    let mut command = Command::new(&built.artifact);
    command.args(args);
    limit(&mut command, Some(memory_mib));
    let stopped_for_time = |out: &Output| {
        out.environment(&format!(
            "{} was still running after {} s (the --timeout of the build and run together); it was stopped.",
            built.program.name, flags.timeout
        ));
        2
    };
    let status = match out.format {
        FormatChoice::Human => {
            let child = match command.spawn() {
                Ok(child) => child,
                Err(e) => {
                    out.environment(&format!("Cannot start {}: {e}.", built.artifact.display()));
                    return 2;
                }
            };
            match wait(child, deadline) {
                (_, true) => return stopped_for_time(&out),
                (Some(status), false) => {
                    if !status.success() {
                        eprintln!("error: {} {}", built.program.name, ended(&status));
                    }
                    status
                }
                (None, false) => {
                    out.environment(&format!("Cannot wait for {}.", built.artifact.display()));
                    return 2;
                }
            }
        }
        FormatChoice::Json => {
            command.stdin(Stdio::inherit()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let child = match command.spawn() {
                Ok(child) => child,
                Err(e) => {
                    out.environment(&format!("Cannot start {}: {e}.", built.artifact.display()));
                    return 2;
                }
            };
            let captured = wait_captured(child, deadline, OUTPUT_CAP);
            if captured.timed_out {
                return stopped_for_time(&out);
            }
            if captured.capped {
                let message = format!(
                    "{} wrote more than {OUTPUT_CAP} bytes to one of its streams; it was stopped there, and the first {OUTPUT_CAP} bytes of each are kept.",
                    built.program.name
                );
                let record = Capped {
                    environment: EnvironmentRecord::new(&message),
                    output_cap_bytes: OUTPUT_CAP,
                    stdout: escaped(&captured.stdout),
                    stderr: escaped(&captured.stderr),
                };
                out.json(&to_map(&record));
                return 2;
            }
            let Some(status) = captured.status else {
                out.environment(&format!("Cannot wait for {}.", built.artifact.display()));
                return 2;
            };
            let record = Exited {
                status: "program-exited",
                exit_code: exit_code(&status),
                stdout: escaped(&captured.stdout),
                stderr: escaped(&captured.stderr),
                build_directory: built.directory.display().to_string(),
                security_sandbox: false,
                memory_limit_mib: memory_mib,
                emulation: built.record.get("emulation").cloned(),
            };
            out.json(&to_map(&record));
            status
        }
    };
    std::mem::forget(built.workspace);
    if status.success() { 0 } else { 1 }
}

/// `cairn run --sandbox`: the program built outside the tree, then run confined in a disposable
/// copy of its project ([`crate::sandbox`]); its output is captured in both modes, and the record
/// (or, in human mode, a last line on standard error) says how it was confined and what it changed.
pub fn run_confined(path: &Path, flags: &BuildFlags, memory_mib: u64, args: &[String], out: Output) -> u8 {
    if !(64..=65536).contains(&memory_mib) {
        out.environment("Native memory limit must be 64..65536 MiB.");
        return 2;
    }
    let started = Instant::now();
    let scratch = std::env::temp_dir().join(format!("cairn-sandbox-{}", std::process::id()));
    // The build goes outside the tree too: a confined run leaves the project byte-identical.
    let mut flags = flags.clone();
    if flags.out.is_none() {
        flags.out = Some(scratch.join("build"));
    }
    let built = match build(path, Purpose::Executable, &flags, out) {
        Ok(built) => built,
        Err(Stopped(status)) => return status,
    };
    let deadline = Duration::from_secs(flags.timeout).saturating_sub(started.elapsed());
    let workspace = match Workspace::of_program(&built.program, &scratch, "workspace") {
        Ok(workspace) => workspace,
        Err(e) => {
            out.environment(&format!("Cannot make the disposable workspace: {e}."));
            return 2;
        }
    };
    let limits = Limits::for_run(flags.timeout, memory_mib);
    let (mut command, sandboxed) = workspace.command(&built.artifact, args, &limits);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            out.environment(&format!("Cannot start {}: {e}.", built.artifact.display()));
            return 2;
        }
    };
    let disk_cap = limits.disk_mib << 20;
    let captured = wait_captured_watching(child, deadline, OUTPUT_CAP, &|| workspace.disk_bytes() > disk_cap);
    let changeset = workspace.finish();
    let _ = std::fs::remove_dir_all(&scratch);
    let stopped = if captured.timed_out {
        Some(format!("it was still running after {} s (--timeout)", flags.timeout))
    } else if captured.capped {
        Some(format!("it wrote more than {OUTPUT_CAP} bytes to a stream"))
    } else if captured.watched {
        Some(format!("its workspace passed {} MiB", limits.disk_mib))
    } else {
        None
    };
    let confinement = report(sandboxed, limits, changeset, stopped.clone());
    let name = built.program.name.clone();
    let emulation = built.record.get("emulation").cloned();
    std::mem::forget(built.workspace);
    let status = captured.status;
    let record = Confined {
        status: if stopped.is_some() { "program-stopped" } else { "program-exited" },
        exit_code: status.as_ref().map_or(-1, exit_code),
        stdout: escaped(&captured.stdout),
        stderr: escaped(&captured.stderr),
        security_sandbox: confinement.sandboxed,
        memory_limit_mib: memory_mib,
        sandbox: confinement,
        emulation,
    };
    match out.format {
        FormatChoice::Json => out.json(&to_map(&record)),
        FormatChoice::Human => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(&captured.stdout);
            let _ = std::io::stderr().write_all(&captured.stderr);
            let how = if record.sandbox.sandboxed { "sandboxed (bubblewrap)" } else { "NOT sandboxed (limits only)" };
            let changed = record.sandbox.changeset.len();
            eprintln!("note: {name} ran {how}; it changed {changed} path(s) of its disposable workspace, none applied");
            if let Some(why) = &stopped {
                eprintln!("error: {name} was stopped: {why}");
            } else if let Some(status) = &status
                && !status.success()
            {
                eprintln!("error: {name} {}", ended(status));
            }
        }
    }
    match (&stopped, &status) {
        (Some(_), _) | (None, None) => 2,
        (None, Some(status)) if status.success() => 0,
        _ => 1,
    }
}

/// The JSON record of a confined run (`program-exited`, or `program-stopped` when a limit the
/// caller watches stopped it; the kernel's limits show as a signal or a failed call).
#[derive(Serialize)]
struct Confined {
    status: &'static str,
    exit_code: i32,
    stdout: String,
    stderr: String,
    security_sandbox: bool,
    memory_limit_mib: u64,
    sandbox: Report,
    /// How device work was emulated, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    emulation: Option<serde_json::Value>,
}

/// The JSON record of a program that ran to its end (tools.md §3.3).
#[derive(Serialize)]
struct Exited {
    status: &'static str,
    exit_code: i32,
    stdout: String,
    stderr: String,
    build_directory: String,
    /// The limits are not a sandbox, and the record says so.
    security_sandbox: bool,
    memory_limit_mib: u64,
    /// How device work was emulated, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    emulation: Option<serde_json::Value>,
}

/// The environment record of a program stopped at the output cap, with what it wrote up to it.
#[derive(Serialize)]
struct Capped<'a> {
    #[serde(flatten)]
    environment: EnvironmentRecord<'a>,
    output_cap_bytes: usize,
    stdout: String,
    stderr: String,
}
