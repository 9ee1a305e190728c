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
use cairn_bench::{BodyEdit, p50_ratio, percentiles, print_sizes};
use serde_json::{Value, json};

fn main() {
    let mut functions = 100usize;
    let mut rounds = 4usize;
    let sweep = cairn_bench::Sweep::from_args(|flag, args| match flag {
        "--functions" => functions = args.next().and_then(|v| v.parse().ok()).expect("--functions N"),
        "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).expect("--rounds N"),
        other => panic!("unknown argument {other}"),
    });
    let mut rows = Vec::new();
    for &lines in &sweep.sizes {
        let text = cairn_bench::generated(&sweep.shape, lines);
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
    let (edit, open) = (p50_ratio(&rows, "admitted_edit"), p50_ratio(&rows, "open"));
    if sweep.json {
        let report = json!({
            "shape": sweep.shape,
            "sizes": rows,
            "edit_p50_ratio_largest_to_smallest": edit,
            "open_p50_ratio_largest_to_smallest": open,
        });
        println!("{report}");
        return;
    }
    println!("in process (EditHost, no transport), admitted body edits, shape {}:", sweep.shape);
    print_sizes(&rows, &[("open", "open"), ("edit", "admitted_edit")]);
    println!("largest / smallest p50: edit {edit:.2}x, open {open:.2}x (issue 22: edit within 1.5x)");
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
