//! A build of device work for a GPU (language §36–§38, issue 21): the program embeds its
//! kernels' PTX and drives the CUDA driver, loaded at run time. These machines have no GPU, so
//! the program runs here against a stand-in driver (`tests/fake_cuda/libcuda.c`, built into a
//! scratch directory and found through `LD_LIBRARY_PATH`) that implements the driver calls over
//! host memory, runs no kernel, and logs what it was asked: which kernels the module holds, the
//! allocations (zeroed, and all given back), the transfers, and each launch's grid, block, count
//! and environment (device views in it as device pointers). A device guard's failure is played
//! by raising the module's trap flag, and the program must then stop with that guard's message:
//! the same message an emulated run of the program stops with. What the kernels compute on a
//! device is left to the device runner of a machine with a GPU.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-gpu-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cairn ARGS --format json`: the exit status and the record.
fn cairn(args: &[&str]) -> (i32, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .args(["--format", "json"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run cairn");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_str(stdout.lines().next().unwrap_or("")).unwrap_or(Value::Null),
    )
}

/// The stand-in driver, compiled into `dir/libcuda.so.1`.
fn fake_driver(dir: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_cuda/libcuda.c");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(&source)
        .status()
        .expect("run cc");
    assert!(status.success(), "the stand-in driver did not compile");
}

/// Runs `program` with the stand-in driver in `driver` (none: no driver at all) and the extra
/// environment `env`: exit status, stdout, stderr.
fn run(program: &str, driver: Option<&Path>, env: &[(&str, String)]) -> (i32, String, String) {
    let mut command = Command::new(program);
    command.env_remove("LD_LIBRARY_PATH").env_remove("FAKE_CUDA_TRAP").env_remove("FAKE_CUDA_FAIL");
    if let Some(dir) = driver {
        command.env("LD_LIBRARY_PATH", dir);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run the program");
    // A trap ends the program with SIGABRT: the shell's 128 + 6.
    let status = output.status.code().or_else(|| output.status.signal().map(|s| 128 + s)).unwrap_or(-1);
    (status, String::from_utf8_lossy(&output.stdout).to_string(), String::from_utf8_lossy(&output.stderr).to_string())
}

/// A saxpy with a plan (128 threads a block, 4 indices a thread), and a shift over a unified
/// buffer whose last lane reads past the end: on a device its bounds guard fails.
const PROGRAM: &str = "fn saxpy(n:usize, out:rw<f32>[n]@device, x:ro<f32>[n]@device, y:ro<f32>[n]@device, a:f32) {
  parallel i in n { out[i] = a * x[i] + y[i]; }
}
plan saxpy { block 128; per_lane 4; }
fn shift(n:usize, out:rw<u32>[n]@device, xs:ro<u32>[n]@device, k:usize) {
  parallel i in n { out[i] = xs[i + k] + 1; }
}
fn main() -> i32 {
  let n:usize = 1000;
  buffer x:f32[n] = zeroed;
  buffer y:f32[n] = zeroed;
  buffer out:f32[n] = zeroed;
  for i in 0..n { x[i] = f32(i); y[i] = 1.0; }
  buffer dx:f32[n]@device = zeroed;
  buffer dy:f32[n]@device = zeroed;
  buffer dout:f32[n]@device = zeroed;
  transfer(dx, x);
  transfer(dy, y);
  saxpy(n, dout, dx, dy, 2.0);
  transfer(out, dout);
  println(\"saxpy \", out[999], \" \", out[0]);
  buffer u:u32[64]@unified = zeroed;
  for i in 0..64 { u[i] = u32(i); }
  buffer dv:u32[64]@device = zeroed;
  shift(64, dv, u, 1);
  return 0;
}
";

/// Builds `source` as `name` in `scratch` (for a GPU unless `emulate`): the artifact's path.
fn build(scratch: &Scratch, name: &str, source: &str, emulate: bool) -> String {
    let file = scratch.path(name);
    std::fs::write(&file, source).expect("write the program");
    let out = scratch.path(if emulate { "emulated" } else { "gpu" });
    let (file, out) = (file.to_string_lossy().to_string(), out.to_string_lossy().to_string());
    let mut args = vec!["build", file.as_str(), "--device-target", "sm_90", "--out", out.as_str()];
    if emulate {
        args.push("--emulate");
    }
    let (status, record) = cairn(&args);
    assert_eq!(status, 0, "{record}");
    let command = record["command"].as_str().unwrap_or_default();
    assert_eq!(command.ends_with("+ nvptx --device-target sm_90"), !emulate, "{record}");
    record["artifact"].as_str().expect("an artifact").to_string()
}

/// `cairn emit --ptx` of `file` for sm_90.
fn ptx(file: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("emit")
        .arg(file)
        .args(["--ptx", "--device-target", "sm_90"])
        .output()
        .expect("run cairn");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn lines_starting<'a>(log: &'a str, prefix: &str) -> Vec<&'a str> {
    log.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn a_gpu_build_drives_the_driver() {
    let scratch = Scratch::new("drive");
    fake_driver(&scratch.0);
    let program = build(&scratch, "prog.cairn", PROGRAM, false);
    let log = scratch.path("driver.log");
    let (status, stdout, stderr) =
        run(&program, Some(&scratch.0), &[("FAKE_CUDA_LOG", log.to_string_lossy().to_string())]);
    // The stand-in runs no kernel: `dout` comes back as the zeroes it was made with.
    assert_eq!((status, stdout.as_str(), stderr.as_str()), (0, "saxpy 0 0\n", ""));
    let log = std::fs::read_to_string(&log).expect("the driver's log");
    let first: Vec<&str> = log.lines().take(2).collect();
    assert_eq!(first[0], "init", "{log}");
    // One module: both regions' kernels, and the trap flag the host reads after each launch.
    let module: Vec<&str> = first[1].split(' ').collect();
    assert_eq!(module.len(), 4, "{log}");
    assert!(module[1].starts_with("saxpy_lane") && module[2].starts_with("shift_lane"), "{log}");
    assert_eq!(module[3], "flag=yes", "{log}");
    // Five buffers, each zeroed by the runtime (the stand-in fills new memory with 0xAB), the
    // unified one as managed memory; the trap flag is a word of mapped host memory.
    assert_eq!(lines_starting(&log, "alloc 4000").len(), 3, "{log}");
    assert_eq!(lines_starting(&log, "alloc-managed 256").len(), 1, "{log}");
    assert_eq!(lines_starting(&log, "alloc ").len(), 4, "{log}");
    assert_eq!(lines_starting(&log, "set 0 ").len(), 5, "{log}");
    assert_eq!(lines_starting(&log, "host-alloc 4").len(), 1, "{log}");
    // Every buffer goes back to the driver when its block ends.
    assert_eq!(lines_starting(&log, "free ").len(), 5, "{log}");
    assert!(lines_starting(&log, "free-unknown").is_empty(), "{log}");
    assert_eq!(log.lines().last(), Some("live 0"), "{log}");
    assert_eq!(lines_starting(&log, "copy h2d 4000").len(), 2, "{log}");
    assert_eq!(lines_starting(&log, "copy h2d").len(), 2, "the two transfers, nothing per launch: {log}");
    assert_eq!(lines_starting(&log, "copy d2h 4000").len(), 1, "{log}");
    // The plan shapes saxpy's launch: 1000 indices, 4 a thread, 128 threads a block: 2 blocks.
    // Its environment, the kernel's first parameter, holds the three device views (pointer and
    // length) and `a`: 56 bytes, no copy to device memory before the launch.
    let launches = lines_starting(&log, "launch ");
    assert_eq!(launches.len(), 2, "{log}");
    let saxpy: Vec<&str> = launches[0].split(' ').collect();
    assert!(saxpy[1].starts_with("saxpy_lane"), "{log}");
    assert_eq!(&saxpy[2..9], ["grid", "2", "block", "128", "count", "1000", "env"], "{log}");
    assert_eq!(saxpy[9..].iter().filter(|w| **w == "D").count(), 3, "{log}");
    assert_eq!(saxpy[9..].iter().filter(|w| **w == "1000").count(), 3, "{log}");
    let shift: Vec<&str> = launches[1].split(' ').collect();
    assert_eq!(&shift[2..9], ["grid", "1", "block", "256", "count", "64", "env"], "{log}");
    let mut words: Vec<&str> = shift[9..].to_vec();
    words.sort();
    assert_eq!(words, ["1", "64", "64", "D", "D"], "the two views and k: {log}");
    // The receipt accounts for the device code: the PTX beside the artifact, each kernel with its
    // region and launch shape.
    let receipt = Path::new(&program).with_file_name("receipt.json");
    let receipt: Value = serde_json::from_str(&std::fs::read_to_string(&receipt).expect("the receipt")).expect("json");
    let device = &receipt["device_code"];
    assert!(device["code"].as_str().is_some_and(|c| c.starts_with("llvm-19 nvptx sm_90")), "{device}");
    assert!(Path::new(device["ptx"].as_str().unwrap_or_default()).is_file(), "{device}");
    let shapes: Vec<(String, u64, u64, u64)> = device["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            let region = k["region"].as_str().unwrap_or_default();
            let name = region.split('$').next().unwrap_or_default().to_string();
            (
                name,
                k["block"].as_u64().unwrap_or(0),
                k["per_lane"].as_u64().unwrap_or(0),
                k["environment_bytes"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(shapes, [("saxpy".to_string(), 128, 4, 56), ("shift".to_string(), 256, 1, 40)], "{device}");
    assert!(device["device_guards"].as_u64().is_some_and(|n| n >= 1), "{device}");
    // Each kernel is bounded by the block it is launched with.
    let text = ptx(&scratch.path("prog.cairn"));
    assert_eq!(text.matches(".maxntid 128, 1, 1").count(), 1, "saxpy's plan: {text}");
    assert_eq!(text.matches(".maxntid 256, 1, 1").count(), 1, "shift's default: {text}");
}

#[test]
fn a_borrow_a_device_region_reads_travels_as_its_value() {
    let scratch = Scratch::new("borrow");
    fake_driver(&scratch.0);
    let source = "fn fill(n:usize, out:rw<f32>[n]@device, a:ro<f32>) {
  parallel i in n { out[i] = a + f32(i); }
}
fn main() -> i32 {
  let v:f32 = 2.5;
  buffer d:f32[8]@device = zeroed;
  fill(8, d, v);
  stack h:f32[8] = zeroed;
  transfer(h, d);
  println(h[7]);
  return 0;
}
";
    let emulated = build(&scratch, "borrow.cairn", source, true);
    assert_eq!(run(&emulated, None, &[]).1, "9.5\n");
    let program = build(&scratch, "borrow.cairn", source, false);
    let log = scratch.path("driver.log");
    let (status, _, stderr) = run(&program, Some(&scratch.0), &[("FAKE_CUDA_LOG", log.to_string_lossy().to_string())]);
    assert_eq!(status, 0, "{stderr}");
    let log = std::fs::read_to_string(&log).expect("the driver's log");
    // The view (device pointer, length) and 2.5's bits, not the address of `v` on the host's stack.
    let launch = lines_starting(&log, "launch ");
    assert_eq!(launch.len(), 1, "{log}");
    assert!(launch[0].ends_with(&format!(" env D 8 {}", 2.5f32.to_bits())), "{log}");
}

#[test]
fn a_failed_device_guard_stops_the_program_with_its_message() {
    let scratch = Scratch::new("guard");
    fake_driver(&scratch.0);
    // Emulated, the shift's last lane fails its bounds guard.
    let emulated = build(&scratch, "prog.cairn", PROGRAM, true);
    let (status, stdout, expected) = run(&emulated, None, &[]);
    assert_eq!((status, stdout.as_str()), (134, "saxpy 1999 1\n"), "{expected}");
    assert!(expected.starts_with("bounds guard failed at prog.cairn:6:"), "{expected}");
    // Built for a GPU, each device guard has a trap number; raising the flag with one stops the
    // program after the launch with that guard's message. The emulated run's is among them.
    let program = build(&scratch, "prog.cairn", PROGRAM, false);
    let mut messages = Vec::new();
    for number in 1..=12 {
        let env = [("FAKE_CUDA_TRAP", number.to_string()), ("FAKE_CUDA_TRAP_KERNEL", "shift".to_string())];
        let (status, stdout, stderr) = run(&program, Some(&scratch.0), &env);
        assert_eq!((status, stdout.as_str()), (134, "saxpy 0 0\n"), "{stderr}");
        if stderr.starts_with("device error: a device guard failed") {
            break;
        }
        assert!(stderr.contains(" guard failed at prog.cairn:6:"), "trap {number}: {stderr}");
        messages.push(stderr);
    }
    assert!(!messages.is_empty() && messages.len() < 12, "{messages:?}");
    assert!(messages.contains(&expected), "{expected} among {messages:?}");
    // The numbers the PTX's guards store are exactly those the message table answers for.
    let text = ptx(&scratch.path("prog.cairn"));
    let mut numbers: Vec<usize> = text
        .lines()
        .filter(|l| l.contains("atom.cas.b32") || l.contains("atom.global.cas.b32"))
        .filter_map(|l| l.trim().trim_end_matches(';').rsplit(", ").next().and_then(|k| k.parse().ok()))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers, (1..=messages.len()).collect::<Vec<_>>(), "{text}");
    // Without the flag raised, the same launch returns and the program ends normally.
    let (status, _, stderr) = run(&program, Some(&scratch.0), &[]);
    assert_eq!(status, 0, "{stderr}");
}

#[test]
fn a_missing_or_failing_driver_stops_the_program_with_a_message() {
    let scratch = Scratch::new("driverless");
    fake_driver(&scratch.0);
    let program = build(&scratch, "prog.cairn", PROGRAM, false);
    // No driver: the first device operation (the first device buffer) traps, saying what to do.
    // (A machine with NVIDIA's driver installed would find it: that case is then left out.)
    let system_driver = ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/lib/libcuda.so.1"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !system_driver {
        let (status, stdout, stderr) = run(&program, None, &[]);
        assert_eq!((status, stdout.as_str()), (134, ""), "{stderr}");
        assert!(stderr.contains("libcuda.so.1") && stderr.contains("--emulate"), "{stderr}");
    }
    // A failed launch is a trap naming the call and the driver's words for the error.
    let (status, _, stderr) = run(&program, Some(&scratch.0), &[("FAKE_CUDA_FAIL", "cuLaunchKernel".to_string())]);
    assert_eq!(status, 134, "{stderr}");
    assert!(stderr.starts_with("device error: cuLaunchKernel failed (719: unspecified launch failure"), "{stderr}");
    // A device with no room: the buffer's own allocation guard, with its place.
    let (status, _, stderr) = run(&program, Some(&scratch.0), &[("FAKE_CUDA_FAIL", "cuMemAlloc".to_string())]);
    assert_eq!(status, 134, "{stderr}");
    assert!(stderr.starts_with("allocation guard failed at prog.cairn:14:"), "{stderr}");
}

/// A device `scan` and a device `compact`: a region evaluates the yields (and the predicate)
/// into device scratch, which crosses to the host, is folded there in index order, and crosses
/// back into the output (a compact's front only); every scratch block is given back. The
/// stand-in driver runs no kernel, so the scratch stays zeroed: the scan's total is 0 and the
/// compact keeps nothing (its zero-length copy home is no driver call).
#[test]
fn a_device_scan_or_compact_goes_through_host_memory() {
    let scratch = Scratch::new("collectors");
    fake_driver(&scratch.0);
    let source = "fn main() -> i32 {
  buffer d:u64[100]@device = zeroed;
  parallel i in 100 { d[i] = u64(i); }
  buffer p:u64[100]@device = zeroed;
  let total = scan add_wrap p parallel i in 100 yield d[i];
  buffer e:u64[100]@device = zeroed;
  let kept = compact e for i in 100 where d[i] % 2 == 0 yield d[i];
  buffer h:u64[100] = zeroed;
  transfer(h, p);
  println(total, \" \", kept, \" \", h[99]);
  return 0;
}
";
    let emulated = build(&scratch, "scan.cairn", source, true);
    let (status, stdout, stderr) = run(&emulated, None, &[]);
    assert_eq!((status, stdout.as_str()), (0, "4950 50 4950\n"), "{stderr}");
    let program = build(&scratch, "scan.cairn", source, false);
    let log = scratch.path("cuda.log");
    let env = [("FAKE_CUDA_LOG", log.to_string_lossy().to_string())];
    let (status, stdout, stderr) = run(&program, Some(&scratch.0), &env);
    assert_eq!((status, stdout.as_str()), (0, "0 0 0\n"), "{stderr}");
    let log = std::fs::read_to_string(&log).expect("the driver's log");
    let launches = lines_starting(&log, "launch ");
    assert_eq!(launches.len(), 3, "the fill, the scan's yields and the compact's: {log}");
    assert!(launches[1].contains(" count 100 ") && launches[2].contains(" count 100 "), "{log}");
    let events: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.starts_with("alloc ") || l.starts_with("copy ") || l.starts_with("free ") || l.starts_with("launch ")
        })
        .map(|l| if l.starts_with("launch ") { "launch" } else { l })
        .collect();
    assert_eq!(
        events,
        [
            "alloc 800",
            "launch",
            "alloc 800", // d; the fill; p
            "alloc 800",
            "launch",
            "copy d2h 800",
            "copy h2d 800",
            "free 800",  // the scan's scratch
            "alloc 800", // e
            "alloc 100",
            "alloc 800",
            "launch",
            "copy d2h 100",
            "copy d2h 800",
            "free 800",
            "free 100",
            "copy d2h 800",
            "free 800",
            "free 800",
            "free 800",
        ],
        "{log}"
    );
    assert_eq!(log.lines().last(), Some("live 0"), "{log}");
}

/// A device `reduce` bound with `let`, one of a narrower type, and one stored into a device
/// element: each launches its kernel with a cell that starts at the operator's identity (a cell
/// of its own, given back after its total is copied home; for the element form, the element
/// itself, and nothing copied home). The stand-in driver runs no kernel: `FAKE_CUDA_FOLD` plays
/// one whose total is 77, which must reach each place the program reads.
const REDUCE: &str = "fn main() -> i32 {
  buffer d:u64[100]@device = zeroed;
  parallel i in 100 { d[i] = u64(i); }
  let total = reduce add_wrap parallel i in 100 yield d[i];
  let low = reduce min parallel i in 100 yield u32(d[i]);
  buffer o:u64[4]@device = zeroed;
  reduce + o[2] parallel i in 100 yield d[i];
  buffer h:u64[4] = zeroed;
  transfer(h, o);
  println(total, \" \", low, \" \", h[2], \" \", h[1]);
  return 0;
}
";

#[test]
fn a_device_reduce_launches_its_kernel_with_a_cell() {
    let scratch = Scratch::new("reduce");
    fake_driver(&scratch.0);
    let emulated = build(&scratch, "reduce.cairn", REDUCE, true);
    let (status, stdout, stderr) = run(&emulated, None, &[]);
    assert_eq!((status, stdout.as_str()), (0, "4950 0 4950 0\n"), "{stderr}");

    let program = build(&scratch, "reduce.cairn", REDUCE, false);
    let kernels = ptx(&scratch.path("reduce.cairn"));
    for needed in ["_param_2", "shfl.sync.bfly.b32", "bar.sync", "atom.global.add.u64", "atom.global.min.u32"] {
        assert!(kernels.contains(needed), "the reduce kernels lack {needed}:\n{kernels}");
    }
    let log = scratch.path("cuda.log");
    let env = [("FAKE_CUDA_LOG", log.to_string_lossy().to_string()), ("FAKE_CUDA_FOLD", "77".to_string())];
    let (status, stdout, stderr) = run(&program, Some(&scratch.0), &env);
    assert_eq!((status, stdout.as_str()), (0, "77 77 77 0\n"), "{stderr}");
    let log = std::fs::read_to_string(&log).expect("the driver's log");
    let launches = lines_starting(&log, "launch ");
    assert_eq!(launches.len(), 4, "{log}");
    // 100 indices, 16 a thread by default, 256 threads a block: one block.
    assert!(
        launches[1].contains(" grid 1 block 256 count 100 ") && launches[1].ends_with(" cell D+0 holds 0"),
        "{log}"
    );
    assert!(launches[2].ends_with(" cell D+0 holds 4294967295"), "the min's cell starts at u32's maximum: {log}");
    assert!(launches[3].ends_with(" cell D+16 holds 0"), "the element form folds into o[2] itself: {log}");
    // Cells of 8 and 4 bytes, each filled with the identity, copied home and given back.
    let events: Vec<&str> =
        log.lines().filter(|l| l.starts_with("alloc ") || l.starts_with("copy ") || l.starts_with("free ")).collect();
    let folds: Vec<&str> = events.iter().copied().filter(|l| l.ends_with(" 8") || l.ends_with(" 4")).collect();
    assert_eq!(
        folds,
        [
            "alloc 8",
            "copy h2d 8",
            "copy d2h 8",
            "free 8",
            "alloc 4",
            "copy h2d 4",
            "copy d2h 4",
            "free 4",
            "copy h2d 8"
        ],
        "{log}"
    );
    assert!(log.contains("live 0"), "every block given back: {log}");
}

/// A device `reduce` inside a loop: the identity the runtime copies into the cell lives in the
/// function's frame, made once (it was made at the reduce, so each pass took fresh stack and a
/// long loop overflowed it: 600,000 passes here, 8 MiB of stack at 16 bytes a pass).
#[test]
fn a_device_reduce_in_a_long_loop_keeps_its_stack() {
    let scratch = Scratch::new("loop");
    fake_driver(&scratch.0);
    let source = "fn f(n:usize, xs:ro<u32>[n]@device, rounds:usize) -> u64 {
  let mut t:u64 = 0;
  for r in 0..rounds {
    let s = reduce add_wrap parallel i in n yield xs[i];
    t = t + u64(s);
  }
  return t;
}
fn main() -> i32 {
  buffer d:u32[10]@device = zeroed;
  let a = f(10, d, 600000);
  println(\"rounds \", a);
  return 0;
}
";
    let program = build(&scratch, "loop.cairn", source, false);
    let (status, stdout, stderr) = run(&program, Some(&scratch.0), &[("FAKE_CUDA_FOLD", "1".to_string())]);
    assert_eq!((status, stdout.as_str()), (0, "rounds 600000\n"), "{stderr}");
}
