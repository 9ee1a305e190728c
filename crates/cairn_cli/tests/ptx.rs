//! `cairn emit --ptx` (language §36, §41; issue 21): the device lanes of every device run test
//! compile to PTX for their target, and NVIDIA's `ptxas` assembles each module — a PTX that
//! `ptxas` refuses is a failed test. `ptxas` comes from PyPI's `nvidia-cuda-nvcc-cu12`, which the
//! set-up installs into `.venv` (tests/python/requirements.txt); one on PATH is used otherwise.
//! No GPU is needed: the PTX is assembled, never run.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `ptxas`: the set-up's, else one on PATH. Its absence fails the tests that need it.
fn ptxas() -> PathBuf {
    let lib = repo().join(".venv/lib");
    if let Ok(entries) = std::fs::read_dir(&lib) {
        for entry in entries.flatten() {
            let candidate = entry.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    if let Ok(path) = std::env::var("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("ptxas").is_file() {
                return dir.join("ptxas");
            }
        }
    }
    panic!("no ptxas: run scripts/setup.sh, which installs nvidia-cuda-nvcc-cu12 into .venv");
}

fn emit_ptx(file: &Path, target: Option<&str>) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("emit").arg(file).arg("--ptx").args(["--format", "json"]).env("NO_COLOR", "1");
    if let Some(target) = target {
        command.args(["--device-target", target]);
    }
    let output = command.output().expect("run cairn");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

/// Assembles `ptx` for `arch` with `ptxas`: its verdict and its messages.
fn assemble(ptx: &str, arch: &str, tag: &str) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("cairn-ptx-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let source = dir.join("module.ptx");
    std::fs::write(&source, ptx).expect("write the PTX");
    let output = Command::new(ptxas())
        .arg(format!("-arch={arch}"))
        .arg("-o")
        .arg(dir.join("module.cubin"))
        .arg(&source)
        .output()
        .expect("run ptxas");
    let _ = std::fs::remove_dir_all(&dir);
    (output.status.success(), String::from_utf8_lossy(&output.stderr).to_string())
}

/// The device run tests: each with the target its `// flags:` header names.
fn device_programs() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/run"))
        .expect("tests/run")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cairn"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        let flags: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with("//"))
            .filter_map(|l| l.strip_prefix("// flags:"))
            .flat_map(str::split_whitespace)
            .collect();
        if let Some(i) = flags.iter().position(|f| *f == "--device-target")
            && flags.contains(&"--emulate")
        {
            out.push((file, flags.get(i + 1).expect("a target after --device-target").to_string()));
        }
    }
    out
}

#[test]
fn every_device_run_test_compiles_to_ptx_that_ptxas_assembles() {
    let programs = device_programs();
    assert!(programs.len() >= 2, "the device run tests are found: {programs:?}");
    let mut problems = Vec::new();
    for (file, target) in &programs {
        let (status, ptx, stderr) = emit_ptx(file, Some(target));
        if status != 0 {
            problems.push(format!("{}: emit --ptx exited {status}: {ptx}{stderr}", file.display()));
            continue;
        }
        if !ptx.lines().any(|l| l.trim_start().starts_with(".visible .entry") || l.trim_start().starts_with(".entry")) {
            problems.push(format!("{}: no kernel in the PTX", file.display()));
        }
        let (assembled, messages) = assemble(&ptx, target, "run");
        if !assembled {
            problems.push(format!("{}: ptxas refused the PTX for {target}:\n{messages}", file.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_region_is_a_kernel_over_its_thread_index() {
    let dir = std::env::temp_dir().join(format!("cairn-ptx-saxpy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let file = dir.join("saxpy.cairn");
    std::fs::write(
        &file,
        "fn saxpy(n:usize, y:rw<f32>[n]@device, x:ro<f32>[n]@device, a:f32) {\n  parallel i in n { y[i] = a * x[i] + y[i]; }\n}\nfn main() -> i32 { return 0; }\n",
    )
    .expect("write");
    let (status, ptx, stderr) = emit_ptx(&file, Some("sm_90a"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status, 0, "{ptx}{stderr}");
    assert!(ptx.contains(".target sm_90a"), "{ptx}");
    let entry = ptx.lines().find(|l| l.contains(".entry")).unwrap_or_else(|| panic!("no entry in:\n{ptx}"));
    assert!(entry.contains("saxpy_lane"), "the kernel is named after its region: {entry}");
    for register in ["%ctaid.x", "%ntid.x", "%tid.x"] {
        assert!(ptx.contains(register), "the thread index reads {register}:\n{ptx}");
    }
    assert!(ptx.contains("fma.rn.f32") || ptx.contains("mul.rn.f32"), "the lane's arithmetic is there:\n{ptx}");
    let (assembled, messages) = assemble(&ptx, "sm_90a", "saxpy");
    assert!(assembled, "{messages}");
    // ptxas judges: the same module is refused for an architecture below its `.target`.
    let (assembled, _) = assemble(&ptx, "sm_75", "saxpy-low");
    assert!(!assembled, "ptxas refuses PTX for sm_90a when asked for sm_75");
}

#[test]
fn ptx_needs_a_target_llvm_can_compile() {
    let file = repo().join("tests/run/970-device-emulated.cairn");
    let (status, record, _) = emit_ptx(&file, None);
    assert_eq!(status, 1, "{record}");
    assert!(record.contains("\"code\":\"E-TARGET\""), "{record}");
    let (status, record, _) = emit_ptx(&file, Some("sm_120"));
    assert_eq!(status, 1, "{record}");
    assert!(record.contains("\"code\":\"E-TARGET-TOOLKIT\""), "{record}");
    let (status, record, _) = emit_ptx(&file, Some("sm_80a"));
    assert_eq!(status, 1, "{record}");
    assert!(record.contains("\"code\":\"E-TARGET\""), "{record}");
}
