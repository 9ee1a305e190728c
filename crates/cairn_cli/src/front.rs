//! `cairn`, the command a user runs: the commands that need no back end (`light.rs`: `check`,
//! `fmt`, `find`, `doc`, `rules`, `graph`, `expand`, `undo`, `new`, `completions`, and `--help`,
//! `--version`) are answered here; the servers (`mcp`, `lsp`) are handed to `cairn-serve`, and
//! every other command to `cairn-full` (the same command line in the same process, by `exec`:
//! `handover.rs`), the binary that links LLVM and Z3.
//!
//! Why three binaries (issue 22, docs/architecture.md): LLVM is linked statically, and a process
//! that links it pays for it before `main` — about 150,000 relocations, the static constructors
//! of its command-line options, the page faults of a 160 MB file — and Z3, a shared library,
//! costs about 3 ms to load. This binary never names `cairn_codegen` or `cairn_smt`, so the
//! linker leaves both out of it; `cairn-serve` links Z3 (the edit host proves contracts with it)
//! but not LLVM.
//!
//! The binaries parse the same command line (`cli.rs`) and answer the light commands with the
//! same code (`light.rs`), so help, usage errors, completions and answers are the same whichever
//! answers; `cairn-full` answers every command itself too.

// The shared modules also hold what only `cairn-full` uses (its copy uses all of it).
#[allow(dead_code)] // each binary uses its own part
mod build_id;
#[allow(dead_code)]
mod check;
mod cli;
mod completions;
#[allow(dead_code)]
mod device;
mod doc;
mod expand;
mod find;
mod fmt;
mod graph;
mod handover;
#[allow(dead_code)] // each binary uses its own part
mod lean;
mod light;
mod new;
#[allow(unused_imports)]
mod output;
mod rules;
mod undo;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // As in `cairn-full`: every command runs on a thread with the analysis stack, and a panic
    // is a defect of the toolchain (exit 2), never a verdict on the program.
    match cairn_hir::stack::run("cairn", move || light::answer(cli.command).map_err(|other| Elsewhere::of(&other))) {
        Ok(Ok(status)) => ExitCode::from(status),
        Ok(Err(Elsewhere::Serve)) => {
            // `cairn-full` serves too, building harnesses in process: the fallback of a copy
            // without `cairn-serve`.
            let serve = if handover::beside("cairn-serve").is_some() { "cairn-serve" } else { "cairn-full" };
            handover::hand_over(serve, "the servers", lean::for_a_server)
        }
        Ok(Err(Elsewhere::Full)) => handover::hand_over("cairn-full", "the LLVM and Z3 back ends", |_| ()),
        Err(_) => cli::toolchain_failed(),
    }
}

/// The binary that answers a command this one does not.
enum Elsewhere {
    /// `cairn-serve`: the servers.
    Serve,
    /// `cairn-full`: every command that needs a back end.
    Full,
}

impl Elsewhere {
    fn of(command: &Command) -> Elsewhere {
        match command {
            Command::Mcp | Command::Lsp => Elsewhere::Serve,
            _ => Elsewhere::Full,
        }
    }
}
