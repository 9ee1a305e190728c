//! A new edit cancels the analysis in flight (salsa cancellation), and no answer is computed on
//! a stale text: the whole-program pass of a large program, started by `didOpen`, is cancelled
//! by the `didChange` that follows, and only the diagnostics of the new text are published.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cairn_lsp::analysis::Analysis;
use cairn_lsp::transport::Outgoing;
use cairn_testgen::Config;
use lsp_server::{Message, Notification};
use serde_json::{Value, json};

fn notification(method: &str, params: Value) -> Message {
    Message::Notification(Notification::new(method.into(), params))
}

#[test]
fn an_edit_cancels_the_whole_program_pass_in_flight() {
    let text = cairn_testgen::program(Config::with_lines(3, 12_000));
    let uri = "untitled:big.cairn";
    let (out, published) = crossbeam_channel::unbounded::<Outgoing>();
    let (inbox_sender, inbox) = crossbeam_channel::unbounded::<Message>();
    let analysis = Analysis::new(out);
    let stats = analysis.stats.clone();
    let thread = std::thread::spawn(move || analysis.run(inbox));
    inbox_sender
        .send(notification(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cairn", "version": 1, "text": text}}),
        ))
        .unwrap();
    // Wait until the pass for the opened text is running, then change the text under it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while stats.started.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "no precompute started");
        std::thread::sleep(Duration::from_millis(1));
    }
    // Break the last function: `return` a bool where an integer is expected.
    let at = text.rfind("return 0;").expect("main returns 0");
    let (line, character) = (text[..at].matches('\n').count(), at - text[..at].rfind('\n').map_or(0, |i| i + 1));
    let change = json!({"range": {"start": {"line": line, "character": character + 7}, "end": {"line": line, "character": character + 8}}, "text": "true"});
    inbox_sender
        .send(notification(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]}),
        ))
        .unwrap();
    let mut versions = Vec::new();
    let mut last = Value::Null;
    while versions.last() != Some(&2) {
        let Ok(Outgoing::Message(Message::Notification(n))) = published.recv_timeout(Duration::from_secs(120)) else {
            panic!("no diagnostics arrived")
        };
        if n.method == "textDocument/publishDiagnostics" {
            versions.push(n.params["version"].as_i64().unwrap_or(0));
            last = n.params;
        }
    }
    assert_eq!(versions, [2], "nothing was published for the stale text");
    assert!(stats.cancelled.load(Ordering::SeqCst) >= 1, "the pass for version 1 was cancelled: {:?}", stats);
    assert_eq!(last["diagnostics"][0]["code"], "E-TYPE-MISMATCH");
    assert_eq!(last["diagnostics"][0]["range"]["start"]["line"], line);
    drop(inbox_sender);
    thread.join().unwrap();
}
