//! A plan never changes a result, a row or a guard (language §26): each parallel run test is
//! built and run without plans and again with a plan for every function that has a region
//! (odd grains, capped lanes, `fuse` where regions may fuse), and the checker's receipt of every
//! function (its row, its guard sites, the guards proved) and the program's output must be the
//! same. With `--keep-guards` a fusing plan fuses nothing and the output is still the same.

use std::path::Path;
use std::process::Command;

/// `cairn run` of `source` (written to `dir/name`): the run record and the receipt's functions.
fn run(dir: &Path, name: &str, source: &str, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let path = dir.join(name);
    std::fs::write(&path, source).expect("write the program");
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("run")
        .arg(&path)
        .args(["--format", "json", "--out"])
        .arg(dir.join("out"))
        .args(extra)
        .env("CAIRN_LANES", "3")
        .output()
        .expect("run cairn");
    let record: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{name}: no record: {output:?}"));
    assert_eq!(record["status"], "program-exited", "{name}: {record}");
    let receipt = Path::new(record["build_directory"].as_str().expect("a build directory")).join("receipt.json");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(receipt).expect("a receipt")).expect("receipt JSON");
    (record, receipt["frontend"]["functions"].clone())
}

fn compare(dir: &Path, name: &str, base: &str, plans: &str, extra: &[&str]) {
    let (plain, plain_functions) = run(dir, &format!("plain-{name}"), base, extra);
    let planned_source = format!("{base}\n{plans}\n");
    let (planned, planned_functions) = run(dir, &format!("planned-{name}"), &planned_source, extra);
    assert_eq!(planned["exit_code"], plain["exit_code"], "{name}: the ending");
    assert_eq!(planned["stdout"], plain["stdout"], "{name}: the output");
    assert_eq!(planned_functions, plain_functions, "{name}: the checker's records");
}

#[test]
fn plans_change_no_result_row_or_guard() {
    let dir = std::env::temp_dir().join(format!("cairn-plans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/run");
    let regions = std::fs::read_to_string(runs.join("950-parallel-regions.cairn")).expect("a run test");
    compare(
        &dir,
        "regions.cairn",
        &regions,
        "plan squares { grain 1; lanes 3; }\nplan block_max { grain 7; }\nplan rows { lanes 1; }\n\
         plan apply { grain 100; lanes 2; }\nplan every { grain 8191; }\nplan owned { grain 3; lanes 1024; }",
        &[],
    );
    let fusing = "fn saxpy(n:usize, a:f32, xs:ro<f32>[n], ys:rw<f32>[n], zs:rw<f32>[n]) {\n\
        \x20 parallel i in n { ys[i] = a * xs[i] + ys[i]; }\n\
        \x20 parallel i in n { zs[i] = ys[i] * 2.0 + xs[i]; }\n\
        \x20 parallel i in n { if zs[i] > 100.0 { ys[i] = zs[i] - ys[i]; } }\n}\n\
        fn main() -> i32 {\n\
        \x20 buffer xs:f32[100000] = zeroed;\n  buffer ys:f32[100000] = zeroed;\n  buffer zs:f32[100000] = zeroed;\n\
        \x20 for i in 0..100000 { xs[i] = f32(i % 100); ys[i] = f32(i % 7); }\n\
        \x20 saxpy(100000, 2.0, xs, ys, zs);\n\
        \x20 let mut s:f64 = 0.0;\n  for i in 0..100000 { s = s + f64(ys[i]) + f64(zs[i]); }\n\
        \x20 println(s, \" \", ys[99999], \" \", zs[99999]);\n  return 0;\n}\n";
    compare(&dir, "fusing.cairn", fusing, "plan saxpy { fuse 3; grain 5000; }", &[]);
    compare(&dir, "fusing-kept.cairn", fusing, "plan saxpy { fuse 2; }", &["--keep-guards"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fusing_plan_joins_the_regions_unless_guards_are_kept() {
    let dir = std::env::temp_dir().join(format!("cairn-fuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join("f.cairn");
    std::fs::write(
        &path,
        "fn two(n:usize, a:rw<f64>[n], b:rw<f64>[n]) {\n  parallel i in n { a[i] = 1.0; }\n  parallel i in n { b[i] = a[i] * 2.0; }\n}\nplan two { fuse 2; }\nfn main() -> i32 { return 0; }\n",
    )
    .expect("write");
    let emit = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["emit", "--mir"])
            .arg(&path)
            .args(extra)
            .output()
            .expect("run cairn emit");
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    let fused = emit(&[]);
    assert_eq!(fused.matches("\n    parallel ").count(), 1, "one traversal:\n{fused}");
    assert!(fused.contains("two$fused0"), "{fused}");
    let kept = emit(&["--keep-guards"]);
    assert_eq!(kept.matches("\n    parallel ").count(), 2, "--keep-guards never fuses:\n{kept}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_chain_local_array_is_one_value_per_lane_and_never_allocated() {
    let dir = std::env::temp_dir().join(format!("cairn-slots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/run");
    let path = runs.join("958-fused-chain-local.cairn");
    let source = std::fs::read_to_string(&path).expect("a run test");
    let base: String = source.lines().filter(|l| !l.starts_with("plan ")).map(|l| format!("{l}\n")).collect();
    let plans: String = source.lines().filter(|l| l.starts_with("plan ")).map(|l| format!("{l}\n")).collect();
    assert_eq!(plans.lines().count(), 2, "the run test's plans");
    // The same result and records fused (slots) and not, and with every guard kept.
    compare(&dir, "slots.cairn", &base, &plans, &[]);
    compare(&dir, "slots-kept.cairn", &base, &plans, &["--keep-guards"]);
    // `chain`'s four arrays are slots; `keeps` reads its array after the chain and allocates it.
    let output =
        Command::new(env!("CARGO_BIN_EXE_cairn")).args(["emit", "--mir"]).arg(&path).output().expect("run cairn emit");
    let mir = String::from_utf8_lossy(&output.stdout).to_string();
    let function = |name: &str| {
        let start = mir.find(&format!("fn {name} ")).unwrap_or_else(|| panic!("no {name}:\n{mir}"));
        mir[start..].split("\n}\n").next().unwrap_or_default().to_string()
    };
    let chain = function("chain");
    assert_eq!(chain.matches(" = alloc ").count(), 0, "chain-local arrays are never allocated:\n{chain}");
    assert_eq!(chain.matches("\n    parallel ").count(), 1, "{chain}");
    let keeps = function("keeps");
    assert_eq!(keeps.matches(" = alloc ").count(), 1, "an array read after the chain stays:\n{keeps}");
    let fused = function("chain$fused0");
    assert_eq!(fused.matches(" = zeroed").count(), 4, "one slot per array, zeroed per index:\n{fused}");
    let kept = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["emit", "--mir", "--keep-guards"])
        .arg(&path)
        .output()
        .expect("emit");
    let kept = String::from_utf8_lossy(&kept.stdout).to_string();
    assert_eq!(
        kept.matches(" = alloc f64[_0]").count(),
        3,
        "--keep-guards fuses nothing and allocates every array:\n{kept}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
