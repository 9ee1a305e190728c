//! The two binaries (docs/architecture.md, "Two binaries"): `cairn` answers the commands that need
//! no back end itself, without LLVM or Z3 linked in, and hands every other one to `cairn-full`
//! beside it — the same answer, exit status and streams as `cairn-full` gives on its own; without
//! `cairn-full` it says how to build it. (Every other test of this crate runs `cairn`, so each
//! handed-over command is also tested through the hand-over.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn front() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn"))
}

fn full() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn-full"))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn holds(binary: &Path, needle: &str) -> bool {
    let bytes = std::fs::read(binary).expect("read the binary");
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn the_front_links_neither_llvm_nor_z3() {
    // A symbol every LLVM x86 back end has, and one of Z3's C API: in `cairn-full`, not in
    // `cairn`.
    assert!(holds(&full(), "LLVMInitializeX86Target"), "cairn-full links LLVM");
    assert!(!holds(&front(), "LLVMInitializeX86Target"), "cairn links LLVM");
    assert!(!holds(&front(), "Z3_mk_context"), "cairn links Z3");
}

#[test]
fn both_binaries_answer_alike() {
    let hello = examples().join("hello.cairn");
    for args in [
        vec!["check".into(), hello.display().to_string(), "--format".into(), "json".into()],
        vec!["emit".into(), hello.display().to_string(), "--mir".into()],
        vec!["rules".into(), "E-ALIAS".into(), "--format".into(), "json".into()],
        vec!["build".into(), "--timeout".into(), "0".into()],
        vec!["no-such-command".into()],
    ] {
        let a = Command::new(front()).args(&args).output().expect("run cairn");
        let b = Command::new(full()).args(&args).output().expect("run cairn-full");
        assert_eq!(a.status.code(), b.status.code(), "{args:?}");
        assert_eq!(a.stdout, b.stdout, "{args:?}");
        assert_eq!(a.stderr, b.stderr, "{args:?}");
    }
    let version = Command::new(front()).arg("--version").output().expect("run cairn");
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("cairn {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn without_cairn_full_the_front_still_checks_and_says_what_is_missing() {
    let dir = std::env::temp_dir().join(format!("cairn-front-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let alone = dir.join("cairn");
    std::fs::copy(front(), &alone).expect("copy the front");
    let hello = examples().join("hello.cairn");
    let checked = Command::new(&alone).args(["check"]).arg(&hello).output().expect("run cairn");
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stderr));
    let built = Command::new(&alone).args(["build"]).arg(&hello).output().expect("run cairn");
    assert_eq!(built.status.code(), Some(2));
    let message = String::from_utf8_lossy(&built.stderr);
    assert!(message.contains("cairn-full") && message.contains("cargo build -p cairn_cli"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}
