//! Fault injection for the durability tests: the process kills itself (`SIGKILL`, no unwinding,
//! no buffers flushed) at a named point of a write-back or a checkpoint.
//!
//! `CAIRN_FAULT=<point>:<n>` kills at the `n`-th time the process passes `<point>` (`n` defaults
//! to 1); `<point>` `*` counts every point, so `*:17` dies at the seventeenth point passed,
//! whichever it is — the kill test draws `n` at random over a script's points.
//! `CAIRN_FAULT_TRACE=<file>` appends the name of every point passed to `<file>`, one per line
//! (how a test learns how many points a script passes). Unset, a point costs one relaxed load.
//!
//! The points, in the order a write-back of the MCP server passes them (docs/durability.md):
//! `after-intent` (the ledger's intent is durable, no file touched), `stored` (the journal
//! entry is durable), `after-rename` (after each file's swap), `between-files` (after a swap
//! when another file follows), `before-completion` (the journal entry committed, the ledger's
//! completion not yet written), `after-completion`, and `during-checkpoint` (a session table's
//! new content is staged but not yet renamed over the old). `torn-ledger` writes half of a
//! ledger record and dies, leaving a torn last line.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

struct Plan {
    point: String,
    at: u64,
    passed: AtomicU64,
    trace: Option<std::path::PathBuf>,
}

fn plan() -> Option<&'static Plan> {
    static PLAN: OnceLock<Option<Plan>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let trace = std::env::var_os("CAIRN_FAULT_TRACE").filter(|t| !t.is_empty()).map(Into::into);
        let fault = std::env::var("CAIRN_FAULT").ok().filter(|f| !f.is_empty());
        if fault.is_none() && trace.is_none() {
            return None;
        }
        let (point, at) = match fault {
            Some(fault) => match fault.split_once(':') {
                Some((point, n)) => (point.to_string(), n.parse().unwrap_or(1)),
                None => (fault, 1),
            },
            None => (String::new(), 0),
        };
        Some(Plan { point, at, passed: AtomicU64::new(0), trace })
    })
    .as_ref()
}

/// True when the process should die at this pass of `name` (counting it).
fn due(name: &str) -> bool {
    let Some(plan) = plan() else { return false };
    if let Some(trace) = &plan.trace
        && let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(trace)
    {
        let _ = writeln!(file, "{name}");
    }
    if plan.point != "*" && plan.point != name {
        return false;
    }
    plan.passed.fetch_add(1, Ordering::SeqCst) + 1 == plan.at
}

/// Passes the named point: dies here if `CAIRN_FAULT` says so.
pub fn point(name: &str) {
    if due(name) {
        die();
    }
}

/// Passes the named point with a partial action: when the process is to die here, `partial`
/// runs first (a torn write), then the process dies.
pub fn point_torn(name: &str, partial: impl FnOnce()) {
    if due(name) {
        partial();
        die();
    }
}

fn die() -> ! {
    // SAFETY: signalling this process; SIGKILL cannot be caught, so nothing runs after it.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}
