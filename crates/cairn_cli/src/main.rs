//! The `cairn` command: argument parsing and the batch pipeline, nothing else.
//!
//! Each subcommand lives in its own module and returns the process exit status; the conventions
//! every command shares (output mode, colour, record printing) live in `output`. Exit statuses
//! follow tools.md §1.3: 0 done and positive, 1 a refusal, 2 the environment could not answer.

mod check;
mod output;
mod rules;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::output::FormatChoice;

/// CAIRN: a systems language for CPUs and GPUs whose compiler answers agents.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decide whether a program is accepted, reporting every independent refusal.
    Check {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Print rule cards offline: a card by name, the card owning a code, the cards a program
    /// selects, or (with nothing asked, or --list) every card with its codes.
    Rules {
        /// A card name, a code such as E-ALIAS, or a program (.cairn file, project directory or
        /// manifest).
        #[arg(value_name = "CODE|CARD|PATH", conflicts_with = "list")]
        asked: Option<String>,
        /// List every card with its codes and selection words (the default when nothing is asked).
        #[arg(long)]
        list: bool,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Check { path, format } => check::run(&path, output::Output::choose(format)),
        // With --list, nothing else may be asked (clap refuses the pair), so the list is printed.
        Command::Rules { asked, list: _, format } => rules::run(asked.as_deref(), output::Output::choose(format)),
    };
    ExitCode::from(status)
}
