//! `cairn build`, `run`, `test` and `emit` end to end (tools.md §3.2–§3.4, §3.18): the records,
//! the receipt, exit statuses, traps, and test processes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-native-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write");
        path.to_string_lossy().to_string()
    }

    fn out(&self) -> String {
        self.0.join("build").to_string_lossy().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn cairn(args: &[&str]) -> (i32, Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn")).args(args).env("NO_COLOR", "1").output().expect("run cairn");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let record = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (output.status.code().unwrap_or(-1), record, stdout)
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).to_string_lossy().to_string()
}

#[test]
fn a_build_writes_an_artifact_and_a_receipt() {
    let scratch = Scratch::new("build");
    let (status, record, _) =
        cairn(&["build", &repo("examples/hello.cairn"), "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 0, "{record}");
    assert_eq!(record["schema"], "cairn.build/1");
    assert_eq!(record["status"], "native-built");
    assert_eq!(record["kind"], "exe");
    let artifact = record["artifact"].as_str().expect("an artifact");
    let ran = Command::new(artifact).output().expect("run the artifact");
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hello from cairn\nthe first 12 odd numbers add up to 144\n");
    let receipt: Value =
        serde_json::from_str(&std::fs::read_to_string(record["receipt"].as_str().expect("a receipt")).expect("read"))
            .expect("json");
    let odd_sum = &receipt["frontend"]["functions"]["odd_sum"];
    assert_eq!(odd_sum["effects"], serde_json::json!(["trap"]));
    assert_eq!(odd_sum["syntactic_check_sites"]["overflow"], 3, "{odd_sum}");
    assert!(receipt["artifact_sha256"].as_str().is_some_and(|s| s.len() == 64));
    // Every build gets a fresh directory.
    let (_, again, _) = cairn(&["build", &repo("examples/hello.cairn"), "--format", "json", "--out", &scratch.out()]);
    assert_ne!(again["directory"], record["directory"]);
}

#[test]
fn run_reports_output_and_exit_status() {
    let scratch = Scratch::new("run");
    let file =
        scratch.write("p.cairn", "fn main() -> i32 {\n  println(\"out\");\n  eprintln(\"err\");\n  return 300;\n}\n");
    let (status, record, _) = cairn(&["run", &file, "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 1, "a non-zero exit makes `cairn run` exit 1");
    assert_eq!(record["status"], "program-exited");
    assert_eq!(record["exit_code"], 44, "300 as an 8-bit exit status");
    assert_eq!(record["stdout"], "out\n");
    assert_eq!(record["stderr"], "err\n");
    assert_eq!(record["memory_limit_mib"], 1024);
}

#[test]
fn a_trap_stops_the_program_at_the_guard_with_status_134() {
    let scratch = Scratch::new("trap");
    let file = scratch.write(
        "t.cairn",
        "fn at(n:usize, xs:ro<u32>[n], i:usize) -> u32 {\n  return xs[i];\n}\n\nfn main() -> i32 {\n  stack a:u32[4] = zeroed;\n  println(\"before\");\n  let v = at(a, 9);\n  println(\"after \", v);\n  return 0;\n}\n",
    );
    let (status, record, _) = cairn(&["run", &file, "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 1);
    assert_eq!(record["exit_code"], 134);
    assert_eq!(record["stdout"], "before\n", "nothing is printed after the trap");
    assert_eq!(record["stderr"], "bounds guard failed at t.cairn:2:10\n");
}

#[test]
fn a_refused_program_is_not_built() {
    let scratch = Scratch::new("refused");
    let file = scratch.write("p.cairn", "fn main() -> i32 {\n  let x:u8 = 300;\n  return 0;\n}\n");
    let (status, record, _) = cairn(&["run", &file, "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 1);
    assert_eq!(record["code"], "E-LITERAL-RANGE");
    let no_main = scratch.write("lib.cairn", "fn f() -> u32 {\n  return 1;\n}\n");
    let (status, record, _) = cairn(&["build", &no_main, "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 2);
    assert_eq!(record["code"], "E-PROJECT-OR-ENVIRONMENT");
    let (status, _, _) = cairn(&["run", &file, "--format", "json", "--memory-mib", "10"]);
    assert_eq!(status, 2, "a memory limit out of range is an environment error");
}

#[test]
fn tests_run_in_their_own_processes() {
    let scratch = Scratch::new("test");
    let file = scratch.write(
        "t.cairn",
        "fn add(a:u8, b:u8) -> u8 {\n  return a + b;\n}\n\ntest adds {\n  assert_eq(add(1, 2), 3);\n}\n\ntest wrong {\n  assert_eq(add(1, 2), 4, \"sum\");\n}\n\ntest overflows {\n  let x = add(200, 100);\n}\n",
    );
    let (status, record, _) = cairn(&["test", &file, "--format", "json"]);
    assert_eq!(status, 1);
    assert_eq!(record["status"], "tests-not-passed");
    let blocks = &record["blocks"];
    assert_eq!(blocks["status"], "test-blocks-failed");
    assert_eq!((blocks["passed"].as_u64(), blocks["failed"].as_u64()), (Some(1), Some(2)));
    let tests = blocks["tests"].as_array().expect("tests");
    let names: Vec<&str> = tests.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["adds", "wrong", "overflows"]);
    assert_eq!(tests[1]["reason"], "assertion failed at t.cairn:10: sum: left 3, right 4");
    assert_eq!(tests[2]["exit_code"], 134);
    assert_eq!(tests[2]["stderr"], "overflow guard failed at t.cairn:2:10\n");
    let (status, record, _) = cairn(&["test", &file, "--format", "json", "--test", "adds"]);
    assert_eq!(status, 0, "{record}");
    assert_eq!(record["blocks"]["tests"].as_array().map(Vec::len), Some(1));
    let none = scratch.write("none.cairn", "fn main() -> i32 {\n  return 0;\n}\n");
    let (status, _, _) = cairn(&["test", &none, "--format", "json"]);
    assert_eq!(status, 2, "no test at all is an environment error");
}

#[test]
fn emit_prints_mir_and_llvm_ir() {
    let (status, _, mir) = cairn(&["emit", &repo("examples/hello.cairn"), "--mir"]);
    assert_eq!(status, 0);
    assert!(mir.contains("fn odd_sum \"cairn.odd_sum\""), "{mir}");
    assert!(mir.contains("guard overflow"), "{mir}");
    let (status, _, ir) = cairn(&["emit", &repo("examples/hello.cairn")]);
    assert_eq!(status, 0);
    assert!(ir.contains("@main("), "{ir}");
    // Optimized, the whole computation folds away; before the pipeline the guards are there.
    let (status, _, raw) = cairn(&["emit", &repo("examples/hello.cairn"), "--unoptimized"]);
    assert_eq!(status, 0);
    assert!(raw.contains("with.overflow"), "the overflow guards use the checked intrinsics: {raw}");
    assert!(raw.contains("call void @cairn_rt_trap"), "{raw}");
}

#[test]
fn a_debug_build_carries_line_information_for_the_source() {
    let scratch = Scratch::new("debug");
    let file = scratch.write(
        "lines.cairn",
        "fn f(x:u32) -> u32 {\n  let y = x * 3;\n  return y + 1;\n}\n\nfn main() -> i32 {\n  println(f(4));\n  return 0;\n}\n",
    );
    let (status, record, _) = cairn(&["build", &file, "--debug", "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 0, "{record}");
    let bytes = std::fs::read(record["artifact"].as_str().expect("an artifact")).expect("read");
    let named = bytes.windows(b"lines.cairn".len()).any(|w| w == b"lines.cairn");
    assert!(named, "the debug line table names the .cairn file");
    let (_, plain, _) = cairn(&["build", &file, "--format", "json", "--out", &scratch.out()]);
    let bytes = std::fs::read(plain["artifact"].as_str().expect("an artifact")).expect("read");
    assert!(!bytes.windows(b"lines.cairn".len()).any(|w| w == b"lines.cairn"), "without --debug no line table");
}

#[test]
fn every_example_builds_and_runs_to_a_zero_exit() {
    let scratch = Scratch::new("examples");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut ran = 0;
    for entry in std::fs::read_dir(&root).expect("examples").flatten() {
        let path = entry.path();
        let program = path.extension().is_some_and(|e| e == "cairn") || path.join("cairn.toml").is_file();
        if !program {
            continue;
        }
        let (status, record, _) = cairn(&["run", &path.to_string_lossy(), "--format", "json", "--out", &scratch.out()]);
        assert_eq!(status, 0, "{}: {record}", path.display());
        assert_eq!(record["exit_code"], 0, "{}", path.display());
        ran += 1;
    }
    assert!(ran >= 4, "only {ran} examples found");
}

#[test]
fn a_project_s_foreign_functions_link_the_system_libraries_its_manifest_names() {
    // zlib's adler32_z(uLong adler, const Bytef *buf, z_size_t len): resolved only when `-lz`
    // is linked.
    let program = "extern \"adler32_z\" fn zlib_adler(adler:u64, bytes:ro<u8>[n], n:usize) -> u64 effects(pure);\n\nfn adler(n:usize, bytes:ro<u8>[n]) -> u64 {\n  unsafe { return zlib_adler(1, bytes, n); }\n}\n\nfn main() -> i32 {\n  println(adler(\"hello\"));\n  return 0;\n}\n";
    let with = Scratch::new("libraries");
    with.write("main.cairn", program);
    let manifest = with.write(
        "cairn.toml",
        "[project]\nname = \"adler\"\nsources = [\"main.cairn\"]\n\n[build]\nkind = \"exe\"\nlibraries = [\"z\"]\n",
    );
    let (status, record, stdout) = cairn(&["run", &manifest, "--format", "json", "--out", &with.out()]);
    assert_eq!(status, 0, "{stdout}");
    assert_eq!(record["stdout"], "103547413\n", "adler32 of \"hello\"");
    // Without the library the C symbol is not found, and the build says so.
    let without = Scratch::new("no-libraries");
    without.write("main.cairn", program);
    let manifest = without
        .write("cairn.toml", "[project]\nname = \"adler\"\nsources = [\"main.cairn\"]\n\n[build]\nkind = \"exe\"\n");
    let (status, _, stdout) = cairn(&["run", &manifest, "--format", "json", "--out", &without.out()]);
    assert_ne!(status, 0, "{stdout}");
    assert!(stdout.contains("adler32_z"), "the link failure names the symbol: {stdout}");
}

#[test]
fn the_receipt_counts_each_function_s_unsafe_blocks() {
    let scratch = Scratch::new("unsafe");
    let (status, record, _) =
        cairn(&["build", &repo("tests/run/941-foreign-calls.cairn"), "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 0, "{record}");
    let receipt: Value =
        serde_json::from_str(&std::fs::read_to_string(record["receipt"].as_str().expect("a receipt")).expect("read"))
            .expect("json");
    let functions = &receipt["frontend"]["functions"];
    assert_eq!(functions["parent"]["unsafe_blocks"], 1, "{functions}");
    assert_eq!(functions["main"]["unsafe_blocks"], 1, "{functions}");
    assert!(functions["c_abs"].get("unsafe_blocks").is_none(), "a function without one says nothing: {functions}");
    assert!(functions["c_abs"]["effects"].as_array().is_some_and(|e| e.iter().any(|x| x == "ffi:abs")));
}

#[test]
fn the_receipt_counts_discharged_and_hoisted_sites_once_each() {
    // `row` and `noisy_row` index `x[r * w + j]` in a loop versioned on a check before it: the
    // product, the sum and the index are hoisted (each site once, though the copy and the loop as
    // lowered both hold it), the view's entry check is discharged.
    let scratch = Scratch::new("hoisted");
    let (status, record, _) = cairn(&[
        "build",
        &repo("tests/run/997-versioned-loop-trap.cairn"),
        "--format",
        "json",
        "--out",
        &scratch.out(),
    ]);
    assert_eq!(status, 0, "{record}");
    let receipt: Value =
        serde_json::from_str(&std::fs::read_to_string(record["receipt"].as_str().expect("a receipt")).expect("read"))
            .expect("json");
    let functions = &receipt["frontend"]["functions"];
    for name in ["row", "noisy_row"] {
        assert_eq!(
            functions[name]["hoisted_check_sites"],
            serde_json::json!({"bounds": 1, "overflow": 2}),
            "{functions}"
        );
        assert_eq!(functions[name]["discharged_check_sites"], serde_json::json!({"view_entry": 1}), "{functions}");
    }
    assert_eq!(functions["main"]["discharged_check_sites"], serde_json::json!({"bounds": 1, "conversion": 1}));
    assert!(functions["main"].get("hoisted_check_sites").is_none(), "none hoisted says nothing: {functions}");
    // A nest: its three sites are left out of two copies (the outer loop's, and the inner loop's
    // own copy in the loop as lowered), and still count once each.
    let nest = Scratch::new("hoisted-nest");
    let path = nest.write(
        "main.cairn",
        "fn grid(n:usize, x:ro<u64>[n], rows:usize, w:usize) -> u64 {\n  let mut t:u64 = 0;\n  for r in 0..rows {\n    for c in 0..w {\n      t = add_wrap(t, x[r * w + c]);\n    }\n  }\n  return t;\n}\n\nfn main() -> i32 {\n  stack x:u64[12] = zeroed;\n  println(grid(12, x, 3, 4));\n  return 0;\n}\n",
    );
    let (status, record, _) = cairn(&["build", &path, "--format", "json", "--out", &nest.out()]);
    assert_eq!(status, 0, "{record}");
    let receipt: Value =
        serde_json::from_str(&std::fs::read_to_string(record["receipt"].as_str().expect("a receipt")).expect("read"))
            .expect("json");
    let grid = &receipt["frontend"]["functions"]["grid"];
    assert_eq!(grid["hoisted_check_sites"], serde_json::json!({"bounds": 1, "overflow": 2}), "{grid}");
}

#[test]
fn a_freestanding_target_or_foreign_sources_are_refused_by_a_build_not_built_for_the_host() {
    let program = "fn main() -> i32 {\n  println(1);\n  return 0;\n}\n";
    let manifest = |tail: &str| {
        format!("[project]\nname = \"board\"\nsources = [\"main.cairn\"]\n\n[build]\nkind = \"exe\"\n{tail}")
    };
    for (tag, tail, says) in [
        ("target", "target = \"aarch64-virt\"\n", "freestanding board"),
        ("foreign", "\n[foreign]\n\"vendor/fast.cu\" = [\"fast_scale\"]\n", "[foreign] sources (`vendor/fast.cu`)"),
    ] {
        let scratch = Scratch::new(tag);
        scratch.write("main.cairn", program);
        let path = scratch.write("cairn.toml", &manifest(tail));
        // The manifest is valid: a check answers.
        let (status, record, stdout) = cairn(&["check", &path, "--format", "json"]);
        assert_eq!((status, record["status"].as_str()), (0, Some("typed")), "{stdout}");
        // A build says what it does not build, and writes nothing.
        for command in ["build", "run"] {
            let (status, record, stdout) = cairn(&[command, &path, "--format", "json", "--out", &scratch.out()]);
            assert_eq!(status, 2, "{command}: {stdout}");
            assert_eq!(record["code"], "E-PROJECT-OR-ENVIRONMENT", "{stdout}");
            assert!(record["message"].as_str().is_some_and(|m| m.contains(says)), "{stdout}");
        }
        assert!(!Path::new(&scratch.out()).exists(), "nothing built");
    }
}
