//! Running a built program as a child process under limits: the one home for how `run` and
//! `test` start, bound, capture and describe a program's process (tools.md §3.3, §3.4).
//!
//! Limits: an address-space cap and no core dumps (set in the child before `exec`), a
//! wall-clock deadline after which the child is killed, and a cap on the bytes kept of each
//! captured stream — past it the child is killed too, so a program that floods its output
//! cannot grow this process's memory without bound (issue 11, D5).

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most bytes kept of one captured stream (`cairn run` in JSON mode, a test's output).
pub const OUTPUT_CAP: usize = 16 << 20;

/// How a captured run ended.
#[derive(Debug)]
pub struct Captured {
    /// `None` when the child could not be waited for.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Killed at the deadline.
    pub timed_out: bool,
    /// Killed because a stream passed [`OUTPUT_CAP`] (the kept bytes are the first ones).
    pub capped: bool,
    /// Killed because the caller's watch said so (a confined run's disk use).
    pub watched: bool,
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

/// Waits for a child whose streams are not captured, killing it at `deadline`; returns its
/// status and whether it was killed for time.
pub fn wait(mut child: Child, deadline: Duration) -> (Option<ExitStatus>, bool) {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), false),
            Ok(None) if started.elapsed() >= deadline => {
                let _ = child.kill();
                return (child.wait().ok(), true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => return (None, false),
        }
    }
}

/// Waits for a child whose standard output and error are piped: keeps at most `cap` bytes of
/// each, kills the child at `deadline` or when a stream passes the cap.
pub fn wait_captured(child: Child, deadline: Duration, cap: usize) -> Captured {
    wait_captured_watching(child, deadline, cap, &|| false)
}

/// [`wait_captured`], also killing the child when `watch` (asked every 50 ms) says to.
pub fn wait_captured_watching(mut child: Child, deadline: Duration, cap: usize, watch: &dyn Fn() -> bool) -> Captured {
    let over = Arc::new(AtomicBool::new(false));
    let reader = |pipe: Option<Box<dyn Read + Send>>, over: Arc<AtomicBool>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let Some(mut pipe) = pipe else { return kept };
            let mut buffer = [0u8; 64 * 1024];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let room = cap.saturating_sub(kept.len());
                        kept.extend_from_slice(&buffer[..n.min(room)]);
                        if n > room {
                            over.store(true, Ordering::SeqCst);
                            break;
                        }
                    }
                }
            }
            kept
        })
    };
    let stdout = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>), over.clone());
    let stderr = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>), over.clone());
    let started = Instant::now();
    let (mut timed_out, mut capped, mut watched) = (false, false, false);
    let mut last_watch = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None)
                if last_watch.elapsed() >= Duration::from_millis(50) && {
                    last_watch = Instant::now();
                    watch()
                } =>
            {
                let _ = child.kill();
                watched = true;
                break child.wait().ok();
            }
            Ok(None) if over.load(Ordering::SeqCst) => {
                let _ = child.kill();
                capped = true;
                break child.wait().ok();
            }
            Ok(None) if started.elapsed() >= deadline => {
                let _ = child.kill();
                timed_out = true;
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    // A stream that filled its cap as the program ended still lost bytes.
    capped |= over.load(Ordering::SeqCst);
    Captured { status, stdout, stderr, timed_out, capped, watched }
}

/// The shell's view of how a process ended: its status, or 128 plus the signal.
pub fn exit_code(status: &ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => -1,
    }
}

/// How a process ended, in words.
pub fn ended(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(libc::SIGABRT)) => {
            "was stopped by SIGABRT: a guard, an assertion or the stack failed (its line is above)".to_string()
        }
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

/// The first executable named `name` on `PATH`.
pub(crate) fn on_path(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}
