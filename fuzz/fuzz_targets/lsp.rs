//! Fuzz target for the LSP request path: the input is served, after an `initialize` frame, by
//! the real framing, lifecycle and analysis thread in process; the input may hold frames of its
//! own or junk. Any panic that escapes, or a hang, is a finding. Run with `cargo fuzz run lsp`
//! (see docs/fuzzing.md); `crates/cairn_lsp/tests/robust.rs` runs the same path on every test run.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#;
    let mut input = format!("Content-Length: {}\r\n\r\n{initialize}", initialize.len()).into_bytes();
    input.extend_from_slice(data);
    let status = cairn_lsp::serve(std::io::Cursor::new(input), std::io::sink());
    assert!(status == 0 || status == 1);
});
