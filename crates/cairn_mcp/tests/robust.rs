//! The MCP request path under hostile input (issue 11): seeded mutations of real messages —
//! truncated, duplicated keys, deep brackets, long chains in sources and replies, huge strings,
//! swapped types — go through the whole wire and server in process. Every line that is a
//! request gets one answer, every answer is JSON, and a well-formed session still works after.
//! The same harness is the cargo-fuzz target `mcp` (docs/fuzzing.md); `CAIRN_ROBUST_CASES`
//! scales the number of mutated lines (default 300).

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use cairn_mcp::{Handler, Server};
use cairn_testgen::Rng;
use cairn_testgen::mutate::mutate;
use serde_json::Value;

/// A writer whose bytes the test reads afterwards.
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

const PROGRAM: &str = "fn double(x:u32) -> u32 {\n  return x * 2;\n}\n";

fn seeds() -> Vec<String> {
    let source = serde_json::to_string(PROGRAM).expect("json");
    vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.into(),
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"check","arguments":{{"source":{source}}}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"edit_open","arguments":{{"source":{source},"symbol":"double"}}}}}}"#),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"edit_request","arguments":{"request":{"protocol":"cairn.edit/2","handle":"h","kind":"body","replacement":"{ return x + x; }"}}}}"#.into(),
        format!(r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{{"name":"state","arguments":{{"source":{source}}}}}}}"#),
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"find","arguments":{"words":"double","limit":3}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.into(),
    ]
}

/// Serves `lines` in process; returns the answer lines.
fn serve(lines: &[String]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("cairn-mcp-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let output = Shared::default();
    let input = Cursor::new(lines.join("\n").into_bytes());
    let status = cairn_mcp::wire::serve(Handler::new(Server::new(&dir)), input, output.clone());
    assert_eq!(status, 0);
    let bytes = output.0.lock().expect("output").clone();
    String::from_utf8(bytes).expect("answers are UTF-8").lines().map(str::to_string).collect()
}

#[test]
fn mutated_requests_are_each_answered_and_the_server_goes_on() {
    let cases: usize = std::env::var("CAIRN_ROBUST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let seeds = seeds();
    let others: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let mut rng = Rng::new(11);
    let mut lines = vec![seeds[0].clone()];
    for _ in 0..cases {
        let seed = rng.pick(&seeds).clone();
        lines.push(mutate(&mut rng, &seed, &others));
    }
    // A well-formed call at the end: the server must still answer it.
    lines.push(seeds[2].replace("\"id\":3", "\"id\":\"last\""));
    let answers = serve(&lines);
    for answer in &answers {
        let value: Value = serde_json::from_str(answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"));
        assert!(value.is_object() || value.is_array(), "{answer}");
    }
    let last = answers.last().expect("answers");
    let last: Value = serde_json::from_str(last).expect("json");
    assert_eq!(last["id"], "last", "the final well-formed request is answered last");
    assert!(last["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("\"typed\"")), "{last}");
}
