//! The stack every analysis runs on: one size for the threads that check, lower, compile and
//! solve, so that no input within the language's limits can overflow it.
//!
//! The parser bounds every tree (expression nesting 100, operator and postfix chains 1,000
//! links, blocks 100), and every later walk recurses at most once per level of that tree. A
//! frame of the deepest walks is a few hundred bytes in release and a few kilobytes in debug
//! builds, so 256 MiB of address space (committed only where touched) leaves a wide margin even
//! at the limits. The binaries and servers run their work on such a thread ([`spawn`]); the
//! rayon pool the workspace checks bodies on gets the same size ([`ensure_pool`]).

use std::sync::Once;

/// The stack size of every analysis thread.
pub const ANALYSIS_STACK_BYTES: usize = 256 << 20;

/// Configures rayon's global pool with analysis-sized stacks, once per process. A pool some
/// other code built first is kept (rayon allows one); its stacks are then rayon's default.
pub fn ensure_pool() {
    static POOL: Once = Once::new();
    POOL.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new().stack_size(ANALYSIS_STACK_BYTES).build_global();
    });
}

/// Runs `work` on a named thread with an analysis-sized stack and returns what it returned;
/// a panic in it is returned as `Err` (with its payload), never propagated.
pub fn run<T: Send + 'static>(name: &str, work: impl FnOnce() -> T + Send + 'static) -> std::thread::Result<T> {
    ensure_pool();
    match spawn(name, work) {
        Ok(handle) => handle.join(),
        Err(error) => Err(Box::new(error.to_string())),
    }
}

/// Spawns a named thread with an analysis-sized stack.
pub fn spawn<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    ensure_pool();
    std::thread::Builder::new().name(name.to_string()).stack_size(ANALYSIS_STACK_BYTES).spawn(work)
}
