//! Programs over the standard library (language §30) beside C twins, timed alternately in one
//! run: word frequency over a generated text on standard input (std.io + std.text + std.map +
//! std.sort) against the same algorithm in C; reading standard input in 64 KiB blocks against
//! C's `read` loop; `std.sort.sort` (heapsort) and `radix_sort` of u64 keys against `qsort` and a
//! C radix sort, and the heapsort against the same heapsort in C (the algorithm's cost apart from
//! the compiler's). Every pair must print the same text. Sources are in `bench/std/`.
//!
//! `cargo build --release -p cairn_cli && cargo run --release -p cairn_bench --bin stdlib --
//! [--runs R] [--words-mb M] [--read-mb M] [--sort-n N]` (defaults 5, 50, 1024, 10^7).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use cairn_bench::{interleaved, ms};

fn main() {
    let mut runs = 5usize;
    let mut words_mb = 50usize;
    let mut read_mb = 1024usize;
    let mut sort_n = 10_000_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().and_then(|v| v.parse::<usize>().ok()).expect("a number");
        match arg.as_str() {
            "--runs" => runs = value(),
            "--words-mb" => words_mb = value(),
            "--read-mb" => read_mb = value(),
            "--sort-n" => sort_n = value(),
            other => panic!("unknown argument {other}"),
        }
    }
    let cairn = std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("cairn")));
    let Some(cairn) = cairn.filter(|b| b.exists()) else {
        eprintln!("no cairn binary next to this one: run `cargo build --release -p cairn_cli` first");
        std::process::exit(2);
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("std");
    let work = std::env::temp_dir().join(format!("cairn-stdlib-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("create the work directory");
    let fill = |name: &str, n: usize| {
        let text = std::fs::read_to_string(root.join(name)).expect("a bench source");
        let out = work.join(name);
        std::fs::write(&out, text.replace("@N@", &n.to_string())).expect("write a source");
        out
    };

    let words = work.join("words.txt");
    write_words(&words, words_mb * 1_000_000);
    let bytes = work.join("bytes.bin");
    write_bytes(&bytes, read_mb * 1_000_000);

    let mut rows = Vec::new();
    let wordfreq = build_cairn(&cairn, &fill("wordfreq.cairn", 0), &work);
    let wordfreq_c = build_c(&fill("wordfreq.c", 0), &[], &work.join("wordfreq-c"));
    rows.push(pair(&format!("word frequency, {words_mb} MB"), &wordfreq, &wordfreq_c, Some(&words), runs));
    let readall = build_cairn(&cairn, &fill("readall.cairn", 0), &work);
    let readall_c = build_c(&fill("readall.c", 0), &[], &work.join("readall-c"));
    rows.push(pair(&format!("read stdin, {read_mb} MB"), &readall, &readall_c, Some(&bytes), runs));
    let heap = build_cairn(&cairn, &fill("sort.cairn", sort_n), &work);
    let radix = build_cairn(&cairn, &fill("radix.cairn", sort_n), &work);
    let twin = fill("sort.c", sort_n);
    let qsort = build_c(&twin, &["-DSORT=1"], &work.join("qsort-c"));
    let radix_c = build_c(&twin, &["-DSORT=2"], &work.join("radix-c"));
    let heap_c = build_c(&twin, &["-DSORT=3"], &work.join("heapsort-c"));
    rows.push(pair(&format!("sort.sort vs qsort, {sort_n} u64"), &heap, &qsort, None, runs));
    rows.push(pair(&format!("sort.sort vs C heapsort, {sort_n} u64"), &heap, &heap_c, None, runs));
    rows.push(pair(&format!("radix_sort vs C radix, {sort_n} u64"), &radix, &radix_c, None, runs));
    let _ = std::fs::remove_dir_all(&work);

    println!("median of {runs} runs each, alternating; cairn/C < 1 means CAIRN is faster");
    println!("{:<40} {:>10} {:>10} {:>8}", "program", "cairn ms", "C ms", "cairn/C");
    for (name, ours, theirs) in rows {
        println!(
            "{name:<40} {:>10.1} {:>10.1} {:>7.2}x",
            ms(ours),
            ms(theirs),
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }
}

/// Times `ours` and `theirs` alternately (stdin from `input`), after checking they print the
/// same text.
fn pair(name: &str, ours: &Path, theirs: &Path, input: Option<&Path>, runs: usize) -> (String, Duration, Duration) {
    let a = run(ours, input);
    let b = run(theirs, input);
    assert_eq!(a, b, "{name}: CAIRN and C print different text");
    let mut x = || {
        run(ours, input);
    };
    let mut y = || {
        run(theirs, input);
    };
    let times = interleaved(runs, &mut [&mut x, &mut y]);
    (name.to_string(), times[0], times[1])
}

/// Runs an executable with `input` on standard input; it must exit 0. Returns its output.
fn run(exe: &Path, input: Option<&Path>) -> String {
    let stdin = match input {
        Some(path) => Stdio::from(File::open(path).expect("open the input")),
        None => Stdio::null(),
    };
    let out = Command::new(exe).stdin(stdin).output().unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    assert!(out.status.success(), "{} failed: {}", exe.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn build_cairn(cairn: &Path, source: &Path, work: &Path) -> PathBuf {
    let built = Command::new(cairn)
        .arg("build")
        .arg(source)
        .args(["--format", "json", "--out"])
        .arg(work.join("builds"))
        .output()
        .expect("run cairn build");
    let record: serde_json::Value = serde_json::from_slice(&built.stdout).expect("a build record");
    match record.get("artifact").and_then(|a| a.as_str()) {
        Some(path) if built.status.success() => PathBuf::from(path),
        _ => panic!("{}: cairn build failed: {record}", source.display()),
    }
}

fn build_c(source: &Path, flags: &[&str], out: &Path) -> PathBuf {
    let compiled = Command::new("cc").arg("-O2").args(flags).arg("-o").arg(out).arg(source).output().expect("run cc");
    assert!(compiled.status.success(), "cc failed: {}", String::from_utf8_lossy(&compiled.stderr));
    out.to_path_buf()
}

/// A text of about `bytes` bytes: words of a fixed vocabulary (Zipf-like: a few words are
/// frequent, most are rare), with capitals, punctuation and line breaks, from a fixed seed.
fn write_words(path: &Path, bytes: usize) {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let vocabulary: Vec<String> = (0..50_000)
        .map(|k| {
            let mut x = (k as u64).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5851_F42D;
            let len = 2 + (x % 9) as usize;
            (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (b'a' + ((x >> 33) % 26) as u8) as char
                })
                .collect()
        })
        .collect();
    let mut text = String::with_capacity(bytes + 64);
    let mut line = 0;
    while text.len() < bytes {
        let r = next();
        // A square of a uniform draw: low ranks are much more frequent.
        let u = (r % 50_000) as f64 / 50_000.0;
        let word = &vocabulary[((u * u) * 50_000.0) as usize];
        if r % 17 == 0 {
            text.push_str(&word.to_uppercase());
        } else {
            text.push_str(word);
        }
        line += 1;
        text.push_str(match r % 23 {
            0 => ", ",
            1 => ". ",
            _ if line % 12 == 0 => "\n",
            _ => " ",
        });
    }
    std::fs::write(path, text).expect("write the words");
}

/// `bytes` bytes of a repeating pattern.
fn write_bytes(path: &Path, bytes: usize) {
    let block: Vec<u8> = (0..1_048_576u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    use std::io::Write;
    let mut file = std::io::BufWriter::new(File::create(path).expect("create the input"));
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len());
        file.write_all(&block[..n]).expect("write the input");
        left -= n;
    }
}
