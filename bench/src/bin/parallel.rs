//! Parallel regions and collectors against OpenMP and sequential C (issue 15): eight kernels in the
//! shape of the original's suite, each written in CAIRN (`bench/parallel/NAME.cairn`) and once in
//! C (`bench/parallel/NAME.c`), which is compiled twice — `gcc -O2 -fopenmp` (the OpenMP twin) and
//! `gcc -O2` (the pragmas ignored: the sequential twin). The sources hold `@N@` and `@REPS@`,
//! filled in per size so that every size does about the same work (N × REPS ≈ 4·10⁸ elements).
//! All three print one checksum line, which must agree (floats compared as numbers: C and CAIRN
//! print them differently); then the three executables run alternately (A, B, C, A, B, C, …)
//! after one warm-up each, and the report gives the median wall time of each and the ratios
//! cairn/OpenMP and sequential/cairn (the speed-up over sequential C). Times are whole processes:
//! each kernel's set-up (filling its inputs, sequential in all three) is part of every time.
//!
//! `cargo build --release -p cairn_cli && cargo run --release -p cairn_bench --bin parallel --
//! [--runs R] [--only a,b] [--sizes 100000,1000000,10000000] [--work W] [--json]`
//! (defaults: 5 runs, every kernel, sizes 10⁵, 10⁶, 10⁷; add 100000000 for 10⁸). Threads: CAIRN's
//! lane pool and OpenMP both use one thread per core unless CAIRN_LANES / OMP_NUM_THREADS say.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_bench::{interleaved, ms, run_once};

/// The kernels, in report order: file stem and what it computes.
const KERNELS: &[(&str, &str)] = &[
    ("saxpy", "saxpy f32, one region per sweep"),
    ("mixed", "mixed u64: wrapping multiply, shift, xor, remainder"),
    ("stencil", "1-D three-point stencil, f64"),
    ("reduce", "pooled `reduce +` of u64 (checked)"),
    ("histogram", "lane-owned histogram rows over blocks (block form)"),
    ("dot", "in-order f64 dot product (`reduce + for`: not pooled)"),
    ("scan", "pooled inclusive `scan +` of u64 (two passes)"),
    ("compact", "`compact` (in order, `for` only)"),
];

fn main() {
    let mut runs = 5usize;
    let mut json = false;
    let mut only: Option<Vec<String>> = None;
    let mut sizes: Vec<u64> = vec![100_000, 1_000_000, 10_000_000];
    let mut work_total: u64 = 400_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--json" => json = true,
            "--only" => only = Some(args.next().expect("--only a,b").split(',').map(str::to_string).collect()),
            "--sizes" => {
                sizes = args
                    .next()
                    .expect("--sizes a,b")
                    .split(',')
                    .map(|s| s.parse().expect("a size is a number"))
                    .collect()
            }
            "--work" => work_total = args.next().and_then(|v| v.parse().ok()).expect("--work W"),
            other => panic!("unknown argument {other}"),
        }
    }
    let cairn = std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("cairn")));
    let Some(cairn) = cairn.filter(|b| b.exists()) else {
        eprintln!("no cairn binary next to this one: run `cargo build --release -p cairn_cli` first");
        std::process::exit(2);
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("parallel");
    let work = std::env::temp_dir().join(format!("cairn-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("create the work directory");
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);

    let mut reports = Vec::new();
    for &(name, what) in KERNELS {
        if only.as_ref().is_some_and(|o| !o.iter().any(|k| k == name)) {
            continue;
        }
        for &n in &sizes {
            let reps = (work_total / n).max(2);
            reports.push(measure(name, what, n, reps, runs, &cairn, &root, &work));
        }
    }
    let _ = std::fs::remove_dir_all(&work);

    if json {
        println!(
            "{}",
            serde_json::json!({
                "benchmark": "parallel",
                "runs": runs,
                "cores": cores,
                "kernels": reports.iter().map(Report::json).collect::<Vec<_>>(),
            })
        );
        return;
    }
    println!("median of {runs} runs each, alternating; {cores} cores; cairn/omp < 1 means CAIRN is faster");
    println!(
        "{:<10} {:>10} {:>5} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "kernel", "n", "reps", "cairn ms", "omp ms", "seq ms", "cairn/omp", "seq/cairn"
    );
    for r in &reports {
        println!(
            "{:<10} {:>10} {:>5} {:>10.1} {:>10.1} {:>10.1} {:>8.2}x {:>8.2}x",
            r.name,
            r.n,
            r.reps,
            ms(r.ours),
            ms(r.omp),
            ms(r.seq),
            r.ours.as_secs_f64() / r.omp.as_secs_f64(),
            r.seq.as_secs_f64() / r.ours.as_secs_f64(),
        );
    }
}

struct Report {
    name: &'static str,
    what: &'static str,
    n: u64,
    reps: u64,
    output: String,
    ours: Duration,
    omp: Duration,
    seq: Duration,
}

impl Report {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "kernel": self.name,
            "what": self.what,
            "n": self.n,
            "reps": self.reps,
            "output": self.output,
            "cairn_median_ms": ms(self.ours),
            "openmp_median_ms": ms(self.omp),
            "sequential_c_median_ms": ms(self.seq),
            "cairn_over_openmp": self.ours.as_secs_f64() / self.omp.as_secs_f64(),
            "sequential_over_cairn": self.seq.as_secs_f64() / self.ours.as_secs_f64(),
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn measure(
    name: &'static str,
    what: &'static str,
    n: u64,
    reps: u64,
    runs: usize,
    cairn: &Path,
    root: &Path,
    work: &Path,
) -> Report {
    let fill = |text: String| text.replace("@N@", &n.to_string()).replace("@REPS@", &reps.to_string());
    let read = |ext: &str| std::fs::read_to_string(root.join(format!("{name}.{ext}"))).expect("a kernel source");
    let stem = format!("{name}-{n}");
    let source = work.join(format!("{stem}.cairn"));
    std::fs::write(&source, fill(read("cairn"))).expect("write the kernel");
    let twin = work.join(format!("{stem}.c"));
    std::fs::write(&twin, fill(read("c"))).expect("write the twin");

    let built = Command::new(cairn)
        .arg("build")
        .arg(&source)
        .args(["--format", "json", "--out"])
        .arg(work.join(format!("{stem}-cairn")))
        .output()
        .expect("run cairn build");
    let record: serde_json::Value = serde_json::from_slice(&built.stdout)
        .unwrap_or_else(|e| panic!("{stem}: no JSON record ({e}): {}", String::from_utf8_lossy(&built.stdout)));
    let ours = match record.get("artifact").and_then(|a| a.as_str()) {
        Some(path) if built.status.success() => PathBuf::from(path),
        _ => panic!("{stem}: cairn build failed: {record}"),
    };
    let compile = |flags: &[&str], out: &Path| {
        let start = Instant::now();
        let compiled = Command::new("gcc")
            .args(["-O2", "-Wno-unknown-pragmas"])
            .args(flags)
            .arg("-o")
            .arg(out)
            .arg(&twin)
            .output()
            .expect("run gcc");
        assert!(compiled.status.success(), "{stem}: gcc failed: {}", String::from_utf8_lossy(&compiled.stderr));
        start.elapsed()
    };
    let omp = work.join(format!("{stem}-omp"));
    compile(&["-fopenmp"], &omp);
    let seq = work.join(format!("{stem}-seq"));
    compile(&[], &seq);

    let expected = run_once(&seq);
    for (who, exe) in [("cairn", &ours), ("openmp", &omp)] {
        let got = run_once(exe);
        assert!(same_line(&got, &expected), "{stem}: {who} printed {got:?}, sequential C {expected:?}");
    }
    let mut mismatch = false;
    let mut a = || mismatch |= !same_line(&run_once(&ours), &expected);
    let mut b = || {
        run_once(&omp);
    };
    let mut c = || {
        run_once(&seq);
    };
    let times = interleaved(runs, &mut [&mut a, &mut b, &mut c]);
    assert!(!mismatch, "{stem}: a timed run printed something else");
    Report {
        name,
        what,
        n,
        reps,
        output: expected.trim_end().to_string(),
        ours: times[0],
        omp: times[1],
        seq: times[2],
    }
}

/// The same checksum line: equal text before `checksum=`, and equal values after it (as
/// numbers, since C's `%.17g` and CAIRN's shortest round-trip print floats differently).
fn same_line(a: &str, b: &str) -> bool {
    let split = |s: &str| s.trim().split_once("checksum=").map(|(h, v)| (h.to_string(), v.to_string()));
    match (split(a), split(b)) {
        (Some((ha, va)), Some((hb, vb))) => {
            ha == hb && (va == vb || matches!((va.parse::<f64>(), vb.parse::<f64>()), (Ok(x), Ok(y)) if x == y))
        }
        _ => false,
    }
}
