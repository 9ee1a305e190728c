//! Re-check latency after a one-body edit inside a generic function with 50 instances, on a
//! generated program of about 20,000 lines, side by side with the same edit in an ordinary
//! function of the same body (issue 13: p50 ≤ 2 ms, release).
//!
//! The program is the generator's (seed 1) plus `gen_step[K:nat]`, instantiated at K = 1..=50 by
//! fifty callers, and `mono_step`, its ordinary twin. Each round edits the literal in one of the
//! two bodies (alternating, so machine noise falls on both alike) in one long-lived workspace and
//! times `edit_file` through `check`.
//!
//! `cargo run --release -p cairn_bench --bin generic_edit -- [--lines N] [--edits N] [--json]`

use std::time::{Duration, Instant};

use cairn_hir::{CheckKind, SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};
use cairn_testgen::Config;

const INSTANCES: usize = 50;

fn main() {
    let mut lines = 20_000usize;
    let mut edits = 1_000usize;
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lines" => lines = args.next().and_then(|v| v.parse().ok()).expect("--lines N"),
            "--edits" => edits = args.next().and_then(|v| v.parse().ok()).expect("--edits N"),
            "--json" => json = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let mut text = cairn_testgen::program(Config::with_lines(1, lines));
    text.push_str("\nfn gen_step[K:nat](x:u64) -> u64 {\n  let y = x % 1000;\n  return y * 2 + u64(K) + 7000;\n}\n");
    text.push_str("\nfn mono_step(x:u64) -> u64 {\n  let y = x % 1000;\n  return y * 2 + 1 + 7000;\n}\n");
    for k in 1..=INSTANCES {
        text.push_str(&format!("\nfn gen_call_{k}() -> u64 {{\n  return gen_step[{k}](mono_step({k}));\n}}\n"));
    }
    let total_lines = text.lines().count();
    let mut workspace = Workspace::new(vec![SourceText { name: "main.cairn".into(), text }]);
    let first = workspace.check();
    assert!(first.refusal.is_none(), "the program is accepted: {:?}", first.refusal);
    let mut generic: Vec<Duration> = Vec::new();
    let mut mono: Vec<Duration> = Vec::new();
    let mut incremental = 0usize;
    for round in 0..edits * 2 {
        let target = if round % 2 == 0 { "fn gen_step[" } else { "fn mono_step(" };
        let text = &workspace.files()[0].text();
        let base = text.find(target).expect("declared");
        let ret = base + text[base..].find("return y").expect("the return");
        let end = ret + text[ret..].find(';').expect("the statement's end");
        let at = ret + text[ret..end].rfind("+ ").expect("the literal") + 2;
        let value = 7000 + (round * 7919) % 1999;
        let edit = TextEdit {
            delete: TextRange::new(TextSize::from(at as u32), TextSize::from(end as u32)),
            insert: value.to_string(),
        };
        let start = Instant::now();
        workspace.edit_file(0, &edit);
        let outcome = workspace.check();
        let elapsed = start.elapsed();
        assert!(outcome.refusal.is_none());
        if workspace.last_check_kind() == CheckKind::Incremental {
            incremental += 1;
        }
        if round % 2 == 0 { generic.push(elapsed) } else { mono.push(elapsed) }
    }
    let (g50, g99) = percentiles(&mut generic);
    let (m50, m99) = percentiles(&mut mono);
    if json {
        println!(
            "{{\"lines\":{total_lines},\"instances\":{INSTANCES},\"edits\":{edits},\"generic_p50_ms\":{:.4},\"generic_p99_ms\":{:.4},\"mono_p50_ms\":{:.4},\"mono_p99_ms\":{:.4},\"incremental\":{incremental}}}",
            ms(g50),
            ms(g99),
            ms(m50),
            ms(m99)
        );
    } else {
        println!("program: {total_lines} lines; gen_step has {INSTANCES} instances; {edits} edits of each body");
        println!("  edit inside gen_step[K] (50 instances)  p50 {:7.3} ms   p99 {:7.3} ms", ms(g50), ms(g99));
        println!("  edit inside mono_step (ordinary twin)   p50 {:7.3} ms   p99 {:7.3} ms", ms(m50), ms(m99));
        println!("  ratio generic / ordinary at p50: {:.2}", ms(g50) / ms(m50).max(1e-9));
        println!("  answered incrementally: {incremental} of {}", edits * 2);
    }
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
