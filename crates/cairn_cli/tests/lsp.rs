//! `cairn lsp` end to end, through the real binary.
//!
//! - pytest-lsp (a real LSP client from PyPI, installed in `.venv` by scripts/setup.sh) drives
//!   editor sessions: tests/python/test_lsp.py. Without the venv this test fails and says so.
//! - Raw frames check what no client library sends: malformed headers and bodies, JSON that is
//!   not a message, unknown methods, documents never opened, malformed params, a second
//!   `initialize` — each answered, never fatal — a `didOpen` after `shutdown` ignored, and the exit
//!   statuses of protocol §17.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

#[test]
fn pytest_lsp_drives_editor_sessions() {
    let python = repo(".venv/bin/python");
    assert!(python.exists(), "pytest-lsp is not installed: run ./scripts/setup.sh (the README's test command does)");
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_lsp.py", "test_grammar.py"])
        .current_dir(repo("tests/python"))
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pytest failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("passed") && !stdout.contains("failed"), "{stdout}");
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Runs the server over `input`; its messages in order and the exit status.
fn session(input: Vec<u8>) -> (Vec<Value>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cairn lsp");
    child.stdin.take().expect("stdin").write_all(&input).expect("write");
    let mut bytes = Vec::new();
    child.stdout.take().expect("stdout").read_to_end(&mut bytes).expect("read");
    let status = child.wait().expect("wait").code().unwrap_or(-1);
    let mut messages = Vec::new();
    let text = String::from_utf8(bytes).expect("UTF-8");
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

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;

#[test]
fn malformed_frames_and_unknown_requests_are_answered_and_never_fatal() {
    let mut input = frame(INITIALIZE);
    input.extend(b"this is not a header\r\n\r\n");
    input.extend(frame("{not json"));
    input.extend(frame("[1,2,3]"));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":2,"method":7}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///never/opened.cairn"},"position":{"line":0,"character":0}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":4,"method":"cairn/unknown","params":{}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/cairn-lsp-raw.cairn","languageId":"cairn","version":1,"text":"fn main() -> i32 {\n  return true;\n}\n"}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":5,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///tmp/cairn-lsp-raw.cairn"}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":null}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///tmp/cairn-lsp-raw.cairn"},"position":{"line":-1,"character":"x"}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"capabilities":{}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":6,"method":"shutdown"}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/cairn-lsp-late.cairn","languageId":"cairn","version":1,"text":"fn main() -> i32 {\n  return true;\n}\n"}}}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let (messages, status) = session(input);
    assert_eq!(status, 0);
    let by_id = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == json!(id) && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no answer {id}: {messages:#?}"))
    };
    let init = &by_id(1)["result"];
    assert_eq!(init["serverInfo"]["name"], "cairn-lsp");
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(init["capabilities"]["textDocumentSync"]["change"], 2);
    let parse_errors = messages.iter().filter(|m| m["id"].is_null() && m["error"]["code"] == -32700).count();
    assert!(parse_errors >= 1, "{messages:#?}");
    assert!(messages.iter().any(|m| m["id"].is_null() && m["error"]["code"] == -32600), "an array is not a message");
    assert_eq!(by_id(2)["error"]["code"], -32600);
    assert_eq!(by_id(3)["error"]["code"], -32602, "a document never opened");
    assert_eq!(by_id(4)["error"]["code"], -32601);
    assert_eq!(by_id(5)["result"][0]["name"], "main", "still serving");
    let published = messages.iter().find(|m| m["method"] == "textDocument/publishDiagnostics").expect("diagnostics");
    assert_eq!(published["params"]["diagnostics"][0]["code"], "E-TYPE-MISMATCH");
    for id in [7, 8, 9] {
        assert_eq!(by_id(id)["error"]["code"], -32602, "malformed params are invalid params");
    }
    assert_eq!(by_id(10)["error"]["code"], -32600, "initialize is answered once");
    assert_eq!(by_id(6)["result"], Value::Null);
    assert!(
        !messages.iter().any(|m| m["params"]["uri"] == "file:///tmp/cairn-lsp-late.cairn"),
        "a didOpen after shutdown is ignored"
    );
}

#[test]
fn exit_statuses_follow_the_lifecycle() {
    // `exit` without `shutdown`: 0.
    let mut input = frame(INITIALIZE);
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    assert_eq!(session(input).1, 0);
    // The input ends without `shutdown`: 1; with it: 0.
    assert_eq!(session(frame(INITIALIZE)).1, 1);
    let mut input = frame(INITIALIZE);
    input.extend(frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#));
    assert_eq!(session(input).1, 0);
    // A request before initialize is refused, not fatal.
    let mut input = frame(r#"{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{}}"#);
    input.extend(frame(INITIALIZE));
    let (messages, _) = session(input);
    assert_eq!(messages[0]["error"]["code"], -32002);
    assert_eq!(messages[1]["id"], 1);
}
