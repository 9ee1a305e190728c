//! Repository-wide rules that no compiler checks: the crate graph keeps its layering, every Rust
//! file opens with a `//!` paragraph, no test is silenced, and every example program parses.

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The dependency edges the architecture allows between our crates (docs/architecture.md).
const ALLOWED: &[(&str, &[&str])] = &[
    ("cairn_syntax", &[]),
    ("cairn_testgen", &[]),
    ("cairn_diagnostics", &["cairn_syntax"]),
    ("cairn_vfs", &[]),
    ("cairn_hir", &["cairn_syntax", "cairn_diagnostics", "cairn_vfs"]),
    ("cairn_mir", &["cairn_hir"]),
    ("cairn_codegen", &["cairn_mir"]),
    ("cairn_runtime", &[]),
    ("cairn_smt", &["cairn_mir"]),
    ("cairn_agent", &["cairn_syntax", "cairn_hir", "cairn_diagnostics", "cairn_mir", "cairn_smt", "cairn_codegen"]),
    ("cairn_lsp", &["cairn_syntax", "cairn_diagnostics", "cairn_hir", "cairn_agent", "cairn_vfs"]),
    ("cairn_mcp", &["cairn_agent", "cairn_vfs"]),
];

/// Our crates a manifest's `[dependencies]` table names (dev-dependencies are free).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && line.starts_with("cairn_") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or("");
            found.push(name.to_string());
        }
    }
    found
}

#[test]
fn the_crate_graph_keeps_its_layering() {
    let crates = workspace_root().join("crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).expect("crates dir").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let manifest = std::fs::read_to_string(entry.path().join("Cargo.toml")).expect("manifest");
        let dependencies = normal_dependencies(&manifest);
        if name == "cairn_cli" {
            continue; // The binary may depend on everything.
        }
        let allowed = ALLOWED
            .iter()
            .find(|(crate_name, _)| *crate_name == name)
            .unwrap_or_else(|| {
                panic!("crate {name} is not in the architecture's table; add it to docs/architecture.md and here")
            })
            .1;
        for dependency in dependencies {
            assert!(
                allowed.contains(&dependency.as_str()),
                "{name} depends on {dependency}, an edge docs/architecture.md does not allow"
            );
        }
        checked += 1;
    }
    assert!(checked >= 4);
}

#[test]
fn analysis_crates_need_neither_llvm_nor_z3() {
    for name in ["cairn_syntax", "cairn_diagnostics", "cairn_hir"] {
        let path = workspace_root().join("crates").join(name).join("Cargo.toml");
        let Ok(manifest) = std::fs::read_to_string(path) else { continue };
        for forbidden in ["inkwell", "llvm-sys", "z3"] {
            assert!(
                !manifest.lines().any(|l| l.trim_start().starts_with(forbidden)),
                "{name} must not depend on {forbidden}"
            );
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_comment() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("bench"), &mut files);
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        if !text.trim_start().starts_with("//!") {
            missing.push(file.strip_prefix(&root).unwrap_or(file).display().to_string());
        }
    }
    assert!(missing.is_empty(), "files without a `//!` paragraph: {missing:?}");
}

#[test]
fn no_test_is_silenced() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("bench"), &mut files);
    // The ignore attribute with or without a reason.
    let ignore = ["#[", "ignore"].concat();
    let should_panic = ["#[", "should_panic"].concat();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        assert!(!text.contains(&ignore), "{} silences a test", file.display());
        assert!(!text.contains(&should_panic), "{} expects a panic", file.display());
    }
}

#[test]
fn every_example_program_parses_cleanly() {
    let root = workspace_root().join("examples");
    let mut programs = Vec::new();
    collect_cairn(&root, &mut programs);
    assert!(!programs.is_empty());
    for path in programs {
        let text = std::fs::read_to_string(&path).expect("example");
        let parse = cairn_syntax::parse(&text);
        assert!(parse.ok(), "{}: {:?}", path.display(), parse.errors());
    }
}

fn collect_cairn(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_cairn(&path, out);
        } else if path.extension().is_some_and(|e| e == "cairn") {
            out.push(path);
        }
    }
}
