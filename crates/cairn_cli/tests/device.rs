//! Device targets and emulation at the command line (tools.md §4, language §41; issue 21): how a
//! program's device work is judged against its target (`E-TARGET`, `E-TARGET-FEATURE`,
//! `E-IMPL-TARGET`, `E-EMULATE`), that a build of device work needs a target (and is for a GPU
//! without `--emulate`: `gpu_launch.rs`), and what the records of an emulated build and run say.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-device-{tag}-{}", std::process::id()));
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

fn cairn(args: &[&str]) -> (i32, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn")).args(args).env("NO_COLOR", "1").output().expect("run cairn");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_str(stdout.lines().next().unwrap_or("")).unwrap_or(Value::Null),
    )
}

const SAXPY: &str = "fn saxpy(n:usize, y:rw<f32>[n]@device, x:ro<f32>[n]@device) {
  parallel i in n { y[i] = 2.0 * x[i] + y[i]; }
}
fn main() -> i32 {
  buffer h:f32[8] = zeroed;
  for i in 0..8 { h[i] = f32(i); }
  buffer x:f32[8]@device = zeroed;
  buffer y:f32[8]@device = zeroed;
  transfer(x, h);
  saxpy(8, y, x);
  transfer(h, y);
  println(h[7]);
  return 0;
}
";

#[test]
fn device_work_is_judged_against_a_named_target() {
    let scratch = Scratch::new("targets");
    let file = scratch.write("saxpy.cairn", SAXPY);
    // `check` judges against a target only when one is named.
    let (status, record) = cairn(&["check", &file, "--format", "json"]);
    assert_eq!(status, 0, "{record}");
    assert!(record.get("device_target").is_none(), "{record}");
    let (status, record) = cairn(&["check", &file, "--device-target", "sm_90a", "--format", "json"]);
    assert_eq!(status, 0, "{record}");
    assert_eq!(record["device_target"]["name"], "sm_90a");
    assert_eq!(record["device_target"]["resolved"], "flag");
    assert_eq!(record["device_target"]["features_needed"], serde_json::json!(["device_lanes"]));
    assert!(record["device_target"]["features_provided"].as_array().is_some_and(|f| f.iter().any(|x| x == "wgmma")));
    // Device lanes need sm_75; spellings follow tools.md §4.1.
    let (status, record) = cairn(&["check", &file, "--device-target", "sm_70", "--format", "json"]);
    assert_eq!((status, record["code"].as_str()), (1, Some("E-TARGET-FEATURE")), "{record}");
    for bad in ["sm_80a", "sm_90f", "gfx90", "sm_"] {
        let (status, record) = cairn(&["check", &file, "--device-target", bad, "--format", "json"]);
        assert_eq!((status, record["code"].as_str()), (1, Some("E-TARGET")), "{bad}: {record}");
    }
    // A build of device work needs a target; without `--emulate` it is for a GPU, and a target
    // LLVM 19 cannot compile for is refused before anything is built.
    let (status, record) = cairn(&["build", &file, "--format", "json", "--out", &scratch.out()]);
    assert_eq!((status, record["code"].as_str()), (1, Some("E-TARGET")), "{record}");
    let args = ["build", &file, "--device-target", "sm_90", "--format", "json", "--out", &scratch.out()];
    let (status, record) = cairn(&args);
    assert_eq!(status, 0, "{record}");
    assert!(record["command"].as_str().is_some_and(|c| c.ends_with("+ nvptx --device-target sm_90")), "{record}");
    assert!(record.get("emulation").is_none(), "{record}");
    let args = ["build", &file, "--device-target", "sm_100", "--format", "json", "--out", &scratch.out()];
    let (status, record) = cairn(&args);
    assert_eq!((status, record["code"].as_str()), (1, Some("E-TARGET-TOOLKIT")), "{record}");
}

#[test]
fn an_emulated_run_says_what_it_is_evidence_of() {
    let scratch = Scratch::new("emulated");
    let file = scratch.write("saxpy.cairn", SAXPY);
    let args = ["run", &file, "--emulate", "--device-target", "sm_90", "--format", "json", "--out", &scratch.out()];
    let (status, record) = cairn(&args);
    assert_eq!(status, 0, "{record}");
    assert_eq!(record["stdout"], "14\n");
    assert_eq!(record["emulation"]["judged_against"], "sm_90");
    assert!(record["emulation"]["claim"].as_str().is_some_and(|c| c.contains("never about the device")), "{record}");
    let args = ["build", &file, "--emulate", "--device-target", "sm_90", "--format", "json", "--out", &scratch.out()];
    let (status, record) = cairn(&args);
    assert_eq!(status, 0, "{record}");
    assert!(record["command"].as_str().is_some_and(|c| c.ends_with("--emulate --device-target sm_90")), "{record}");
    let receipt: Value = serde_json::from_str(
        &std::fs::read_to_string(record["receipt"].as_str().expect("a receipt")).expect("read the receipt"),
    )
    .expect("json");
    assert_eq!(receipt["device_target"]["name"], "sm_90");
    assert_eq!(receipt["emulation"]["judged_against"], "sm_90");
    let effects = &receipt["frontend"]["functions"]["saxpy"]["effects"];
    assert!(effects.as_array().is_some_and(|e| e.iter().any(|x| x == "par:device")), "{effects}");
    // A program without device work ignores both flags.
    let plain = scratch.write("plain.cairn", "fn main() -> i32 { println(1); return 0; }\n");
    let (status, record) = cairn(&["run", &plain, "--emulate", "--format", "json", "--out", &scratch.out()]);
    assert_eq!(status, 0, "{record}");
    assert!(record.get("emulation").is_none(), "{record}");
}

/// A reference with device code, an implementation needing `FEATURE`, selected by a plan.
fn selected(feature: &str) -> String {
    format!(
        "fn scale(n:usize, y:rw<f32>[n]@device, x:ro<f32>[n]@device) {{ parallel i in n {{ y[i] = 2.0 * x[i]; }} }}
fn scale_fast(n:usize, y:rw<f32>[n]@device, x:ro<f32>[n]@device) implements scale needs({feature}) {{
  parallel i in n {{ y[i] = x[i] + x[i]; }}
}}
plan scale use scale_fast;
{}",
        &SAXPY[SAXPY.find("fn main").expect("main")..].replace("saxpy(8, y, x)", "scale(8, y, x)")
    )
}

#[test]
fn a_selected_implementation_is_held_to_the_target_and_to_emulation() {
    let scratch = Scratch::new("needs");
    let tma = scratch.write("tma.cairn", &selected("tma"));
    let out = scratch.out();
    let run = |file: &str, target: &str| {
        cairn(&["run", file, "--emulate", "--device-target", target, "--format", "json", "--out", &out])
    };
    let (status, record) = run(&tma, "sm_80");
    assert_eq!((status, record["code"].as_str()), (1, Some("E-IMPL-TARGET")), "{record}");
    // sm_90 has TMA, and host threads cannot stand in for it.
    let (status, record) = run(&tma, "sm_90");
    assert_eq!((status, record["code"].as_str()), (1, Some("E-EMULATE")), "{record}");
    let (status, record) = cairn(&["check", &tma, "--device-target", "sm_90", "--format", "json"]);
    assert_eq!(status, 0, "{record}");
    assert!(record["device_target"]["features_needed"].as_array().is_some_and(|f| f.iter().any(|x| x == "tma")));
    // A feature emulation models runs.
    let copies = scratch.write("cp.cairn", &selected("cp_async"));
    let (status, record) = run(&copies, "sm_90");
    assert_eq!(status, 0, "{record}");
    assert_eq!(record["stdout"], "14\n");
}

#[test]
fn vendored_cuda_is_not_emulated() {
    let scratch = Scratch::new("cuda");
    scratch.write("main.cairn", SAXPY);
    let manifest = scratch.write(
        "cairn.toml",
        "[project]\nname = \"vendored\"\nsources = [\"main.cairn\"]\n\n[foreign]\n\"vendor/fast.cu\" = [\"fast_scale\"]\n",
    );
    let args =
        ["build", &manifest, "--emulate", "--device-target", "sm_90", "--format", "json", "--out", &scratch.out()];
    let (status, record) = cairn(&args);
    assert_eq!((status, record["code"].as_str()), (1, Some("E-EMULATE")), "{record}");
    assert!(record["message"].as_str().is_some_and(|m| m.contains("vendor/fast.cu")), "{record}");
    assert!(!std::path::Path::new(&scratch.out()).exists(), "nothing built");
}
