//! The agent skill and the plugin (issue 19, item 7): `skills/cairn/` is exactly a fresh render
//! of the cards (`cairn_diagnostics::skill`), its example compiles, passes `cairn test` and exits
//! 0 under `cairn run`, and the plugin's manifests start `cairn mcp` and `cairn lsp` for `.cairn`
//! files through `bin/cairn`, which finds the toolchain.
//!
//! `CAIRN_RENDER_SKILL=1 cargo test -p cairn_cli --test skill` rewrites `skills/cairn/` from the
//! cards; review the diff and commit it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_diagnostics::skill::{SKILL_DIR, render};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

#[test]
fn the_committed_skill_is_a_fresh_render_of_the_cards() {
    let dir = root().join(SKILL_DIR);
    let files = render();
    if std::env::var_os("CAIRN_RENDER_SKILL").is_some() {
        let _ = std::fs::remove_dir_all(dir.join("cards"));
        std::fs::create_dir_all(dir.join("cards")).expect("skills/cairn/cards");
        for (path, text) in &files {
            std::fs::write(dir.join(path), text).expect("write");
        }
    }
    let mut stale = Vec::new();
    for (path, text) in &files {
        match std::fs::read_to_string(dir.join(path)) {
            Ok(committed) if committed == *text => {}
            Ok(_) => stale.push(format!("{path} differs")),
            Err(_) => stale.push(format!("{path} is missing")),
        }
    }
    let rendered: BTreeSet<String> = files.iter().map(|(path, _)| path.clone()).collect();
    for entry in std::fs::read_dir(dir.join("cards")).into_iter().flatten().flatten() {
        let path = format!("cards/{}", entry.file_name().to_string_lossy());
        if !rendered.contains(&path) {
            stale.push(format!("{path} is not a card"));
        }
    }
    assert!(
        stale.is_empty(),
        "skills/cairn is stale ({}); run CAIRN_RENDER_SKILL=1 cargo test -p cairn_cli --test skill",
        stale.join("; ")
    );
}

fn cairn(args: &[&str], dir: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_FORMAT")
        .output()
        .expect("run cairn");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stdout).to_string())
}

#[test]
fn the_skill_s_example_compiles_passes_its_test_and_runs() {
    let skill = render().remove(0).1;
    let example = skill
        .split_once("```cairn\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(code, _)| code)
        .expect("an example");
    let dir = std::env::temp_dir().join(format!("cairn-skill-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    std::fs::write(dir.join("example.cairn"), example).expect("write");
    let (status, out) = cairn(&["check", "example.cairn"], &dir);
    assert_eq!(status, 0, "{out}");
    let (status, out) = cairn(&["test", "example.cairn"], &dir);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("\"clamps\""), "{out}");
    let (status, out) = cairn(&["run", "example.cairn"], &dir);
    assert_eq!(status, 0, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn manifest(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join(".claude-plugin").join(name)).expect("manifest");
    serde_json::from_str(&text).expect("the manifest is JSON")
}

#[test]
fn the_plugin_starts_the_mcp_and_language_servers_through_its_cairn() {
    let plugin = manifest("plugin.json");
    assert_eq!(plugin["name"], "cairn");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"), "the plugin's version is the toolchain's");
    let wrapper = "${CLAUDE_PLUGIN_ROOT}/bin/cairn";
    assert_eq!(plugin["mcpServers"]["cairn"]["command"], wrapper);
    assert_eq!(plugin["mcpServers"]["cairn"]["args"], serde_json::json!(["mcp"]));
    assert_eq!(plugin["lspServers"]["cairn"]["command"], wrapper);
    assert_eq!(plugin["lspServers"]["cairn"]["args"], serde_json::json!(["lsp"]));
    assert_eq!(plugin["lspServers"]["cairn"]["extensionToLanguage"][".cairn"], "cairn");
    let skills = plugin["skills"].as_str().expect("skills");
    assert!(root().join(skills).join("cairn/SKILL.md").is_file());
    let market = manifest("marketplace.json");
    let entry = &market["plugins"][0];
    assert_eq!(entry["name"], "cairn");
    assert!(root().join(entry["source"].as_str().expect("source")).join(".claude-plugin/plugin.json").is_file());

    // The wrapper runs the toolchain it finds (here: the binary under test).
    let output = Command::new(root().join("bin/cairn"))
        .arg("--version")
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .output()
        .expect("run bin/cairn");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("cairn "), "{output:?}");
}
