//! Which build a binary is (`CAIRN_BUILD_ID`, made by `build.rs` from every source of the
//! toolchain), so that `cairn` hands a command only to a `cairn-serve` or `cairn-full` of its own
//! build, and a server asks only its own build's `cairn-full` to build a harness. A copy that
//! mixes binaries of two builds — one rebuilt, one copied in from elsewhere — would otherwise
//! answer with a checker and a back end that disagree about the language; it is refused with an
//! exit 2 that says how to mend it.

/// This binary's build.
pub(crate) const BUILD: &str = env!("CAIRN_BUILD_ID");

/// Where the handing binary names its build.
const VAR: &str = "CAIRN_HANDED_BY";

/// Names this build to the binary `command` will run.
pub(crate) fn mark(command: &mut std::process::Command) {
    command.env(VAR, BUILD);
}

/// In a binary started by another of the toolchain: `Err` (the message) when that one is of
/// another build. The mark is taken out of the environment, so nothing this binary runs (a
/// program, a linker) inherits it.
pub(crate) fn check_handed() -> Result<(), String> {
    let Some(handed) = std::env::var_os(VAR) else { return Ok(()) };
    // SAFETY: called first thing in `main`, before this process starts any thread, so nothing
    // reads the environment concurrently.
    unsafe { std::env::remove_var(VAR) };
    let handed = handed.to_string_lossy();
    if handed == BUILD {
        return Ok(());
    }
    Err(format!(
        "error: this binary is build {BUILD}, but the binary that started it is build {handed}: the toolchain's binaries come from different builds. Build them together with `cargo build -p cairn_cli` (or copy all three from one build)."
    ))
}
