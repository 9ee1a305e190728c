//! `cairn completions bash|zsh` (tools.md §3.25): a shell completion script derived from the same
//! clap definitions the command line is parsed with, so it never offers a command, option or
//! choice that does not exist.
//!
//! The script is one bash function (zsh runs it through `bashcompinit`): the first word completes
//! to a command; after a command, a word starting with `-` to that command's options; after an
//! option with a fixed set of values (`--format`, `--template`), to those values; anything else
//! to file names.

use clap::Command;

/// The shells a script is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
}

pub fn run(cli: &Command, shell: Shell) -> u8 {
    print!("{}", script(cli, shell));
    0
}

/// The completion script for `cli`.
pub fn script(cli: &Command, shell: Shell) -> String {
    let name = cli.get_name();
    let commands: Vec<&Command> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    let mut out = String::new();
    if shell == Shell::Zsh {
        out.push_str("#compdef cairn\nautoload -U +X bashcompinit && bashcompinit\n");
    }
    out.push_str(&format!("_{name}() {{\n"));
    out.push_str("  local cur prev\n  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n");
    let names: Vec<&str> = commands.iter().map(|c| c.get_name()).collect();
    out.push_str(&format!(
        "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W \"{} --help --version\" -- \"$cur\"))\n    return\n  fi\n",
        names.join(" ")
    ));
    // Options with a fixed set of values, per command.
    out.push_str("  case \"${COMP_WORDS[1]} $prev\" in\n");
    for command in &commands {
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if !matches!(arg.get_action(), clap::ArgAction::Set | clap::ArgAction::Append) {
                continue;
            }
            let values: Vec<String> = arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
            if values.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "    \"{} --{long}\") COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n",
                command.get_name(),
                values.join(" ")
            ));
        }
    }
    out.push_str("  esac\n  local opts=\"\"\n  case \"${COMP_WORDS[1]}\" in\n");
    for command in &commands {
        let mut flags: Vec<String> =
            command.get_arguments().filter_map(|a| a.get_long()).map(|l| format!("--{l}")).collect();
        flags.push("--help".to_string());
        let positional: Vec<String> = command
            .get_arguments()
            .filter(|a| a.is_positional())
            .flat_map(|a| a.get_possible_values().iter().map(|v| v.get_name().to_string()).collect::<Vec<_>>())
            .collect();
        flags.extend(positional);
        out.push_str(&format!("    {}) opts=\"{}\" ;;\n", command.get_name(), flags.join(" ")));
    }
    out.push_str("  esac\n");
    out.push_str(
        "  if [[ \"$cur\" == -* ]]; then\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n  else\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n  fi\n}\n",
    );
    out.push_str(&format!("complete -o filenames -F _{name} {name}\n"));
    out
}
