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
            .and_then(|c| c["measured_objective_ns"].as_f64())
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
    // A function without a region or implementation has nothing to tune; a template is not tuned.
    let (record, code) = cairn(&dir, &["tune", "k.cairn", "--symbol", "plain", "--format", "json"]);
    assert_eq!(code, 2, "{record}");
    std::fs::write(dir.join("t.cairn"), "fn fill[K:nat](n:usize, out:rw<u64>[n]) {\n  parallel i in n { out[i] = u64(K); }\n}\nfn main() -> i32 { return 0; }\nfamily fills = fill[1..3];\n").expect("write");
    let (record, code) = cairn(&dir, &["tune", "t.cairn", "--symbol", "fill", "--format", "json"]);
    assert_eq!(code, 2, "{record}");
    assert!(record["message"].as_str().is_some_and(|m| m.contains("template")), "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

const SCALE: &str =
    "fn scale(n:usize, xs:ro<f64>[n], ys:rw<f64>[n]) effects(ffi_precondition, read:xs, write:ys, par:host, trap) {
  for i in 0..n { ys[i] = xs[i] * 2.0; }
}

fn scale_lanes(n:usize, xs:ro<f64>[n], ys:rw<f64>[n]) implements scale when n >= 4096 {
  parallel i in n { ys[i] = xs[i] * 2.0; }
}

fn main() -> i32 { return 0; }
";

#[test]
fn an_implementation_is_a_candidate_only_under_a_current_validation_in_the_history() {
    let dir = scratch("history");
    std::fs::write(dir.join("s.cairn"), SCALE).expect("write");
    let implementations = |record: &serde_json::Value| record["implementations"][0].clone();
    // No validation yet: listed, not a candidate, and why.
    let (record, code) = cairn(&dir, &["tune", "s.cairn", "--symbol", "scale", "--format", "json"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(implementations(&record)["candidate"], false, "{record}");
    // Validated into the project's history: a candidate, timed beside the reference.
    let (validated, code) = cairn(
        &dir,
        &["validate", "s.cairn", "--symbol", "scale_lanes", "--history", ".cairn/history", "--format", "json"],
    );
    assert_eq!(code, 0, "{validated}");
    assert!(validated["history"].as_str().is_some_and(|id| id.len() == 16), "{validated}");
    let (record, _) =
        cairn(&dir, &["tune", "s.cairn", "--symbol", "scale", "--at", "n=1e5", "--measure", "2", "--format", "json"]);
    assert_eq!(implementations(&record)["candidate"], true, "{record}");
    let plans: Vec<&str> =
        record["measured_order"].as_array().expect("order").iter().filter_map(|p| p.as_str()).collect();
    assert!(plans.contains(&"plan scale use scale_lanes;"), "{record}");
    // The search and its measurements are in the history.
    let history = std::fs::read_to_string(dir.join(".cairn/history/records.jsonl")).expect("history");
    let kinds: Vec<String> = history
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("a record")["kind"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert!(kinds.iter().any(|k| k == "validation") && kinds.iter().any(|k| k == "measurement"), "{kinds:?}");
    // The investigation shows them by candidate.
    let (investigation, code) = cairn(&dir, &["state", "s.cairn", "--symbol", "scale"]);
    assert_eq!(code, 0, "{investigation}");
    assert_eq!(investigation["protocol"], "cairn.investigation/1");
    let entry = &investigation["candidates"]["plan scale use scale_lanes;"];
    assert!(entry["validated"].as_array().is_some_and(|v| !v.is_empty()), "{investigation}");
    assert!(entry["measured"].as_array().is_some_and(|v| !v.is_empty()), "{investigation}");
    assert_eq!(investigation["searches"].as_array().map(Vec::len), Some(2));
    assert_eq!(investigation["stale"]["records"], 0);
    // The implementation changed since its validation: not a candidate any more.
    std::fs::write(
        dir.join("s.cairn"),
        SCALE.replace("ys[i] = xs[i] * 2.0; }\n}\n\nfn main", "ys[i] = 2.0 * xs[i]; }\n}\n\nfn main"),
    )
    .expect("write");
    let (record, _) = cairn(&dir, &["tune", "s.cairn", "--symbol", "scale", "--format", "json"]);
    assert_eq!(implementations(&record)["candidate"], false, "{record}");
    // Its validation and measurements no longer hold: counted, not shown.
    let (investigation, _) = cairn(&dir, &["state", "s.cairn", "--symbol", "scale"]);
    assert!(investigation["candidates"]["plan scale use scale_lanes;"].is_null(), "{investigation}");
    assert!(investigation["stale"]["by_part"]["source"].as_u64().is_some_and(|n| n >= 2), "{investigation}");
    std::fs::remove_dir_all(&dir).ok();
}

const HELPED: &str =
    "fn scale(n:usize, xs:ro<f64>[n], ys:rw<f64>[n]) effects(ffi_precondition, read:xs, write:ys, par:host, trap) {
  for i in 0..n { ys[i] = xs[i] * 2.0; }
}

fn twice(x:f64) -> f64 = x * 2.0;

fn scale_lanes(n:usize, xs:ro<f64>[n], ys:rw<f64>[n]) implements scale when n >= 4096 {
  parallel i in n { ys[i] = twice(xs[i]); }
}

fn main() -> i32 { return 0; }
";

#[test]
fn a_selected_function_is_tuned_from_its_reference_and_a_helper_change_stales_the_validation() {
    let dir = scratch("selected");
    std::fs::write(dir.join("s.cairn"), format!("{HELPED}\nplan scale use scale_lanes;\n")).expect("write");
    let implementations = |record: &serde_json::Value| record["implementations"][0].clone();
    let (validated, code) = cairn(
        &dir,
        &["validate", "s.cairn", "--symbol", "scale_lanes", "--history", ".cairn/history", "--format", "json"],
    );
    assert_eq!(code, 0, "{validated}");
    // The selection is the current plan; every candidate is made from the program without it.
    let (record, code) =
        cairn(&dir, &["tune", "s.cairn", "--symbol", "scale", "--at", "n=1e4", "--measure", "2", "--format", "json"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["current"], "plan scale use scale_lanes;", "{record}");
    assert_eq!(implementations(&record)["candidate"], true, "{record}");
    // The helper the implementation calls changes: its validation no longer holds.
    let edited = HELPED.replace("fn twice(x:f64) -> f64 = x * 2.0;", "fn twice(x:f64) -> f64 = x + x;");
    assert_ne!(edited, HELPED);
    std::fs::write(dir.join("s.cairn"), format!("{edited}\nplan scale use scale_lanes;\n")).expect("write");
    let (record, code) = cairn(&dir, &["tune", "s.cairn", "--symbol", "scale", "--format", "json"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(implementations(&record)["candidate"], false, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_rerun_starts_no_run_whose_measurement_is_kept_and_since_prints_what_moved() {
    let dir = scratch("kept");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let args = ["tune", "k.cairn", "--symbol", "saxpy", "--at", "n=1e4", "--measure", "2", "--format", "json"];
    let (first, code) = cairn(&dir, &args);
    assert_eq!(code, 0, "{first}");
    assert!(first["budget"]["runs"]["started"].as_u64().is_some_and(|n| n > 0), "{first}");
    assert_eq!(first["budget"]["runs"]["kept"], 0, "{first}");
    std::fs::write(dir.join("first.json"), first.to_string()).expect("write");
    // The same search again: every timed candidate's measurement is the history's.
    let (second, _) = cairn(&dir, &args);
    assert_eq!(second["budget"]["runs"]["started"], 0, "{second}");
    assert_eq!(second["measured_order"], first["measured_order"], "{second}");
    let kept: Vec<&serde_json::Value> =
        second["candidates"].as_array().expect("rows").iter().filter(|c| c["measurement"] == "kept").collect();
    assert!(!kept.is_empty(), "{second}");
    // Each kept candidate spared its blocks: a setup and a timed one per size, three samples.
    assert_eq!(second["budget"]["runs"]["kept"], 6 * kept.len() as u64, "{second}");
    // --since: nothing moved but where the times came from.
    let (delta, _) = cairn(&dir, &[&args[..], &["--since", "first.json"]].concat());
    assert_eq!(delta["candidates"], serde_json::json!([]), "{delta}");
    assert_eq!(delta["since"]["unchanged"], first["candidates"].as_array().map(Vec::len).unwrap_or(0), "{delta}");
    assert_eq!(delta["since"]["chosen_before"], first["chosen"]);
    // The function changes: its measurements are stale, and it is timed again.
    std::fs::write(dir.join("k.cairn"), KERNELS.replace("a * xs[i] + ys[i]", "ys[i] + a * xs[i]")).expect("write");
    let (third, _) = cairn(&dir, &args);
    assert!(third["budget"]["runs"]["started"].as_u64().is_some_and(|n| n > 0), "{third}");
    assert_eq!(third["budget"]["runs"]["kept"], 0, "{third}");
    let (record, code) = cairn(&dir, &[&args[..], &["--since", "k.cairn"]].concat());
    assert_eq!(code, 2, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shapes_weigh_sizes_and_the_objective_folds_them() {
    let dir = scratch("shapes");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    std::fs::write(dir.join("shapes.json"), r#"[{"at":"n=2e3","weight":3},{"at":"n=4e3"}]"#).expect("write");
    let (record, code) = cairn(
        &dir,
        &[
            "tune",
            "k.cairn",
            "--symbol",
            "saxpy",
            "--at",
            "n=1e3",
            "--shapes",
            "shapes.json",
            "--objective",
            "mean",
            "--no-history",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["sizes"], serde_json::json!([1000, 2000, 4000]));
    assert_eq!(record["weights"], serde_json::json!([1.0, 3.0, 1.0]));
    assert_eq!(record["objective"], "mean");
    for bad in [r#"[{"at":"n=1e3","weight":0}]"#, r#"[{"at":"n=x"}]"#, r#"{"at":"n=1e3"}"#, r#"[{"size":1}]"#] {
        std::fs::write(dir.join("bad.json"), bad).expect("write");
        let (record, code) =
            cairn(&dir, &["tune", "k.cairn", "--symbol", "saxpy", "--shapes", "bad.json", "--format", "json"]);
        assert_eq!(code, 2, "{bad}: {record}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_labels_every_line_and_keeps_its_reasoning_in_the_history() {
    let dir = scratch("compare");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let args = ["tune", "k.cairn", "--symbol", "two", "--at", "n=1e4", "--compare", "none", "--compare", "fuse 2"];
    let (record, code) = cairn(&dir, &[&args[..], &["--format", "json"]].concat());
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["compare"][0]["plan"], "(no plan for two)");
    assert_eq!(record["compare"][1]["plan"], "plan two { fuse 2; }");
    assert_eq!(record["compare"][0]["measurement"], "measured");
    let labels: Vec<&str> =
        record["lines"].as_array().expect("lines").iter().filter_map(|l| l["label"].as_str()).collect();
    for label in &labels {
        assert!(
            ["compiler observation", "runtime measurement", "hypothesis", "suggested experiment"].contains(label),
            "{label}"
        );
    }
    for needed in ["compiler observation", "runtime measurement", "hypothesis", "suggested experiment"] {
        assert!(labels.contains(&needed), "{needed}: {record}");
    }
    // The human answer is the labelled lines.
    let human = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .args([&args[..], &["--format", "human"]].concat())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("[runtime measurement] n=10000: A "), "{text}");
    assert!(text.contains("[hypothesis] "), "{text}");
    // Both sides were measured by then: a third comparison keeps both times.
    let (again, _) = cairn(&dir, &[&args[..], &["--format", "json"]].concat());
    assert_eq!(again["compare"][0]["measurement"], "kept", "{again}");
    assert_eq!(again["compare"][1]["measurement"], "kept", "{again}");
    let history = std::fs::read_to_string(dir.join(".cairn/history/records.jsonl")).expect("history");
    for kind in ["observation", "hypothesis", "experiment", "measurement"] {
        assert!(history.contains(&format!("\"kind\":\"{kind}\"")), "{kind}: {history}");
    }
    // The investigation lists the hypothesis and the experiment, not yet done.
    let (investigation, code) = cairn(&dir, &["state", "k.cairn", "--symbol", "two"]);
    assert_eq!(code, 0, "{investigation}");
    assert!(investigation["hypotheses"][0]["claim"].is_string(), "{investigation}");
    let experiment = &investigation["experiments"][0];
    assert_eq!(experiment["done"], false, "{investigation}");
    assert!(experiment["run"].as_str().is_some_and(|r| r.contains("--at n=100000")), "{investigation}");
    assert!(investigation["candidates"]["(no plan for two)"]["measured"].is_array(), "{investigation}");
    std::fs::write(dir.join("before.json"), investigation.to_string()).expect("write");
    // Running the suggested experiment's comparison makes it done; the delta shows what moved.
    let at = ["tune", "k.cairn", "--symbol", "two", "--at", "n=100000", "--compare", "none", "--compare", "fuse 2"];
    let (_, code) = cairn(&dir, &[&at[..], &["--format", "json"]].concat());
    assert_eq!(code, 0);
    let (delta, code) = cairn(&dir, &["state", "k.cairn", "--symbol", "two", "--since", "before.json"]);
    assert_eq!(code, 0, "{delta}");
    assert_eq!(delta["protocol"], "cairn.investigation-delta/1");
    assert_eq!(delta["since"], investigation["digest"]);
    assert_ne!(delta["digest"], investigation["digest"]);
    assert!(delta["candidates"]["(no plan for two)"].is_object(), "{delta}");
    let done = delta["experiments"].as_array().expect("experiments moved").iter().any(|e| e["done"] == true);
    assert!(done, "{delta}");
    let (same, _) = cairn(&dir, &["state", "k.cairn", "--symbol", "two"]);
    std::fs::write(dir.join("now.json"), same.to_string()).expect("write");
    let (none, _) = cairn(&dir, &["state", "k.cairn", "--symbol", "two", "--since", "now.json"]);
    assert_eq!(none["candidates"], serde_json::json!({}), "{none}");
    assert_eq!(none["since"], none["digest"]);
    let (record, code) = cairn(&dir, &["state", "k.cairn", "--symbol", "two", "--since", "k.cairn"]);
    assert_eq!(code, 2, "{record}");
    // A side that is no plan, a missing side, an implementation that is none.
    for (a, b) in [("block 4", "none"), ("use nothing", "none"), ("lanes 0", "none")] {
        let (record, code) =
            cairn(&dir, &["tune", "k.cairn", "--symbol", "two", "--compare", a, "--compare", b, "--format", "json"]);
        assert_eq!(code, 2, "{a}: {record}");
    }
    let (record, code) = cairn(&dir, &["tune", "k.cairn", "--symbol", "two", "--compare", "none", "--format", "json"]);
    assert_eq!(code, 2, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--artifacts` keeps the files behind each line — each side's program, what its emitted code
/// read, every timing sample — and names them on the lines they support; without it, lines name
/// no file and nothing is kept.
#[test]
fn compare_artifacts_name_the_files_behind_each_line() {
    let dir = scratch("artifacts");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let args = ["tune", "k.cairn", "--symbol", "two", "--at", "n=1e4", "--compare", "none", "--compare", "fuse 2"];
    let (plain, code) = cairn(&dir, &[&args[..], &["--no-history", "--format", "json"]].concat());
    assert_eq!(code, 0, "{plain}");
    assert!(plain["lines"].as_array().expect("lines").iter().all(|l| l.get("artifacts").is_none()), "{plain}");
    assert!(!dir.join(".cairn/artifacts").exists());
    let (record, code) = cairn(&dir, &[&args[..], &["--no-history", "--artifacts", "--format", "json"]].concat());
    assert_eq!(code, 0, "{record}");
    let lines = record["lines"].as_array().expect("lines");
    let files = |label: &str| -> Vec<String> {
        let line = lines.iter().find(|l| l["label"] == label).unwrap_or_else(|| panic!("{label}: {record}"));
        line["artifacts"].as_array().expect("artifacts").iter().filter_map(|p| p.as_str().map(String::from)).collect()
    };
    let observation = files("compiler observation");
    let measurement = files("runtime measurement");
    assert!(
        observation.iter().any(|p| p.ends_with("A.explain.json"))
            && observation.iter().any(|p| p.ends_with("B.explain.json")),
        "{observation:?}"
    );
    assert!(observation.iter().any(|p| p.ends_with("B/k.cairn")), "{observation:?}");
    assert!(!observation.iter().any(|p| p.ends_with("measurements.json")), "{observation:?}");
    assert!(measurement.iter().any(|p| p.ends_with("measurements.json")), "{measurement:?}");
    assert!(!measurement.iter().any(|p| p.ends_with(".explain.json")), "{measurement:?}");
    assert!(files("hypothesis").len() >= observation.len(), "the hypothesis rests on both");
    // The files are there, and say what the lines say.
    for path in observation.iter().chain(&measurement) {
        assert!(std::path::Path::new(path).is_file(), "{path}");
    }
    let b = std::fs::read_to_string(observation.iter().find(|p| p.ends_with("B/k.cairn")).expect("B")).expect("B");
    assert!(b.contains("plan two { fuse 2; }"), "{b}");
    let times: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(measurement.iter().find(|p| p.ends_with("measurements.json")).expect("times"))
            .expect("read"),
    )
    .expect("JSON");
    assert_eq!(times["sizes"], serde_json::json!([10000]));
    assert_eq!(times["A"]["median_ns"], record["compare"][0]["measured_ns"], "{times}");
    assert!(times["B"]["samples_ns"].as_array().is_some_and(|s| !s.is_empty()), "{times}");
    // A second run keeps its own directory.
    let (again, _) = cairn(&dir, &[&args[..], &["--no-history", "--artifacts", "--format", "json"]].concat());
    let first_dir = std::path::Path::new(&measurement[0]).parent().map(|p| p.to_path_buf());
    let again_path = again["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .find_map(|l| l["artifacts"][0].as_str().map(String::from))
        .expect("a path");
    assert!(first_dir.is_some_and(|d| !again_path.starts_with(d.to_str().unwrap_or_default())), "{again_path}");
    let alone = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .args(["tune", "k.cairn", "--symbol", "two", "--artifacts"])
        .output()
        .expect("run");
    assert_eq!(alone.status.code(), Some(2), "--artifacts needs --compare");
    assert!(String::from_utf8_lossy(&alone.stderr).contains("--compare"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_runs_budget_stops_timing_and_a_profile_prices() {
    let dir = scratch("budget");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let args = ["tune", "k.cairn", "--symbol", "saxpy", "--at", "n=1e4", "--measure", "3", "--no-history"];
    // One candidate's blocks (a setup and a timed block, three samples) fit; the rest wait.
    let (record, code) = cairn(&dir, &[&args[..], &["--budget-runs", "6", "--format", "json"]].concat());
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["budget"]["runs"]["started"], 6, "{record}");
    assert_eq!(record["budget"]["runs"]["allowed"], 6, "{record}");
    assert!(record["budget"]["undone"]["runs"].as_u64().is_some_and(|n| n >= 2), "{record}");
    assert_eq!(record["measured_order"].as_array().map(Vec::len), Some(1), "{record}");
    // A profile twice as dear predicts twice the time.
    let profile = |op: f64| {
        format!(
            "{{\"protocol\":\"cairn.profile/1\",\"source\":\"test\",\"ns_per_op\":{op},\"ns_per_access\":{op},\"effective_lanes\":1.0}}"
        )
    };
    std::fs::write(dir.join("one.json"), profile(1.0)).expect("write");
    std::fs::write(dir.join("two.json"), profile(2.0)).expect("write");
    let quick = ["tune", "k.cairn", "--symbol", "saxpy", "--no-history", "--format", "json", "--profile"];
    let (one, _) = cairn(&dir, &[&quick[..], &["one.json"]].concat());
    let (two, _) = cairn(&dir, &[&quick[..], &["two.json"]].concat());
    let first = |r: &serde_json::Value| r["candidates"][0]["predicted_ns"][0].as_f64().expect("a prediction");
    assert_eq!(first(&two), 2.0 * first(&one));
    let (record, code) = cairn(&dir, &[&quick[..], &["k.cairn"]].concat());
    assert_eq!(code, 2, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--profiler cachegrind` (protocol §18.4's `profile` kind): each side's call run once under
/// valgrind's cachegrind, apart from timing, the inputs' making subtracted; a
/// `[profiler observation]` line with both readings, `profile` records in the history, and the
/// investigation listing them under `profiled`. A per-element claim (`grain 1`) executes many
/// times the instructions of the default schedule, which the reading shows.
#[test]
fn a_profiler_reads_each_side_apart_from_timing_and_the_history_keeps_it() {
    let dir = scratch("profiler");
    std::fs::write(dir.join("k.cairn"), KERNELS).expect("write");
    let args = ["tune", "k.cairn", "--symbol", "saxpy", "--at", "n=1e5", "--compare", "none", "--compare", "grain 1"];
    let (record, code) = cairn(&dir, &[&args[..], &["--profiler", "cachegrind", "--format", "json"]].concat());
    assert_eq!(code, 0, "{record}");
    let instructions = |side: usize| record["compare"][side]["profiled"][0]["counts"]["Ir"].as_u64().unwrap_or(0);
    assert!(instructions(0) > 100_000, "a call over 10^5 elements executes at least that many: {record}");
    assert!(instructions(1) > 3 * instructions(0), "a claim per element costs instructions: {record}");
    let profiled: Vec<&str> = record["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter(|l| l["label"] == "profiler observation")
        .filter_map(|l| l["text"].as_str())
        .collect();
    assert_eq!(profiled.len(), 1, "{record}");
    assert!(profiled[0].starts_with("n=100000: cachegrind, one call: A ") && profiled[0].contains("B/A instructions"));
    let (state, code) = cairn(&dir, &["state", "k.cairn", "--symbol", "saxpy", "--format", "json"]);
    assert_eq!(code, 0, "{state}");
    for label in ["(no plan for saxpy)", "plan saxpy { grain 1; }"] {
        let readings = &state["candidates"][label]["profiled"];
        assert_eq!(readings[0]["tool"], "cachegrind", "{state}");
        assert_eq!(readings[0]["sizes"], serde_json::json!([100000]), "{state}");
    }
    // Without --compare there is nothing to profile: clap says so.
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .args(["tune", "k.cairn", "--symbol", "saxpy", "--profiler", "cachegrind"])
        .output()
        .expect("run cairn");
    assert_eq!(output.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// A function whose regions are device lanes: the space is the kernel's `block` and `per_lane`
/// (no host item, which the check would refuse), every candidate checks, and nothing is timed
/// (device plans are timed only on a GPU, which this build does not do).
#[test]
fn device_regions_are_searched_over_block_and_per_lane() {
    let dir = scratch("device");
    std::fs::write(
        dir.join("k.cairn"),
        "fn scale(n:usize, y:rw<f32>[n]@device, x:ro<f32>[n]@device, a:f32) {\n  parallel i in n { y[i] = a * x[i]; }\n}\nfn main() -> i32 { return 0; }\n",
    )
    .expect("write");
    let (record, status) = cairn(&dir, &["tune", "k.cairn", "--symbol", "scale", "--format", "json"]);
    assert_eq!(status, 0, "{record}");
    assert_eq!(record["space"]["configurations"], 16, "{record}");
    assert_eq!(record["space"]["legal"], 16, "{record}");
    let plans: Vec<&str> =
        record["candidates"].as_array().expect("candidates").iter().filter_map(|c| c["plan"].as_str()).collect();
    assert!(plans.contains(&"plan scale { block 128; per_lane 16; }"), "{plans:?}");
    assert!(plans.iter().all(|p| !p.contains("grain") && !p.contains("lanes ")), "{plans:?}");
    assert_eq!(record["chosen"], "(no plan for scale)", "{record}");
    let _ = std::fs::remove_dir_all(&dir);
}
