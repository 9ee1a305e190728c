//! The Neovim runtime (editors/nvim) in a headless Neovim against `cairn lsp`: the filetype is
//! detected, the syntax and the indentation load, and the language server answers diagnostics,
//! hover, completion, rename and formatting (tests/nvim/lsp.lua drives the session and writes what
//! it saw). Neovim comes from scripts/setup.sh (Debian's `neovim`); without it this test fails
//! and says so.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const PROGRAM: &str = "fn twice(x:u64) -> u64 =  x * 2;

fn main() -> i32 {
  let a:u64 = twice(21);
  let bad:u32 = true;
  return 0;
}
";

#[test]
fn a_headless_neovim_gets_diagnostics_hover_completion_rename_and_formatting() {
    let dir = std::env::temp_dir().join(format!("cairn-nvim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let file = dir.join("main.cairn");
    std::fs::write(&file, PROGRAM).expect("write");
    let out = dir.join("seen.json");
    let runtime = repo().join("editors/nvim");
    let script = repo().join("tests/nvim/lsp.lua");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "--cmd"])
        .arg(format!("set rtp^={}", runtime.display()))
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_NVIM_FILE", &file)
        .env("CAIRN_NVIM_OUT", &out)
        .current_dir(&dir)
        .status()
        .unwrap_or_else(|e| panic!("nvim could not start ({e}): ./scripts/setup.sh installs Debian's neovim"));
    assert!(status.success(), "nvim exited with {status}");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the session wrote what it saw")).expect("JSON");
    assert!(seen.get("error").is_none(), "{seen}");
    assert_eq!(seen["filetype"], "cairn", "{seen}");
    assert_eq!(seen["syntax"], "cairn", "{seen}");
    assert_eq!(seen["shiftwidth"], 2, "{seen}");
    assert_eq!(seen["attached"], true, "{seen}");
    // The checker's refusal on `true` for a u32, on its line.
    let diagnostics = seen["diagnostics"].as_array().expect("diagnostics");
    assert!(
        diagnostics.iter().any(|d| d["line"] == 4 && d["code"].as_str().is_some_and(|c| c.starts_with("E-"))),
        "{seen}"
    );
    assert!(seen["hover"].as_str().is_some_and(|h| h.contains("twice")), "{seen}");
    let labels: Vec<&str> =
        seen["completion"].as_array().expect("completion").iter().filter_map(|l| l.as_str()).collect();
    assert!(labels.contains(&"twice"), "{seen}");
    assert_eq!(seen["rename_edits"], 2, "the declaration and the call: {seen}");
    assert!(seen["formatting"].as_i64().is_some_and(|n| n >= 1), "the doubled space is formatted away: {seen}");
    std::fs::remove_dir_all(&dir).ok();
}
