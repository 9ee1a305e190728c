//! Two facts every binary of this package is built with.
//!
//! **Position-dependent executables** (`-no-pie`). A position-independent executable is
//! relocated by the loader at every start: in `cairn-full`, which links LLVM and Z3 statically,
//! that writes pointers into about 30 MB of tables (LLVM's option and pass registries, vtables),
//! each written page private to the process. Linked at a fixed address those pages stay clean and
//! are read only when used: `cairn-full --version` peaks at 35 MiB instead of 45, and `cairn mcp`
//! (then served by `cairn-full`) after 200 written edits of a 10k-line program held 89 MiB
//! instead of 97 (docs/architecture.md, "Three binaries"). The cost is that the executable's own
//! image is not placed at a random address; the heap, stack and shared libraries still are.
//!
//! **A build identity** (`CAIRN_BUILD_ID`): a digest of every source the binaries are made from
//! (the crates but their tests, `std/`, `cards/`, `Cargo.lock`), the same in all three binaries of
//! one build and different in a build of other sources. `cairn` hands a command over only to a
//! binary of its own build (`build_id.rs`). Deterministic: the same sources give the same
//! identity (SHA-256).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut hasher = Sha256::new();
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    for path in sources(&workspace) {
        println!("cargo:rerun-if-changed={}", path.display());
        let mut files = Vec::new();
        collect(&path, &mut files);
        files.sort();
        for file in files {
            let relative = file.strip_prefix(&workspace).unwrap_or(&file).to_string_lossy().into_owned();
            let bytes = std::fs::read(&file).unwrap_or_default();
            // Each part after its length: no two sets of files hash alike by where a name ends.
            hasher.update((relative.len() as u64).to_le_bytes());
            hasher.update(relative.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
    }
    let digest = hasher.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=CAIRN_BUILD_ID={}-{hex}", env!("CARGO_PKG_VERSION"));
}

/// What the binaries are made from: each crate they link (not the test generator) but its tests,
/// examples and test data (an edit of a test neither changes the identity nor relinks the
/// binaries), the library, the cards and the lock file. Sorted.
fn sources(workspace: &Path) -> Vec<PathBuf> {
    const NOT_BUILT: [&str; 4] = ["tests", "test_data", "examples", "benches"];
    let mut out: Vec<PathBuf> = ["std", "cards", "Cargo.lock"].iter().map(|r| workspace.join(r)).collect();
    for krate in std::fs::read_dir(workspace.join("crates")).into_iter().flatten().flatten() {
        if krate.file_name() == "cairn_testgen" || !wanted(&krate) {
            continue;
        }
        for entry in std::fs::read_dir(krate.path()).into_iter().flatten().flatten() {
            if wanted(&entry) && !NOT_BUILT.iter().any(|n| entry.file_name() == *n) {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// Whether an entry is a source: not hidden, not an editor's backup, not build output, and not
/// a symbolic link (never followed, so no link makes a loop).
fn wanted(entry: &std::fs::DirEntry) -> bool {
    let name = entry.file_name().to_string_lossy().into_owned();
    let junk = name.starts_with('.') || name.ends_with('~') || name.ends_with(".orig") || name == "target";
    !junk && entry.file_type().is_ok_and(|t| !t.is_symlink())
}

/// Every source file under `path` (or `path` itself).
fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    match std::fs::read_dir(path) {
        Ok(entries) => {
            for entry in entries.flatten().filter(wanted) {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    collect(&entry.path(), out);
                } else {
                    out.push(entry.path());
                }
            }
        }
        Err(_) if path.is_file() => out.push(path.to_path_buf()),
        Err(_) => {}
    }
}
