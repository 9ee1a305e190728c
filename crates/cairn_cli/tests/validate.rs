//! `cairn validate` (tools.md §3.14): a correct implementation passes on generated cases that run
//! it; a subtly wrong one fails with the simplest failing input found, kept in the regressions
//! file (written identically by the next run, which tries it first); floats compare under the
//! policy's tolerance; what cannot be fed is `unknown`; what is not an implementation is
//! `rejected`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-validate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `cairn validate FILE --symbol G [extra]`: the record and the exit status.
fn validate(dir: &Path, file: &str, symbol: &str, extra: &[&str]) -> (serde_json::Value, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(dir)
        .args(["validate", file, "--symbol", symbol, "--format", "json"])
        .args(extra)
        .output()
        .expect("run cairn");
    let record = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("no record: {output:?}"));
    (record, output.status.code().unwrap_or(-1))
}

const TOTAL: &str = "fn total(n:usize, xs:ro<u32>[n], scale:u32) -> u64 {
  let mut h:u64 = 0;
  for i in 0..n { h = h + u64(xs[i]) * u64(scale); }
  return h;
}

fn total_pairs(n:usize, xs:ro<u32>[n], scale:u32) -> u64 implements total when n % 2 == 0 {
  let mut h:u64 = 0;
  for k in 0..n / 2 { h = h + (u64(xs[2 * k]) + u64(xs[2 * k + 1])) * u64(scale); }
  return h;
}

fn total_wrong(n:usize, xs:ro<u32>[n], scale:u32) -> u64 implements total when n % 2 == 0 {
  let mut h:u64 = 0;
  for k in 0..n / 2 {
    let a = u64(xs[2 * k]);
    let b = u64(xs[2 * k + 1]);
    h = h + (a + b) * u64(scale);
    if a > 4000000000 { h = h + 1; }
  }
  return h;
}

fn total_by[K:nat](n:usize, xs:ro<u32>[n], scale:u32) -> u64 implements total when n % K == 0 tune K in [4, 8] {
  let mut h:u64 = 0;
  for i in 0..n { h = h + u64(xs[i]) * u64(scale); }
  return h;
}

fn fill(n:usize, out:rw<u64>[n], v:u64) { for i in 0..n { out[i] = v; } }
fn fill_fast(n:usize, out:rw<u64>[n], v:u64) implements fill { for i in 0..n { out[n - 1 - i] = v; } }

fn main() -> i32 { return 0; }
";

#[test]
fn a_correct_implementation_passes_on_cases_that_run_it() {
    let dir = scratch("pass");
    std::fs::write(dir.join("p.cairn"), TOTAL).expect("write");
    let (record, code) = validate(&dir, "p.cairn", "total_pairs", &[]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["protocol"], "cairn.validation/1");
    assert_eq!(record["status"], "passed");
    assert_eq!(record["reference"], "total");
    assert_eq!(record["evidence"], "finite-tested");
    let cases = record["finite"]["cases"].as_u64().expect("cases");
    let ran = record["finite"]["implementation_ran"].as_u64().expect("ran");
    assert!(cases >= 20 && ran > 0 && ran < cases, "{record}");
    // The tile 2 from `n % 2` and `xs[2 * k]`: its neighbours are tried.
    assert_eq!(record["coverage"]["tiles"], serde_json::json!([2]));
    assert!(record["coverage"]["extents"].as_array().is_some_and(|e| e.contains(&serde_json::json!(3))), "{record}");
    assert!(!dir.join("regressions").exists(), "nothing failed, nothing kept");
    // Every case ran confined: each in a disposable workspace, under bubblewrap (docs/sandbox.md).
    let confinement = &record["confinement"];
    assert!(confinement["runs"].as_u64().is_some_and(|n| n >= cases), "{record}");
    assert_eq!(confinement["sandboxed"], confinement["runs"], "{record}");
    assert_eq!(confinement["changed_runs"], 0, "{record}");
    // An implementation writing an rw view in another order, without a condition: every case runs it.
    let (record, code) = validate(&dir, "p.cairn", "fill_fast", &[]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["finite"]["implementation_ran"], record["finite"]["cases"]);
    // One instance of a tuned implementation; its name alone lists them.
    let (record, code) = validate(&dir, "p.cairn", "total_by[8]", &[]);
    assert_eq!(code, 0, "{record}");
    let (record, code) = validate(&dir, "p.cairn", "total_by", &[]);
    assert_eq!((code, &record["status"]), (2, &serde_json::json!("unknown")));
    assert_eq!(record["instances"], serde_json::json!(["total_by[4]", "total_by[8]"]));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_subtly_wrong_implementation_fails_at_a_shrunk_input_kept_for_next_time() {
    let dir = scratch("fail");
    std::fs::write(dir.join("p.cairn"), TOTAL).expect("write");
    let (record, code) = validate(&dir, "p.cairn", "total_wrong", &[]);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["status"], "failed");
    let failed = &record["finite"]["failed"];
    // The simplest failing input: two elements at the maximum (the smallest extent the condition
    // admits and that shows the bug).
    assert_eq!(failed["inputs"]["extent"], 2, "{record}");
    assert_eq!(failed["inputs"]["pattern"], "maximum", "{record}");
    assert_eq!(failed["reference"]["ended"], "returned");
    assert_ne!(failed["reference"]["stdout"], failed["implementation"]["stdout"], "{record}");
    let kept = dir.join("regressions/total.json");
    let first = std::fs::read(&kept).expect("the failing case is kept");
    // The next run tries the kept case first and writes the file identically.
    let (again, code) = validate(&dir, "p.cairn", "total_wrong", &[]);
    assert_eq!(code, 1);
    assert_eq!(again["finite"]["kept_cases"], 1, "{again}");
    assert_eq!(std::fs::read(&kept).expect("kept"), first, "written identically");
    // A correct implementation of the same reference is not held to another's kept cases.
    let (record, code) = validate(&dir, "p.cairn", "total_pairs", &[]);
    assert_eq!((code, &record["finite"]["kept_cases"]), (0, &serde_json::json!(0)), "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn floats_agree_under_the_policy_s_tolerance() {
    let dir = scratch("float");
    let source = "fn sum(n:usize, xs:ro<f64>[n]) -> f64 {
  let mut s:f64 = 0.0;
  for i in 0..n { s = s + xs[i]; }
  return s;
}
fn sum_pairs(n:usize, xs:ro<f64>[n]) -> f64 implements sum when n % 2 == 0 {
  let mut a:f64 = 0.0;
  let mut b:f64 = 0.0;
  for k in 0..n / 2 { a = a + xs[2 * k]; b = b + xs[2 * k + 1]; }
  return a + b;
}
fn main() -> i32 { return 0; }
";
    std::fs::write(dir.join("f.cairn"), source).expect("write");
    // Reassociated sums differ in the last bits on random inputs: exact comparison fails...
    let (record, code) = validate(&dir, "f.cairn", "sum_pairs", &["--regressions", "exact.json"]);
    assert_eq!(code, 1, "{record}");
    // ...and a relative tolerance accepts them.
    std::fs::write(dir.join("policy.json"), r#"{"tolerance": {"relative": 1e-9}}"#).expect("write");
    let (record, code) =
        validate(&dir, "f.cairn", "sum_pairs", &["--policy", "policy.json", "--regressions", "tolerant.json"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["agreement"]["tolerance"]["relative"], 1e-9);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn what_cannot_be_fed_is_unknown_and_what_is_no_implementation_is_rejected() {
    let dir = scratch("edges");
    let source = "struct P { x:u64; }
fn get(p:P) -> u64 { return p.x; }
fn get_fast(p:P) -> u64 implements get { return p.x; }
fn main() -> i32 { return 0; }
";
    std::fs::write(dir.join("r.cairn"), source).expect("write");
    let (record, code) = validate(&dir, "r.cairn", "get_fast", &[]);
    assert_eq!((code, &record["status"]), (2, &serde_json::json!("unknown")), "{record}");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("cannot be fed")), "{record}");
    let (record, code) = validate(&dir, "r.cairn", "get", &[]);
    assert_eq!((code, &record["status"]), (1, &serde_json::json!("rejected")), "{record}");
    std::fs::write(dir.join("bad.json"), r#"{"budget": 10, "cases": 3}"#).expect("write");
    let (record, code) = validate(&dir, "r.cairn", "get_fast", &["--policy", "bad.json"]);
    assert_eq!((code, &record["status"]), (1, &serde_json::json!("rejected")), "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_implementation_that_never_ran_is_not_passed_and_conditions_feed_scalars() {
    let dir = scratch("never");
    let source = "fn f(a:u32) -> u32 { return a; }
fn g(a:u32) -> u32 implements f when a == 7 { return 0; }
fn h(n:usize, xs:ro<u8>[n]) -> usize { return n; }
fn h_big(n:usize, xs:ro<u8>[n]) -> usize implements h when n >= 2000000 { return n; }
fn main() -> i32 { return 0; }
";
    std::fs::write(dir.join("p.cairn"), source).expect("write");
    // `a == 7`: 7 is fed, so the wrong implementation runs and fails.
    let (record, code) = validate(&dir, "p.cairn", "g", &[]);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["finite"]["failed"]["inputs"]["scalars"]["a"], "7", "{record}");
    // Past 2^20 no case reaches the condition: nothing was compared, so nothing passed.
    let (record, code) = validate(&dir, "p.cairn", "h_big", &[]);
    assert_eq!((code, &record["status"]), (2, &serde_json::json!("unknown")), "{record}");
    assert_eq!(record["finite"]["implementation_ran"], 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn kept_cases_that_no_longer_fit_are_left_out_and_the_file_pins_the_policy() {
    let dir = scratch("kept");
    std::fs::write(dir.join("p.cairn"), TOTAL).expect("write");
    let (_, code) = validate(&dir, "p.cairn", "total_wrong", &[]);
    assert_eq!(code, 1);
    // A case planted past 2^20, and one whose scalar is not a u32: left out, never a crash.
    let path = dir.join("regressions/total.json");
    let mut file: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).expect("kept")).expect("json");
    let case = file["cases"][0].clone();
    let mut huge = case.clone();
    huge["case"]["extent"] = serde_json::json!(u64::MAX);
    let mut bad = case.clone();
    bad["case"]["scalars"]["scale"] = serde_json::json!("7)); assert(false");
    file["cases"].as_array_mut().expect("cases").extend([huge, bad]);
    std::fs::write(&path, serde_json::to_string_pretty(&file).expect("json")).expect("write");
    let (record, code) = validate(&dir, "p.cairn", "total_wrong", &[]);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["coverage"]["kept"], 1, "{record}");
    assert_eq!(record["coverage"]["kept_skipped"], 2, "{record}");
    // The file pins its policy: another one given is refused; a policy is an object.
    std::fs::write(dir.join("other.json"), r#"{"budget": 40}"#).expect("write");
    let (record, code) = validate(&dir, "p.cairn", "total_wrong", &["--policy", "other.json"]);
    assert_eq!((code, &record["status"]), (1, &serde_json::json!("rejected")), "{record}");
    std::fs::write(dir.join("array.json"), r#"[{"absolute": 0.5, "relative": 0}]"#).expect("write");
    let (record, _) = validate(&dir, "p.cairn", "total_pairs", &["--policy", "array.json", "--regressions", "x.json"]);
    assert_eq!(record["status"], "rejected", "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn z3_finds_what_the_finite_cases_miss_and_its_counterexample_is_replayed_natively() {
    let dir = scratch("smt");
    let source = "fn clip(v:i32, lo:i32, hi:i32) -> i32 {
  if v < lo { return lo; }
  if v > hi { return hi; }
  return v;
}
fn clip_fast(v:i32, lo:i32, hi:i32) -> i32 implements clip when lo <= hi { return max(lo, min(v, hi)); }
fn clip_subtle(v:i32, lo:i32, hi:i32) -> i32 implements clip when lo <= hi {
  if v == 12345 { return lo; }
  return max(lo, min(v, hi));
}
fn main() -> i32 { return 0; }
";
    std::fs::write(dir.join("c.cairn"), source).expect("write");
    let (record, code) = validate(&dir, "c.cairn", "clip_fast", &[]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["smt"]["status"], "equivalent", "{record}");
    assert_eq!(record["smt"]["where"], "when lo <= hi");
    // Only v = 12345 tells them apart: no generated case has it, Z3 finds it, the native run
    // confirms it, and it is kept like a finite failure.
    let (record, code) = validate(&dir, "c.cairn", "clip_subtle", &[]);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["smt"]["status"], "counterexample", "{record}");
    assert_eq!(record["smt"]["replay"]["status"], "failed", "{record}");
    assert_eq!(record["finite"]["failed"]["inputs"]["scalars"]["v"], "12345", "{record}");
    let kept = std::fs::read_to_string(dir.join("regressions/clip.json")).expect("kept");
    assert!(kept.contains("12345"), "{kept}");
    // A tuned instance is asked too, its condition read with the instance's natural: only
    // clip_by[1] takes the odd branch, and Z3 tells the instances apart.
    let tuned = source.replace(
        "fn main()",
        "fn clip_by[K:nat](v:i32, lo:i32, hi:i32) -> i32 implements clip when lo <= hi && K < 5000 tune K in [1, 1000] {
  if v == 777 && K == 1 { return lo; }
  return max(lo, min(v, hi));
}
fn main()",
    );
    std::fs::write(dir.join("t.cairn"), tuned).expect("write");
    let (record, code) = validate(&dir, "t.cairn", "clip_by[1000]", &[]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["smt"]["status"], "equivalent", "{record}");
    assert_eq!(record["smt"]["where"], "when lo <= hi && 1000 < 5000", "{record}");
    let (record, code) = validate(&dir, "t.cairn", "clip_by[1]", &[]);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["smt"]["status"], "counterexample", "{record}");
    assert_eq!(record["smt"]["replay"]["inputs"]["scalars"]["v"], "777", "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn extents_are_varied_apart_so_an_implementation_that_confuses_them_fails() {
    let dir = scratch("apart");
    let source = "fn dot(n:usize, m:usize, xs:ro<u64>[n], ys:ro<u64>[m]) -> u64 {
  let mut s:u64 = 0;
  for i in 0..min(n, m) { s = add_wrap(s, mul_wrap(xs[i], ys[i])); }
  return s;
}
fn dot_fast(n:usize, m:usize, xs:ro<u64>[n], ys:ro<u64>[m]) -> u64 implements dot {
  let mut s:u64 = 0;
  for i in 0..n { s = add_wrap(s, mul_wrap(xs[i], ys[i])); }
  return s;
}
fn dot_right(n:usize, m:usize, xs:ro<u64>[n], ys:ro<u64>[m]) -> u64 implements dot {
  let mut s:u64 = 0;
  for i in 0..min(m, n) { s = add_wrap(s, mul_wrap(ys[i], xs[i])); }
  return s;
}
fn main() -> i32 { return 0; }
";
    std::fs::write(dir.join("d.cairn"), source).expect("write");
    // With n and m always equal the two agree; a case with m below n tells them apart, and it is
    // shrunk to the smallest such case.
    let (record, code) = validate(&dir, "d.cairn", "dot_fast", &[]);
    assert_eq!(code, 1, "{record}");
    let failed = &record["finite"]["failed"]["inputs"];
    assert_eq!((failed["extent"].as_u64(), failed["extents"]["m"].as_u64()), (Some(1), Some(0)), "{record}");
    assert_eq!(record["finite"]["failed"]["implementation"]["ended"], "trapped", "{record}");
    // The kept case is fed again next time, extents and all.
    let kept = std::fs::read_to_string(dir.join("regressions/dot.json")).expect("kept");
    assert!(kept.contains("\"extents\""), "{kept}");
    let (record, code) = validate(&dir, "d.cairn", "dot_fast", &[]);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["coverage"]["kept"], 1, "{record}");
    let (record, code) = validate(&dir, "d.cairn", "dot_right", &[]);
    assert_eq!(code, 0, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Device code (tools.md §3.14, §4.2): views in device memory are filled on the host and
/// transferred in (a host implementation of a device reference runs the reference emulated too);
/// without `--emulate` nothing can be built here and the validation is `unknown`
/// with the build's reason; with it the same cases run on host threads and the evidence says so
/// (`finite-tested-emulated`, judged against the named target), a wrong implementation still
/// fails, and the history keeps the record under the emulated target — which `cairn tune` takes
/// only with `--accept-emulated`.
const DEVICE: &str = "fn triple(n:usize, xs:ro<u32>[n]@device, out:rw<u32>[n]@device) {
  parallel i in n { out[i] = mul_wrap(xs[i], 3); }
}
fn triple_sum(n:usize, xs:ro<u32>[n]@device, out:rw<u32>[n]@device) implements triple {
  parallel i in n { out[i] = add_wrap(add_wrap(xs[i], xs[i]), xs[i]); }
}
fn triple_wrong(n:usize, xs:ro<u32>[n]@device, out:rw<u32>[n]@device) implements triple {
  parallel i in n { if i == 5 { out[i] = xs[i]; } else { out[i] = mul_wrap(xs[i], 3); } }
}
fn total(n:usize, xs:ro<u32>[n]) -> u64 {
  buffer d:u32[n]@device = zeroed;
  transfer(d, xs);
  let s = reduce add_wrap parallel i in n yield u64(d[i]);
  return s;
}
fn total_host(n:usize, xs:ro<u32>[n]) -> u64 implements total {
  let mut s:u64 = 0;
  for i in 0..n { s = add_wrap(s, u64(xs[i])); }
  return s;
}
fn main() -> i32 { return 0; }
";

#[test]
fn device_code_validates_only_emulated_and_says_so() {
    let dir = scratch("device");
    std::fs::write(dir.join("g.cairn"), DEVICE).expect("write");
    let (record, code) = validate(&dir, "g.cairn", "triple_sum", &[]);
    assert_eq!((code, &record["status"]), (2, &serde_json::json!("unknown")), "{record}");
    let reason = record["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("device work") && reason.contains("E-TARGET"), "{record}");
    let (record, code) = validate(&dir, "g.cairn", "triple_sum", &["--device-target", "sm_90"]);
    assert_eq!(code, 2, "{record}");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("E-UNSUPPORTED") && r.contains("--emulate")));
    let emulated = ["--emulate", "--device-target", "sm_90", "--history", ".cairn/history"];
    for symbol in ["triple_sum", "total_host"] {
        let (record, code) = validate(&dir, "g.cairn", symbol, &emulated);
        assert_eq!(code, 0, "{record}");
        assert_eq!(record["evidence"], "finite-tested-emulated", "{record}");
        assert_eq!(record["emulation"]["judged_against"], "sm_90", "{record}");
        assert!(record["finite"]["implementation_ran"].as_u64().is_some_and(|n| n > 10), "{record}");
    }
    let (record, code) = validate(&dir, "g.cairn", "triple_wrong", &emulated);
    assert_eq!(code, 1, "{record}");
    assert_eq!(record["evidence"], "finite-tested-emulated", "{record}");
    let failed = &record["finite"]["failed"];
    assert!(failed["inputs"]["extent"].as_u64().is_some_and(|n| n > 5), "a case reaching i = 5: {record}");
    assert!(failed["implementation"].is_object(), "the implementation's own outcome differs: {record}");
    // The history keeps the validations under the emulated target.
    let history = std::fs::read_to_string(dir.join(".cairn/history/records.jsonl")).expect("the history");
    assert!(history.contains("\"host emulation of sm_90\""), "{history}");
    // Tune takes an emulated validation only when asked.
    let tune = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .current_dir(&dir)
            .args(["tune", "g.cairn", "--symbol", "total", "--format", "json"])
            .args(extra)
            .output()
            .expect("run cairn");
        let record: serde_json::Value =
            serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("no record: {output:?}"));
        let rows = record["implementations"].as_array().cloned().unwrap_or_default();
        rows.into_iter().find(|r| r["use"] == "total_host").unwrap_or_else(|| panic!("no row: {record}"))
    };
    let row = tune(&[]);
    assert_eq!(row["candidate"], false, "{row}");
    assert!(
        row["why"].as_str().is_some_and(|w| w.contains("finite-tested-emulated") && w.contains("--accept-emulated"))
    );
    let row = tune(&["--accept-emulated"]);
    assert_eq!(row["candidate"], true, "{row}");
    std::fs::remove_dir_all(&dir).ok();
}
