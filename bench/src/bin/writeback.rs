//! What a written-back edit costs, at several program sizes, without the transport: the MCP
//! server's own state (`cairn_mcp::Server`, the code `cairn mcp` runs) in this process, over a
//! program of the project's generator written to a temporary directory (default 2,000, 22,000
//! and 90,000 lines). For each edited function: `edit_open` on the file's path, then an admitted
//! `edit_request` (its body with one pure `let` added), which the server writes back through the
//! journal and the effect ledger — so every open reads the file the previous write changed, as an
//! agent's loop does. Between calls the server does what it leaves for after an answer
//! (`settle`), untimed, as the wire does. The report gives p50/p99 of the opens and of the
//! written edits at each size, and the largest size's p50 over the smallest's.
//!
//! The temporary directory is on the file system of `$TMPDIR` (default `/tmp`): the syncs the
//! journal makes are that disk's.
//!
//! `cargo build --release -p cairn_bench --bin writeback && target/release/writeback
//! [--lines 2000,22000,90000] [--edits N] [--json] [--shape statements|chains]`
//!
//! `--shape chains` runs the second generator (`cairn_testgen::program_chains`: many small
//! functions in deep call chains) instead of the first (`statements`).

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_bench::{BodyEdit, p50_ratio, percentiles, print_sizes};
use serde_json::{Value, json};

fn main() {
    let mut edits = 100usize;
    let sweep = cairn_bench::Sweep::from_args(|flag, args| match flag {
        "--edits" => edits = args.next().and_then(|v| v.parse().ok()).expect("--edits N"),
        other => panic!("unknown argument {other}"),
    });
    let mut rows = Vec::new();
    for &lines in &sweep.sizes {
        let text = cairn_bench::generated(&sweep.shape, lines);
        let targets = cairn_bench::body_edits(&text);
        let take = edits.min(targets.len());
        let dir = std::env::temp_dir().join(format!("cairn-bench-writeback-{}-{lines}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (opens, writes) = measure(&dir, &text, &targets[..take]);
        let _ = std::fs::remove_dir_all(&dir);
        rows.push(json!({
            "lines": text.lines().count(),
            "bytes": text.len(),
            "edits": take,
            "edit_open": percentiles(&opens),
            "edit_request_written": percentiles(&writes),
        }));
    }
    let (written, open) = (p50_ratio(&rows, "edit_request_written"), p50_ratio(&rows, "edit_open"));
    if sweep.json {
        let report = json!({
            "shape": sweep.shape,
            "sizes": rows,
            "written_p50_ratio_largest_to_smallest": written,
            "open_p50_ratio_largest_to_smallest": open,
        });
        println!("{report}");
        return;
    }
    println!(
        "in process (cairn_mcp::Server, no transport), path sessions, each edit written back, shape {}:",
        sweep.shape
    );
    print_sizes(&rows, &[("edit_open", "edit_open"), ("written edit", "edit_request_written")]);
    println!("largest / smallest p50: written edit {written:.2}x, edit_open {open:.2}x");
}

/// Opens and writes each target in turn; the times of the opens and of the written edits.
fn measure(dir: &Path, text: &str, targets: &[BodyEdit]) -> (Vec<Duration>, Vec<Duration>) {
    std::fs::write(dir.join("big.cairn"), text).expect("write the program");
    let mut server = cairn_mcp::Server::new(dir);
    let call = |server: &mut cairn_mcp::Server, tool: &str, arguments: Value| -> (Value, Duration) {
        let start = Instant::now();
        let result = server.call(tool, &arguments).unwrap_or_else(|(_, why)| panic!("{tool}: {why}"));
        let took = start.elapsed();
        server.settle().run();
        assert!(!result.is_error, "{tool}: {}", Value::Object(result.record.clone()));
        (Value::Object(result.record), took)
    };
    // The first compile is not what an agent waits for again and again.
    call(&mut server, "check", json!({"path": "big.cairn"}));
    let (mut opens, mut writes) = (Vec::new(), Vec::new());
    for target in targets {
        let (packet, open) = call(&mut server, "edit_open", json!({"path": "big.cairn", "symbol": target.symbol}));
        let handle = packet["handle"].as_str().expect("a handle").to_string();
        let request =
            json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": target.edited});
        let (answer, write) = call(&mut server, "edit_request", json!({"request": request}));
        assert!(answer["written"].is_array(), "the edit of {} was written: {answer}", target.symbol);
        opens.push(open);
        writes.push(write);
    }
    (opens, writes)
}
