//! `cairn mcp` end to end, through the real binary.
//!
//! - The official MCP Python SDK drives a whole agent session (tests/python/mcp_session.py):
//!   open, refused and admitted edits, the write-back on disk, a state delta, `cairn undo`, and a
//!   server killed in the middle of a write-back. The README's test command installs the SDK in
//!   `.venv` (scripts/setup.sh); without it this test fails and says so.
//! - Raw lines check the wire rules of protocol §16.1 that no SDK would send: unreadable JSON,
//!   batches, non-2.0 messages, bad `tools/call` shapes — each answered with its code while the
//!   server keeps serving, and nothing but protocol messages on standard output.
//! - `cairn inspect` prints the session-level packet (tools.md §3.8).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

/// A scratch directory for one test, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-mcp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_python_sdk_drives_a_whole_session() {
    let python = repo(".venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python SDK is not installed: run ./scripts/setup.sh (the README's test command does)"
    );
    let scratch = Scratch::new("python");
    let output = Command::new(&python)
        .arg(repo("tests/python/mcp_session.py"))
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(repo("examples/hello.cairn"))
        .arg(scratch.0.join("work"))
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the session failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all steps passed"), "{stdout}");
}

/// Feeds lines to `cairn mcp` started in `dir`; returns standard output's lines and the status.
fn serve(dir: &Path, input: &str) -> (Vec<String>, i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("mcp")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cairn mcp");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    let output = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8(output.stdout).expect("stdout is UTF-8");
    (
        stdout.lines().map(str::to_string).collect(),
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// The record inside a tool result, and its isError.
fn tool_record(answer: &Value) -> (Value, bool) {
    let result = &answer["result"];
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "{answer}");
    assert_eq!(content[0]["type"], "text");
    let keys: Vec<&String> = result.as_object().expect("result object").keys().collect();
    assert_eq!(keys, ["content", "isError"], "a tool result is exactly content and isError");
    (parse(content[0]["text"].as_str().expect("text")), result["isError"].as_bool().expect("isError"))
}

#[test]
fn malformed_lines_get_their_codes_and_never_stop_the_server() {
    let scratch = Scratch::new("wire");
    let start = scratch.0.join("server");
    std::fs::create_dir_all(&start).expect("mkdir");
    std::fs::copy(repo("examples/hello.cairn"), start.join("hello.cairn")).expect("copy");
    // A real program outside the server's directory, which `path` must not reach.
    std::fs::copy(repo("examples/hello.cairn"), scratch.0.join("outside.cairn")).expect("copy");
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not json",
        "",
        "[]",
        r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"check","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":8,"result":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":"malformed"}"#,
        r#"[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},5]"#,
        r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"check","arguments":{"path":"hello.cairn","extra":true}}}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"check","arguments":{"path":"hello.cairn","source":"fn f() {}"}}}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"check","arguments":{"path":"../outside.cairn"}}}"#,
        r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"edit_request","arguments":{"request":"{\"a\":1,\"a\":2}"}}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"check","arguments":{"source":"fn f() -> u32 { return true; }"}}}"#,
        r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"plan_open","arguments":{"source":"fn f() {}","symbol":"f"}}}"#,
        r#"{"jsonrpc":"2.0","id":17,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"check","arguments":null}}"#,
        r#"{"jsonrpc":"2.0","id":16,"method":"ping"}"#,
    ];
    let (out, status, stderr) = serve(&start, &(lines.join("\n") + "\n"));
    assert_eq!(status, 0, "exit 0 when the input ends; stderr: {stderr}");
    let answers: Vec<Value> = out.iter().map(|l| parse(l)).collect();
    let by_id = |id: i64| {
        answers.iter().find(|a| a["id"] == json!(id)).unwrap_or_else(|| panic!("no answer to {id}: {out:#?}"))
    };
    let code = |answer: &Value| answer["error"]["code"].as_i64();

    let init = by_id(1);
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26", "the client's supported version is echoed");
    assert_eq!(init["result"]["serverInfo"]["name"], "cairn");
    assert_eq!(init["result"]["capabilities"], json!({"tools": {"listChanged": false}}));
    // Unreadable JSON and the empty batch: id null, in order.
    let nulls: Vec<Option<i64>> = answers.iter().filter(|a| a.is_object() && a["id"].is_null()).map(code).collect();
    assert_eq!(nulls, [Some(-32700), Some(-32600)], "{out:#?}");
    assert_eq!(code(by_id(2)), Some(-32600), "jsonrpc 1.0");
    assert_eq!(code(by_id(3)), Some(-32600), "method not a string");
    assert_eq!(code(by_id(4)), Some(-32600), "params not an object");
    assert_eq!(code(by_id(5)), Some(-32601), "unknown method");
    assert_eq!(code(by_id(6)), Some(-32602), "unknown tool");
    assert!(by_id(6)["error"]["message"].as_str().unwrap_or("").contains("edit_open"), "the message lists the tools");
    assert_eq!(code(by_id(7)), Some(-32602), "arguments not an object");
    assert!(answers.iter().all(|a| a["id"] != json!(8)), "a response is ignored");
    // The batch: one array with the ping's answer and the bad element's error; a batch of
    // notifications owes nothing.
    let batch: Vec<&Value> = answers.iter().filter(|a| a.is_array()).collect();
    assert_eq!(batch.len(), 1, "{out:#?}");
    let batch = batch[0].as_array().expect("batch");
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[0]["id"], 9);
    assert_eq!(batch[1]["error"]["code"], -32600);

    let (record, error) = tool_record(by_id(10));
    assert!(error);
    assert_eq!((record["code"].as_str(), &record["fields"]), (Some("E-REQUEST"), &json!(["extra"])));
    let (record, error) = tool_record(by_id(11));
    assert!(error && record["code"] == "E-REQUEST", "path and source together");
    let (record, error) = tool_record(by_id(12));
    assert!(error && record["code"] == "E-REQUEST", "a path outside the server's directory: {record}");
    let (record, error) = tool_record(by_id(13));
    assert!(error && record["code"] == "E-REQUEST", "a duplicate key in request text: {record}");
    let (record, error) = tool_record(by_id(14));
    assert!(error && record["code"] == "E-TYPE-MISMATCH" && record["cached"] == false, "{record}");
    assert_eq!(record["source_line"], "fn f() -> u32 { return true; }", "a model-facing record shows the line");
    assert_eq!(record["automatic_edit"], false);
    let (record, error) = tool_record(by_id(15));
    assert!(error && record["code"] == "E-PLAN", "a plan of a function without a region: {record}");
    assert_eq!(by_id(17)["result"]["protocolVersion"], "2025-11-25", "initialize without params: the newest version");
    assert_eq!(code(by_id(18)), Some(-32602), "arguments null is not an object");
    assert_eq!(by_id(16)["result"], json!({}), "still serving at the end");
}

#[test]
fn a_check_is_compiled_once_and_a_saved_file_compiles_again() {
    let scratch = Scratch::new("cache");
    std::fs::copy(repo("examples/hello.cairn"), scratch.0.join("hello.cairn")).expect("copy");
    let call = |id: i64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"check","arguments":{{"path":"hello.cairn"}}}}}}"#
        )
    };
    let (out, _, _) = serve(&scratch.0, &format!("{}\n{}\n", call(1), call(2)));
    let cached: Vec<Value> = out.iter().map(|l| tool_record(&parse(l)).0["cached"].clone()).collect();
    assert_eq!(cached, [json!(false), json!(true)]);
}

#[test]
fn inspect_prints_the_session_level_packet() {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["inspect", "--symbol", "odd_sum", "--format", "json"])
        .arg(repo("examples/hello.cairn"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let packet = parse(&String::from_utf8_lossy(&output.stdout));
    for key in ["session", "contract_sha256", "source_sha256", "implementation_sha256"] {
        assert!(packet[key].as_str().is_some_and(|d| d.len() == 64), "{key} is a digest");
    }
    assert!(packet.get("handle").is_none(), "the session-level packet has no handle");
    assert_eq!(packet["draft_protocol"]["protocol"], "cairn.edit/1");
    assert_eq!(packet["draft_protocol"]["session"], packet["session"]);
    assert_eq!(packet["callers"], json!(["main"]));
    for key in ["profile", "scope", "limits", "boundaries", "refusal", "admission", "state", "task"] {
        assert!(packet["terms"].get(key).is_some(), "the full terms hold {key}");
    }
    assert!(packet.get("performance").is_none(), "explain only when asked");
    // --explain: the emitted code of the disclosed functions, read.
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["inspect", "--symbol", "odd_sum", "--explain", "--format", "json"])
        .arg(repo("examples/hello.cairn"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let explained = parse(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(explained["performance"]["protocol"], "cairn.explain/1", "{explained}");
    assert!(explained["performance"]["functions"]["odd_sum"]["loops"].is_u64(), "{explained}");
    assert_eq!(explained["session"], packet["session"], "the packet itself is the same");
    // A refused open: exit 1 with the refusal.
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["inspect", "--symbol", "nothing_here", "--format", "json"])
        .arg(repo("examples/hello.cairn"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(parse(&String::from_utf8_lossy(&output.stdout))["code"], "E-SYMBOL");
}

#[test]
fn inspect_shows_plan_and_implementation_packets_too() {
    let dir = std::env::temp_dir().join(format!("cairn-inspect-sessions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let file = dir.join("p.cairn");
    std::fs::write(
        &file,
        "fn total(n:usize, xs:ro<u32>[n]) -> u64 {\n  let mut h:u64 = 0;\n  for i in 0..n { h = h + u64(xs[i]); }\n  return h;\n}\nfn fill(n:usize, out:rw<u64>[n]) {\n  parallel i in n { out[i] = u64(i); }\n}\nfn main() -> i32 { return 0; }\n",
    )
    .expect("write");
    let inspect = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["inspect", "--format", "json"])
            .args(args)
            .arg(&file)
            .output()
            .expect("run");
        (parse(&String::from_utf8_lossy(&output.stdout)), output.status.code())
    };
    let (plan, code) = inspect(&["--symbol", "fill", "--session", "plan"]);
    assert_eq!(code, Some(0), "{plan}");
    assert_eq!(plan["protocol"], "cairn.plan/1");
    assert!(plan["items"]["grain"].is_object(), "{plan}");
    let (implementation, code) = inspect(&["--symbol", "total", "--session", "implementation"]);
    assert_eq!(code, Some(0), "{implementation}");
    assert_eq!(implementation["protocol"], "cairn.implementation/1");
    assert_eq!(implementation["reference"]["symbol"], "total");
    // A function without a region has no plan packet: the host's refusal, exit 1.
    let (refused, code) = inspect(&["--symbol", "total", "--session", "plan"]);
    assert_eq!((code, refused["code"].as_str()), (Some(1), Some("E-PLAN")), "{refused}");
    let (_, code) = inspect(&["--symbol", "fill", "--session", "plan", "--explain"]);
    assert_eq!(code, Some(2));
    std::fs::remove_dir_all(&dir).ok();
}
