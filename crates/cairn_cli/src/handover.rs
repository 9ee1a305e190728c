//! Handing a command to another binary of the toolchain, found beside this one: `cairn` hands
//! the servers to `cairn-serve` and every command that needs a back end to `cairn-full`;
//! `cairn-serve` hands what is not a server to `cairn-full` (docs/architecture.md, "Three
//! binaries"). The same command line runs in the same process (`exec`): the streams, working
//! directory, environment, signals and exit status stay the process's.

use std::process::ExitCode;

/// Runs `binary`, beside this executable, in this process with this process's arguments, after
/// `prepare` has set what it runs with. Returns only when it cannot run: exit 2, saying how to
/// build it.
pub(crate) fn hand_over(binary: &str, what: &str, prepare: impl FnOnce(&mut std::process::Command)) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let Some(path) = beside(binary) else {
        eprintln!(
            "error: this command needs `{binary}` ({what}), built beside this one, and it is not there: build the toolchain with `cargo build -p cairn_cli`"
        );
        return ExitCode::from(2);
    };
    let mut args = std::env::args_os();
    let name = args.next().unwrap_or_else(|| "cairn".into());
    let mut command = std::process::Command::new(&path);
    command.arg0(name).args(args);
    crate::build_id::mark(&mut command);
    prepare(&mut command);
    let error = command.exec();
    eprintln!("error: could not run {}: {error}", path.display());
    ExitCode::from(2)
}

/// `binary` beside this executable, when it is there.
pub(crate) fn beside(binary: &str) -> Option<std::path::PathBuf> {
    std::env::current_exe().ok().map(|exe| exe.with_file_name(binary)).filter(|path| path.is_file())
}
