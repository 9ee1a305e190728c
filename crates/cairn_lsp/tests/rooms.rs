//! The rooms of the language server keep their edges: nothing under `src/features/` imports the
//! analysis thread (it hands the features a read-only snapshot instead), and only
//! `features/cursor.rs` reaches cairn_hir's locals (the body's scopes laid over its source map),
//! so the features have one door to the resolver. Read as text, as the workspace's tidy checks
//! read the crate graph.

use std::path::{Path, PathBuf};

#[test]
fn no_feature_imports_the_analysis_thread() {
    check_no_feature_names("crate::analysis", &[]);
}

#[test]
fn only_the_cursor_reaches_the_resolution_of_locals() {
    check_no_feature_names("scopes::locals", &["cursor.rs"]);
    check_no_feature_names("crate::locals", &[]);
}

/// Fails for every file under `src/features/`, except those named in `allowed`, that writes
/// `path`.
#[track_caller]
fn check_no_feature_names(path: &str, allowed: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/features");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 1, "no feature files under {}", root.display());
    let offending: Vec<String> = files
        .iter()
        .filter(|file| !allowed.iter().any(|name| file.strip_prefix(&root).is_ok_and(|rel| rel == Path::new(name))))
        .filter(|file| std::fs::read_to_string(file).expect("a feature file").contains(path))
        .map(|file| file.display().to_string())
        .collect();
    assert!(offending.is_empty(), "files under src/features/ that name `{path}`: {offending:?}");
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
