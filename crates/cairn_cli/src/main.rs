//! `cairn-full`: every command, the back ends (LLVM through `cairn_codegen`, Z3 through
//! `cairn_smt`) linked in. Users run `cairn` (`front.rs`), which answers the commands that need
//! neither itself and hands the others to this binary; this one answers all of them.
//!
//! Each subcommand lives in its own module and returns the process exit status; the conventions
//! every command shares (output mode, colour, record printing) live in `output`. Exit statuses
//! follow tools.md §1.3: 0 done and positive, 1 a refusal, 2 the environment could not answer.

mod build;
#[allow(dead_code)] // each binary uses its own part
mod build_id;
mod check;
mod cli;
mod completions;
mod device;
mod diff;
mod doc;
mod doctor;
mod emit;
mod expand;
mod explain;
mod find;
mod fmt;
mod graph;
mod inspect;
mod inspect_device;
#[allow(dead_code)] // each binary uses its own part
mod lean;
mod light;
mod new;
mod output;
mod predict;
mod process;
mod promote;
mod ptx;
mod rules;
mod run;
// The server's side of the wire (`remote.rs`) is `cairn-serve`'s.
#[allow(dead_code)]
mod runner_wire;
mod sandbox;
mod servers;
mod state;
mod test;
mod tune;
mod undo;
mod validate;
mod verify;

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
    // Every command runs on a thread with the analysis stack (cairn_hir::stack), so no input
    // within the language's limits overflows it. A panic is a defect of the toolchain: it is
    // reported as such (exit 2), never as a verdict on the program.
    match cairn_hir::stack::run("cairn", move || command(cli)) {
        Ok(status) => ExitCode::from(status),
        Err(_) => cli::toolchain_failed(),
    }
}

fn command(cli: Cli) -> u8 {
    // The MCP server here builds its harnesses in process (`cairn-serve` asks a child of this
    // binary, `harness-runner`, instead).
    if let Command::Mcp = cli.command {
        lean::unless_handed_over();
        return servers::mcp(Box::new(validate::NativeRunner::new(None, validate::NativeRunner::parallel())));
    }
    let command = match light::answer(cli.command) {
        Ok(status) => return status,
        Err(command) => command,
    };
    match command {
        Command::Build { path, keep_guards, out, debug, timeout, device, format } => {
            let flags = build::BuildFlags { keep_guards, out, debug, timeout, device: device.flags() };
            build::run(&path, &flags, output::Output::choose(format))
        }
        Command::Run { path, keep_guards, out, memory_mib, debug, timeout, sandbox, device, format, args } => {
            let flags = build::BuildFlags { keep_guards, out, debug, timeout, device: device.flags() };
            let output = output::Output::choose(format);
            if sandbox {
                run::run_confined(&path, &flags, memory_mib, &args, output)
            } else {
                run::run(&path, &flags, memory_mib, &args, output)
            }
        }
        Command::Test { path, filter, test, jobs, timeout, memory_mib, keep_guards, sandbox, device, format } => {
            let flags = test::TestFlags {
                filter,
                test,
                jobs,
                timeout,
                memory_mib,
                sandbox,
                build: build::BuildFlags {
                    keep_guards,
                    out: None,
                    debug: false,
                    timeout: build::DEFAULT_TIMEOUT,
                    device: device.flags(),
                },
            };
            test::run(&path, &flags, output::Output::choose(format))
        }
        Command::Emit { path, mir, unoptimized, debug, keep_guards, ptx, device_target, format } => {
            let flags = emit::EmitFlags { mir, unoptimized, keep_guards, debug, ptx, device_target };
            emit::run(&path, &flags, output::Output::choose(format))
        }
        Command::State { path, since, symbol: Some(symbol), format: f } => {
            state::investigate(&path, &symbol, since.as_deref(), output::Output::choose(f))
        }
        Command::State { path, since, symbol: None, format } => {
            state::run(&path, since.as_deref(), output::Output::choose(format))
        }
        Command::Diff { flags, format } => diff::run(&flags, output::Output::choose(format)),
        Command::Verify { flags, format } => verify::run(&flags, output::Output::choose(format)),
        Command::Validate { flags, format } => validate::run(&flags, output::Output::choose(format)),
        Command::Tune { flags, format } => tune::run(&flags, output::Output::choose(format)),
        Command::Promote { flags, format } => promote::run(&flags, output::Output::choose(format)),
        Command::Predict { flags, format } => predict::run(&flags, output::Output::choose(format)),
        Command::Explain { path, symbol, format } => explain::run(&path, &symbol, output::Output::choose(format)),
        Command::Inspect { path, symbol, scope, expand, explain, session, format } => {
            let flags = inspect::InspectFlags { symbol, scope, expand, explain, session };
            inspect::run(&path, &flags, output::Output::choose(format))
        }
        Command::Doctor { format } => doctor::run(output::Output::choose(format)),
        Command::Lsp => {
            lean::unless_handed_over();
            servers::lsp()
        }
        Command::HarnessRunner => validate::serve_harness(),
        Command::Mcp => unreachable!("answered above"),
        Command::Check { .. }
        | Command::Fmt { .. }
        | Command::Find { .. }
        | Command::Doc { .. }
        | Command::Rules { .. }
        | Command::Graph { .. }
        | Command::Expand { .. }
        | Command::Undo { .. }
        | Command::New { .. }
        | Command::Completions { .. } => unreachable!("`light::answer` answers it"),
    }
}
