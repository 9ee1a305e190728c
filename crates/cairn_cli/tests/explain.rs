//! `cairn explain` (tools.md §3.13): a function's guards by kind and line (emitted and proved),
//! its allocations, calls and loops, whether its optimized loop code is vectorized, and LLVM's
//! vectorizer's remarks about its loops.

use std::process::Command;

const PROGRAM: &str = "fn sum(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut s:u64 = 0;
  for i in 0..n { s = add_wrap(s, xs[i]); }
  return s;
}
fn pick(n:usize, xs:ro<u64>[n], k:usize) -> u64 {
  let b = Buf[u64](n);
  return xs[k] + u64(len(b));
}
fn twice(n:usize, xs:ro<u64>[n]) -> u64 = sum(n, xs) + sum(n, xs);
fn chase(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut k:u64 = 0;
  for i in 0..n { k = xs[usize(k % u64(n))]; }
  return k;
}
fn main() -> i32 { return 0; }
";

#[test]
fn the_cost_map_reads_guards_allocations_calls_loops_and_vectors() {
    let dir = std::env::temp_dir().join(format!("cairn-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    std::fs::write(dir.join("e.cairn"), PROGRAM).expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .args(["explain", "e.cairn", "--format", "json"])
        .output()
        .expect("run cairn");
    assert!(output.status.success(), "{output:?}");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a record");
    assert_eq!(record["protocol"], "cairn.explain/1");
    let functions = &record["functions"];
    // sum: its index proved by the loop, one loop, vectorized by LLVM.
    let sum = &functions["sum"];
    assert_eq!(sum["loops"], 1);
    assert_eq!(
        sum["guards"],
        serde_json::json!([
            {"kind": "bounds", "line": 3, "emitted": 0, "discharged": 1},
            {"kind": "view_entry", "line": 1, "emitted": 0, "discharged": 1}
        ])
    );
    assert_eq!(sum["vectorized"], true, "{sum}");
    // LLVM's vectorizer says so, at the loop's line; and why it could not vectorize `chase`, whose
    // every step depends on the one before.
    let said = |f: &serde_json::Value| -> Vec<String> {
        f["remarks"]
            .as_array()
            .map(|r| r.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    assert!(said(sum).iter().any(|r| r.starts_with("line 3: vectorized loop")), "{sum}");
    let chase = &functions["chase"];
    assert_eq!(chase["vectorized"], false, "{chase}");
    assert!(said(chase).iter().any(|r| r.starts_with("line 13: loop not vectorized")), "{chase}");
    // pick: an allocation guarded where it is made, an index and a sum guarded where written.
    let pick = &functions["pick"];
    assert_eq!(pick["allocations"], 1);
    let emitted: Vec<(String, u64)> = pick["guards"]
        .as_array()
        .expect("guards")
        .iter()
        .filter(|g| g["emitted"].as_u64() > Some(0))
        .map(|g| (g["kind"].as_str().unwrap_or("").to_string(), g["line"].as_u64().unwrap_or(0)))
        .collect();
    assert_eq!(emitted, [("allocation".to_string(), 7), ("bounds".to_string(), 8), ("overflow".to_string(), 8)]);
    // twice: two calls of sum.
    assert_eq!(functions["twice"]["calls"], serde_json::json!([{"callee": "cairn.sum", "count": 2}]));
    // --symbol keeps the map to the functions named.
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .current_dir(&dir)
        .args(["explain", "e.cairn", "--symbol", "pick", "--format", "json"])
        .output()
        .expect("run cairn");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a record");
    let names: Vec<&String> = record["functions"].as_object().expect("functions").keys().collect();
    assert_eq!(names, ["pick"]);
    std::fs::remove_dir_all(&dir).ok();
}
