//! Parse throughput on large generated programs: MB/s and lines/s of `cairn_syntax::parse`, with
//! lexing alone measured beside it as the baseline.
//!
//! The time covers lexing, parsing, building the tree and validating it; freeing trees happens
//! outside the timed region.
//!
//! `cargo run --release -p cairn_bench --bin parse_throughput -- [--lines N] [--runs R] [--json]`
//! (defaults: 20,000 lines, 21 runs). Single-threaded: the figure is one core's.

use std::hint::black_box;

use cairn_bench::{interleaved, megabytes_per_second};

fn main() {
    let mut lines = 20_000usize;
    let mut runs = 21usize;
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lines" => lines = args.next().and_then(|v| v.parse().ok()).expect("--lines N"),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--json" => json = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let text = cairn_testgen::program(cairn_testgen::Config::with_lines(1, lines));
    let line_count = text.lines().count();
    let parse = cairn_syntax::parse(&text);
    assert!(parse.ok(), "the generated program must parse cleanly: {:?}", &parse.errors()[..1]);
    drop(parse);

    // Trees are kept until the end so that the timing covers building them, not freeing them
    // (a database keeps a tree until an edit replaces it).
    let mut kept: Vec<cairn_syntax::Parse> = Vec::with_capacity(runs + 1);
    let mut parse_subject = || {
        kept.push(black_box(cairn_syntax::parse(black_box(&text))));
    };
    let mut lex_subject = || {
        black_box(cairn_syntax::lex(black_box(&text)));
    };
    let times = interleaved(runs, &mut [&mut parse_subject, &mut lex_subject]);
    let (parse_time, lex_time) = (times[0], times[1]);
    drop(kept);
    let parse_mb = megabytes_per_second(text.len(), parse_time);
    let lex_mb = megabytes_per_second(text.len(), lex_time);
    let lines_per_second = line_count as f64 / parse_time.as_secs_f64();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "benchmark": "parse_throughput",
                "bytes": text.len(),
                "lines": line_count,
                "runs": runs,
                "parse_median_ms": parse_time.as_secs_f64() * 1e3,
                "parse_mb_per_s": parse_mb,
                "parse_lines_per_s": lines_per_second,
                "lex_median_ms": lex_time.as_secs_f64() * 1e3,
                "lex_mb_per_s": lex_mb,
                "parse_over_lex": parse_time.as_secs_f64() / lex_time.as_secs_f64(),
            })
        );
    } else {
        println!("program: {line_count} lines, {} bytes (generated, seed 1)", text.len());
        println!(
            "parse:   {:.3} ms median of {runs}  ->  {parse_mb:.1} MB/s, {lines_per_second:.0} lines/s",
            parse_time.as_secs_f64() * 1e3
        );
        println!("lex:     {:.3} ms median of {runs}  ->  {lex_mb:.1} MB/s (baseline)", lex_time.as_secs_f64() * 1e3);
        println!("parse / lex time: {:.2}x", parse_time.as_secs_f64() / lex_time.as_secs_f64());
    }
}
