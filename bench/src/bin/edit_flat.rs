//! Is an admitted edit flat in program size? The edit host in process (`EditHost`, no transport),
//! over programs of the project's generator at several sizes (default 2,000, 22,000 and 90,000
//! lines): for each, one session per edited function is opened, then its body is sent with one pure
//! `let` added (admitted), then its own body again (admitted), alternately, `--rounds` times. The
//! report gives p50/p99 of the opens and of the admitted edits at each size, and the ratio of the
//! largest size's p50 to the smallest's — issue 22 asks for at most 1.5.
//!
//! `cargo build --release -p cairn_bench --bin edit_flat && target/release/edit_flat
//! [--lines 2000,22000,90000] [--functions N] [--rounds R] [--json] [--shape statements|chains]`
//!
//! `--shape chains` runs the second generator (`cairn_testgen::program_chains`: many small
//! functions in deep call chains) instead of the first (`statements`).

use std::time::{Duration, Instant};

use cairn_agent::edit::{EditHost, OpenRequest, Sources};
use cairn_bench::{BodyEdit, percentiles};
use serde_json::{Value, json};

fn main() {
    let mut sizes: Vec<usize> = vec![2000, 22000, 90000];
    let mut functions = 100usize;
    let mut rounds = 4usize;
    let mut json_out = false;
    let mut shape = "statements".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lines" => {
                let list = args.next().expect("--lines N[,N...]");
                sizes = list.split(',').map(|v| v.trim().parse().expect("a line count")).collect();
            }
            "--functions" => functions = args.next().and_then(|v| v.parse().ok()).expect("--functions N"),
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).expect("--rounds N"),
            "--json" => json_out = true,
            "--shape" => shape = args.next().expect("--shape statements|chains"),
            other => panic!("unknown argument {other}"),
        }
    }
    let mut rows = Vec::new();
    for &lines in &sizes {
        let text = cairn_bench::generated(&shape, lines);
        let targets = cairn_bench::body_edits(&text);
        let take = functions.min(targets.len());
        let (opens, edits) = measure(&text, &targets[..take], rounds);
        rows.push(json!({
            "lines": text.lines().count(),
            "bytes": text.len(),
            "functions": take,
            "open": percentiles(&opens),
            "admitted_edit": percentiles(&edits),
        }));
    }
    let p50 = |row: &Value, key: &str| row[key]["p50_ms"].as_f64().unwrap_or(0.0);
    let (first, last) = (rows.first().expect("a size"), rows.last().expect("a size"));
    let report = json!({
        "shape": shape,
        "sizes": rows,
        "edit_p50_ratio_largest_to_smallest": p50(last, "admitted_edit") / p50(first, "admitted_edit").max(1e-9),
        "open_p50_ratio_largest_to_smallest": p50(last, "open") / p50(first, "open").max(1e-9),
    });
    if json_out {
        println!("{report}");
        return;
    }
    println!("in process (EditHost, no transport), admitted body edits, shape {shape}:");
    for row in report["sizes"].as_array().expect("rows") {
        println!(
            "  {:>6} lines {:>8} B  open p50 {:>7.3} ms p99 {:>7.3} ms   edit p50 {:>7.3} ms p99 {:>7.3} ms   (n={})",
            row["lines"],
            row["bytes"],
            p50(row, "open"),
            row["open"]["p99_ms"].as_f64().unwrap_or(0.0),
            p50(row, "admitted_edit"),
            row["admitted_edit"]["p99_ms"].as_f64().unwrap_or(0.0),
            row["admitted_edit"]["n"],
        );
    }
    println!(
        "largest / smallest p50: edit {:.2}x, open {:.2}x (issue 22: edit within 1.5x)",
        report["edit_p50_ratio_largest_to_smallest"].as_f64().unwrap_or(0.0),
        report["open_p50_ratio_largest_to_smallest"].as_f64().unwrap_or(0.0)
    );
}

/// Opens one session per target, then sends its edited body and its own body alternately.
fn measure(text: &str, targets: &[BodyEdit], rounds: usize) -> (Vec<Duration>, Vec<Duration>) {
    let sources = Sources::single("big.cairn", text);
    let mut host = EditHost::new();
    let (_, refused, _) = host.check(sources.clone());
    assert!(!refused, "the generated program is accepted");
    let (mut opens, mut edits) = (Vec::new(), Vec::new());
    for target in targets {
        let start = Instant::now();
        let packet =
            host.open(sources.clone(), OpenRequest { symbol: target.symbol.clone(), ..OpenRequest::default() });
        opens.push(start.elapsed());
        assert!(!packet.refused);
        let handle = packet.record["handle"].as_str().expect("handle").to_string();
        for round in 0..rounds {
            let body = if round % 2 == 0 { &target.edited } else { &target.original };
            let request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": body});
            let start = Instant::now();
            let answer = host.request(&request);
            edits.push(start.elapsed());
            assert!(!answer.refused, "{}", Value::Object(answer.record));
        }
    }
    (opens, edits)
}
