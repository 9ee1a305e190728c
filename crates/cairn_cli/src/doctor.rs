//! `cairn doctor` (tools.md §3.23): what this machine has of what the toolchain uses, each
//! missing piece with the way to get it. Never fetches or installs anything.
//!
//! The spec's record keys, with `python` replaced by this toolchain's own versions (`rust_version`, and
//! the LLVM and Z3 it links): `version`, `llvm`, `z3`, `platform`, `native_platform`, the external
//! tools (`cc`, `clang++`, `g++`, `nvcc`, `ptxas`, `lean`, `lake`, `qemu-system-aarch64`, `bwrap`,
//! `valgrind`: each a path or null), `cache` (the directory the compiled runtime goes to, or
//! null when it cannot be written), `formal_status`, `network_access` (false), and `fixes` (for
//! each missing piece, how to get it).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::output::{FormatChoice, Output, to_map};

#[derive(Serialize)]
struct Doctor {
    version: &'static str,
    /// The Rust version the toolchain's crates declare they build with (`rust-version`).
    rust_version: &'static str,
    llvm: String,
    z3: String,
    platform: String,
    native_platform: String,
    #[serde(rename = "cc")]
    cc: Option<String>,
    #[serde(rename = "clang++")]
    clang: Option<String>,
    #[serde(rename = "g++")]
    gxx: Option<String>,
    nvcc: Option<String>,
    ptxas: Option<String>,
    lean: Option<String>,
    lake: Option<String>,
    #[serde(rename = "qemu-system-aarch64")]
    qemu: Option<String>,
    bwrap: Option<String>,
    /// Whether bubblewrap can make a sandbox here (user namespaces allowed): agent-written code
    /// runs confined only then (docs/sandbox.md).
    sandbox: bool,
    valgrind: Option<String>,
    cache: Option<String>,
    formal_status: &'static str,
    network_access: bool,
    /// For each missing piece: what it is for and how to get it.
    fixes: BTreeMap<&'static str, &'static str>,
}

/// What each external tool is for, and the fix when it is missing.
const TOOLS: &[(&str, &str)] = &[
    ("cc", "links every native program (required): `apt-get install gcc` (or clang)"),
    ("clang++", "C++ foreign implementations (tier 3): `apt-get install clang`"),
    ("g++", "C++ foreign implementations (tier 3): `apt-get install g++`"),
    ("nvcc", "CUDA foreign implementations (tier 2): `pip install nvidia-cuda-nvcc` or the CUDA toolkit"),
    ("ptxas", "checks PTX for device code (tier 2): `pip install nvidia-cuda-nvcc`"),
    ("lean", "proof certificates (tier 3): install Lean 4 with elan"),
    ("lake", "proof certificates (tier 3): installed with Lean 4 by elan"),
    ("qemu-system-aarch64", "runs freestanding aarch64 images (tier 3): `apt-get install qemu-system-arm`"),
    (
        "bwrap",
        "confines agent-written programs (validation, tuning, `run --sandbox`; docs/sandbox.md): `apt-get install bubblewrap`",
    ),
    ("valgrind", "the leak and memory checks of the test suite: `apt-get install valgrind`"),
];

pub fn run(out: Output) -> u8 {
    let found = |name: &str| crate::process::on_path(name).map(|p| p.display().to_string());
    let cache = cairn_codegen::cache_dir().filter(|d| writable(d)).map(|d| d.display().to_string());
    let mut fixes = BTreeMap::new();
    for (tool, fix) in TOOLS {
        if found(tool).is_none() {
            fixes.insert(*tool, *fix);
        }
    }
    let sandbox = crate::sandbox::bubblewrap().is_some();
    if !sandbox && found("bwrap").is_some() {
        fixes.insert(
            "sandbox",
            "bubblewrap is installed but cannot make a sandbox: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the container's seccomp/AppArmor profile); until then agent-written code runs with limits only",
        );
    }
    if cache.is_none() {
        fixes
            .insert("cache", "set HOME or XDG_CACHE_HOME to a writable directory (the runtime is compiled there once)");
    }
    let record = Doctor {
        version: env!("CARGO_PKG_VERSION"),
        rust_version: option_env!("CARGO_PKG_RUST_VERSION").filter(|v| !v.is_empty()).unwrap_or("stable"),
        llvm: cairn_codegen::llvm_version(),
        z3: cairn_smt::z3_version(),
        platform: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
        native_platform: format!("{} {}", capitalized(std::env::consts::OS), std::env::consts::ARCH),
        cc: found("cc"),
        clang: found("clang++"),
        gxx: found("g++"),
        nvcc: found("nvcc"),
        ptxas: found("ptxas"),
        lean: found("lean"),
        lake: found("lake"),
        qemu: found("qemu-system-aarch64"),
        bwrap: found("bwrap"),
        sandbox,
        valgrind: found("valgrind"),
        cache,
        formal_status: "not-verified",
        network_access: false,
        fixes,
    };
    match out.format {
        FormatChoice::Json => out.json(&to_map(&record)),
        FormatChoice::Human => {
            let map = to_map(&record);
            let mut text = String::new();
            for (key, value) in &map {
                if key == "fixes" {
                    continue;
                }
                let shown = match value {
                    serde_json::Value::Null => match record.fixes.get(key.as_str()) {
                        Some(fix) => format!("missing — {fix}"),
                        None => "missing".to_string(),
                    },
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                text.push_str(&format!("{key}: {shown}\n"));
            }
            out.text(&text);
        }
    }
    0
}

/// True when a file can be created in `dir` (made if missing).
fn writable(dir: &Path) -> bool {
    if std::fs::create_dir_all(dir).is_err() {
        return false;
    }
    let probe = dir.join(format!(".cairn-doctor-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
