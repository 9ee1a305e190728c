//! How a long-lived server holds its memory (issue 22): no transparent huge pages, and the
//! allocator giving freed pages back. The servers are started by `cairn`'s hand-over
//! (`front.rs`), which sets both before `exec` so they hold from the server's first allocation;
//! `cairn-full mcp`/`lsp` turn the huge pages off themselves (`servers.rs`). A harness child of a
//! server (`cairn-full harness-runner`) takes both back: its builds and the programs it runs and
//! times are not a server.
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
pub(crate) const SERVER_ALLOCATOR: (&str, &str) = ("MIMALLOC_ARENA_EAGER_COMMIT", "0");

/// Turns transparent huge pages off for this process and what it `exec`s or starts (the flag
/// is kept across both), unless `CAIRN_SERVER_HUGE_PAGES=1`.
pub(crate) fn without_huge_pages() {
    if std::env::var_os("CAIRN_SERVER_HUGE_PAGES").is_some_and(|v| v == "1") {
        return;
    }
    set_huge_pages_off(true);
}

/// Gives this process back the system's huge-page policy (a server's harness child).
pub(crate) fn with_huge_pages() {
    set_huge_pages_off(false);
}

fn set_huge_pages_off(off: bool) {
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes nothing but the
    // process's own huge-page flag.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(off), 0, 0, 0);
    }
}

/// Prepares the `exec` of a server: huge pages off, the allocator's setting in its environment.
pub(crate) fn for_a_server(command: &mut std::process::Command) {
    without_huge_pages();
    let (name, value) = SERVER_ALLOCATOR;
    if std::env::var_os(name).is_none() {
        command.env(name, value);
    }
}

/// Prepares the start of a server's harness child: the allocator's default (its huge pages are
/// given back by the child itself, [`with_huge_pages`]).
pub(crate) fn for_a_harness(command: &mut std::process::Command) {
    let (name, value) = SERVER_ALLOCATOR;
    if std::env::var_os(name).is_some_and(|v| v == value) {
        command.env_remove(name);
    }
}
