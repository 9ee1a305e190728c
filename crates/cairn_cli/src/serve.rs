//! `cairn-serve`: the language server and the MCP server (`cairn lsp`, `cairn mcp`, handed here by
//! `cairn`), linked without LLVM. A server lives for a whole session, and LLVM's statically linked
//! image cost `cairn-full` about 26 MiB of resident memory before `main` (docs/architecture.md,
//! "Three binaries"). What does need LLVM in a session — building and running a validation
//! harness, reading emitted code for `explain` — is asked of a `cairn-full` child per request
//! (`remote.rs`). Z3 is linked (a shared library): the edit host proves refactoring contracts and
//! named choices in process. Any other command is handed to `cairn-full`.

// The shared modules also hold what only the other binaries use.
mod build_id;
#[allow(dead_code)]
mod cli;
#[allow(dead_code)]
mod completions;
#[allow(dead_code)]
mod device;
mod handover;
#[allow(dead_code)] // each binary uses its own part
mod lean;
#[allow(dead_code)]
mod new;
#[allow(unused_imports, dead_code)]
mod output;
mod remote;
#[allow(dead_code)]
mod runner_wire;
mod servers;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    if let Err(message) = build_id::check_handed() {
        eprintln!("{message}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    let command = cli.command;
    if !matches!(command, Command::Mcp | Command::Lsp) {
        return handover::hand_over("cairn-full", "the LLVM and Z3 back ends", |_| ());
    }
    // As in `cairn-full`: the servers run on a thread with the analysis stack, and a panic is a
    // defect of the toolchain (exit 2).
    lean::unless_handed_over();
    let answered = cairn_hir::stack::run("cairn", move || match command {
        Command::Mcp => servers::mcp(Box::new(remote::RemoteRunner::default())),
        _ => servers::lsp(),
    });
    match answered {
        Ok(status) => ExitCode::from(status),
        Err(_) => cli::toolchain_failed(),
    }
}
