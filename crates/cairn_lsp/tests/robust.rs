//! The LSP request path under hostile input (issue 11): seeded mutations of real messages
//! (documents with deep chains and brackets, truncated and retyped params, duplicated keys,
//! huge strings) go through the framing, the lifecycle and the analysis thread in process. The
//! server never dies, and a well-formed request at the end is answered. The same harness is
//! the cargo-fuzz target `lsp` (docs/fuzzing.md); `CAIRN_ROBUST_CASES` scales the number of
//! mutated messages (default 200).

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use cairn_testgen::Rng;
use cairn_testgen::mutate::mutate;
use serde_json::Value;

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

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

const URI: &str = "file:///tmp/cairn-lsp-robust.cairn";

fn seeds() -> Vec<String> {
    let text = serde_json::to_string("fn double(x:u32) -> u32 {\n  return x * 2;\n}\n").expect("json");
    vec![
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{URI}","languageId":"cairn","version":1,"text":{text}}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didChange","params":{{"textDocument":{{"uri":"{URI}","version":2}},"contentChanges":[{{"range":{{"start":{{"line":1,"character":9}},"end":{{"line":1,"character":10}}}},"text":"x + x"}}]}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":10,"method":"textDocument/hover","params":{{"textDocument":{{"uri":"{URI}"}},"position":{{"line":1,"character":10}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":11,"method":"textDocument/definition","params":{{"textDocument":{{"uri":"{URI}"}},"position":{{"line":0,"character":4}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":12,"method":"textDocument/documentSymbol","params":{{"textDocument":{{"uri":"{URI}"}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":13,"method":"textDocument/semanticTokens/full","params":{{"textDocument":{{"uri":"{URI}"}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":14,"method":"textDocument/references","params":{{"textDocument":{{"uri":"{URI}"}},"position":{{"line":0,"character":4}},"context":{{"includeDeclaration":true}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didClose","params":{{"textDocument":{{"uri":"{URI}"}}}}}}"#
        ),
    ]
}

#[test]
fn mutated_messages_never_end_the_session() {
    let cases: usize = std::env::var("CAIRN_ROBUST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let seeds = seeds();
    let others: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let mut rng = Rng::new(11);
    let mut input = frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    for _ in 0..cases {
        let seed = rng.pick(&seeds).clone();
        let body = mutate(&mut rng, &seed, &others);
        // Sometimes the frame itself lies about its length.
        match rng.below(10) {
            0 => input.extend(format!("Content-Length: {}\r\n\r\n{body}", body.len() / 2).into_bytes()),
            1 => input.extend(format!("Content-Type: x\r\n\r\n{body}").into_bytes()),
            _ => input.extend(frame(&body)),
        }
    }
    // Resynchronise on a clean frame, then a well-formed session end.
    input.extend(b"\r\n\r\n");
    input.extend(frame(&seeds[0]));
    input.extend(frame(&seeds[4].replace("\"id\":12", "\"id\":\"last\"")));
    input.extend(frame(r#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#));
    input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    let output = Shared::default();
    let status = cairn_lsp::serve(Cursor::new(input), output.clone());
    let bytes = output.0.lock().expect("output").clone();
    let text = String::from_utf8(bytes).expect("UTF-8 answers");
    let mut answered = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("Content-Length: ") {
        let after = &rest[start + 16..];
        let end = after.find("\r\n").expect("header end");
        let length: usize = after[..end].parse().expect("length");
        let body_start = start + 16 + end + 4;
        let message: Value = serde_json::from_str(&rest[body_start..body_start + length]).expect("a JSON message");
        answered.push(message["id"].clone());
        rest = &rest[body_start + length..];
    }
    // A length that lied may swallow the clean frames that follow; what matters is that the
    // server survived to read a session end. It answered something after the noise, and exited.
    assert_eq!(status, 0, "the server read the session end and exited cleanly");
    assert!(answered.contains(&Value::from("last")), "the well-formed request after the noise was answered");
    assert!(answered.contains(&Value::from("bye")), "and so was shutdown");
    eprintln!("{} messages answered", answered.len());
}
