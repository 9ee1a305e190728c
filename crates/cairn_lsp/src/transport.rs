//! The wire: `Content-Length` framed JSON-RPC on the protocol's own descriptors (protocol
//! §17), read and written on threads of their own.
//!
//! lsp-server's reader ends the session at the first malformed frame; the spec skips it. So the
//! framing is read here: a header line that is not `Name: value` is skipped, a frame without a
//! `Content-Length` is skipped, a body that is not UTF-8 or not JSON is answered `-32700`, and a
//! JSON value that is not a JSON-RPC message `-32600`; the next frame is read either way. Writing
//! uses lsp-server's `Message::write`.

use std::io::{BufRead, Write};

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, RequestId, Response};
use serde_json::Value;

/// The largest frame read.
pub const FRAME_LIMIT: usize = 64 << 20;

/// What the reader hands the server.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame that was not a message: the error to answer (with the request's id when one
    /// could be read).
    Malformed {
        id: Option<RequestId>,
        code: i32,
        message: String,
    },
}

/// Starts the reader: frames from `input` until it ends (then the channel closes).
pub fn reader(input: impl BufRead + Send + 'static) -> Receiver<Incoming> {
    let (sender, receiver) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        let mut input = input;
        while let Some(frame) = read_frame(&mut input) {
            let incoming = match frame {
                Err(message) => Incoming::Malformed { id: None, code: -32700, message },
                Ok(body) => parse(&body),
            };
            if sender.send(incoming).is_err() {
                break;
            }
        }
    });
    receiver
}

/// What the writer sends: a message, or a raw JSON value (an error whose id is null, which
/// lsp-server's types cannot hold).
#[derive(Debug)]
pub enum Outgoing {
    Message(Message),
    Raw(Value),
}

/// Starts the writer: messages to `output` until every sender is dropped.
pub fn writer(output: impl Write + Send + 'static) -> (Sender<Outgoing>, std::thread::JoinHandle<()>) {
    let (sender, receiver) = crossbeam_channel::unbounded::<Outgoing>();
    let handle = std::thread::spawn(move || {
        let mut output = output;
        for outgoing in receiver {
            let written = match outgoing {
                Outgoing::Message(message) => message.write(&mut output),
                Outgoing::Raw(value) => {
                    let text = value.to_string();
                    write!(output, "Content-Length: {}\r\n\r\n{text}", text.len())
                }
            };
            if written.and_then(|_| output.flush()).is_err() {
                break;
            }
        }
    });
    (sender, handle)
}

/// The error response to a malformed frame (id null when none could be read).
pub fn malformed_response(id: Option<RequestId>, code: i32, message: String) -> Outgoing {
    match id {
        Some(id) => Outgoing::Message(Message::Response(Response::new_err(id, code, message))),
        None => Outgoing::Raw(
            serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
        ),
    }
}

fn parse(body: &[u8]) -> Incoming {
    let Ok(text) = std::str::from_utf8(body) else {
        return Incoming::Malformed { id: None, code: -32700, message: "Parse error: the body is not UTF-8".into() };
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return Incoming::Malformed { id: None, code: -32700, message: format!("Parse error: {error}") },
    };
    let id = value.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    let invalid =
        |why: &str| Incoming::Malformed { id: id.clone(), code: -32600, message: format!("Invalid request: {why}") };
    let Some(object) = value.as_object() else { return invalid("not a JSON object") };
    if object.get("method").is_some_and(|m| !m.is_string()) {
        return invalid("method must be a string");
    }
    if object.get("params").is_some_and(|p| !(p.is_object() || p.is_array() || p.is_null())) {
        return invalid("params must be an object or an array");
    }
    match serde_json::from_value::<Message>(value.clone()) {
        Ok(message) => Incoming::Message(message),
        Err(error) => invalid(&error.to_string()),
    }
}

/// Reads one frame's body; `None` at the end of input, `Err` for a frame that cannot be read.
fn read_frame(input: &mut impl BufRead) -> Option<Result<Vec<u8>, String>> {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        // A header line is short; a longer one is junk, read no further than its first 4 KiB.
        match std::io::Read::take(&mut *input as &mut dyn BufRead, 4096).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_header {
                // Blank lines between frames: skip.
                continue;
            }
            break;
        }
        saw_header = true;
        let Some((name, value)) = text.split_once(':') else {
            // Not a header: skip it (and any junk until the next header block).
            continue;
        };
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            length = value.trim().parse().ok();
        }
    }
    let Some(length) = length else {
        return Some(Err("Parse error: a frame without a valid Content-Length was skipped".into()));
    };
    // Bounded: a frame claiming more than 64 MiB is skipped unread (a 16,000,000-byte
    // document, escaped, fits).
    if length > FRAME_LIMIT {
        let skipped = std::io::copy(
            &mut std::io::Read::take(&mut *input as &mut dyn BufRead, length as u64),
            &mut std::io::sink(),
        );
        return match skipped {
            Ok(n) if n == length as u64 => {
                Some(Err(format!("Parse error: a frame of {length} bytes is too large and was skipped")))
            }
            _ => None,
        };
    }
    let mut body = vec![0u8; length];
    match input.read_exact(&mut body) {
        Ok(()) => Some(Ok(body)),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_read_and_junk_is_skipped() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let text = format!("junk line\r\nContent-Length: 3\r\n\r\n{{x}}Content-Length: {}\r\n\r\n{body}", body.len());
        let mut input = std::io::BufReader::new(text.as_bytes());
        let first = read_frame(&mut input).unwrap().unwrap();
        assert!(matches!(parse(&first), Incoming::Malformed { code: -32700, .. }));
        let second = read_frame(&mut input).unwrap().unwrap();
        assert!(matches!(parse(&second), Incoming::Message(Message::Request(_))));
        assert!(read_frame(&mut input).is_none());
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        assert!(matches!(parse(b"[1, 2]"), Incoming::Malformed { code: -32600, .. }));
        assert!(matches!(parse(br#"{"id": 4, "method": 5}"#), Incoming::Malformed { code: -32600, id: Some(_), .. }));
    }
}
