//! The security suite (issue 11, docs/security.md): a repository and an agent are both
//! untrusted. Each test repeats one attack of the reliability review against the real binary —
//! the CLI, `cairn mcp` over its line protocol, `cairn lsp` over its frames — and asserts the
//! defence: nothing written or read outside the project, no server killed by any input, no save
//! lost without a conflict answer, every limit enforced with a coded error.

use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
const PROGRAM: &str = "fn double(x:u32) -> u32 {\n  return x * 2;\n}\n\nfn main() -> i32 {\n  if double(2) != 4 { return 1; }\n  return 0;\n}\n";

/// A scratch directory: `project/` (where servers start) and `outside/` (which nothing may touch).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-security-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("project")).expect("scratch");
        std::fs::create_dir_all(dir.join("outside")).expect("scratch");
        Scratch(dir.canonicalize().expect("canonical"))
    }

    fn project(&self) -> PathBuf {
        self.0.join("project")
    }

    fn outside(&self) -> PathBuf {
        self.0.join("outside")
    }

    /// Every file under `outside/` with its content, sorted.
    fn outside_state(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(self.outside()).expect("outside") {
            let path = entry.expect("entry").path();
            files.push((path.display().to_string(), std::fs::read(&path).unwrap_or_default()));
        }
        files.sort();
        files
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn sha256(bytes: &[u8]) -> String {
    cairn_agent::canonical::sha256_hex(bytes)
}

/// A `cairn mcp` child driven one line at a time.
struct Mcp {
    child: Child,
    input: ChildStdin,
    output: std::io::BufReader<ChildStdout>,
    next: i64,
}

impl Mcp {
    fn start(dir: &Path, env: &[(&str, &str)]) -> Mcp {
        let mut command = Command::new(CAIRN);
        command.arg("mcp").current_dir(dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("start cairn mcp");
        let input = child.stdin.take().expect("stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        Mcp { child, input, output, next: 1 }
    }

    /// Sends one raw line and returns the answer line.
    fn raw(&mut self, line: &str) -> Value {
        use std::io::BufRead;
        writeln!(self.input, "{line}").expect("write");
        self.input.flush().expect("flush");
        let mut answer = String::new();
        self.output.read_line(&mut answer).expect("read");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer:?}"))
    }

    /// Calls a tool; returns the record and isError (or the JSON-RPC error as the record).
    fn call(&mut self, tool: &str, arguments: Value) -> (Value, bool) {
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        let answer = self.raw(&line.to_string());
        if answer.get("error").is_some() {
            return (answer["error"].clone(), true);
        }
        let text = answer["result"]["content"][0]["text"].as_str().expect("a text result");
        (serde_json::from_str(text).expect("a record"), answer["result"]["isError"].as_bool().unwrap_or(false))
    }

    fn alive(&mut self) -> bool {
        let id = self.next;
        self.next += 1;
        self.raw(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())["id"] == json!(id)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn body(handle: &str, replacement: &str) -> Value {
    json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement}})
}

fn open_double(mcp: &mut Mcp) -> String {
    let (packet, error) = mcp.call("edit_open", json!({"path": "p.cairn", "symbol": "double"}));
    assert!(!error, "{packet}");
    packet["handle"].as_str().expect("handle").to_string()
}

/// Plants a journal entry as a repository could ship it (not sealed by this user's key):
/// `files` are (name, before, after); the kept contents are `before`.
fn plant_entry(project: &Path, seq: u64, files: &[(&str, &str, &str)], marker: Option<&str>) {
    let entries = project.join(".cairn/journal");
    std::fs::create_dir_all(&entries).expect("journal");
    let listed: Vec<Value> = files
        .iter()
        .enumerate()
        .map(|(i, (name, before, after))| {
            std::fs::write(entries.join(format!("{seq:08}.{i}.before")), before).expect("kept");
            json!({"name": name, "before_sha256": sha256(before.as_bytes()), "after_sha256": sha256(after.as_bytes())})
        })
        .collect();
    let entry = json!({"schema": "cairn.journal/3", "seq": seq, "files": listed, "mac": "0".repeat(64)});
    std::fs::write(entries.join(format!("{seq:08}.write.json")), entry.to_string()).expect("entry");
    if let Some(marker) = marker {
        std::fs::write(entries.join(format!("{seq:08}.{marker}")), "").expect("marker");
    }
}

// ----- write-backs that never leave the project (D1, D2, D8, D10) ------------------------------

#[test]
fn a_planted_staging_link_does_not_redirect_an_admitted_edit() {
    let scratch = Scratch::new("staging");
    std::fs::write(scratch.project().join("p.cairn"), PROGRAM).expect("write");
    std::fs::write(scratch.outside().join("target"), "outside\n").expect("write");
    symlink(scratch.outside().join("target"), scratch.project().join(".p.cairn.cairn-write")).expect("link");
    let before = scratch.outside_state();
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    let handle = open_double(&mut mcp);
    let (answer, error) = mcp.call("edit_request", body(&handle, "{\n  return x + x;\n}"));
    assert!(!error, "{answer}");
    assert_eq!(answer["written"], json!(["p.cairn"]));
    assert_eq!(scratch.outside_state(), before, "nothing outside the project changed");
    assert!(read(&scratch.project().join("p.cairn")).contains("return x + x;"));
    let metadata = std::fs::symlink_metadata(scratch.project().join("p.cairn")).expect("file");
    assert!(metadata.file_type().is_file(), "the source is still a regular file, not a link");
}

#[test]
fn a_planted_journal_entry_is_never_applied_by_a_read_only_tool_or_by_undo() {
    let scratch = Scratch::new("journal");
    std::fs::write(scratch.project().join("p.cairn"), PROGRAM).expect("write");
    std::fs::write(scratch.outside().join("x"), "").expect("write");
    symlink(scratch.outside(), scratch.project().join("d")).expect("link");
    // A pending entry that would "roll back" d/x (now empty, its after) to attacker text, and a
    // committed one that undo would revert the same way.
    plant_entry(&scratch.project(), 1, &[("d/x", "attacker text\n", "")], None);
    plant_entry(&scratch.project(), 2, &[("d/x", "attacker text\n", "")], Some("committed"));
    let journal_before: Vec<String> = {
        let mut names: Vec<String> = std::fs::read_dir(scratch.project().join(".cairn/journal"))
            .expect("journal")
            .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        names
    };
    let outside = scratch.outside_state();
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    for tool in ["check", "state"] {
        let (record, _) = mcp.call(tool, json!({"path": "p.cairn"}));
        assert!(record.get("status").is_some(), "{tool}: {record}");
    }
    let mut journal_after: Vec<String> = std::fs::read_dir(scratch.project().join(".cairn/journal"))
        .expect("journal")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    journal_after.sort();
    assert_eq!(journal_after, journal_before, "read-only tools never write, not even to the journal");
    let undo = Command::new(CAIRN)
        .args(["undo", "p.cairn", "--format", "json"])
        .current_dir(scratch.project())
        .output()
        .expect("undo");
    assert_eq!(undo.status.code(), Some(2), "{}", String::from_utf8_lossy(&undo.stdout));
    assert!(String::from_utf8_lossy(&undo.stdout).contains("quarantined"));
    assert_eq!(scratch.outside_state(), outside, "nothing outside the project changed");
    // An admitted edit still writes inside the project (the bad entries stay inert).
    let handle = open_double(&mut mcp);
    let (answer, error) = mcp.call("edit_request", body(&handle, "{\n  return x + x;\n}"));
    assert!(!error, "{answer}");
    assert_eq!(scratch.outside_state(), outside);
}

#[test]
fn a_linked_source_or_state_directory_is_refused_with_a_code() {
    let scratch = Scratch::new("linked");
    std::fs::write(scratch.outside().join("real.cairn"), PROGRAM).expect("write");
    // A link out of the project puts its directory (journal, lock) elsewhere: the CLI refuses
    // a linked program file, and the server refuses a path that resolves outside.
    symlink(scratch.outside().join("real.cairn"), scratch.project().join("p.cairn")).expect("link");
    let check =
        Command::new(CAIRN).args(["check", "p.cairn", "--format", "json"]).current_dir(scratch.project()).output();
    let check = check.expect("check");
    assert_eq!(check.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&check.stdout).contains("E-PROJECT-OR-ENVIRONMENT"));
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    let (record, error) = mcp.call("edit_open", json!({"path": "p.cairn", "symbol": "double"}));
    assert!(error && record["code"] == "E-REQUEST", "{record}");
    // A linked .cairn directory: the program is refused with a code that names the link, by
    // the CLI and the server alike, and nothing is written outside.
    std::fs::remove_file(scratch.project().join("p.cairn")).expect("rm");
    std::fs::write(scratch.project().join("p.cairn"), PROGRAM).expect("write");
    symlink(scratch.outside(), scratch.project().join(".cairn")).expect("link");
    let (record, error) = mcp.call("edit_open", json!({"path": "p.cairn", "symbol": "double"}));
    assert!(error && record["code"] == "E-PROJECT-OR-ENVIRONMENT", "{record}");
    assert!(record["message"].as_str().unwrap_or("").contains("symbolic link"), "{record}");
    let undo =
        Command::new(CAIRN).args(["undo", "p.cairn", "--format", "json"]).current_dir(scratch.project()).output();
    assert_eq!(undo.expect("undo").status.code(), Some(2));
    assert_eq!(
        scratch.outside_state(),
        vec![(scratch.outside().join("real.cairn").display().to_string(), PROGRAM.into())]
    );
    assert_eq!(read(&scratch.project().join("p.cairn")), PROGRAM);
}

#[test]
fn the_cli_reads_an_interrupted_write_back_as_recovery_will_leave_it() {
    let scratch = Scratch::new("pending");
    let edited = PROGRAM.replace("return x * 2;", "return x * 3;");
    std::fs::write(
        scratch.project().join("cairn.toml"),
        "[project]\nname = \"p\"\nsources = [\"a.cairn\", \"b.cairn\"]\n[build]\nkind = \"exe\"\n",
    )
    .expect("manifest");
    std::fs::write(scratch.project().join("a.cairn"), PROGRAM).expect("write");
    std::fs::write(scratch.project().join("b.cairn"), "fn other() -> u32 { return 1; }\n").expect("write");
    // A real write-back of two files, interrupted after the first swap (this process stands in
    // for a server killed there): a.cairn holds its new content, b.cairn its old.
    let journal = cairn_vfs::journal::Journal::new(&scratch.project()).with_hook(std::sync::Arc::new(|at: &str| {
        if at == "swapped" {
            panic!("killed after the first file");
        }
    }));
    let changes = [
        cairn_vfs::journal::FileChange {
            name: "a.cairn".into(),
            before: PROGRAM.into(),
            after: edited.clone().into(),
            before_sha256: None,
        },
        cairn_vfs::journal::FileChange {
            name: "b.cairn".into(),
            before: "fn other() -> u32 { return 1; }\n".into(),
            after: "fn other() -> u32 { return 2; }\n".into(),
            before_sha256: None,
        },
    ];
    let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| journal.write(&changes)));
    assert!(killed.is_err());
    assert_eq!(read(&scratch.project().join("a.cairn")), edited);
    let run = Command::new(CAIRN).args(["run", ".", "--format", "json"]).current_dir(scratch.project()).output();
    let run = run.expect("run");
    let record: Value = serde_json::from_slice(&run.stdout).expect("record");
    // The edited program would exit 1 (double(2) is 6); the recovered one exits 0.
    assert_eq!(record["exit_code"], 0, "{record}");
    assert_eq!(read(&scratch.project().join("a.cairn")), edited, "reading wrote nothing");
}

#[test]
fn a_journal_shipped_with_a_repository_is_never_read() {
    // The source on disk is benign; a planted pending entry would "roll it back" to other code.
    let scratch = Scratch::new("hidden-code");
    let benign = "fn main() -> i32 {\n  println(\"benign\");\n  return 0;\n}\n";
    let evil = "fn main() -> i32 {\n  println(\"EVIL\");\n  return 7;\n}\n";
    std::fs::write(scratch.project().join("p.cairn"), benign).expect("write");
    plant_entry(&scratch.project(), 1, &[("p.cairn", evil, benign), ("missing.cairn", "a", "b")], None);
    let run = Command::new(CAIRN).args(["run", "p.cairn", "--format", "json"]).current_dir(scratch.project()).output();
    let record: Value = serde_json::from_slice(&run.expect("run").stdout).expect("record");
    assert_eq!((record["exit_code"].clone(), record["stdout"].clone()), (json!(0), json!("benign\n")), "{record}");
}

// ----- saves inside the write-back window (D4) --------------------------------------------------

#[test]
fn a_save_inside_the_write_back_window_is_kept_and_answered_as_a_conflict() {
    for in_place in [true, false] {
        let scratch = Scratch::new(if in_place { "window-in-place" } else { "window-rename" });
        let path = scratch.project().join("p.cairn");
        std::fs::write(&path, PROGRAM).expect("write");
        let mut mcp = Mcp::start(
            &scratch.project(),
            &[("CAIRN_WRITEBACK_PAUSE_MS", "1500"), ("CAIRN_WRITEBACK_PAUSE_AT", "before-swap")],
        );
        let handle = open_double(&mut mcp);
        let saver = {
            let path = path.clone();
            let staged = scratch.project().join(".p.cairn.cairn-write");
            std::thread::spawn(move || {
                // The staged file appears, then the journal entry; the pause follows the last
                // re-read of the file. Save well inside it.
                let deadline = Instant::now() + Duration::from_secs(20);
                while !staged.exists() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                std::thread::sleep(Duration::from_millis(600));
                let saved = PROGRAM.replace("return x * 2;", "return x << 1; // saved by the editor");
                if in_place {
                    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).expect("open");
                    file.write_all(saved.as_bytes()).expect("save");
                } else {
                    std::fs::write(path.with_extension("swp"), &saved).expect("save");
                    std::fs::rename(path.with_extension("swp"), &path).expect("rename");
                }
                saved
            })
        };
        let (answer, error) = mcp.call("edit_request", body(&handle, "{\n  return x + x;\n}"));
        let saved = saver.join().expect("saver");
        assert!(error && answer["code"] == "E-SESSION", "in place {in_place}: {answer}");
        assert_eq!(answer["files"], json!(["p.cairn"]));
        assert_eq!(read(&path), saved, "in place {in_place}: the editor's save is kept");
        let undo = Command::new(CAIRN)
            .args(["undo", "p.cairn", "--format", "json"])
            .current_dir(scratch.project())
            .output()
            .expect("undo");
        assert_eq!(undo.status.code(), Some(1), "undo is usable: nothing to undo");
        assert!(String::from_utf8_lossy(&undo.stdout).contains("No write-back"));
    }
}

// ----- inputs that must not kill a server (D3, D7, D9, D12) -------------------------------------

#[test]
fn deep_and_oversized_inputs_are_answered_and_the_mcp_server_keeps_its_sessions() {
    let scratch = Scratch::new("deep-mcp");
    std::fs::write(scratch.project().join("p.cairn"), PROGRAM).expect("write");
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    let handle = open_double(&mut mcp);
    let deep = format!("fn f(n:usize, x:ro<u32>[n]) -> u32 {{ return x{}; }}", "[0]".repeat(1500));
    let (record, error) = mcp.call("check", json!({"source": deep}));
    assert!(error && record["code"] == "E-DEPTH", "{record}");
    for chain in [".a".repeat(8000), ".f()".repeat(3000), "[0]".repeat(6000)] {
        let started = Instant::now();
        let (answer, error) = mcp.call("edit_request", body(&handle, &format!("{{\n  return x{chain};\n}}")));
        assert!(error, "{answer}");
        assert!(started.elapsed() < Duration::from_secs(10), "a long chain is answered promptly");
    }
    let big = "x".repeat(16_000_001);
    let (record, error) = mcp.call("check", json!({"source": big}));
    assert!(error && record["code"] == "E-SOURCE-LIMIT", "{}", record["code"]);
    // Duplicate keys anywhere in a message are refused, never "last one wins".
    let duplicate = format!(
        r#"{{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{{"name":"edit_request","arguments":{{"request":{{"protocol":"cairn.edit/2","handle":"{handle}","kind":"body","replacement":"{{ return 0; }}","replacement":"{{\n  return x + x;\n}}"}}}}}}}}"#
    );
    let answer = mcp.raw(&duplicate);
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(read(&scratch.project().join("p.cairn")), PROGRAM, "nothing was written");
    // The session survived all of it and still writes.
    assert!(mcp.alive());
    let (answer, error) = mcp.call("edit_request", body(&handle, "{\n  return x + x;\n}"));
    assert!(!error, "{answer}");
    assert_eq!(answer["written"], json!(["p.cairn"]));
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Runs `cairn lsp` over `input`; its messages in order and the exit status.
fn lsp_session(input: Vec<u8>) -> (Vec<Value>, i32) {
    let mut child = Command::new(CAIRN)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cairn lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut bytes = Vec::new();
    child.stdout.take().expect("stdout").read_to_end(&mut bytes).expect("read");
    let _ = writer.join();
    let status = child.wait().expect("wait").code().unwrap_or(-1);
    let text = String::from_utf8(bytes).expect("UTF-8");
    let mut messages = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("Content-Length: ") {
        let after = &rest[start + 16..];
        let end = after.find("\r\n").expect("header end");
        let length: usize = after[..end].parse().expect("length");
        let body_start = start + 16 + end + 4;
        messages.push(serde_json::from_str(&rest[body_start..body_start + length]).expect("a JSON message"));
        rest = &rest[body_start + length..];
    }
    (messages, status)
}

fn did_open(uri: &str, text: &str) -> String {
    json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "cairn", "version": 1, "text": text}}}).to_string()
}

#[test]
fn deep_and_oversized_documents_do_not_kill_the_language_server() {
    let mut input = frame(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
    input.extend(frame(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    let deep = format!("fn f(n:usize, x:ro<u32>[n]) -> u32 {{ return x{}; }}\n", "[0]".repeat(2000));
    input.extend(frame(&did_open("file:///tmp/cairn-security-deep.cairn", &deep)));
    let big = format!("fn main() -> i32 {{ return 0; }}\n{}", " ".repeat(16_000_001));
    input.extend(frame(&did_open("file:///tmp/cairn-security-big.cairn", &big)));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/cairn-security-deep.cairn"},"position":{"line":0,"character":40}}}"#));
    // A request settles the document's check, so its diagnostics are out before the exit.
    input.extend(frame(r#"{"jsonrpc":"2.0","id":5,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///tmp/cairn-security-big.cairn"}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":4,"method":"shutdown"}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let (messages, status) = lsp_session(input);
    assert_eq!(status, 0, "{messages:#?}");
    let answer =
        |id: i64| messages.iter().find(|m| m["id"] == json!(id)).unwrap_or_else(|| panic!("no answer to {id}"));
    assert_eq!(answer(1)["error"]["code"], -32002, "shutdown before initialize is refused (D12)");
    assert!(answer(3).get("result").is_some(), "hover after a deep document is answered");
    let published = |uri: &str| {
        messages
            .iter()
            .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
            .last()
            .unwrap_or_else(|| panic!("no diagnostics for {uri}"))
            .clone()
    };
    let deep = published("file:///tmp/cairn-security-deep.cairn");
    assert_eq!(deep["params"]["diagnostics"][0]["code"], "E-DEPTH", "{deep}");
    let big = published("file:///tmp/cairn-security-big.cairn");
    assert_eq!(big["params"]["diagnostics"][0]["code"], "E-SOURCE-LIMIT", "{big}");
}

// ----- limits of the CLI (D5, D6, D11, D13, stack overflow) -------------------------------------

fn run_json(dir: &Path, args: &[&str]) -> (Value, i32, Duration) {
    let started = Instant::now();
    let output = Command::new(CAIRN).args(args).args(["--format", "json"]).current_dir(dir).output().expect("cairn");
    let record = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not a record ({e}): {}", String::from_utf8_lossy(&output.stdout)));
    (record, output.status.code().unwrap_or(-1), started.elapsed())
}

#[test]
fn run_stops_a_program_at_its_timeout_and_at_the_output_cap() {
    let scratch = Scratch::new("run-limits");
    let dir = scratch.project();
    std::fs::write(
        dir.join("spin.cairn"),
        "fn main() -> i32 {\n  let mut i:u64 = 0;\n  while true { i = add_wrap(i, 1); }\n  return 0;\n}\n",
    )
    .expect("write");
    let (record, status, took) = run_json(&dir, &["run", "spin.cairn", "--timeout", "2"]);
    assert_eq!(status, 2, "{record}");
    assert_eq!(record["code"], "E-PROJECT-OR-ENVIRONMENT");
    assert!(record["message"].as_str().unwrap_or("").contains("still running"), "{record}");
    assert!(took < Duration::from_secs(30));
    std::fs::write(
        dir.join("flood.cairn"),
        "fn main() -> i32 {\n  while true { println(\"a line of output that floods the pipe\"); }\n  return 0;\n}\n",
    )
    .expect("write");
    let (record, status, _) = run_json(&dir, &["run", "flood.cairn"]);
    assert_eq!(status, 2, "{}", record["message"]);
    assert_eq!(record["output_cap_bytes"], 16 << 20);
    assert_eq!(record["stdout"].as_str().map(str::len), Some(16 << 20), "the first 16 MiB are kept");
}

#[test]
fn a_character_literal_at_a_float_type_builds_and_runs() {
    let scratch = Scratch::new("char-float");
    let dir = scratch.project();
    std::fs::write(
        dir.join("c.cairn"),
        "fn main() -> i32 {\n  let code:f64 = 'A';\n  println(code);\n  return 0;\n}\n",
    )
    .expect("write");
    let (record, status, _) = run_json(&dir, &["run", "c.cairn"]);
    assert_eq!((status, record["stdout"].clone()), (0, json!("65\n")), "{record}");
}

#[test]
fn fifos_devices_and_huge_sources_are_refused_without_blocking() {
    let scratch = Scratch::new("special-files");
    let dir = scratch.project();
    symlink("/dev/zero", dir.join("zero.cairn")).expect("link");
    let fifo = std::ffi::CString::new(dir.join("fifo.cairn").to_str().expect("path")).expect("c string");
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::fs::write(dir.join("cairn.toml"), "[project]\nname = \"p\"\nsources = [\"fifo.cairn\"]\n").expect("manifest");
    for target in ["zero.cairn", "fifo.cairn", "."] {
        let (record, status, took) = run_json(&dir, &["check", target]);
        assert_eq!((status, record["code"].clone()), (2, json!("E-PROJECT-OR-ENVIRONMENT")), "{target}: {record}");
        assert!(took < Duration::from_secs(10), "{target} did not block");
    }
}

#[test]
fn more_functions_than_the_limit_are_refused() {
    let scratch = Scratch::new("functions");
    let dir = scratch.project();
    let mut text: String = (0..32_768).map(|i| format!("fn f{i}() -> u32 {{ return {}; }}\n", i % 7)).collect();
    text.push_str("fn main() -> i32 { return 0; }\n");
    std::fs::write(dir.join("many.cairn"), text).expect("write");
    let (record, status, _) = run_json(&dir, &["check", "many.cairn"]);
    assert_eq!((status, record["code"].clone()), (1, json!("E-EXPANSION-LIMIT")), "{}", record["message"]);
    assert_eq!(record["line"], 32_769, "placed at the first function past the limit");
}

#[test]
fn a_stack_overflow_in_a_program_names_its_function_and_aborts() {
    let scratch = Scratch::new("overflow");
    let dir = scratch.project();
    std::fs::write(
        dir.join("deep.cairn"),
        "fn down(n:u64) -> u64 {\n  if n == 0 { return 0; }\n  return down(n - 1) + 1;\n}\n\nfn main() -> i32 {\n  println(down(1000000000));\n  return 0;\n}\n",
    )
    .expect("write");
    let (record, status, _) = run_json(&dir, &["run", "deep.cairn"]);
    assert_eq!(status, 1, "{record}");
    assert_eq!(record["exit_code"], 134);
    assert_eq!(record["stderr"], "stack overflow in down\n");
}

#[test]
fn paths_that_leave_the_server_directory_are_refused() {
    let scratch = Scratch::new("traversal");
    std::fs::write(scratch.project().join("p.cairn"), PROGRAM).expect("write");
    std::fs::write(scratch.outside().join("q.cairn"), PROGRAM).expect("write");
    symlink(scratch.outside(), scratch.project().join("escape")).expect("link");
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    let outside = scratch.outside().join("q.cairn").display().to_string();
    for path in ["../outside/q.cairn", outside.as_str(), "escape/q.cairn", "p.cairn/../../outside/q.cairn"] {
        let (record, error) = mcp.call("edit_open", json!({"path": path, "symbol": "double"}));
        assert!(error, "{path}: {record}");
    }
    assert!(!scratch.outside().join(".cairn").exists(), "no journal or lock outside");
}

// ----- the second review's attacks ------------------------------------------------------------

#[test]
fn a_linked_manifest_inside_a_project_directory_is_refused() {
    let scratch = Scratch::new("linked-manifest");
    std::fs::create_dir_all(scratch.outside().join("proj")).expect("dir");
    std::fs::write(scratch.outside().join("proj/cairn.toml"), "[project]\nname = \"p\"\nsources = [\"p.cairn\"]\n")
        .expect("w");
    std::fs::write(scratch.outside().join("proj/p.cairn"), PROGRAM).expect("w");
    std::fs::create_dir_all(scratch.project().join("proj")).expect("dir");
    symlink(scratch.outside().join("proj/cairn.toml"), scratch.project().join("proj/cairn.toml")).expect("link");
    let before = std::fs::read_dir(scratch.outside().join("proj")).expect("dir").count();
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    let (record, error) = mcp.call("edit_open", json!({"path": "proj", "symbol": "double"}));
    assert!(error && record["code"] == "E-PROJECT-OR-ENVIRONMENT", "{record}");
    let check = Command::new(CAIRN).args(["check", "proj", "--format", "json"]).current_dir(scratch.project()).output();
    assert_eq!(check.expect("check").status.code(), Some(2));
    assert_eq!(
        std::fs::read_dir(scratch.outside().join("proj")).expect("dir").count(),
        before,
        "no .cairn made outside"
    );
}

#[test]
fn a_linked_build_directory_is_refused() {
    let scratch = Scratch::new("linked-build");
    std::fs::write(scratch.project().join("p.cairn"), PROGRAM).expect("w");
    symlink(scratch.outside(), scratch.project().join("build")).expect("link");
    let (record, status, _) = run_json(&scratch.project(), &["build", "p.cairn"]);
    assert_eq!((status, record["code"].clone()), (2, json!("E-PROJECT-OR-ENVIRONMENT")), "{record}");
    assert_eq!(scratch.outside_state(), vec![], "nothing written through the link");
}

#[test]
fn saved_states_and_verified_files_are_regular_files_only() {
    let scratch = Scratch::new("since-fifo");
    let dir = scratch.project();
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("w");
    symlink("/dev/zero", dir.join("zero.json")).expect("link");
    let fifo = std::ffi::CString::new(dir.join("fifo.json").to_str().expect("path")).expect("c");
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    for since in ["zero.json", "fifo.json"] {
        let (_, status, took) = run_json(&dir, &["state", "p.cairn", "--since", since]);
        assert_eq!(status, 2, "{since}");
        assert!(took < Duration::from_secs(10), "{since} did not block");
    }
    let fifo_cairn = std::ffi::CString::new(dir.join("f.cairn").to_str().expect("path")).expect("c");
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo_cairn.as_ptr(), 0o644) }, 0);
    let started = Instant::now();
    let verify = Command::new(CAIRN).args(["verify", "p.cairn", "f.cairn", "--all"]).current_dir(&dir).output();
    assert_eq!(verify.expect("verify").status.code(), Some(2));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn an_edit_that_would_pass_the_source_limit_is_refused_with_a_code() {
    let scratch = Scratch::new("grow");
    let padding = format!("// {}\n", "x".repeat(15_990_000));
    std::fs::write(scratch.project().join("p.cairn"), format!("{PROGRAM}{padding}")).expect("w");
    let mut mcp = Mcp::start(&scratch.project(), &[]);
    let handle = open_double(&mut mcp);
    let long = format!("{{\n  // {}\n  return x + x;\n}}", "y".repeat(60_000));
    let (answer, error) = mcp.call("edit_request", body(&handle, &long));
    assert!(error && answer["code"] == "E-SOURCE-LIMIT", "{}", answer["code"]);
    assert!(read(&scratch.project().join("p.cairn")).contains("return x * 2;"), "nothing was written");
}
