//! `cairn`, the command a user runs: the commands that need no back end (`light.rs`: `check`,
//! `fmt`, `find`, `doc`, `rules`, `graph`, `expand`, `undo`, `new`, `completions`, and `--help`,
//! `--version`) are answered here, and every other command is handed to `cairn-full` (the same
//! command line in the same process, by `exec`), the binary beside this one that links LLVM and
//! Z3.
//!
//! Why two binaries (issue 22, docs/architecture.md): LLVM is linked statically, and a process
//! that links it pays for it before `main` — about 150,000 relocations, the static constructors
//! of its command-line options, the page faults of a 160 MB file. This binary never names
//! `cairn_codegen` or `cairn_smt`, so the linker leaves LLVM out of it.
//!
//! Both binaries parse the same command line (`cli.rs`) and answer the light commands with the
//! same code (`light.rs`), so help, usage errors, completions and answers are the same whichever
//! answers; `cairn-full` answers every command itself too.

// The shared modules also hold what only `cairn-full` uses (its copy uses all of it).
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
mod light;
mod new;
#[allow(unused_imports)]
mod output;
mod rules;
mod undo;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::Cli;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The binary that answers the commands this one does not, found beside this one.
const FULL: &str = "cairn-full";

fn main() -> ExitCode {
    let cli = Cli::parse();
    // As in `cairn-full`: every command runs on a thread with the analysis stack, and a panic
    // is a defect of the toolchain (exit 2), never a verdict on the program.
    match cairn_hir::stack::run("cairn", move || light::answer(cli.command).ok()) {
        Ok(Some(status)) => ExitCode::from(status),
        Ok(None) => hand_over(),
        Err(_) => {
            eprintln!(
                "error[E-INTERNAL]: the cairn toolchain failed while answering this command (a defect of the toolchain, not of the program)"
            );
            ExitCode::from(2)
        }
    }
}

/// Runs `cairn-full` in this process with this process's arguments (its standard streams, working
/// directory, environment and exit status are this process's). Returns only when it cannot run.
fn hand_over() -> ExitCode {
    use std::os::unix::process::CommandExt;
    let full = std::env::current_exe().ok().map(|exe| exe.with_file_name(FULL));
    let Some(full) = full.filter(|path| path.is_file()) else {
        eprintln!(
            "error: this command needs `{FULL}` (the LLVM and Z3 back ends), built beside `cairn`, and it is not there: build both with `cargo build -p cairn_cli`"
        );
        return ExitCode::from(2);
    };
    let mut args = std::env::args_os();
    let name = args.next().unwrap_or_else(|| "cairn".into());
    let error = std::process::Command::new(&full).arg0(name).args(args).exec();
    eprintln!("error: could not run {}: {error}", full.display());
    ExitCode::from(2)
}
