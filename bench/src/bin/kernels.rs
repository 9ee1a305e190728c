//! Native code against C: eight small kernels, each written in CAIRN (`bench/kernels/NAME.cairn`)
//! and as a C twin (`bench/kernels/NAME.c`) that does the same computation without the checks
//! CAIRN makes (plain arithmetic where CAIRN checks, unsigned wrapping where CAIRN wraps, no
//! bounds checks). Each CAIRN kernel is built with `cairn build` (the binary next to this one,
//! `target/release/cairn`) and each twin with `cc -O2`; the two must print the same line (a
//! checksum, so the work cannot be deleted). The executables then run alternately (A, B, A, B, …)
//! after one warm-up each, and the report gives the median wall time of each and the ratio
//! ours/C. Last, the time of `cairn run examples/hello.cairn` (build included) as a user sees it.
//!
//! Times are whole processes (start-up included, under a millisecond); the kernels bake their
//! sizes in as constants (tier 0 cannot read arguments) so that each runs for 100–300 ms.
//!
//! `cargo build --release -p cairn_cli && cargo run --release -p cairn_bench --bin kernels --
//! [--runs R] [--only a,b] [--cc CC] [--json]` (defaults: 7 runs, every kernel, `cc`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_bench::{interleaved, median, ms, run_once};

/// The kernels, in report order: file stem and what it computes.
const KERNELS: &[(&str, &str)] = &[
    ("sum_squares", "wrapping sum of squares (mul_wrap/add_wrap, u64)"),
    ("collatz", "Collatz lengths for 1..10^6 (checked u64)"),
    ("sieve", "sieve of Eratosthenes, 64 KiB stack array"),
    ("matmul", "64x64 f64 matrix multiply-accumulate"),
    ("fnv1a", "FNV-1a over a 286-byte text (mul_wrap)"),
    ("prefix_sums", "prefix sums of 4096 u64 (checked +)"),
    ("buf_fill", "a heap Buf of 2^20 u64 made, filled and released (calloc twin)"),
    ("stencil", "5-point f64 stencil, 512x512, sizes as parameters (guards in force)"),
];

fn main() {
    let mut runs = 7usize;
    let mut json = false;
    let mut only: Option<Vec<String>> = None;
    let mut cc = "cc".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--json" => json = true,
            "--only" => only = Some(args.next().expect("--only a,b").split(',').map(str::to_string).collect()),
            "--cc" => cc = args.next().expect("--cc CC"),
            other => panic!("unknown argument {other}"),
        }
    }
    let cairn = std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("cairn")));
    let Some(cairn) = cairn.filter(|b| b.exists()) else {
        eprintln!("no cairn binary next to this one: run `cargo build --release -p cairn_cli` first");
        std::process::exit(2);
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("cairn-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("create the work directory");

    let mut reports = Vec::new();
    for &(name, what) in KERNELS {
        if only.as_ref().is_some_and(|o| !o.iter().any(|k| k == name)) {
            continue;
        }
        reports.push(measure(name, what, runs, &cairn, &cc, root, &work));
    }
    let hello = hello_run(runs, &cairn, &root.join("../examples/hello.cairn"), &work);
    let _ = std::fs::remove_dir_all(&work);

    if json {
        println!(
            "{}",
            serde_json::json!({
                "benchmark": "kernels",
                "runs": runs,
                "cc": cc,
                "kernels": reports.iter().map(Report::json).collect::<Vec<_>>(),
                "hello_run_median_ms": ms(hello),
            })
        );
    } else {
        println!("median of {runs} runs each, alternating; ratio = cairn / C (`{cc} -O2`)");
        println!(
            "{:<12} {:>10} {:>10} {:>7}   {:>9} {:>9}",
            "kernel", "cairn ms", "C ms", "ratio", "build ms", "cc ms"
        );
        for r in &reports {
            println!(
                "{:<12} {:>10.1} {:>10.1} {:>6.2}x   {:>9.0} {:>9.0}   {}",
                r.name,
                ms(r.ours),
                ms(r.c),
                r.ratio(),
                ms(r.build_ours),
                ms(r.build_c),
                r.what
            );
        }
        println!("`cairn run examples/hello.cairn` (build included): {:.1} ms (median)", ms(hello));
    }
}

struct Report {
    name: &'static str,
    what: &'static str,
    output: String,
    ours: Duration,
    c: Duration,
    build_ours: Duration,
    build_c: Duration,
}

impl Report {
    fn ratio(&self) -> f64 {
        self.ours.as_secs_f64() / self.c.as_secs_f64()
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "kernel": self.name,
            "what": self.what,
            "output": self.output,
            "cairn_median_ms": ms(self.ours),
            "c_median_ms": ms(self.c),
            "ratio": self.ratio(),
            "cairn_build_ms": ms(self.build_ours),
            "cc_build_ms": ms(self.build_c),
        })
    }
}

fn measure(
    name: &'static str,
    what: &'static str,
    runs: usize,
    cairn: &Path,
    cc: &str,
    root: &Path,
    work: &Path,
) -> Report {
    let source = root.join("kernels").join(format!("{name}.cairn"));
    let twin = root.join("kernels").join(format!("{name}.c"));

    let start = Instant::now();
    let built = Command::new(cairn)
        .arg("build")
        .arg(&source)
        .args(["--format", "json", "--out"])
        .arg(work.join(format!("{name}-cairn")))
        .output()
        .expect("run cairn build");
    let build_ours = start.elapsed();
    let record: serde_json::Value = serde_json::from_slice(&built.stdout).unwrap_or_else(|e| {
        panic!("{name}: cairn build printed no JSON record ({e}): {}", String::from_utf8_lossy(&built.stdout))
    });
    let ours = match record.get("artifact").and_then(|a| a.as_str()) {
        Some(path) if built.status.success() => PathBuf::from(path),
        _ => panic!("{name}: cairn build failed: {record}"),
    };

    let theirs = work.join(format!("{name}-c"));
    let start = Instant::now();
    let compiled = Command::new(cc).arg("-O2").arg("-o").arg(&theirs).arg(&twin).output().expect("run cc");
    let build_c = start.elapsed();
    assert!(compiled.status.success(), "{name}: {cc} failed: {}", String::from_utf8_lossy(&compiled.stderr));

    // Both print the same line (a run that traps or differs stops the benchmark).
    let output = run_once(&ours);
    let expected = run_once(&theirs);
    assert_eq!(output, expected, "{name}: the CAIRN kernel and its C twin disagree");

    let mut mismatch = false;
    let mut a = || mismatch |= run_once(&ours) != expected;
    let mut b = || {
        run_once(&theirs);
    };
    let times = interleaved(runs, &mut [&mut a, &mut b]);
    assert!(!mismatch, "{name}: a timed run printed something else");
    Report { name, what, output: expected.trim_end().to_string(), ours: times[0], c: times[1], build_ours, build_c }
}

/// `cairn run` of a small program, build included: the median of `runs` after one warm-up.
fn hello_run(runs: usize, cairn: &Path, program: &Path, work: &Path) -> Duration {
    let out = work.join("hello");
    let once = || {
        let result = Command::new(cairn)
            .arg("run")
            .arg(program)
            .args(["--format", "json", "--out"])
            .arg(&out)
            .output()
            .expect("run cairn run");
        assert!(result.status.success(), "cairn run failed: {}", String::from_utf8_lossy(&result.stdout));
        assert!(String::from_utf8_lossy(&result.stdout).contains("hello from cairn"), "hello printed its greeting");
    };
    once();
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        once();
        samples.push(start.elapsed());
    }
    median(samples)
}
