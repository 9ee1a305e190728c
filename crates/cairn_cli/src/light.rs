//! The commands that need no back end (neither LLVM nor Z3), answered by the same code in both
//! binaries: `cairn` (`front.rs`) answers them itself and hands the servers to `cairn-serve` and
//! every other command to `cairn-full` (`main.rs`), which answers these here too.

use crate::cli::{Cli, Command};
use crate::{check, completions, doc, expand, find, fmt, graph, new, output, rules, undo};

/// The answer (an exit status) to a command that needs no back end, or the command back.
pub(crate) fn answer(command: Command) -> Result<u8, Command> {
    Ok(match command {
        Command::Check { path, generics, std_library, watch, device, format } => {
            if watch {
                check::watch(&path, generics, output::Output::choose(format))
            } else {
                check::run(&path, generics, std_library, &device.flags(), output::Output::choose(format))
            }
        }
        Command::Doc { path, modules, std_library, format } => {
            doc::run(&path, &modules, std_library, output::Output::choose(format))
        }
        Command::Rules { asked, list: _, format } => rules::run(asked.as_deref(), output::Output::choose(format)),
        Command::Find { words, takes, returns, effects, limit, program, format } => {
            let flags = find::FindFlags { words, takes, returns, effects, limit, program };
            find::run(&flags, output::Output::choose(format))
        }
        Command::Completions { shell } => completions::run(&<Cli as clap::CommandFactory>::command(), shell),
        Command::New { dir, template, from_sol_execbench, format } => {
            new::run(&dir, template, from_sol_execbench.as_deref(), output::Output::choose(format))
        }
        Command::Fmt { paths, check, diff, format } => fmt::run(&paths, check, diff, output::Output::choose(format)),
        Command::Graph { path, interfaces, format } => graph::run(&path, interfaces, output::Output::choose(format)),
        Command::Expand { path, format } => expand::run(&path, output::Output::choose(format)),
        Command::Undo { path, format } => undo::run(&path, output::Output::choose(format)),
        other => return Err(other),
    })
}
