//! The harness the analysis-thread tests share (`session.rs`, `features.rs`): one analysis
//! thread driven message by message, compact fixtures (`$0` the cursor, `«…»` the spans a
//! request must answer), edits applied to a text, and projects in directories of their own.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use cairn_lsp::analysis::Analysis;
use cairn_lsp::convert::LineMap;
use cairn_lsp::transport::Outgoing;
use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

/// One analysis thread and what it has sent.
pub struct Session {
    pub inbox: Sender<Message>,
    pub out: Receiver<Outgoing>,
    pub next_id: i32,
    /// Every `publishDiagnostics` received so far: (uri, diagnostics).
    pub published: Vec<(String, Vec<Value>)>,
}

impl Session {
    pub fn new() -> Session {
        let (out_sender, out) = crossbeam_channel::unbounded::<Outgoing>();
        let (inbox, inbox_receiver) = crossbeam_channel::unbounded::<Message>();
        let analysis = Analysis::new(out_sender);
        std::thread::spawn(move || analysis.run(inbox_receiver));
        Session { inbox, out, next_id: 1, published: Vec::new() }
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.inbox.send(Message::Notification(Notification::new(method.into(), params))).expect("analysis runs");
    }

    pub fn open(&self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cairn", "version": 1, "text": text}}),
        );
    }

    /// Sends a request and waits for its answer, keeping the publications that come first.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, i32> {
        let id = self.next_id;
        self.next_id += 1;
        self.inbox.send(Message::Request(Request::new(RequestId::from(id), method.into(), params))).expect("send");
        loop {
            let Ok(Outgoing::Message(message)) = self.out.recv_timeout(Duration::from_secs(60)) else {
                panic!("no answer to {method}")
            };
            match message {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    let uri = n.params["uri"].as_str().unwrap_or_default().to_string();
                    let diagnostics = n.params["diagnostics"].as_array().cloned().unwrap_or_default();
                    self.published.push((uri, diagnostics));
                }
                Message::Response(response) if response.id == RequestId::from(id) => {
                    return response.response_result.map_err(|error| error.code);
                }
                _ => {}
            }
        }
    }

    /// The diagnostics last published for `uri`, once every message sent so far is handled.
    pub fn diagnostics(&mut self, uri: &str) -> Option<Vec<Value>> {
        let _ = self.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
        self.published.iter().rev().find(|(u, _)| u == uri).map(|(_, d)| d.clone())
    }
}

/// A fixture without its markers: the text, the cursor, and the marked spans (byte offsets).
pub fn parse_fixture(fixture: &str) -> (String, Option<usize>, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut cursor = None;
    let mut spans = Vec::new();
    let mut open = None;
    let mut rest = fixture;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("$0") {
            cursor = Some(text.len());
            rest = after;
            continue;
        }
        match c {
            '«' => open = Some(text.len()),
            '»' => spans.push((open.take().expect("« before »"), text.len())),
            _ => text.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    (text, cursor, spans)
}

pub fn position(text: &str, offset: usize) -> Value {
    let (line, character) = LineMap::new(text).position(text, offset);
    json!({"line": line, "character": character})
}

pub fn span(text: &str, range: &Value) -> (usize, usize) {
    let map = LineMap::new(text);
    let at = |key: &str| {
        let line = range[key]["line"].as_u64().expect("line") as u32;
        let character = range[key]["character"].as_u64().expect("character") as u32;
        map.offset(text, line, character)
    };
    (at("start"), at("end"))
}

/// Applies a code action's edits to `text`.
pub fn apply(text: &str, edits: &[Value]) -> String {
    let mut spans: Vec<((usize, usize), &str)> =
        edits.iter().map(|e| (span(text, &e["range"]), e["newText"].as_str().expect("newText"))).collect();
    spans.sort_by_key(|((start, _), _)| std::cmp::Reverse(*start));
    let mut out = text.to_string();
    for ((start, end), new_text) in spans {
        out.replace_range(start..end, new_text);
    }
    out
}

pub const URI: &str = "untitled:fixture.cairn";

/// A project in a directory of its own, removed at the end.
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    pub fn new(name: &str, files: &[(&str, &str)]) -> Project {
        let root = std::env::temp_dir().join(format!("cairn-lsp-session-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("src")).expect("create the project");
        let sources: Vec<String> =
            files.iter().filter(|(p, _)| p.ends_with(".cairn")).map(|(p, _)| format!("{p:?}")).collect();
        let manifest =
            format!("[project]\nname = \"{name}\"\nsources = [{}]\n\n[build]\nkind = \"exe\"\n", sources.join(", "));
        std::fs::write(root.join("cairn.toml"), manifest).expect("write the manifest");
        for (path, text) in files {
            std::fs::write(root.join(path), text).expect("write a source");
        }
        Project { root }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn text(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).expect("read a source")
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics.iter().map(|d| d["code"].as_str().unwrap_or_default()).collect()
}

/// An enum the variant fixtures share.
pub const STEPS: &str = "enum Step { Walk(u32); Jog(u32); Rest; }\n";
