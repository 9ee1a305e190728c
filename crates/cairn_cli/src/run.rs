//! `cairn run`: build the executable, then run it under process limits (tools.md §3.3).
//!
//! Arguments after `--` go to the program. The memory cap (`--memory-mib`, default 1024) is an
//! address-space limit set in the child before it starts; core dumps are off. Human mode hands the
//! terminal to the program and, when it ends badly, writes `error: <project> …` on standard
//! error; JSON mode captures its output into a `program-exited` record. Exit: 0 when the program
//! exited 0, 1 when it exited otherwise or was stopped by a signal, 2 when the build failed.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Map, json};

use crate::build::{BuildFlags, Purpose, Stopped, build};
use crate::output::{FormatChoice, Output};

pub fn run(path: &Path, flags: &BuildFlags, memory_mib: u64, args: &[String], out: Output) -> u8 {
    if !(64..=65536).contains(&memory_mib) {
        out.environment("Native memory limit must be 64..65536 MiB.");
        return 2;
    }
    let built = match build(path, Purpose::Executable, flags, out) {
        Ok(built) => built,
        Err(Stopped(status)) => return status,
    };
    let mut command = Command::new(&built.artifact);
    command.args(args);
    limit(&mut command, Some(memory_mib));
    let status = match out.format {
        FormatChoice::Human => match command.status() {
            Ok(status) => {
                if !status.success() {
                    eprintln!("error: {} {}", built.program.name, ended(&status));
                }
                status
            }
            Err(e) => {
                out.environment(&format!("Cannot start {}: {e}.", built.artifact.display()));
                return 2;
            }
        },
        FormatChoice::Json => {
            command.stdin(Stdio::inherit()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let output = match command.output() {
                Ok(output) => output,
                Err(e) => {
                    out.environment(&format!("Cannot start {}: {e}.", built.artifact.display()));
                    return 2;
                }
            };
            let mut record = Map::new();
            record.insert("status".into(), json!("program-exited"));
            record.insert("exit_code".into(), json!(exit_code(&output.status)));
            record.insert("stdout".into(), json!(escaped(&output.stdout)));
            record.insert("stderr".into(), json!(escaped(&output.stderr)));
            record.insert("build_directory".into(), json!(built.directory.display().to_string()));
            record.insert("security_sandbox".into(), json!(false));
            record.insert("memory_limit_mib".into(), json!(memory_mib));
            out.json(&record);
            output.status
        }
    };
    std::mem::forget(built.workspace);
    if status.success() { 0 } else { 1 }
}

/// Sets the child's limits: no core dumps, and the address-space cap when given.
pub fn limit(command: &mut Command, memory_mib: Option<u64>) {
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit, which
    // is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::setrlimit(libc::RLIMIT_CORE, &core);
            if let Some(mib) = memory_mib {
                let bytes = mib.saturating_mul(1 << 20) as libc::rlim_t;
                let cap = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
                libc::setrlimit(libc::RLIMIT_AS, &cap);
            }
            Ok(())
        });
    }
}

/// The shell's view of how a process ended: its status, or 128 plus the signal.
pub fn exit_code(status: &std::process::ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => -1,
    }
}

/// How a process ended, in words.
pub fn ended(status: &std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(libc::SIGABRT)) => "was stopped by SIGABRT: a guard failed".to_string(),
        (None, Some(signal)) => format!("was stopped by signal {signal}"),
        (None, None) => "ended in an unknown way".to_string(),
    }
}

/// Output bytes as text, with bytes that are not UTF-8 written as `\xNN`.
pub fn escaped(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                break;
            }
            Err(error) => {
                let (good, bad) = rest.split_at(error.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let skip = error.error_len().unwrap_or(bad.len());
                for byte in &bad[..skip] {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
                rest = &bad[skip..];
            }
        }
    }
    out
}
