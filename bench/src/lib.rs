//! Shared measurement helpers for the benchmarks in `src/bin/`.
//!
//! Each benchmark times its subjects alternately in one process and reports medians, so that
//! machine noise hits every subject alike. Nothing here asserts a time: machines are noisy, and
//! timed assertions do not belong in tests.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs each subject `runs` times, interleaved (a, b, a, b, …), after one warm-up run each, and
/// returns the median duration of each.
pub fn interleaved(runs: usize, subjects: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    interleaved_samples(runs, subjects).into_iter().map(median).collect()
}

/// Like [`interleaved`], but every sample of each subject, in the order taken (for a report
/// that gives the best run beside the median: on a machine whose neighbours come and go, the
/// fastest of many runs of a deterministic program is the least disturbed one).
pub fn interleaved_samples(runs: usize, subjects: &mut [&mut dyn FnMut()]) -> Vec<Vec<Duration>> {
    for subject in subjects.iter_mut() {
        subject();
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); subjects.len()];
    for _ in 0..runs {
        for (i, subject) in subjects.iter_mut().enumerate() {
            let start = Instant::now();
            subject();
            samples[i].push(start.elapsed());
        }
    }
    samples
}

/// The median of some durations.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Megabytes (10^6 bytes) per second.
pub fn megabytes_per_second(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs an executable to completion and returns what it printed; it must exit 0.
pub fn run_once(exe: &Path) -> String {
    run_with(exe, &[])
}

/// Runs an executable with arguments to completion and returns what it printed; it must exit 0.
pub fn run_with(exe: &Path, args: &[&str]) -> String {
    let out = Command::new(exe).args(args).output().unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "{} failed ({}): {}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// p50, p99 and the largest of `samples`, in milliseconds, with their count (as JSON).
pub fn percentiles(samples: &[Duration]) -> serde_json::Value {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms.get(((ms.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0);
    serde_json::json!({"n": ms.len(), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)})
}

/// A generated one-file program of about `lines` lines in one of the two shapes the benches
/// run: `"statements"` (`cairn_testgen::program`: fewer, longer functions of five kinds) or
/// `"chains"` (`cairn_testgen::program_chains`: many small functions in deep call chains).
pub fn generated(shape: &str, lines: usize) -> String {
    match shape {
        "chains" => cairn_testgen::program_chains(cairn_testgen::Config::chains_with_lines(1, lines)),
        "statements" => cairn_testgen::program(cairn_testgen::Config::with_lines(1, lines)),
        other => panic!("unknown shape {other}: statements or chains"),
    }
}

/// A function of a program with a block body: its full name, its body as written, and the body
/// with one pure statement added (an admitted edit: the row and the guard sites stay).
pub struct BodyEdit {
    pub symbol: String,
    pub original: String,
    pub edited: String,
}

/// The [`BodyEdit`] of every function of a one-file program (`main` left out).
pub fn body_edits(text: &str) -> Vec<BodyEdit> {
    let mut workspace =
        cairn_hir::Workspace::new(vec![cairn_hir::SourceText { name: "big.cairn".into(), text: text.to_string() }]);
    assert!(workspace.check().refusal.is_none(), "the generated program is accepted");
    let mut out = Vec::new();
    for entry in &workspace.files()[0].items {
        if entry.key.kind != cairn_hir::ItemKind::Fn || &*entry.key.name == "main" {
            continue;
        }
        let source = entry.item.syntax(workspace.db()).syntax_node().text().to_string();
        let Some(open) = source.find('{') else { continue };
        if source[..open].contains('=') {
            continue;
        }
        let body = source[open..].trim_end();
        out.push(BodyEdit {
            symbol: workspace.full_name(entry.item).to_string(),
            original: body.to_string(),
            edited: format!("{{\n  let zz_bench:u64 = 7;{}", &body[1..]),
        });
    }
    out
}

/// The arguments of a bench that sweeps program sizes: `--lines N[,N...]` (default 2,000,
/// 22,000 and 90,000), `--shape statements|chains` ([`generated`]) and `--json`. Any other flag
/// goes to `other` with the rest of the arguments (it takes its value from them, or panics).
pub struct Sweep {
    pub sizes: Vec<usize>,
    pub shape: String,
    pub json: bool,
}

impl Sweep {
    pub fn from_args(mut other: impl FnMut(&str, &mut dyn Iterator<Item = String>)) -> Sweep {
        let mut sweep = Sweep { sizes: vec![2000, 22000, 90000], shape: "statements".into(), json: false };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--lines" => {
                    let list = args.next().expect("--lines N[,N...]");
                    sweep.sizes = list.split(',').map(|v| v.trim().parse().expect("a line count")).collect();
                }
                "--shape" => sweep.shape = args.next().expect("--shape statements|chains"),
                "--json" => sweep.json = true,
                flag => other(flag, &mut args),
            }
        }
        sweep
    }
}

/// The p50 in milliseconds of the [`percentiles`] under `key` in a row.
pub fn p50_ms(row: &serde_json::Value, key: &str) -> f64 {
    row[key]["p50_ms"].as_f64().unwrap_or(0.0)
}

/// The largest size's p50 of `key` over the smallest's (rows in the order of the sizes).
pub fn p50_ratio(rows: &[serde_json::Value], key: &str) -> f64 {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else { return 0.0 };
    p50_ms(last, key) / p50_ms(first, key).max(1e-9)
}

/// One line per size: its lines and bytes, then p50 and p99 of each `(label, key)`, and the count
/// of the last.
pub fn print_sizes(rows: &[serde_json::Value], measures: &[(&str, &str)]) {
    for row in rows {
        let mut line = format!("  {:>6} lines {:>8} B", row["lines"], row["bytes"]);
        for (label, key) in measures {
            line += &format!(
                "  {label} p50 {:>7.3} ms p99 {:>7.3} ms ",
                p50_ms(row, key),
                row[key]["p99_ms"].as_f64().unwrap_or(0.0)
            );
        }
        if let Some((_, key)) = measures.last() {
            line += &format!("  (n={})", row[key]["n"]);
        }
        println!("{line}");
    }
}
