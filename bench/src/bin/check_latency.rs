//! `cairn check` latency: the whole check of generated programs, and the re-check after a
//! one-body edit, on programs of two sizes side by side (the re-check must not grow with the
//! program).
//!
//! For each size: (1) the whole `cairn check` process on the program written to a temporary
//! file (median of R runs, the binary at `target/release/cairn`); (2) the in-process whole check
//! (`Workspace::new` + `check`); (3) 1,000 random one-body edits applied to one long-lived
//! workspace, each timed from `edit_file` through `check`, reported as p50/p99 — for all edits,
//! and split by how the check was answered (incremental: the summaries did not move; whole:
//! an edit added an effect or a call, so the whole pass ran over memoized queries).
//!
//! `cargo run --release -p cairn_bench --bin check_latency -- [--sizes 2000,20000,22000] [--edits N] [--runs R]
//! [--kinds literal,statement,effect] [--json]`

use std::time::{Duration, Instant};

use cairn_bench::median;
use cairn_hir::{CheckKind, SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};
use cairn_testgen::{Config, Rng};

fn main() {
    let mut sizes = vec![2_000usize, 20_000, 22_000];
    let mut edits = 1_000usize;
    let mut runs = 11usize;
    let mut json = false;
    let mut kinds = vec![Kind::Literal, Kind::Statement, Kind::Effect];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                sizes = args.next().expect("--sizes A,B").split(',').map(|s| s.parse().expect("a size")).collect()
            }
            "--edits" => edits = args.next().and_then(|v| v.parse().ok()).expect("--edits N"),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--json" => json = true,
            "--kinds" => {
                kinds = args
                    .next()
                    .expect("--kinds literal,statement,effect")
                    .split(',')
                    .map(|k| match k {
                        "literal" => Kind::Literal,
                        "statement" => Kind::Statement,
                        "effect" => Kind::Effect,
                        other => panic!("unknown edit kind {other}"),
                    })
                    .collect()
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let binary = std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("cairn")));
    let mut reports = Vec::new();
    for &size in &sizes {
        reports.push(measure(size, edits, runs, binary.as_deref(), &kinds));
    }
    if json {
        println!("{}", serde_json::Value::Array(reports.iter().map(Report::json).collect()));
    } else {
        for report in &reports {
            report.print();
        }
    }
}

struct Report {
    lines: usize,
    bytes: usize,
    functions: usize,
    process: Option<Duration>,
    in_process: Duration,
    all: Vec<Duration>,
    incremental: Vec<Duration>,
    whole: Vec<Duration>,
    syntax: usize,
}

/// The kinds of one-body edit: a literal changed (six in ten of the default mix), a pure
/// statement added (three in ten), an effect added (one in ten).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Literal,
    Statement,
    Effect,
}

fn measure(size: usize, edits: usize, runs: usize, binary: Option<&std::path::Path>, kinds: &[Kind]) -> Report {
    let text = program_of_lines(size);
    let lines = text.lines().count();
    let source = || vec![SourceText { name: "bench.cairn".into(), text: text.clone() }];

    // The whole process, as a user runs it.
    let process = binary.filter(|b| b.exists()).map(|binary| {
        let path = std::env::temp_dir().join(format!("cairn-bench-{size}-{}.cairn", std::process::id()));
        std::fs::write(&path, &text).expect("write the program");
        let mut samples = Vec::new();
        for _ in 0..runs + 1 {
            let start = Instant::now();
            let output =
                std::process::Command::new(binary).arg("check").arg(&path).arg("--format").arg("json").output();
            samples.push(start.elapsed());
            let output = output.expect("run cairn");
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
        }
        let _ = std::fs::remove_file(&path);
        samples.remove(0);
        median(samples)
    });

    // In process.
    let mut samples = Vec::new();
    let mut functions = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let mut workspace = Workspace::new(source());
        let outcome = workspace.check();
        samples.push(start.elapsed());
        assert!(outcome.refusal.is_none(), "the generated program is accepted");
        functions = outcome.functions;
        // Freed outside the timed region, so the next run reuses the memory (as a long-lived
        // server would) and no run pays for the previous one's teardown.
        drop(workspace);
    }
    let in_process = median(samples);

    // One-body edits on a long-lived workspace.
    let mut workspace = Workspace::new(source());
    workspace.check();
    let mut current = text.clone();
    let mut rng = Rng::new(7);
    let mut report = Report {
        lines,
        bytes: text.len(),
        functions,
        process,
        in_process,
        all: Vec::new(),
        incremental: Vec::new(),
        whole: Vec::new(),
        syntax: 0,
    };
    let body_lines: Vec<usize> = body_line_starts(&text);
    for k in 0..edits {
        let edit = one_body_edit(&mut rng, &current, &body_lines, k, kinds);
        let start = Instant::now();
        workspace.edit_file(0, &edit);
        let _ = workspace.check();
        let elapsed = start.elapsed();
        current = edit.apply(&current);
        report.all.push(elapsed);
        match workspace.last_check_kind() {
            CheckKind::Incremental => report.incremental.push(elapsed),
            CheckKind::Whole => report.whole.push(elapsed),
            CheckKind::Syntax => report.syntax += 1,
        }
    }
    report
}

/// A generated program (seed 1) of at least `lines` lines: the generator's size is approximate,
/// so the request is scaled up by the shortfall until it is met.
fn program_of_lines(lines: usize) -> String {
    let mut asked = lines;
    loop {
        let text = cairn_testgen::program(Config::with_lines(1, asked));
        let got = text.lines().count().max(1);
        if got >= lines {
            return text;
        }
        asked = asked * lines / got + 12;
    }
}

/// Offsets of statement lines inside function bodies (indented, ending in `;`, not a match arm)
/// that hold a literal digit.
fn body_line_starts(text: &str) -> Vec<usize> {
    let mut offset = 0;
    let mut out = Vec::new();
    for line in text.split('\n') {
        if statement_line(line) && literal_digit(line).is_some() {
            out.push(offset);
        }
        offset += line.len() + 1;
    }
    out
}

fn statement_line(line: &str) -> bool {
    line.starts_with("  ") && line.ends_with(';') && !line.contains("=>") && !line.contains("stack ")
}

/// The offset of the first digit of a decimal literal in `line` (not part of a name or hex).
fn literal_digit(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    (0..bytes.len()).find(|&i| {
        bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
            && !(bytes[i] == b'0' && bytes.get(i + 1) == Some(&b'x'))
    })
}

/// A random edit inside one body: a literal changed, a pure statement added, or an effect added.
fn one_body_edit(rng: &mut Rng, text: &str, lines: &[usize], k: usize, kinds: &[Kind]) -> TextEdit {
    let at = |offset: usize| TextSize::from(offset as u32);
    // Pick a statement line of a body near a recorded place (offsets drift with earlier edits).
    let (start, line) = loop {
        let approx = lines[rng.below(lines.len() as u64) as usize].min(text.len().saturating_sub(1));
        let start = text[..approx].rfind('\n').map_or(0, |i| i + 1);
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        if statement_line(&text[start..end]) {
            break (start, &text[start..end]);
        }
    };
    let kind = loop {
        let kind = match rng.below(10) {
            0..=5 => Kind::Literal,
            6..=8 => Kind::Statement,
            _ => Kind::Effect,
        };
        if kinds.contains(&kind) {
            break kind;
        }
    };
    match kind {
        // Change the first digit of a literal: the body's summary stays.
        Kind::Literal => match literal_digit(line) {
            Some(i) => {
                let digit = b'1' + (rng.below(8) as u8);
                TextEdit {
                    delete: TextRange::new(at(start + i), at(start + i + 1)),
                    insert: (digit as char).to_string(),
                }
            }
            None => TextEdit { delete: TextRange::empty(at(start)), insert: format!("  let bench_{k}:u64 = {k};\n") },
        },
        // Add a pure statement before the line.
        Kind::Statement => {
            TextEdit { delete: TextRange::empty(at(start)), insert: format!("  let bench_{k}:u64 = {k};\n") }
        }
        // Add an effect: the row moves, so the whole pass runs (over memoized queries).
        Kind::Effect => TextEdit { delete: TextRange::empty(at(start)), insert: format!("  println(\"edit {k}\");\n") },
    }
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Report {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "lines": self.lines,
            "bytes": self.bytes,
            "functions": self.functions,
            "process_check_ms": self.process.map(ms),
            "in_process_check_ms": ms(self.in_process),
            "edits": self.all.len(),
            "recheck_p50_ms": ms(percentile(&self.all, 0.5)),
            "recheck_p99_ms": ms(percentile(&self.all, 0.99)),
            "incremental": self.incremental.len(),
            "incremental_p50_ms": ms(percentile(&self.incremental, 0.5)),
            "incremental_p99_ms": ms(percentile(&self.incremental, 0.99)),
            "whole": self.whole.len(),
            "whole_p50_ms": ms(percentile(&self.whole, 0.5)),
            "whole_p99_ms": ms(percentile(&self.whole, 0.99)),
            "syntax": self.syntax,
        })
    }

    fn print(&self) {
        println!(
            "program: {} lines, {} bytes, {} functions (generated, seed 1)",
            self.lines, self.bytes, self.functions
        );
        match self.process {
            Some(p) => println!("  whole check, process:     {:.1} ms (median)", ms(p)),
            None => println!("  whole check, process:     (build target/release/cairn to measure)"),
        }
        println!("  whole check, in process:  {:.1} ms (median)", ms(self.in_process));
        println!(
            "  re-check after an edit:   p50 {:.3} ms, p99 {:.3} ms over {} edits",
            ms(percentile(&self.all, 0.5)),
            ms(percentile(&self.all, 0.99)),
            self.all.len()
        );
        println!(
            "    incremental ({:>4}):     p50 {:.3} ms, p99 {:.3} ms",
            self.incremental.len(),
            ms(percentile(&self.incremental, 0.5)),
            ms(percentile(&self.incremental, 0.99))
        );
        println!(
            "    whole pass  ({:>4}):     p50 {:.3} ms, p99 {:.3} ms",
            self.whole.len(),
            ms(percentile(&self.whole, 0.5)),
            ms(percentile(&self.whole, 0.99))
        );
        if self.syntax > 0 {
            println!("    refused for syntax: {}", self.syntax);
        }
    }
}
