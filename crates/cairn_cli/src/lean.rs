//! How a long-lived server holds its memory (issue 22): no transparent huge pages, and the
//! allocator giving freed pages back. `cairn` sets both when it hands a server over
//! (`front.rs`, [`for_a_server`]), before the `exec`, so they hold from the server's first
//! allocation, and says what it set in `CAIRN_SERVER_LEAN` (`huge-pages`, `allocator`); a server
//! started some other way (`cairn-serve` or `cairn-full` run by hand) turns huge pages off itself
//! ([`unless_handed_over`]). A harness child of a server (`cairn-full harness-runner`) takes back
//! what `cairn` set, and only that ([`for_a_harness`], [`restore_in_harness`]): its builds and the
//! programs it runs and times are not a server. (`cairn-full mcp` builds its harnesses in process,
//! so there they run with huge pages off.)
//!
//! Measured both ways over `cairn mcp` (bench/README.md): without huge pages, 132–155 MiB after
//! 200 written edits of a 22k-line program against 172–184 MiB with them; with the allocator's
//! arenas committed on demand (`MIMALLOC_ARENA_EAGER_COMMIT=0`), 58–62 MiB after 200 written edits
//! of a 10k-line program against 67–68 MiB; p50 latencies the same within the machine's noise.
//! A short command (`check`, `run`) keeps the defaults: there they save page faults.
//! `CAIRN_SERVER_HUGE_PAGES=1` keeps huge pages in the servers too (to measure both ways), and a
//! `MIMALLOC_ARENA_EAGER_COMMIT` already set is left as it is.

/// The allocator's setting for a server: arenas committed as they are used, so the pages an edit
/// frees are given back.
const SERVER_ALLOCATOR: (&str, &str) = ("MIMALLOC_ARENA_EAGER_COMMIT", "0");

/// Where `cairn` says what it set for the server it handed over.
const MARKER: &str = "CAIRN_SERVER_LEAN";

/// Prepares the `exec` of a server: huge pages off, the allocator's setting in its environment,
/// and the marker naming what was set.
pub(crate) fn for_a_server(command: &mut std::process::Command) {
    let mut set = Vec::new();
    if huge_pages_wanted_off() {
        set_huge_pages_off(true);
        set.push("huge-pages");
    }
    let (name, value) = SERVER_ALLOCATOR;
    if std::env::var_os(name).is_none() {
        command.env(name, value);
        set.push("allocator");
    }
    command.env(MARKER, set.join(","));
}

/// A server not handed over by `cairn` turns huge pages off itself.
pub(crate) fn unless_handed_over() {
    if std::env::var_os(MARKER).is_none() && huge_pages_wanted_off() {
        set_huge_pages_off(true);
    }
}

/// Prepares the start of a server's harness child: without the allocator's setting, when `cairn`
/// set it (the child gives its huge pages back itself, [`restore_in_harness`]).
pub(crate) fn for_a_harness(command: &mut std::process::Command) {
    if marked("allocator") {
        command.env_remove(SERVER_ALLOCATOR.0);
    }
}

/// In a server's harness child: the system's huge-page policy back, when `cairn` turned it off.
pub(crate) fn restore_in_harness() {
    if marked("huge-pages") {
        set_huge_pages_off(false);
    }
}

fn huge_pages_wanted_off() -> bool {
    std::env::var_os("CAIRN_SERVER_HUGE_PAGES").is_none_or(|v| v != "1")
}

/// Whether the marker names `what`.
fn marked(what: &str) -> bool {
    std::env::var(MARKER).is_ok_and(|set| set.split(',').any(|s| s == what))
}

/// The process's flag; kept across `fork` and `exec`.
fn set_huge_pages_off(off: bool) {
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes nothing but the
    // process's own huge-page flag.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(off), 0, 0, 0);
    }
}
