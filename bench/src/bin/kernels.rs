//! Native code against C: small kernels, each written in CAIRN (`bench/kernels/NAME.cairn`) and
//! as a C twin (`bench/kernels/NAME.c`) that does the same computation without the checks CAIRN
//! makes (plain arithmetic where CAIRN checks, unsigned wrapping where CAIRN wraps, no bounds
//! checks). Each CAIRN kernel is built with `cairn build` (the binary next to this one,
//! `target/release/cairn`, guards on) and each twin twice, with `gcc -O2` and `clang-19 -O2`; all
//! three must print the same line (a checksum, so the work cannot be deleted). The executables
//! then run alternately (cairn, gcc, clang, cairn, …) after one warm-up each, and the report gives
//! the median wall time of each and the ratio of ours to the better of the two C compilers, and
//! the same ratio of the best runs (this machine's neighbours slow some runs by half: a
//! deterministic program's fastest run is its least disturbed one). Last,
//! the time of `cairn run examples/hello.cairn` (build included) as a user sees it.
//!
//! Times are whole processes (start-up included, under a millisecond). The first kernels bake
//! their sizes in as constants; the later ones (`matmul_n`, `stencil_n`, `histogram`,
//! `prefix_part`, `search`) read a size or a pattern from their first argument, given alike to
//! both sides, so nothing about their extents is known when they are compiled.
//!
//! `cargo build --release -p cairn_cli && cargo run --release -p cairn_bench --bin kernels --
//! [--runs R] [--only a,b] [--cc CC] [--clang CLANG] [--json]` (defaults: 7 runs, every kernel,
//! `cc`, `clang-19`; a missing `clang` leaves its column out and compares with `cc` alone).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_bench::{interleaved_samples, median, ms, run_with};
use serde::Serialize;

/// A kernel: file stem, the arguments both sides get, and what it computes.
struct Kernel {
    name: &'static str,
    args: &'static [&'static str],
    what: &'static str,
}

/// The kernels, in report order.
const KERNELS: &[Kernel] = &[
    Kernel { name: "sum_squares", args: &[], what: "wrapping sum of squares (mul_wrap/add_wrap, u64)" },
    Kernel { name: "collatz", args: &[], what: "Collatz lengths for 1..10^6 (checked u64)" },
    Kernel { name: "sieve", args: &[], what: "sieve of Eratosthenes, 64 KiB stack array" },
    Kernel { name: "matmul", args: &[], what: "64x64 f64 matrix multiply-accumulate" },
    Kernel { name: "fnv1a", args: &[], what: "FNV-1a over a 286-byte text (mul_wrap)" },
    Kernel { name: "prefix_sums", args: &[], what: "prefix sums of 4096 u64 (checked +)" },
    Kernel { name: "buf_fill", args: &[], what: "a heap Buf of 2^20 u64 made, filled and released (calloc twin)" },
    Kernel { name: "stencil", args: &[], what: "5-point f64 stencil, 512x512, sizes as parameters (guards in force)" },
    Kernel { name: "matmul_n", args: &["96"], what: "n x n f64 matrix multiply-accumulate, n = 96 an argument" },
    Kernel { name: "stencil_n", args: &["512"], what: "5-point f64 stencil over a w x w grid, w = 512 an argument" },
    Kernel { name: "histogram", args: &["1000"], what: "2^22 keys into `bins` bins (an argument), checked counts" },
    Kernel {
        name: "prefix_part",
        args: &["3"],
        what: "prefix sums over a part v[lo..n-lo] of 2^20 u64, lo an argument",
    },
    Kernel { name: "search", args: &["acgta"], what: "naive search of a pattern (an argument) in 4 MiB over acgt" },
];

/// The report, as `--json` prints it.
#[derive(Serialize)]
struct Record {
    benchmark: &'static str,
    runs: usize,
    cc: String,
    clang: Option<String>,
    kernels: Vec<Report>,
    hello_run_median_ms: f64,
}

/// One kernel's measurement.
#[derive(Serialize)]
struct Report {
    kernel: &'static str,
    what: &'static str,
    args: &'static [&'static str],
    output: String,
    cairn_median_ms: f64,
    gcc_median_ms: f64,
    clang_median_ms: Option<f64>,
    /// Ours over the faster of the C twins (medians).
    ratio_to_best: f64,
    /// The fastest run of each.
    cairn_best_ms: f64,
    c_best_ms: f64,
    /// Ours over the faster of the C twins (fastest runs).
    best_ratio: f64,
    cairn_build_ms: f64,
    cc_build_ms: f64,
}

fn main() {
    let mut runs = 7usize;
    let mut json = false;
    let mut only: Option<Vec<String>> = None;
    let mut cc = "cc".to_string();
    let mut clang = "clang-19".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--json" => json = true,
            "--only" => only = Some(args.next().expect("--only a,b").split(',').map(str::to_string).collect()),
            "--cc" => cc = args.next().expect("--cc CC"),
            "--clang" => clang = args.next().expect("--clang CLANG"),
            other => panic!("unknown argument {other}"),
        }
    }
    let cairn = std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("cairn")));
    let Some(cairn) = cairn.filter(|b| b.exists()) else {
        eprintln!("no cairn binary next to this one: run `cargo build --release -p cairn_cli` first");
        std::process::exit(2);
    };
    let clang = Command::new(&clang).arg("--version").output().is_ok_and(|o| o.status.success()).then_some(clang);
    if clang.is_none() {
        eprintln!("no clang found (--clang): the C twins are built with {cc} alone");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("cairn-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("create the work directory");

    let compilers = Compilers { cairn: &cairn, cc: &cc, clang: clang.as_deref() };
    let mut reports = Vec::new();
    for kernel in KERNELS {
        if only.as_ref().is_some_and(|o| !o.iter().any(|k| k == kernel.name)) {
            continue;
        }
        reports.push(measure(kernel, runs, &compilers, root, &work));
    }
    let hello = hello_run(runs, &cairn, &root.join("../examples/hello.cairn"), &work);
    let _ = std::fs::remove_dir_all(&work);

    if json {
        let record = Record {
            benchmark: "kernels",
            runs,
            cc: cc.clone(),
            clang: clang.clone(),
            kernels: reports,
            hello_run_median_ms: ms(hello),
        };
        println!("{}", serde_json::to_string(&record).expect("a serializable record"));
        return;
    }
    let clang_name = clang.as_deref().unwrap_or("-");
    println!(
        "median of {runs} runs each, alternating; ratio = cairn / the faster of `{cc} -O2` and `{clang_name} -O2`"
    );
    println!("best: the fastest run of ours over the fastest of either C twin's");
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>7} {:>7}   {:>8} {:>6}",
        "kernel", "cairn ms", "gcc ms", "clang ms", "ratio", "best", "build ms", "cc ms"
    );
    for r in &reports {
        let clang_ms = r.clang_median_ms.map_or("-".to_string(), |t| format!("{t:.1}"));
        println!(
            "{:<12} {:>9.1} {:>9.1} {:>9} {:>6.2}x {:>6.2}x   {:>8.0} {:>6.0}   {}",
            r.kernel,
            r.cairn_median_ms,
            r.gcc_median_ms,
            clang_ms,
            r.ratio_to_best,
            r.best_ratio,
            r.cairn_build_ms,
            r.cc_build_ms,
            r.what
        );
    }
    println!("`cairn run examples/hello.cairn` (build included): {:.1} ms (median)", ms(hello));
}

/// The three compilers.
struct Compilers<'a> {
    cairn: &'a Path,
    cc: &'a str,
    clang: Option<&'a str>,
}

/// Builds a C twin with `compiler -O2`; returns the executable and the time it took.
fn build_c(compiler: &str, twin: &Path, out: &Path) -> Duration {
    let start = Instant::now();
    let compiled = Command::new(compiler).arg("-O2").arg("-o").arg(out).arg(twin).output().expect("run the C compiler");
    assert!(compiled.status.success(), "{compiler} failed: {}", String::from_utf8_lossy(&compiled.stderr));
    start.elapsed()
}

fn measure(kernel: &Kernel, runs: usize, compilers: &Compilers, root: &Path, work: &Path) -> Report {
    let name = kernel.name;
    let source = root.join("kernels").join(format!("{name}.cairn"));
    let twin = root.join("kernels").join(format!("{name}.c"));

    let start = Instant::now();
    let built = Command::new(compilers.cairn)
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

    let gcc = work.join(format!("{name}-gcc"));
    let build_c_time = build_c(compilers.cc, &twin, &gcc);
    let clang = compilers.clang.map(|compiler| {
        let exe = work.join(format!("{name}-clang"));
        build_c(compiler, &twin, &exe);
        exe
    });

    // All print the same line (a run that traps or differs stops the benchmark).
    let args = kernel.args;
    let expected = run_with(&gcc, args);
    assert_eq!(run_with(&ours, args), expected, "{name}: the CAIRN kernel and its C twin disagree");
    if let Some(clang) = &clang {
        assert_eq!(run_with(clang, args), expected, "{name}: the clang-built twin disagrees");
    }

    let mut mismatch = false;
    let mut a = || mismatch |= run_with(&ours, args) != expected;
    let mut b = || {
        run_with(&gcc, args);
    };
    let samples = match &clang {
        Some(clang) => {
            let mut c = || {
                run_with(clang, args);
            };
            interleaved_samples(runs, &mut [&mut a, &mut b, &mut c])
        }
        None => interleaved_samples(runs, &mut [&mut a, &mut b]),
    };
    assert!(!mismatch, "{name}: a timed run printed something else");
    let fastest: Vec<Duration> = samples.iter().map(|s| s.iter().min().copied().unwrap_or_default()).collect();
    let times: Vec<Duration> = samples.into_iter().map(median).collect();
    let best = times[1..].iter().min().copied().unwrap_or(times[1]);
    let c_best = fastest[1..].iter().min().copied().unwrap_or(fastest[1]);
    Report {
        kernel: name,
        what: kernel.what,
        args,
        output: expected.trim_end().to_string(),
        cairn_median_ms: ms(times[0]),
        gcc_median_ms: ms(times[1]),
        clang_median_ms: times.get(2).map(|t| ms(*t)),
        ratio_to_best: times[0].as_secs_f64() / best.as_secs_f64(),
        cairn_best_ms: ms(fastest[0]),
        c_best_ms: ms(c_best),
        best_ratio: fastest[0].as_secs_f64() / c_best.as_secs_f64(),
        cairn_build_ms: ms(build_ours),
        cc_build_ms: ms(build_c_time),
    }
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
