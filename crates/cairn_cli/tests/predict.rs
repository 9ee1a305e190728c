//! `cairn predict` (tools.md §3.16): predictions grow with the sizes as the work counts say, the
//! confidence follows what could be counted, a profile prices them, and `--calibrate` fits a
//! profile on this host and states its accuracy on held-out kernels (the accuracy itself is a
//! measurement, reported, never asserted: machines here are noisy).

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-predict-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn cairn(dir: &Path, args: &[&str]) -> (serde_json::Value, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn")).current_dir(dir).args(args).output().expect("run cairn");
    let record = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("no record: {output:?}"));
    (record, output.status.code().unwrap_or(-1))
}

const PROGRAM: &str = "fn sum(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut s:u64 = 0;
  for i in 0..n { s = add_wrap(s, xs[i]); }
  return s;
}

fn pairs(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut s:u64 = 0;
  for i in 0..n { for j in 0..n { s = add_wrap(s, xs[i] ^ xs[j]); } }
  return s;
}

fn halve(k:u64) -> u64 {
  let mut v:u64 = k;
  while v > 1 { v = v / 2; }
  return v;
}

fn fill(n:usize, xs:ro<u64>[n], out:rw<u64>[n]) {
  parallel i in n { out[i] = sum(n, xs); }
}

fn main() -> i32 { return 0; }
";

fn ns(record: &serde_json::Value, function: &str, index: usize) -> f64 {
    record["functions"][function]["predictions"][index]["ns"].as_f64().expect("a prediction")
}

#[test]
fn predictions_follow_the_work_counts() {
    let dir = scratch("counts");
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("write");
    let (record, code) = cairn(
        &dir,
        &[
            "predict", "p.cairn", "--symbol", "sum", "--symbol", "pairs", "--symbol", "halve", "--symbol", "fill",
            "--format", "json",
        ],
    );
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["protocol"], "cairn.predict/1");
    // One extent: 1e3, 1e5, 1e7; linear work grows 100× a step, quadratic 10,000×.
    assert_eq!(record["functions"]["sum"]["predictions"].as_array().map(Vec::len), Some(3));
    let ratio = ns(&record, "sum", 1) / ns(&record, "sum", 0);
    assert!((ratio - 100.0).abs() < 1.0, "{ratio}");
    let ratio = ns(&record, "pairs", 1) / ns(&record, "pairs", 0);
    assert!((ratio - 10_000.0).abs() < 100.0, "{ratio}");
    assert_eq!(record["functions"]["sum"]["predictions"][0]["confidence"], "high");
    assert_eq!(record["functions"]["halve"]["predictions"][0]["confidence"], "low");
    assert_eq!(record["functions"]["fill"]["predictions"][0]["confidence"], "medium");
    // A call inside a region counts the callee at the caller's size: n·n.
    let ratio = ns(&record, "fill", 1) / ns(&record, "fill", 0);
    assert!((ratio - 10_000.0).abs() < 100.0, "{ratio}");
    // A profile prices them: twice the prices, twice the time.
    let profile = |op: f64| {
        format!(
            "{{\"protocol\":\"cairn.profile/1\",\"source\":\"test\",\"ns_per_op\":{op},\"ns_per_access\":{op},\"effective_lanes\":1.0}}"
        )
    };
    std::fs::write(dir.join("one.json"), profile(1.0)).expect("write");
    std::fs::write(dir.join("two.json"), profile(2.0)).expect("write");
    let at = ["predict", "p.cairn", "--symbol", "sum", "--at", "n=5000", "--format", "json", "--profile"];
    let (one, _) = cairn(&dir, &[&at[..], &["one.json"]].concat());
    let (two, _) = cairn(&dir, &[&at[..], &["two.json"]].concat());
    assert_eq!(ns(&two, "sum", 0), 2.0 * ns(&one, "sum", 0));
    let (record, code) = cairn(&dir, &["predict", "p.cairn", "--symbol", "nothing", "--format", "json"]);
    assert_eq!(code, 2, "{record}");
    // A size that is no parameter, or no whole count, is refused rather than priced as unknown.
    for at in ["m=1000", "n=-5", "n=1e30", "n=2.5"] {
        let (record, code) = cairn(&dir, &["predict", "p.cairn", "--symbol", "sum", "--at", at, "--format", "json"]);
        assert_eq!(code, 2, "{at}: {record}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn against_an_earlier_version_each_function_is_a_ratio() {
    let dir = scratch("against");
    std::fs::write(dir.join("before.cairn"), PROGRAM).expect("write");
    // Now `pairs` does linear work instead of quadratic, and `halve` is gone.
    let now = PROGRAM
        .replace(
            "for i in 0..n { for j in 0..n { s = add_wrap(s, xs[i] ^ xs[j]); } }",
            "for i in 0..n { s = add_wrap(s, xs[i]); }",
        )
        .replace("fn halve(k:u64) -> u64 {\n  let mut v:u64 = k;\n  while v > 1 { v = v / 2; }\n  return v;\n}\n", "");
    assert!(!now.contains("halve") && !now.contains("xs[j]"));
    std::fs::write(dir.join("now.cairn"), &now).expect("write");
    let (record, code) = cairn(
        &dir,
        &[
            "predict",
            "now.cairn",
            "--symbol",
            "pairs",
            "--symbol",
            "sum",
            "--at",
            "n=1000",
            "--against",
            "before.cairn",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{record}");
    let ratio = |name: &str| record["against"]["functions"][name]["ratios"][0].as_f64().expect("a ratio");
    assert!(ratio("pairs") < 0.01, "{record}");
    assert_eq!(ratio("sum"), 1.0, "{record}");
    // A function the earlier version lacks says so; a refused earlier version is an error.
    let (record, _) = cairn(
        &dir,
        &["predict", "before.cairn", "--symbol", "halve", "--at", "k=10", "--against", "now.cairn", "--format", "json"],
    );
    assert!(record["against"]["functions"]["halve"]["note"].is_string(), "{record}");
    std::fs::write(dir.join("bad.cairn"), "fn f( {").expect("write");
    let (record, code) =
        cairn(&dir, &["predict", "now.cairn", "--symbol", "sum", "--against", "bad.cairn", "--format", "json"]);
    assert_eq!(code, 2, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn calibration_fits_a_profile_and_states_its_held_out_accuracy() {
    let dir = scratch("calibrate");
    let (record, code) = cairn(&dir, &["predict", "--calibrate", "--out", "profile.json", "--format", "json"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["protocol"], "cairn.calibration/1");
    assert!(record["profile"]["ns_per_op"].as_f64().is_some_and(|p| p > 0.0), "{record}");
    assert_eq!(record["held_out"]["points"], 9);
    let tau = record["held_out"]["kendall_tau"].as_f64().expect("tau");
    assert!((-1.0..=1.0).contains(&tau));
    let points = record["points"].as_array().expect("points");
    // Every held-out point carries its measurement (a time, never asserted: on a loaded machine a
    // setup-subtracted time can round to 0 — a suite run here met it once).
    assert!(points.iter().filter(|p| p["held_out"] == true).all(|p| p["measured_ns"].as_u64().is_some()));
    // The written profile is one `--profile` reads.
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("write");
    let (record, code) =
        cairn(&dir, &["predict", "p.cairn", "--symbol", "sum", "--profile", "profile.json", "--format", "json"]);
    assert_eq!(code, 0, "{record}");
    assert!(record["profile"]["source"].as_str().is_some_and(|s| s.starts_with("calibrated on")));
    std::fs::remove_dir_all(&dir).ok();
}

const DEVICE: &str = "fn saxpy(n:usize, a:f32, x:ro<f32>[n]@device, y:rw<f32>[n]@device) {
  parallel i in n { y[i] = a * x[i] + y[i]; }
}

fn round_trip(n:usize, xs:ro<f32>[n], out:rw<f32>[n]) {
  buffer dx:f32[n]@device = zeroed;
  buffer dy:f32[n]@device = zeroed;
  transfer(dx, xs);
  saxpy(n, 2.0, dx, dy);
  transfer(out, dy);
}

fn main() -> i32 { return 0; }
";

/// Device work (tools.md §3.16, §4.3) is priced on a device card — a roofline of the card's
/// published peaks, a launch latency per region run and the host link for transfers — always at
/// `low` confidence, with what bounds it; `--card all` prices every card; a card that cannot run
/// the target is refused; `--arch` is recorded and checked.
#[test]
fn device_work_is_priced_on_a_card_and_bounded_by_its_memory_or_its_link() {
    let dir = scratch("card");
    std::fs::write(dir.join("d.cairn"), DEVICE).expect("write");
    let predict = |extra: &[&str]| {
        cairn(
            &dir,
            &[&["predict", "d.cairn", "--symbol", "saxpy", "--symbol", "round_trip", "--format", "json"][..], extra]
                .concat(),
        )
    };
    let (record, code) = predict(&["--at", "n=1e8"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["cards"][0]["key"], "rtx-5070-ti", "the default card: {record}");
    assert_eq!(record["arch"], "baseline");
    let saxpy = &record["functions"]["saxpy"]["predictions"][0];
    assert_eq!(saxpy["confidence"], "low");
    // Three accesses of 4 bytes per element at 896 GB/s dominate 2 operations at 43.9 TFLOPS.
    assert_eq!(saxpy["bound"], "device memory", "{record}");
    let ns = saxpy["ns"].as_f64().expect("ns");
    assert!((ns - (3.0 * 4.0 * 1e8 / 896.0 + 5_000.0)).abs() / ns < 0.05, "{ns}");
    // Moving the data there and back costs more than the kernel: the link bounds the round trip.
    assert_eq!(record["functions"]["round_trip"]["predictions"][0]["bound"], "host link", "{record}");
    // Both transfers are counted at n elements (a local device buffer's count is its source's).
    let formula = record["functions"]["round_trip"]["formula"].to_string();
    assert!(formula.contains("n: 2 elements over the host link") && !formula.contains('?'), "{formula}");
    assert!(record["functions"]["saxpy"]["formula"].to_string().contains("device lanes"), "{record}");
    // Every card: the H200's bandwidth makes saxpy faster than on the default card.
    let (all, code) = predict(&["--at", "n=1e8", "--card", "all"]);
    assert_eq!(code, 0, "{all}");
    let on = |card: &str| all["functions"]["saxpy"]["by_card"][card][0]["ns"].as_f64().expect("priced");
    assert!(on("h200-sxm") < on("rtx-5070-ti") && on("l4") > on("rtx-5070-ti"), "{all}");
    assert!(all["cards"].as_array().is_some_and(|c| c.len() == 6));
    for card in all["cards"].as_array().expect("cards") {
        assert!(["published", "derived"].contains(&card["memory_gbs"]["kind"].as_str().unwrap_or("")), "{card}");
        assert_eq!(card["launch_us"]["kind"], "assumed");
    }
    let (refused, code) = predict(&["--card", "a100", "--device-target", "sm_90"]);
    assert_eq!(code, 2, "an A100 cannot run sm_90 code: {refused}");
    // Every card that runs the target.
    let (runs, code) = predict(&["--card", "all", "--device-target", "sm_90"]);
    assert_eq!(code, 0, "{runs}");
    let keys: Vec<&str> = runs["cards"].as_array().expect("cards").iter().filter_map(|c| c["key"].as_str()).collect();
    assert_eq!(keys, ["rtx-5070-ti", "h100-sxm5", "h200-sxm"]);
    let (_, code) = predict(&["--card", "v100"]);
    assert_eq!(code, 2);
    let (_, code) = predict(&["--card", "all", "--against", "d.cairn"]);
    assert_eq!(code, 2);
    let (record, code) = predict(&["--arch", "x86-64-v3"]);
    assert_eq!((code, &record["arch"]), (0, &serde_json::json!("x86-64-v3")));
    let (_, code) = predict(&["--arch", "armv9-a"]);
    assert_eq!(code, 2, "not this host's family");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--inspect` compiles the device code for the target and reads each kernel's registers:
/// PTX's virtual registers always, the assembler's (and spills) when `ptxas` is on PATH — here
/// the set-up's, from PyPI.
#[test]
fn inspect_reads_each_kernel_s_registers_and_runs_nothing() {
    let dir = scratch("inspect");
    std::fs::write(dir.join("d.cairn"), DEVICE).expect("write");
    let (record, code) = cairn(&dir, &["predict", "d.cairn", "--symbol", "saxpy", "--inspect", "--format", "json"]);
    assert_eq!(code, 2, "no device target named: {record:?}");
    // Without ptxas on PATH: PTX's virtual registers only.
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .env("PATH", "/usr/bin:/bin")
        .args(["predict", "d.cairn", "--symbol", "saxpy", "--inspect", "--device-target", "sm_90", "--format", "json"])
        .output()
        .expect("run cairn");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a record");
    assert_eq!(output.status.code(), Some(0), "{record}");
    let kernels = record["inspect"]["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 1, "one device region, one kernel: {record}");
    assert!(kernels[0]["virtual_registers"].as_object().is_some_and(|r| !r.is_empty()), "{record}");
    assert!(record["inspect"]["assembler"].as_str().is_some_and(|a| a.starts_with("not run")), "{record}");
    // With ptxas on PATH: the machine's registers.
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    let ptxas_dir = std::fs::read_dir(&venv)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("site-packages/nvidia/cuda_nvcc/bin"))
        .find(|dir| dir.join("ptxas").is_file())
        .expect("ptxas in .venv: run scripts/setup.sh");
    let path = format!("{}:{}", ptxas_dir.display(), std::env::var("PATH").unwrap_or_default());
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .env("PATH", path)
        .args(["predict", "d.cairn", "--symbol", "saxpy", "--inspect", "--device-target", "sm_90", "--format", "json"])
        .output()
        .expect("run cairn");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a record");
    assert!(record["inspect"]["assembler"].as_str().is_some_and(|a| a.starts_with("ptxas")), "{record}");
    let registers = record["inspect"]["kernels"][0]["registers"].as_u64().expect("registers");
    assert!((1..=255).contains(&registers), "{record}");
    std::fs::remove_dir_all(&dir).ok();
}
