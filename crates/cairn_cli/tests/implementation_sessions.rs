//! Implementation sessions (protocol §9) through `cairn mcp`, driven by the official MCP Python SDK
//! (tests/python/mcp_implementation.py): pinned parts refused by their codes, a trapping condition
//! located in the submission, a subtly wrong implementation refused with its shrunk failing input
//! kept in the regressions file, a correct one validated with `select_with`, and the pinned policy
//! enforced. The README's test command installs the SDK in `.venv`; without it this test fails
//! and says so.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

#[test]
fn an_agent_gets_a_correct_implementation_validated_and_a_wrong_one_refused() {
    let python = repo(".venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python SDK is not installed: run ./scripts/setup.sh (the README's test command does)"
    );
    let work = std::env::temp_dir().join(format!("cairn-implementation-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let output = Command::new(&python)
        .arg(repo("tests/python/mcp_implementation.py"))
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(&work)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let _ = std::fs::remove_dir_all(&work);
    assert!(output.status.success(), "the session failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all steps passed"), "{stdout}");
}
