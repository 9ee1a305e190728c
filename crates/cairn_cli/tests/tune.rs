//! `cairn tune` (tools.md §3.15): the plan space of a function's regions, each candidate checked,
//! the first K and the current plan timed on this host by halving, the fastest measured chosen,
//! and `--write` leaving a program that checks.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-tune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn cairn(dir: &Path, args: &[&str]) -> (serde_json::Value, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn")).current_dir(dir).args(args).output().expect("run cairn");
    let first = String::from_utf8_lossy(&output.stdout).lines().next().unwrap_or_default().to_string();
    let record = serde_json::from_str(&first).unwrap_or_else(|_| panic!("no record: {output:?}"));
    (record, output.status.code().unwrap_or(-1))
}

const KERNELS: &str = "fn saxpy(n:usize, a:f64, xs:ro<f64>[n], ys:rw<f64>[n]) {
  parallel i in n { ys[i] = a * xs[i] + ys[i]; }
}

fn two(n:usize, a:rw<f64>[n], b:rw<f64>[n]) {
  parallel i in n { a[i] = a[i] + 1.0; }
  parallel i in n { b[i] = a[i] * 2.0; }
}

fn plain(x:u64) -> u64 = x + 1;

fn main() -> i32 { return 0; }
";

#[test]
fn the_fastest_measured_plan_is_chosen_from_checked_candidates() {
    let dir = scratch("measure");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let (record, code) =
        cairn(&dir, &["tune", "k.cairn", "--symbol", "saxpy", "--at", "n=2e5", "--measure", "3", "--format", "json"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["protocol"], "cairn.tune/2");
    let space = &record["space"];
    assert_eq!(space["checked"], space["configurations"], "{record}");
    assert_eq!(space["legal"], space["configurations"], "every plan of a host region is legal");
    // Three candidates and the current plan (the empty one, also the first) were timed.
    let order = record["measured_order"].as_array().expect("an order");
    assert!(order.len() >= 3, "{record}");
    assert_eq!(record["chosen_by"], "measurement");
    assert_eq!(record["chosen"], order[0]);
    assert_eq!(record["fastest"], order[0]);
    let time = |plan: &serde_json::Value| -> f64 {
        record["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .find(|c| &c["plan"] == plan)
            .and_then(|c| c["measured_geomean_ns"].as_f64())
            .expect("measured")
    };
    for plan in order {
        assert!(time(&order[0]) <= time(plan), "{record}");
    }
    // Two regions: fuse is in the space.
    let (record, _) = cairn(&dir, &["tune", "k.cairn", "--symbol", "two", "--format", "json"]);
    let plans: Vec<&str> =
        record["candidates"].as_array().expect("candidates").iter().filter_map(|c| c["plan"].as_str()).collect();
    assert!(plans.contains(&"plan two { fuse 2; }"), "{plans:?}");
    assert_eq!(record["chosen_by"].as_str().map(|s| s.starts_with("nothing measured")), Some(true));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn write_leaves_a_program_that_checks_with_the_chosen_plan() {
    let dir = scratch("write");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let (record, code) = cairn(
        &dir,
        &["tune", "k.cairn", "--symbol", "saxpy", "--at", "n=1e5", "--measure", "2", "--write", "--format", "json"],
    );
    assert_eq!(code, 0, "{record}");
    let text = std::fs::read_to_string(dir.join("k.cairn")).expect("read");
    if record["written"] == true {
        assert!(text.contains(record["chosen"].as_str().expect("a plan")), "{text}");
    } else {
        assert_eq!(record["chosen"], record["current"], "only the current plan is left unwritten: {record}");
        assert_eq!(text, KERNELS);
    }
    let (checked, code) = cairn(&dir, &["check", "k.cairn", "--format", "json"]);
    assert_eq!((code, &checked["status"]), (0, &serde_json::json!("typed")), "{checked}");
    // A function without a region has nothing to tune.
    let (record, code) = cairn(&dir, &["tune", "k.cairn", "--symbol", "plain", "--format", "json"]);
    assert_eq!(code, 2, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}
