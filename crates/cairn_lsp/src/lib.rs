//! The language server of CAIRN (`cairn lsp`, protocol §17), on lsp-server and lsp-types.
//!
//! Threads: the reader (`transport`) frames messages from standard input; the main loop handles
//! the lifecycle (`initialize`, `shutdown`, `exit`) and hands everything else to the analysis
//! thread (`analysis`), so reading never waits for analysis; the writer frames answers onto the
//! protocol's own copy of standard output. Answers come back in the order of the requests.
//! `initialize` is answered once (a second is `-32600`); before it and after `shutdown`, every
//! notification but `exit` is dropped.
//!
//! Exit status (protocol §17): 0 on `exit` (with or without `shutdown`); at the end of input, 0
//! if `shutdown` came and 1 otherwise.
//!
//! Rooms: `protocol` (capabilities, the token legend, parameter shapes), `transport` (framing),
//! `analysis` (the thread: documents, precompute, publication), `world` (the state, and the
//! read-only `Snapshot` of it), `diagnostics`, `features` (one file per request), `convert`
//! (positions and URIs), `locals` (scopes of locals, reached only through `features::cursor`).
//! Invariant: `analysis → features → {cursor, world, diagnostics}`, never back; nothing under
//! `features/` imports `analysis` (`tests/rooms.rs` holds both edges).

pub mod analysis;
pub mod convert;
mod diagnostics;
mod features;
pub mod protocol;
pub mod transport;
mod world;

use std::io::BufReader;

use lsp_server::{Message, Response};
use serde_json::{Value, json};

use crate::transport::{Incoming, Outgoing};

/// Runs the server on this process's standard input and output (reserving them, as `cairn mcp`
/// does: descriptor 1 goes to standard error, so nothing but protocol reaches the client).
pub fn serve_stdio() -> i32 {
    let Ok((wire_in, wire_out)) = cairn_vfs::stdio::reserve_protocol_descriptors() else {
        eprintln!("cairn lsp: cannot reserve the standard descriptors");
        return 2;
    };
    serve(BufReader::new(wire_in), std::io::BufWriter::new(wire_out))
}

/// Serves until `exit` or the end of input; returns the exit status.
pub fn serve(input: impl std::io::BufRead + Send + 'static, output: impl std::io::Write + Send + 'static) -> i32 {
    let incoming = transport::reader(input);
    let (out, writer) = transport::writer(output);
    let (to_analysis, inbox) = crossbeam_channel::unbounded::<Message>();
    let analysis_out = out.clone();
    // The analysis thread gets the analysis stack (cairn_hir::stack): no document within the
    // language's limits overflows it.
    let analysis =
        match cairn_hir::stack::spawn("cairn-lsp-analysis", move || analysis::Analysis::new(analysis_out).run(inbox)) {
            Ok(handle) => handle,
            Err(error) => {
                eprintln!("cairn lsp: cannot start the analysis thread: {error}");
                return 2;
            }
        };
    let send = |message: Message| {
        let _ = out.send(Outgoing::Message(message));
    };
    let mut initialized = false;
    let mut shutdown = false;
    let mut status = 1;
    for event in incoming.iter() {
        let message = match event {
            Incoming::Malformed { id, code, message } => {
                let _ = out.send(transport::malformed_response(id, code, message));
                continue;
            }
            Incoming::Message(message) => message,
        };
        match message {
            Message::Request(request) => match request.method.as_str() {
                "initialize" if initialized => {
                    send(Message::Response(Response::new_err(
                        request.id,
                        -32600,
                        "the server is already initialized: initialize may be sent once".into(),
                    )));
                }
                "initialize" => {
                    initialized = true;
                    let result = json!({
                        "capabilities": protocol::capabilities(),
                        "serverInfo": {"name": "cairn-lsp", "version": env!("CARGO_PKG_VERSION")},
                    });
                    send(Message::Response(Response::new_ok(request.id, result)));
                }
                "shutdown" if initialized => {
                    shutdown = true;
                    send(Message::Response(Response::new_ok(request.id, Value::Null)));
                }
                _ if !initialized => {
                    send(Message::Response(Response::new_err(
                        request.id,
                        -32002,
                        "the server is not initialized: send initialize first".into(),
                    )));
                }
                _ if shutdown => {
                    send(Message::Response(Response::new_err(
                        request.id,
                        -32600,
                        "the server is shutting down".into(),
                    )));
                }
                _ => {
                    let _ = to_analysis.send(Message::Request(request));
                }
            },
            Message::Notification(notification) => match notification.method.as_str() {
                "exit" => {
                    status = 0;
                    break;
                }
                "initialized" | "$/cancelRequest" | "$/setTrace" | "workspace/didChangeConfiguration" => {}
                // Before `initialize` and after `shutdown`, notifications other than `exit` are
                // dropped.
                _ if !initialized || shutdown => {}
                _ => {
                    let _ = to_analysis.send(Message::Notification(notification));
                }
            },
            Message::Response(_) => {}
        }
    }
    if shutdown {
        status = 0;
    }
    drop(to_analysis);
    let _ = analysis.join();
    drop(out);
    let _ = writer.join();
    status
}
