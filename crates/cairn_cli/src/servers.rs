//! The two long-lived servers, `cairn mcp` and `cairn lsp`, started the same way whichever binary
//! answers: `cairn-serve` (the one `cairn` hands them to, no LLVM linked; harnesses built by a
//! `cairn-full` child, `remote.rs`) or `cairn-full` itself (harnesses built in process). How they
//! hold memory is `lean.rs`'s, set by the caller before these run.

use std::path::PathBuf;

use cairn_agent::validate::Runner;

/// `cairn mcp`: the hosts as tools over standard input and output, validating through `runner`.
pub(crate) fn mcp(runner: Box<dyn Runner + Send>) -> u8 {
    let start = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    u8::try_from(cairn_mcp::serve_stdio(&start, Some(runner))).unwrap_or(2)
}

/// `cairn lsp`: the language server over standard input and output.
pub(crate) fn lsp() -> u8 {
    u8::try_from(cairn_lsp::serve_stdio()).unwrap_or(2)
}
