//! `cairn graph` (tools.md §3.20): the module graph of a project, its order and cycles, and the
//! interface hash that moves only when what a dependent sees moves.

use std::process::Command;

fn graph(dir: &std::path::Path, interfaces: bool) -> serde_json::Value {
    let mut args = vec!["graph", dir.to_str().unwrap(), "--format", "json"];
    if interfaces {
        args.push("--interfaces");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_cairn")).args(&args).output().expect("run cairn");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    serde_json::from_slice(&output.stdout).expect("a record")
}

#[test]
fn the_graph_orders_modules_and_hashes_their_interfaces() {
    let dir = std::env::temp_dir().join(format!("cairn-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("cairn.toml"),
        "[project]\nname = \"layers\"\nsources = [\"src/base.cairn\", \"src/mid.cairn\", \"src/top.cairn\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/base.cairn"),
        "module base;\nimport std.vec;\npub fn one() -> u64 { return 1; }\nfn hidden() -> u64 { return 2; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/mid.cairn"),
        "module mid;\nimport base;\npub fn two() -> u64 { return base.one() + 1; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/top.cairn"),
        "module top;\nimport mid;\nimport base;\npub fn main() -> i32 { return i32(mid.two()); }\n",
    )
    .unwrap();
    let g = graph(&dir, true);
    assert_eq!(g["schema"], "cairn.graph/1");
    assert_eq!(g["project"], "layers");
    assert_eq!(g["order"], serde_json::json!(["base", "mid", "top"]));
    assert_eq!(g["cyclic"], serde_json::json!([]));
    assert_eq!(g["libraries"], serde_json::json!(["std.vec"]));
    assert_eq!(g["modules"]["base"]["exports"], serde_json::json!(["one"]));
    assert_eq!(g["modules"]["base"]["dependents"], serde_json::json!(["mid", "top"]));
    assert_eq!(g["modules"]["top"]["imports"], serde_json::json!(["base", "mid"]));
    assert_eq!(g["files"][1], serde_json::json!({"path": "src/mid.cairn", "modules": ["mid"]}));
    let interface = g["modules"]["base"]["interface_sha256"].clone();
    let source = g["modules"]["base"]["source_sha256"].clone();
    // A body edit that keeps the row moves the source hash, not the interface's (a body that could
    // now trap would move it: the row is part of the interface).
    std::fs::write(dir.join("src/base.cairn"), "module base;\nimport std.vec;\npub fn one() -> u64 { let r:u64 = 1; return r; }\nfn hidden() -> u64 { return 3; }\n").unwrap();
    let g = graph(&dir, true);
    assert_ne!(g["modules"]["base"]["source_sha256"], source);
    assert_eq!(g["modules"]["base"]["interface_sha256"], interface);
    // A public signature moves it.
    std::fs::write(
        dir.join("src/base.cairn"),
        "module base;\nimport std.vec;\npub fn one() -> u32 { return 1; }\nfn hidden() -> u64 { return 3; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/mid.cairn"),
        "module mid;\nimport base;\npub fn two() -> u64 { return u64(base.one()) + 1; }\n",
    )
    .unwrap();
    let g = graph(&dir, true);
    assert_ne!(g["modules"]["base"]["interface_sha256"], interface);
    // A cycle is named.
    std::fs::write(dir.join("src/base.cairn"), "module base;\nimport top;\npub fn one() -> u32 { return 1; }\n")
        .unwrap();
    let g = graph(&dir, false);
    assert_eq!(g["cyclic"], serde_json::json!(["base", "mid", "top"]));
    assert!(g["modules"]["base"].get("interface_sha256").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
