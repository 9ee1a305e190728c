//! The wire: one JSON-RPC 2.0 message per line on the protocol's own descriptors, in front of
//! rmcp (protocol §16.1).
//!
//! rmcp carries the protocol — message types, `initialize` and version negotiation, `ping`,
//! `tools/list`, `tools/call`, cancellation — over an in-process channel. This layer keeps the
//! framing rules the spec fixes and rmcp's stdio codec does not report: unreadable JSON is
//! `-32700`, a message that is not a JSON-RPC 2.0 object (or whose `method` is not a string, or
//! whose `params` is not an object) is `-32600`, a bad `tools/call` shape is `-32602`, arrays are
//! batches, blank lines are skipped, responses and notifications get no answer. Requests are
//! answered one at a time, in order: the next line is read only after rmcp answered the last.
//!
//! rmcp is started with a handshake of our own at boot, so a client may call tools before (or
//! without) `initialize`; the client's `initialize` is then answered by the handler's own
//! negotiation like any request.

use std::io::{BufRead, Write};

use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde_json::{Value, json};

use crate::server::Handler;
use crate::tools::{tool_named, unknown_tool};

/// The longest message read (a 16,000,000-byte source, escaped, fits); a longer line is
/// skipped to its end without being kept, and answered `-32600`.
pub const MESSAGE_LIMIT: usize = 48 << 20;

/// What [`read_line`] found.
enum Line {
    Read,
    TooLong,
    End,
}

/// Reads one line into `buffer` (without keeping more than [`MESSAGE_LIMIT`] bytes of it).
fn read_line(input: &mut impl BufRead, buffer: &mut Vec<u8>) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buffer.is_empty() {
                Line::End
            } else {
                Line::Read
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        if !too_long && buffer.len() + chunk.len() > MESSAGE_LIMIT {
            too_long = true;
            buffer.clear();
        }
        if !too_long {
            buffer.extend_from_slice(chunk);
        }
        let used = chunk.len();
        input.consume(used);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

/// The id of the wire's own `initialize` (never seen by the client).
const BOOT_ID: &str = "cairn-wire-boot";

/// Serves `handler` reading lines from `input` and writing answers to `output`, until the input
/// ends. Returns the exit status (0).
pub fn serve(handler: Handler, input: impl BufRead + Send + 'static, mut output: impl Write) -> i32 {
    let server = handler.server.clone();
    // Tool calls run on the runtime's blocking threads: each gets the analysis stack, so no
    // input within the language's limits overflows it (cairn_hir::stack).
    cairn_agent::stack::ensure_pool();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(cairn_agent::stack::ANALYSIS_STACK_BYTES)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cairn mcp: cannot start the async runtime: {error}");
            return 2;
        }
    };
    let (mut to_rmcp, from_wire) = mpsc::unbounded::<ClientJsonRpcMessage>();
    let (to_wire, mut from_rmcp) = mpsc::unbounded::<ServerJsonRpcMessage>();
    // Lines are read on their own thread (standard input blocks) and handed over one by one.
    let (line_sender, mut lines) = tokio::sync::mpsc::unbounded_channel::<Result<String, Vec<u8>>>();
    std::thread::spawn(move || {
        let mut input = input;
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match read_line(&mut input, &mut buffer) {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::TooLong) => {
                    if line_sender.send(Err(Vec::new())).is_err() {
                        break;
                    }
                }
                Ok(Line::Read) => {
                    let line = match String::from_utf8(std::mem::take(&mut buffer)) {
                        Ok(text) => Ok(text),
                        Err(error) => Err(error.into_bytes()),
                    };
                    if line_sender.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    runtime.block_on(async move {
        let service = tokio::spawn(async move {
            if let Ok(running) = handler.serve((to_wire, from_wire)).await {
                let _ = running.waiting().await;
            }
        });
        // Our own handshake, so rmcp serves whatever the client sends first.
        let boot = json!({"jsonrpc": "2.0", "id": BOOT_ID, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cairn-wire", "version": "0"}}});
        let booted = match serde_json::from_value::<ClientJsonRpcMessage>(boot) {
            Ok(message) => to_rmcp.send(message).await.is_ok() && answer_to(&mut from_rmcp, &json!(BOOT_ID)).await.is_some(),
            Err(_) => false,
        };
        if !booted {
            eprintln!("cairn mcp: the protocol service did not start");
            return;
        }
        if let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})) {
            let _ = to_rmcp.send(message).await;
        }
        let mut wire = Wire { to_rmcp, from_rmcp };
        while let Some(line) = lines.recv().await {
            let answer = match line {
                Err(bytes) if bytes.is_empty() => Some(error(
                    Value::Null,
                    -32600,
                    &format!("Invalid request: a message longer than {MESSAGE_LIMIT} bytes was skipped"),
                )),
                Err(_) => Some(error(Value::Null, -32700, "Parse error: the line is not UTF-8")),
                Ok(text) if text.trim().is_empty() => None,
                Ok(text) => match cairn_agent::strict::parse_value(text.trim()) {
                    // A duplicate key anywhere in a message is refused, as in a request given as
                    // text (protocol §3.3): "last one wins" would let two readers disagree.
                    Err(why) if why.classify() == serde_json::error::Category::Data => {
                        Some(error(Value::Null, -32600, &format!("Invalid request: {why}")))
                    }
                    Err(_) => Some(error(Value::Null, -32700, "Parse error: the line is not JSON")),
                    Ok(Value::Array(batch)) if batch.is_empty() => Some(error(Value::Null, -32600, "Invalid request: an empty batch")),
                    Ok(Value::Array(batch)) => {
                        let mut answers = Vec::new();
                        for message in batch {
                            if let Some(answer) = wire.message(message).await {
                                answers.push(answer);
                            }
                        }
                        (!answers.is_empty()).then_some(Value::Array(answers))
                    }
                    Ok(message) => wire.message(message).await,
                },
            };
            if let Some(answer) = answer {
                let text = serde_json::to_string(&answer).unwrap_or_default();
                if writeln!(output, "{text}").and_then(|_| output.flush()).is_err() {
                    break;
                }
            }
        }
        // Input ended: close rmcp's stream and let it finish.
        drop(wire);
        let _ = service.await;
    });
    runtime.shutdown_background();
    // What the last calls left for after their answers (a checkpoint, a journal's tidy) is done
    // before a clean exit, so closing the input right after a write is not a kill.
    let tidy = match server.lock() {
        Ok(mut guard) => guard.settle(),
        Err(poisoned) => poisoned.into_inner().settle(),
    };
    tidy.run();
    0
}

struct Wire {
    to_rmcp: mpsc::UnboundedSender<ClientJsonRpcMessage>,
    from_rmcp: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
}

impl Wire {
    /// One message: the answer it is owed, if any.
    async fn message(&mut self, message: Value) -> Option<Value> {
        let Value::Object(object) = &message else {
            return Some(error(Value::Null, -32600, "Invalid request: not a JSON-RPC 2.0 object"));
        };
        let id = object.get("id").cloned();
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error(id.unwrap_or(Value::Null), -32600, "Invalid request: jsonrpc must be \"2.0\""));
        }
        let method = object.get("method")?;
        let Some(id) = id else {
            // A notification: rmcp takes the ones it knows; nothing is answered either way.
            if method.is_string()
                && let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(message.clone())
            {
                let _ = self.to_rmcp.send(message).await;
            }
            return None;
        };
        let Some(method) = method.as_str() else {
            return Some(error(id, -32600, "Invalid request: method must be a string"));
        };
        let params = object.get("params").cloned().unwrap_or_else(|| json!({}));
        let Value::Object(mut params) = params else {
            return Some(error(id, -32600, "Invalid request: params must be an object"));
        };
        if method == "initialize" {
            // Params default to `{}` (protocol §16.1): a missing version is answered with the
            // newest, and what rmcp's types require is filled in.
            if !params.get("protocolVersion").is_some_and(Value::is_string) {
                params.insert("protocolVersion".into(), json!(crate::server::VERSIONS[0]));
            }
            if !params.get("capabilities").is_some_and(Value::is_object) {
                params.insert("capabilities".into(), json!({}));
            }
            let named = params.get("clientInfo").is_some_and(|c| {
                c.get("name").is_some_and(Value::is_string) && c.get("version").is_some_and(Value::is_string)
            });
            if !named {
                params.insert("clientInfo".into(), json!({"name": "unnamed", "version": "0"}));
            }
        }
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Some(error(Value::Null, -32600, "Invalid request: id must be a string or an integer"));
        }
        if method == "tools/call" {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Some(error(id, -32602, "Invalid params: name must be the name of a tool"));
            };
            if tool_named(name).is_none() {
                return Some(error(id, -32602, &unknown_tool(name)));
            }
            if params.get("arguments").is_some_and(|a| !a.is_object()) {
                return Some(error(id, -32602, "Invalid params: arguments must be an object"));
            }
        }
        let mut normalized = object.clone();
        normalized.insert("params".into(), Value::Object(params));
        let request = match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(normalized)) {
            Ok(request) => request,
            Err(why) => return Some(error(id, -32602, &format!("Invalid params: {why}"))),
        };
        if self.to_rmcp.send(request).await.is_err() {
            return Some(error(id, -32603, "Internal error: the protocol service stopped"));
        }
        match answer_to(&mut self.from_rmcp, &id).await {
            Some(answer) => Some(answer),
            None => Some(error(id, -32603, "Internal error: the protocol service stopped")),
        }
    }
}

/// Waits for rmcp's answer to the request `id` (anything else it sends meanwhile is dropped:
/// this server sends no requests or notifications of its own).
async fn answer_to(from_rmcp: &mut mpsc::UnboundedReceiver<ServerJsonRpcMessage>, id: &Value) -> Option<Value> {
    while let Some(message) = from_rmcp.next().await {
        let Ok(value) = serde_json::to_value(&message) else { continue };
        if value.get("id") == Some(id) {
            return Some(value);
        }
    }
    None
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
