//! The MCP server of CAIRN (`cairn mcp`, protocol §16): the edit host and the other hosts as
//! nine tools over standard input and output.
//!
//! Layers, outermost first: [`serve_stdio`] reserves the protocol's descriptors (nothing but
//! protocol messages ever reaches standard output); `wire` frames one JSON-RPC message per line
//! and enforces the spec's framing errors; `server` is the rmcp handler; `tools` is the server's
//! state and the nine tools as plain functions, which the tests drive directly; `writeback`
//! writes an admitted change into its file through the journal and the effect ledger;
//! `durable` checkpoints the session table and brings sessions back after a restart.

mod durable;
mod hosts;
mod restore;
pub mod server;
pub mod tools;
pub mod wire;
mod writeback;

use std::io::BufReader;
use std::path::Path;

pub use server::Handler;
pub use tools::{Server, Tidy, ToolResult};

/// Runs the server on this process's standard input and output until the input ends.
///
/// Before anything else it keeps private duplicates of descriptors 0 and 1 for the wire, points
/// descriptor 1 at standard error and descriptor 0 at the null device, so nothing the server or
/// anything it starts writes or reads can touch the protocol (protocol §16.1).
/// `runner` builds and runs validation harnesses for implementation sessions.
pub fn serve_stdio(start: &Path, runner: Option<Box<dyn cairn_agent::validate::Runner + Send>>) -> i32 {
    let Ok((wire_in, wire_out)) = cairn_vfs::stdio::reserve_protocol_descriptors() else {
        eprintln!("cairn mcp: cannot reserve the standard descriptors");
        return 2;
    };
    let mut server = Server::new(start);
    server.runner = runner;
    let handler = Handler::new(server);
    wire::serve(handler, BufReader::new(wire_in), std::io::LineWriter::new(wire_out))
}
