//! Fuzz target for the MCP request path: the input is split into lines and served, after an
//! `initialize`, by the real wire and server in process (a scratch directory as the start).
//! Any panic that escapes, or a hang, is a finding. Run with `cargo fuzz run mcp` (see
//! docs/fuzzing.md); `crates/cairn_mcp/tests/robust.rs` runs the same path on every test run.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("cairn-fuzz-mcp-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let mut input = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#.to_vec();
    input.push(b'\n');
    input.extend_from_slice(data);
    let handler = cairn_mcp::Handler::new(cairn_mcp::Server::new(&dir));
    let status = cairn_mcp::wire::serve(handler, std::io::Cursor::new(input), std::io::sink());
    assert_eq!(status, 0);
});
