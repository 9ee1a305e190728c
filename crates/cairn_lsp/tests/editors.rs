//! The editor integrations shipped in `editors/`: their manifests agree with what they depend on.

use std::path::Path;

fn editors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors")
}

/// `major.minor` of a `^x.y.z` requirement.
fn minimum(requirement: &str) -> (u32, u32) {
    let version = requirement.trim_start_matches(['^', '~', '>', '=']);
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn the_vscode_engine_is_one_its_language_client_supports() {
    let text = std::fs::read_to_string(editors().join("vscode/package.json")).expect("package.json");
    let manifest: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let engine = minimum(manifest["engines"]["vscode"].as_str().expect("an engine"));
    let client = minimum(manifest["dependencies"]["vscode-languageclient"].as_str().expect("the client"));
    // vscode-languageclient 9 is built against the VS Code API of 1.82 (its own `engines`).
    let needed = match client.0 {
        9 => (1, 82),
        8 => (1, 67),
        other => panic!("vscode-languageclient {other} is not one this test knows: add its engine"),
    };
    assert!(engine >= needed, "engines.vscode {engine:?} is older than the client's {needed:?}");
}
