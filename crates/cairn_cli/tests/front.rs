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
    use std::io::{BufRead, Write};
    // `cairn mcp` is `cairn-serve` after the hand-over: its executable, huge pages off and the
    // allocator's arenas committed on demand (lean.rs), both set by `cairn` before the `exec`
    // (`cairn-serve` handed over does not set the flag again), and the wire's descriptors
    // close-on-exec, so nothing the server starts inherits them.
    let mut child = Command::new(front())
        .arg("mcp")
        .env_remove("CAIRN_SERVER_HUGE_PAGES")
        .env_remove("MIMALLOC_ARENA_EAGER_COMMIT")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run cairn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    // The two pipes of the wire, as the kernel names them.
    let wire = {
        use std::os::fd::AsRawFd;
        let name = |fd: i32| std::fs::read_link(format!("/proc/self/fd/{fd}")).expect("a pipe of ours");
        [name(stdin.as_raw_fd()), name(stdout.as_raw_fd())]
    };
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"front-test","version":"0"}}}"#;
    writeln!(stdin, "{initialize}").expect("send initialize");
    let mut reply = String::new();
    std::io::BufReader::new(stdout).read_line(&mut reply).expect("the reply");
    assert!(reply.contains("\"id\":1"), "{reply}");
    // The server has answered, so it is past the `exec` and serving.
    let pid = child.id();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the server's executable");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's status");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("the server's environment");
    // Every descriptor of the server on the wire's pipes: (descriptor, close-on-exec).
    let mut on_the_wire = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fdinfo")).expect("the server's descriptors").flatten() {
        let fd: u32 = entry.file_name().to_string_lossy().parse().unwrap_or(0);
        let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).unwrap_or_default();
        if !wire.contains(&target) {
            continue;
        }
        let info = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let flags =
            info.lines().find_map(|l| l.strip_prefix("flags:")).and_then(|f| u32::from_str_radix(f.trim(), 8).ok());
        on_the_wire.push((fd, flags.is_some_and(|f| f & 0o2000000 != 0)));
    }
    drop(stdin);
    let ended = child.wait().expect("the server ends with its input");
    assert_eq!(ended.code(), Some(0));
    assert_eq!(exe.file_name().and_then(|n| n.to_str()), Some("cairn-serve"), "{exe:?}");
    // Descriptors 0 and 1 were moved off the wire (to the null device and standard error); the
    // server's own two are close-on-exec.
    assert_eq!(on_the_wire.len(), 2, "{on_the_wire:?}");
    assert!(
        on_the_wire.iter().all(|&(fd, cloexec)| fd > 2 && cloexec),
        "a child of the server would inherit the wire: {on_the_wire:?}"
    );
    let thp = status.lines().find(|l| l.starts_with("THP_enabled:"));
    if let Some(thp) = thp {
        assert!(thp.ends_with('0'), "{status}");
    }
    let environ = String::from_utf8_lossy(&environ);
    assert!(environ.split('\0').any(|v| v == "MIMALLOC_ARENA_EAGER_COMMIT=0"), "{environ}");
    assert!(environ.split('\0').any(|v| v == "CAIRN_SERVER_LEAN=huge-pages,allocator"), "{environ}");
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
fn without_cairn_serve_the_front_hands_the_servers_to_cairn_full() {
    use std::io::{BufRead, Write};
    let dir = std::env::temp_dir().join(format!("cairn-front-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    std::fs::copy(front(), dir.join("cairn")).expect("copy the front");
    if std::fs::hard_link(full(), dir.join("cairn-full")).is_err() {
        std::fs::copy(full(), dir.join("cairn-full")).expect("copy cairn-full");
    }
    let mut child = Command::new(dir.join("cairn"))
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run cairn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"front-test","version":"0"}}}"#;
    writeln!(stdin, "{initialize}").expect("send initialize");
    let mut reply = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut reply).expect("the reply");
    let exe = std::fs::read_link(format!("/proc/{}/exe", child.id())).expect("the server's executable");
    drop(stdin);
    let ended = child.wait().expect("the server ends with its input");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(reply.contains("\"id\":1"), "{reply}");
    assert_eq!(ended.code(), Some(0));
    assert_eq!(exe.file_name().and_then(|n| n.to_str()), Some("cairn-full"), "{exe:?}");
}

/// Sends `request` to a `cairn-full harness-runner` with `env` in its environment: its exit
/// status, its answer and what it said on standard error.
fn harness(request: &serde_json::Value, env: &[(&str, &str)]) -> (Option<i32>, serde_json::Value, String) {
    use std::io::Write;
    let mut command = Command::new(full());
    command.arg("harness-runner").envs(env.iter().copied());
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cairn-full harness-runner");
    child.stdin.take().expect("stdin").write_all(request.to_string().as_bytes()).expect("send the request");
    let output = child.wait_with_output().expect("the answer");
    let answer = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.code(), answer, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn the_harness_runner_answers_a_servers_request() {
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
    let (status, answer, said) = harness(&request, &[]);
    assert_eq!(status, Some(0), "{said}");
    let runs = answer["done"]["Ok"]["run"].as_array().expect("the runs' outcomes");
    assert_eq!(runs.len(), 3, "{answer}");
    assert_eq!(runs[0]["Ok"]["trapped"], true, "{answer}");
    assert!(runs[0]["Ok"]["trap"].as_str().is_some_and(|t| t.contains("overflow")), "{answer}");
    assert_eq!(runs[1]["Ok"]["trapped"], false, "{answer}");
    assert_eq!(runs[1]["Ok"]["stdout"], serde_json::json!(["42"]), "{answer}");
    assert!(runs[2]["Err"].as_str().is_some_and(|e| e.contains("no block missing")), "{answer}");
    assert_eq!(answer["tally"]["runs"], 2, "{answer}");
    assert!(answer["tally"]["limits"].is_object(), "{answer}");

    // A build that fails (no linker on the path) is still one answer on standard output: the
    // build's own record goes to standard error.
    let (status, answer, said) = harness(&request, &[("PATH", "")]);
    assert_eq!(status, Some(0), "{said}");
    assert!(answer["done"]["Err"].as_str().is_some_and(|e| e.contains("did not build")), "{answer} / {said}");

    // A child of another build than the server that asks (its mark, build_id.rs) refuses.
    let (status, answer, said) = harness(&request, &[("CAIRN_HANDED_BY", "0.0.0-0123456789abcdef")]);
    assert_eq!(status, Some(2));
    assert!(answer.is_null() && said.contains("different builds"), "{answer} / {said}");

    // A request it cannot read is exit 2, said on standard error.
    let (status, _, said) = harness(&serde_json::json!({"op": "sing"}), &[]);
    assert_eq!(status, Some(2));
    assert!(said.contains("not a harness request"), "{said}");
}

#[test]
fn a_binary_of_another_build_refuses_the_hand_over_and_programs_never_see_the_mark() {
    // `cairn` names its build to the binary it hands over to (build_id.rs); another build's mark
    // is an exit 2 that says so, before anything else happens.
    for binary in [full(), serve()] {
        let refused =
            Command::new(&binary).args(["mcp"]).env("CAIRN_HANDED_BY", "0.0.0-0000000000000000").output().expect("run");
        assert_eq!(refused.status.code(), Some(2), "{binary:?}");
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(said.contains("different builds") && said.contains("0.0.0-0000000000000000"), "{said}");
    }
    // Through the hand-over the mark is this build's, and it is taken out of the environment
    // before the program runs.
    let dir = std::env::temp_dir().join(format!("cairn-front-mark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let program = dir.join("mark.cairn");
    std::fs::write(
        &program,
        "import std.core (Option, Result);\nimport std.env;\n\nfn main() -> i32 {\n  match env.var(\"CAIRN_HANDED_BY\") {\n    Result.Ok(found) => {\n      match found {\n        Option.Some(v) => { println(\"marked\"); }\n        Option.None => { println(\"unmarked\"); }\n      }\n    }\n    Result.Err(e) => { println(\"error\"); }\n  }\n  return 0;\n}\n",
    )
    .expect("write the program");
    let ran = Command::new(front()).args(["run", "--format", "human"]).arg(&program).output().expect("run cairn run");
    let _ = std::fs::remove_dir_all(&dir);
    let out = String::from_utf8_lossy(&ran.stdout);
    assert_eq!(ran.status.code(), Some(0), "{}", String::from_utf8_lossy(&ran.stderr));
    assert!(out.contains("unmarked"), "{out}");
}

#[test]
fn the_hand_over_names_this_build_and_the_other_binaries_accept_it() {
    use std::os::unix::fs::PermissionsExt;
    // A stand-in `cairn-full` that prints the mark it was handed shows that `cairn` sends one.
    let dir = std::env::temp_dir().join(format!("cairn-front-names-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    std::fs::copy(front(), dir.join("cairn")).expect("copy the front");
    let stand_in = dir.join("cairn-full");
    std::fs::write(&stand_in, "#!/bin/sh\nprintf '%s' \"$CAIRN_HANDED_BY\"\n").expect("write the stand-in");
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).expect("make it runnable");
    let handed = Command::new(dir.join("cairn")).args(["build", "anything.cairn"]).output().expect("run cairn build");
    let _ = std::fs::remove_dir_all(&dir);
    let mark = String::from_utf8_lossy(&handed.stdout).into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        mark.len() == version.len() + 17 && mark.starts_with(&format!("{version}-")),
        "the mark handed over: {mark:?}"
    );
    // The real binaries of this build take it.
    for binary in [full(), serve()] {
        let accepted = Command::new(&binary).arg("--version").env("CAIRN_HANDED_BY", &mark).output().expect("run");
        assert_eq!(accepted.status.code(), Some(0), "{binary:?}: {}", String::from_utf8_lossy(&accepted.stderr));
    }
}
