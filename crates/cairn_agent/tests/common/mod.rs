//! What the edit host's test files share: the examples as sources, opening a session, a body
//! reply, and a refusal's code.

#![allow(dead_code)]

use std::path::Path;

use cairn_agent::edit::{EditHost, OpenRequest, SourceText, Sources};
use serde_json::{Map, Value, json};

pub fn example(name: &str) -> Sources {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    Sources::single(name, std::fs::read_to_string(path).expect("example"))
}

pub fn weather() -> Sources {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/weather");
    let files = ["src/units.cairn", "src/main.cairn"]
        .iter()
        .map(|name| SourceText {
            name: name.to_string(),
            text: std::fs::read_to_string(root.join(name)).expect("file"),
        })
        .collect();
    Sources { files, project: true }
}

pub fn open(host: &mut EditHost, sources: Sources, symbol: &str) -> Map<String, Value> {
    let answer = host.open(sources, OpenRequest { symbol: symbol.into(), ..OpenRequest::default() });
    assert!(!answer.refused, "open {symbol}: {}", Value::Object(answer.record.clone()));
    answer.record
}

pub fn body(handle: &str, replacement: &str) -> Value {
    json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement})
}

pub fn code(record: &Map<String, Value>) -> &str {
    record.get("code").and_then(Value::as_str).unwrap_or("")
}
