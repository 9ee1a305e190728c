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

use cairn_bench::{BodyEdit, percentiles};
use serde_json::{Value, json};

fn main() {
    let mut sizes: Vec<usize> = vec![2000, 22000, 90000];
    let mut edits = 100usize;
    let mut json_out = false;
    let mut shape = "statements".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lines" => {
                let list = args.next().expect("--lines N[,N...]");
                sizes = list.split(',').map(|v| v.trim().parse().expect("a line count")).collect();
            }
            "--edits" => edits = args.next().and_then(|v| v.parse().ok()).expect("--edits N"),
            "--json" => json_out = true,
            "--shape" => shape = args.next().expect("--shape statements|chains"),
            other => panic!("unknown argument {other}"),
        }
    }
    let mut rows = Vec::new();
    for &lines in &sizes {
        let text = cairn_bench::generated(&shape, lines);
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
    let p50 = |row: &Value, key: &str| row[key]["p50_ms"].as_f64().unwrap_or(0.0);
    let (first, last) = (rows.first().expect("a size"), rows.last().expect("a size"));
    let report = json!({
        "shape": shape,
        "sizes": rows,
        "written_p50_ratio_largest_to_smallest": p50(last, "edit_request_written") / p50(first, "edit_request_written").max(1e-9),
        "open_p50_ratio_largest_to_smallest": p50(last, "edit_open") / p50(first, "edit_open").max(1e-9),
    });
    if json_out {
        println!("{report}");
        return;
    }
    println!("in process (cairn_mcp::Server, no transport), path sessions, each edit written back, shape {shape}:");
    for row in report["sizes"].as_array().expect("rows") {
        println!(
            "  {:>6} lines {:>8} B  edit_open p50 {:>7.3} ms p99 {:>7.3} ms   written edit p50 {:>7.3} ms p99 {:>7.3} ms   (n={})",
            row["lines"],
            row["bytes"],
            p50(row, "edit_open"),
            row["edit_open"]["p99_ms"].as_f64().unwrap_or(0.0),
            p50(row, "edit_request_written"),
            row["edit_request_written"]["p99_ms"].as_f64().unwrap_or(0.0),
            row["edit_request_written"]["n"],
        );
    }
    println!(
        "largest / smallest p50: written edit {:.2}x, edit_open {:.2}x",
        report["written_p50_ratio_largest_to_smallest"].as_f64().unwrap_or(0.0),
        report["open_p50_ratio_largest_to_smallest"].as_f64().unwrap_or(0.0)
    );
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
