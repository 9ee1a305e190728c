//! The three binaries (docs/architecture.md, "Three binaries"): `cairn` answers the commands that
//! need no back end itself, without LLVM or Z3 linked in, hands the servers to `cairn-serve`
//! (Z3, no LLVM) and every other command to `cairn-full` beside it — the same answer, exit status
//! and streams as `cairn-full` gives on its own; without `cairn-full` it says how to build it.
//! (Every other test of this crate runs `cairn`, so each handed-over command, the servers and
//! their harness builds through `cairn-full harness-runner` included, is also tested through the
//! hand-over.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn front() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn"))
}

fn full() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn-full"))
}

fn serve() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn-serve"))
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
    // The servers prove contracts with Z3 and build harnesses in a `cairn-full` child.
    assert!(!holds(&serve(), "LLVMInitializeX86Target"), "cairn-serve links LLVM");
    assert!(holds(&serve(), "Z3_mk_context"), "cairn-serve links Z3");
}

#[test]
fn the_servers_run_in_cairn_serve_with_lean_memory() {
    use std::io::Write;
    // `cairn mcp` is `cairn-serve` after the hand-over: its executable, huge pages off and the
    // allocator's arenas committed on demand (lean.rs), both set before the `exec`.
    let mut child = Command::new(front())
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run cairn mcp");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = child.id();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the server's executable");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's status");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("the server's environment");
    drop(child.stdin.take().map(|mut stdin| stdin.flush()));
    let ended = child.wait().expect("the server ends with its input");
    assert_eq!(ended.code(), Some(0));
    assert_eq!(exe.file_name().and_then(|n| n.to_str()), Some("cairn-serve"), "{exe:?}");
    if std::env::var_os("CAIRN_SERVER_HUGE_PAGES").is_none() {
        assert!(status.lines().any(|l| l.starts_with("THP_enabled:") && l.ends_with('0')), "{status}");
    }
    if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
        let environ = String::from_utf8_lossy(&environ);
        assert!(environ.split('\0').any(|v| v == "MIMALLOC_ARENA_EAGER_COMMIT=0"), "{environ}");
    }
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

#[test]
fn the_harness_runner_answers_a_servers_request() {
    use std::io::Write;
    // What `cairn-serve` asks of a `cairn-full` child for each validation harness (runner_wire.rs):
    // the blocks' outcomes in the order asked, a trap with its message, and the confined runs
    // accounted for, so the server's record says how they ran.
    let program = "fn twice(x:u32) -> u32 = x * 2;\n\
                   test doubles { println(twice(21)); }\n\
                   test overflows { println(twice(4000000000)); }\n";
    let request = serde_json::json!({
        "op": "run",
        "files": [{"name": "h.cairn", "text": program}],
        "blocks": ["overflows", "doubles", "missing"],
        "seconds": 30,
        "emulate": null,
    });
    let mut child = Command::new(full())
        .arg("harness-runner")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run cairn-full harness-runner");
    child.stdin.take().expect("stdin").write_all(request.to_string().as_bytes()).expect("send the request");
    let output = child.wait_with_output().expect("the answer");
    assert_eq!(output.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON answer");
    let runs = answer["done"]["Ok"]["run"].as_array().expect("the runs' outcomes");
    assert_eq!(runs.len(), 3, "{answer}");
    assert_eq!(runs[0]["Ok"]["trapped"], true, "{answer}");
    assert!(runs[0]["Ok"]["trap"].as_str().is_some_and(|t| t.contains("overflow")), "{answer}");
    assert_eq!(runs[1]["Ok"]["trapped"], false, "{answer}");
    assert_eq!(runs[1]["Ok"]["stdout"], serde_json::json!(["42"]), "{answer}");
    assert!(runs[2]["Err"].as_str().is_some_and(|e| e.contains("no block missing")), "{answer}");
    assert_eq!(answer["tally"]["runs"], 2, "{answer}");
    assert!(answer["tally"]["limits"].is_object(), "{answer}");

    // A request it cannot read is exit 2, said on standard error.
    let mut child = Command::new(full())
        .arg("harness-runner")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cairn-full harness-runner");
    child.stdin.take().expect("stdin").write_all(b"{\"op\": \"sing\"}").expect("send");
    let output = child.wait_with_output().expect("the answer");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a harness request"));
}
