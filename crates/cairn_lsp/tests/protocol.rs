//! The lifecycle of protocol §17 through `serve`, on in-memory input and output: `initialize`
//! is answered once, and after `shutdown` only `exit` does anything.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// Output shared with the test.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("output").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn frame(message: Value) -> Vec<u8> {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Serves `messages` to the end; the messages written and the exit status.
fn serve(messages: &[Value]) -> (Vec<Value>, i32) {
    let input: Vec<u8> = messages.iter().flat_map(|m| frame(m.clone())).collect();
    let output = Shared::default();
    let status = cairn_lsp::serve(std::io::Cursor::new(input), output.clone());
    let bytes = output.0.lock().expect("output").clone();
    let text = String::from_utf8(bytes).expect("UTF-8");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some((header, after)) = rest.split_once("\r\n\r\n") {
        let length: usize = header.trim_start_matches("Content-Length: ").parse().expect("a length");
        out.push(serde_json::from_str(&after[..length]).expect("JSON"));
        rest = &after[length..];
    }
    (out, status)
}

fn answer(messages: &[Value], id: i64) -> &Value {
    messages.iter().find(|m| m["id"] == id && m.get("method").is_none()).unwrap_or_else(|| panic!("no answer {id}"))
}

#[test]
fn a_second_initialize_is_an_invalid_request() {
    let initialize =
        |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"capabilities": {}}});
    let (messages, status) = serve(&[
        initialize(1),
        initialize(2),
        json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        json!({"jsonrpc": "2.0", "method": "exit"}),
    ]);
    assert_eq!(status, 0);
    assert_eq!(answer(&messages, 1)["result"]["serverInfo"]["name"], "cairn-lsp");
    assert_eq!(answer(&messages, 2)["error"]["code"], -32600);
    assert_eq!(answer(&messages, 3)["result"], Value::Null);
}

#[test]
fn notifications_after_shutdown_are_ignored() {
    let open = |uri: &str| {
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "cairn", "version": 1, "text": "fn main() -> i32 {\n  return q;\n}\n"}}})
    };
    let (messages, status) = serve(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        open("untitled:before.cairn"),
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": "untitled:before.cairn"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        open("untitled:after.cairn"),
        json!({"jsonrpc": "2.0", "method": "exit"}),
    ]);
    assert_eq!(status, 0);
    let published: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .map(|m| &m["params"]["uri"])
        .collect();
    assert_eq!(published, [&json!("untitled:before.cairn")], "{messages:#?}");
}
