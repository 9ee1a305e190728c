//! Device targets and emulation for `check`, `build`, `run` and `test` (tools.md §4.1–§4.2,
//! language §41).
//!
//! A program does *device work* when some function's row holds `par:device`, `gpu_alloc`,
//! `gpu_free` or a `transfer:…` effect. Such a program is judged against a device target —
//! `--device-target`, else the manifest's `[build] device_target`, else the one kind of GPU the
//! driver reports (this toolchain does not query a driver yet, so with neither named it is
//! `E-TARGET`) — and a target that lacks a feature the program needs is `E-TARGET-FEATURE`.
//! A build with `--emulate` runs device work on host threads (device memory is host memory of
//! exactly the requested size, a region runs on the lane pool, collectors fold in index order);
//! a build without it is for a GPU: the device regions' PTX (LLVM's NVPTX back end) is embedded
//! in the program, which launches it through the CUDA driver loaded at run time
//! (`cairn_codegen`'s `gpu.rs` and `runtime/device.c`); a target LLVM 19 lacks is
//! `E-TARGET-TOOLKIT` (`build.rs`). A program without
//! device work ignores both flags. This module links no back end (`cairn` and `cairn-serve`
//! judge device work too); the PTX is made in `ptx.rs`.

use cairn_diagnostics::Diagnostic;
use cairn_hir::Workspace;
use serde::Serialize;

/// The device flags a command was given.
#[derive(Debug, Clone, Default)]
pub struct DeviceFlags {
    /// `--device-target SM`.
    pub target: Option<String>,
    /// `--emulate`.
    pub emulate: bool,
}

/// The device target a program is judged against (the record's `device_target`).
#[derive(Debug, Clone, Serialize)]
pub struct DeviceTarget {
    pub name: String,
    /// Where it came from: `flag` or `manifest`.
    pub resolved: &'static str,
    /// The features its capability provides (language §41).
    pub features_provided: Vec<&'static str>,
    /// The features the program needs.
    pub features_needed: Vec<&'static str>,
}

/// The record's `emulation`: what an emulated build's results are evidence of (one type for
/// every record that carries it, the validation's included).
pub use cairn_agent::validate::Emulation;

/// What a program's device work came to.
#[derive(Debug, Clone, Default)]
pub struct DeviceVerdict {
    pub target: Option<DeviceTarget>,
    pub emulation: Option<Emulation>,
    /// A build of device work for a GPU (no `--emulate`): the device target its PTX is for.
    pub gpu: Option<String>,
}

/// Every device feature (language §41).
const FEATURES: [&str; 10] =
    ["device_lanes", "wmma", "mma_sync", "bf16", "cp_async", "clusters", "tma", "wgmma", "tcgen05", "mma_f8f6f4"];

/// The features emulation does not model (language §41, `E-EMULATE`).
const UNEMULATED: [&str; 5] = ["clusters", "tma", "wgmma", "tcgen05", "mma_f8f6f4"];

/// The features of language §41 with the capability that brings each (`wgmma` only on
/// `sm_90a`, the family features only with their suffixes).
fn provides(capability: u32, suffix: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let table: [(&str, u32); 7] = [
        ("device_lanes", 75),
        ("wmma", 75),
        ("mma_sync", 80),
        ("bf16", 80),
        ("cp_async", 80),
        ("clusters", 90),
        ("tma", 90),
    ];
    for (feature, from) in table {
        if capability >= from {
            out.push(feature);
        }
    }
    if capability == 90 && suffix == "a" {
        out.push("wgmma");
    }
    if matches!(capability, 100 | 103 | 110) && suffix == "f" {
        out.push("tcgen05");
    }
    if matches!(capability, 120 | 121) && suffix == "f" {
        out.push("mma_f8f6f4");
    }
    out
}

/// The first function (by its full name) whose row does device work, and the effect that says so.
fn device_work(facts: &[cairn_hir::FunctionFacts]) -> Option<(String, String)> {
    for fact in facts {
        let Some(row) = &fact.row else { continue };
        if let Some(effect) =
            row.iter().find(|e| matches!(&***e, "par:device" | "gpu_alloc" | "gpu_free") || e.starts_with("transfer:"))
        {
            let name =
                if fact.module.is_empty() { fact.name.to_string() } else { format!("{}.{}", fact.module, fact.name) };
            return Some((name, effect.to_string()));
        }
    }
    None
}

/// Judges a checked program's device work against the flags and the manifest. `building` is
/// true for `build`, `run` and `test`, which also need `--emulate` for device work.
pub fn judge(
    workspace: &Workspace,
    manifest_target: Option<&str>,
    flags: &DeviceFlags,
    building: bool,
) -> Result<DeviceVerdict, Diagnostic> {
    // A named target is checked even when nothing needs it: a bad spelling is a mistake now.
    let named = match (&flags.target, manifest_target) {
        (Some(flag), _) => Some((flag.clone(), "flag")),
        (None, Some(manifest)) => Some((manifest.to_string(), "manifest")),
        (None, None) => None,
    };
    if let Some((name, _)) = &named {
        cairn_vfs::check_device_target(name).map_err(|message| Diagnostic::new("E-TARGET", message))?;
    }
    // Every function's row, read once.
    let facts = workspace.function_facts();
    let Some((function, effect)) = device_work(&facts) else {
        return Ok(DeviceVerdict::default());
    };
    let Some((name, resolved)) = named else {
        // `check` judges against a target only when one is named (tools.md §4.1 lists the
        // commands that resolve one, and `check` is not among them).
        if !building {
            return Ok(DeviceVerdict::default());
        }
        return Err(Diagnostic::new(
            "E-TARGET",
            format!(
                "{function} does device work ({effect}), and no device target is named: pass --device-target (sm_90, for example) or set `device_target` under [build] in the manifest. This toolchain does not ask a GPU driver which device is present."
            ),
        ));
    };
    let digits: String = name["sm_".len()..].chars().take_while(char::is_ascii_digit).collect();
    let capability: u32 = digits.parse().unwrap_or(0);
    let suffix = &name["sm_".len() + digits.len()..];
    let provided = provides(capability, suffix);
    let lanes = facts.iter().any(|f| f.row.iter().flatten().any(|e| &**e == "par:device"));
    let mut needed: Vec<&'static str> = if lanes { vec!["device_lanes"] } else { Vec::new() };
    if let Some(missing) = needed.iter().find(|f| !provided.contains(f)) {
        return Err(Diagnostic::new(
            "E-TARGET-FEATURE",
            format!(
                "{function} runs device lanes ({effect}), which need the feature {missing} (from sm_75), and {name} lacks it: name a newer device target."
            ),
        ));
    }
    // What the selected implementations declare they need (`needs(...)`, language §27, §41).
    let db = workspace.db();
    for (implementation, features) in cairn_hir::implementations::selected_needs(db) {
        let written = cairn_hir::scope(db).full_name(implementation);
        for feature in features.iter() {
            let Some(known) = FEATURES.iter().find(|f| **f == &**feature) else { continue };
            if !provided.contains(known) {
                return Err(Diagnostic::new(
                    "E-IMPL-TARGET",
                    format!(
                        "The plan selects {written}, which needs {known}, and {name} lacks it: select another implementation, or name a target that has {known}."
                    ),
                ));
            }
            if building && flags.emulate && UNEMULATED.contains(known) {
                return Err(Diagnostic::new(
                    "E-EMULATE",
                    format!(
                        "The plan selects {written}, which needs {known}, and host threads cannot stand in for {known}: --emulate refuses rather than approximates; select another implementation to emulate."
                    ),
                ));
            }
            if !needed.contains(known) {
                needed.push(known);
            }
        }
    }
    let target = DeviceTarget { name: name.clone(), resolved, features_provided: provided, features_needed: needed };
    if !building {
        return Ok(DeviceVerdict { target: Some(target), emulation: None, gpu: None });
    }
    if !flags.emulate {
        return Ok(DeviceVerdict { target: Some(target), emulation: None, gpu: Some(name) });
    }
    Ok(DeviceVerdict { target: Some(target), emulation: Some(Emulation::of(&name)), gpu: None })
}
