//! Tests of program loading: manifests, path rules, dependencies, encodings.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::manifest::parse_manifest;

/// A fresh directory under the system temp dir, removed when dropped.
struct TempTree(PathBuf);

impl TempTree {
    fn new(tag: &str) -> TempTree {
        let dir = std::env::temp_dir().join(format!("cairn-vfs-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("temp dir");
        TempTree(dir)
    }

    fn write(&self, relative: &str, contents: &[u8]) -> &TempTree {
        let path = self.0.join(relative);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, contents).expect("write");
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[track_caller]
fn check_manifest_error(text: &str, expected_fragment: &str) {
    let error = parse_manifest(text).expect_err("manifest should be refused");
    assert!(error.contains(expected_fragment), "`{error}` lacks `{expected_fragment}`");
}

#[test]
fn a_minimal_manifest_takes_the_defaults() {
    let manifest = parse_manifest("[project]\nname = \"app\"\nsources = [\"src/main.cairn\"]\n").expect("valid");
    assert_eq!(manifest.name, "app");
    assert_eq!(manifest.build, BuildConfig::default());
    assert!(manifest.tests.is_empty());
}

#[test]
fn manifests_refuse_everything_the_spec_refuses() {
    let good = "[project]\nname = \"app\"\nsources = [\"a.cairn\"]\n";
    check_manifest_error(&format!("{good}[hooks]\nx = 1\n"), "unknown table `hooks`");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"a.cairn\"]\nextra = 1\n", "unknown key `extra`");
    check_manifest_error("[project]\nname = \"9app\"\nsources = [\"a.cairn\"]\n", "must match");
    check_manifest_error("[project]\nname = \"app\"\nsources = []\n", "1..1024");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"../a.cairn\"]\n", "relative .cairn path");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"./a.cairn\"]\n", "relative .cairn path");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"/a.cairn\"]\n", "relative .cairn path");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"a\\\\b.cairn\"]\n", "relative .cairn path");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"a.cairn\", \"a.cairn\"]\n", "twice");
    check_manifest_error("[project]\nname = \"app\"\nsources = [\"a.txt\"]\n", "relative .cairn path");
    check_manifest_error(&format!("{good}[build]\nkind = \"dll\"\n"), "unknown");
    check_manifest_error(&format!("{good}[build]\narch = \"pentium\"\n"), "unknown");
    check_manifest_error(&format!("{good}[build]\ntarget = \"wasm\"\n"), "unknown");
    check_manifest_error(&format!("{good}[build]\nlibraries = [\"ssl\"]\n"), "not a known system library");
    check_manifest_error(&format!("{good}[build]\nlibraries = [\"z\", \"z\"]\n"), "twice");
    check_manifest_error(&format!("{good}[build]\ntarget = \"aarch64-virt\"\nlibraries = [\"z\"]\n"), "freestanding");
    check_manifest_error(&format!("{good}[build]\ndevice_target = \"sm_80a\"\n"), "from sm_90");
    check_manifest_error(&format!("{good}[build]\ndevice_target = \"sm_90f\"\n"), "from sm_100");
    check_manifest_error(&format!("{good}[build]\ndevice_target = \"gpu\"\n"), "not a device target");
    check_manifest_error(&format!("{good}[foreign]\n\"x.c\" = [\"f\"]\n"), ".cpp, .cc or .cu");
    check_manifest_error(&format!("{good}[foreign]\n\"x.cu\" = [\"1f\"]\n"), "C identifiers");
    check_manifest_error("[project\n", "not valid TOML");
}

#[test]
fn a_full_manifest_reads_every_table() {
    let manifest = parse_manifest(
        "[project]\nname = \"meter\"\nsources = [\"src/units.cairn\", \"src/main.cairn\"]\ntests = [\"tests/scale.json\"]\n\
         [build]\nkind = \"exe\"\narch = \"baseline\"\ndevice_target = \"sm_90a\"\nlibraries = [\"z\"]\n\
         [dependencies]\nringbuf = \"vendor/ringbuf\"\n[foreign]\n\"vendor/scale.cu\" = [\"scale_tiled\"]\n",
    )
    .expect("valid");
    assert_eq!(manifest.build.kind, BuildKind::Exe);
    assert_eq!(manifest.build.device_target.as_deref(), Some("sm_90a"));
    assert_eq!(manifest.dependencies, vec![("ringbuf".to_string(), "vendor/ringbuf".to_string())]);
    assert_eq!(manifest.foreign, vec![("vendor/scale.cu".to_string(), vec!["scale_tiled".to_string()])]);
}

#[test]
fn a_single_file_is_a_program_named_by_its_stem() {
    let tree = TempTree::new("single");
    tree.write("hello.cairn", b"\xEF\xBB\xBFfn main() -> i32 { return 0; }\n");
    let program = load(&tree.path().join("hello.cairn")).expect("loads");
    assert_eq!(program.name, "hello");
    assert!(program.is_single_file());
    assert_eq!(program.files.len(), 1);
    assert_eq!(program.files[0].name, "hello.cairn");
    assert!(program.files[0].had_bom);
    assert!(program.files[0].text.starts_with("fn main"));
}

#[test]
fn text_that_is_not_utf8_is_an_environment_error() {
    let tree = TempTree::new("latin1");
    tree.write("bad.cairn", b"fn main() -> i32 { return 0; } // caf\xE9\n");
    let error = load(&tree.path().join("bad.cairn")).expect_err("refused");
    assert!(error.message.contains("not UTF-8") && error.message.contains("offset 37"), "{error}");
}

#[test]
fn a_project_loads_dependencies_first_and_once() {
    let tree = TempTree::new("deps");
    tree.write("cairn.toml", b"[project]\nname = \"app\"\nsources = [\"src/main.cairn\"]\n[dependencies]\ngeo = \"deps/geo\"\nmath = \"deps/math\"\n")
        .write("src/main.cairn", b"module app;\n")
        .write("deps/geo/cairn.toml", b"[project]\nname = \"geo\"\nsources = [\"g.cairn\"]\n[dependencies]\nmath = \"m\"\n")
        .write("deps/geo/g.cairn", b"module geo;\n")
        .write("deps/geo/m/cairn.toml", b"[project]\nname = \"math\"\nsources = [\"m.cairn\"]\n")
        .write("deps/geo/m/m.cairn", b"module math;\n")
        .write("deps/math/cairn.toml", b"[project]\nname = \"math\"\nsources = [\"m.cairn\"]\n")
        .write("deps/math/m.cairn", b"module math;\n");
    // Two directories hold a project named `math`: refused.
    let error = load(tree.path()).expect_err("two projects named math");
    assert!(error.message.contains("Two projects"), "{error}");

    tree.write(
        "cairn.toml",
        b"[project]\nname = \"app\"\nsources = [\"src/main.cairn\"]\n[dependencies]\ngeo = \"deps/geo\"\n",
    );
    let program = load(tree.path()).expect("loads");
    let names: Vec<&str> = program.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["deps/geo/m/m.cairn", "deps/geo/g.cairn", "src/main.cairn"]);
    assert_eq!(program.dependencies.len(), 2);
}

#[test]
fn missing_sources_and_odd_paths_are_refused() {
    let tree = TempTree::new("missing");
    tree.write("cairn.toml", b"[project]\nname = \"app\"\nsources = [\"src/main.cairn\"]\n");
    let error = load(tree.path()).expect_err("missing file");
    assert!(error.message.contains("missing"), "{error}");
    let error = load(&tree.path().join("notes.txt")).expect_err("unreadable");
    assert!(error.message.contains("Cannot read"), "{error}");
    tree.write("notes.txt", b"hi");
    let error = load(&tree.path().join("notes.txt")).expect_err("wrong kind");
    assert!(error.message.contains("neither"), "{error}");
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_not_followed() {
    let tree = TempTree::new("links");
    tree.write("cairn.toml", b"[project]\nname = \"app\"\nsources = [\"src/main.cairn\"]\n")
        .write("real/main.cairn", b"fn main() -> i32 { return 0; }\n");
    std::os::unix::fs::symlink(tree.path().join("real"), tree.path().join("src")).expect("symlink");
    let error = load(tree.path()).expect_err("link refused");
    assert!(error.message.contains("symbolic link"), "{error}");
}

#[test]
fn a_linked_program_file_or_manifest_is_refused() {
    let tree = TempTree::new("linked-file");
    tree.write("real.cairn", b"fn main() -> i32 { return 0; }\n");
    tree.write("proj/cairn.toml", b"[project]\nname = \"p\"\nsources = [\"main.cairn\"]\n");
    tree.write("proj/main.cairn", b"fn main() -> i32 { return 0; }\n");
    std::os::unix::fs::symlink(tree.path().join("real.cairn"), tree.path().join("link.cairn")).unwrap();
    std::os::unix::fs::symlink(tree.path().join("proj/cairn.toml"), tree.path().join("proj/other.toml")).unwrap();
    for path in ["link.cairn", "proj/other.toml"] {
        let error = load(&tree.path().join(path)).unwrap_err();
        assert!(error.message.contains("symbolic link"), "{path}: {}", error.message);
    }
}

#[test]
fn a_fifo_or_device_source_is_refused_without_blocking() {
    let tree = TempTree::new("fifo-source");
    tree.write("cairn.toml", b"[project]\nname = \"p\"\nsources = [\"main.cairn\"]\n");
    let fifo = std::ffi::CString::new(tree.path().join("main.cairn").to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let error = load(tree.path()).unwrap_err();
    assert!(error.message.contains("missing or not a file"), "{}", error.message);
    let fifo_file = tree.path().join("lone.cairn");
    let c_path = std::ffi::CString::new(fifo_file.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let error = load(&fifo_file).unwrap_err();
    assert!(error.message.contains("not a regular file"), "{}", error.message);
    assert!(read_user_file(&fifo_file, 10).is_err());
    assert!(read_user_file(Path::new("/dev/zero"), 10).is_err());
}

#[test]
fn a_source_over_the_limit_is_refused_before_it_is_read_whole() {
    let tree = TempTree::new("big-source");
    let big = vec![b' '; SOURCE_LIMIT + 1];
    tree.write("big.cairn", &big);
    let error = load(&tree.path().join("big.cairn")).unwrap_err();
    assert!(error.message.contains("E-SOURCE-LIMIT"), "{}", error.message);
}

#[test]
fn a_pending_write_back_is_read_as_recovery_will_leave_it() {
    let tree = TempTree::new("pending-view");
    tree.write("cairn.toml", b"[project]\nname = \"p\"\nsources = [\"a.cairn\", \"b.cairn\"]\n");
    tree.write("a.cairn", b"fn a() {}\n");
    tree.write("b.cairn", b"fn b() {}\n");
    let root = tree.path().canonicalize().unwrap();
    // A write-back of two files killed after the first: a is at "after", b at "before".
    let journal = journal::Journal::new(&root).with_hook(std::sync::Arc::new(|at: &str| {
        if at == "swapped" {
            panic!("killed");
        }
    }));
    let changes = [
        journal::FileChange {
            name: "a.cairn".into(),
            before: b"fn a() {}\n".to_vec(),
            after: b"fn a() { 1; }\n".to_vec(),
            before_sha256: None,
        },
        journal::FileChange {
            name: "b.cairn".into(),
            before: b"fn b() {}\n".to_vec(),
            after: b"fn b() { 2; }\n".to_vec(),
            before_sha256: None,
        },
    ];
    let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| journal.write(&changes)));
    assert!(killed.is_err());
    assert_eq!(std::fs::read_to_string(root.join("a.cairn")).unwrap(), "fn a() { 1; }\n");
    let program = load(&root).unwrap();
    assert_eq!(program.files[0].text, "fn a() {}\n", "read as recovery will leave it");
    // Reading wrote nothing.
    assert_eq!(std::fs::read_to_string(root.join("a.cairn")).unwrap(), "fn a() { 1; }\n");
}
