//! `cairn predict --inspect` (tools.md §3.16): the program's device code compiled for its device
//! target, nothing run, and each kernel's registers read — PTX's virtual registers by kind (what
//! LLVM's NVPTX back end declared before allocation) and, when NVIDIA's `ptxas` is on PATH, the
//! machine registers it allocates with the bytes it spills. Cooperative regions, whose registers
//! the spec asks for, are not built: the kernels are the device regions' (one per region).

use std::collections::BTreeMap;
use std::process::Command;

use cairn_hir::Workspace;
use cairn_mir::FnKind;
use serde::Serialize;

/// What `--inspect` read.
#[derive(Debug, Serialize)]
pub struct Inspection {
    pub target: String,
    /// `ptxas` and its version, or why it did not run.
    pub assembler: String,
    pub kernels: Vec<Kernel>,
    pub note: &'static str,
}

/// One kernel.
#[derive(Debug, Default, Serialize)]
pub struct Kernel {
    /// Its PTX entry.
    pub entry: String,
    /// The lane function it runs (the MIR's name of the region).
    pub lane: String,
    /// PTX's virtual registers by kind (`b32`, `b64`, `f32`, `pred`, …).
    pub virtual_registers: BTreeMap<String, u64>,
    /// The assembler's: registers per thread, and bytes spilled and reloaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_stores: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_loads: Option<u64>,
}

const NOTE: &str = "compiled, never run: one kernel per device region (cooperative regions are not built); registers are the assembler's when ptxas ran, else PTX's virtual registers, which allocation only lowers";

/// Compiles the device code of the checked program in `workspace` for `target` and reads it.
pub fn inspect(workspace: &Workspace, target: Option<&str>) -> Result<Inspection, String> {
    let Some(target) = target else {
        return Err("--inspect compiles device code for a device target: pass --device-target (sm_90, for example) or set `device_target` under [build] in the manifest.".into());
    };
    let lowered = cairn_mir::program_mir(workspace.db());
    if let Some((name, error)) = lowered.errors.first() {
        return Err(format!("internal error (E-INTERNAL): {name} could not be lowered: {}", error.0));
    }
    let mut functions: Vec<_> = lowered.functions.iter().filter(|f| f.kind != FnKind::Test).cloned().collect();
    // As a build compiles it.
    cairn_mir::rewrite_for_build(&mut functions);
    let items = crate::build::items_by_symbol(workspace);
    let site = |function: &cairn_mir::Function, at: Option<cairn_mir::Anchor>| -> cairn_codegen::Site {
        crate::build::site_of(workspace, &items, function, at)
    };
    let ptx = crate::ptx::device_ptx(&functions, Some(target), &site, false).map_err(|error| match error {
        crate::ptx::PtxError::Refused(code, message) => format!("{code}: {message}"),
        crate::ptx::PtxError::Internal(message) => {
            format!("internal error (E-INTERNAL): the device code generator failed: {message}")
        }
    })?;
    let mut kernels: Vec<Kernel> = ptx
        .kernels
        .iter()
        .map(|(entry, lane)| Kernel {
            entry: entry.clone(),
            lane: lane.trim_start_matches("cairn.").to_string(),
            virtual_registers: virtual_registers(&ptx.text, entry),
            ..Kernel::default()
        })
        .collect();
    let assembler = match crate::process::on_path("ptxas") {
        None => "not run: ptxas is not on PATH (NVIDIA's CUDA toolkit, or PyPI's nvidia-cuda-nvcc-cu12)".to_string(),
        Some(ptxas) if kernels.is_empty() => format!("{} (nothing to assemble)", ptxas.display()),
        Some(ptxas) => assemble(&ptxas, &ptx.text, target, &mut kernels)?,
    };
    Ok(Inspection { target: target.to_string(), assembler, kernels, note: NOTE })
}

/// The `.reg` declarations inside entry `entry`'s body: `.reg .b32 %r<12>;` is 12 of kind `b32`.
pub fn virtual_registers(ptx: &str, entry: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Some(start) = ptx.find(&format!(".entry {entry}(")) else { return out };
    // The entry's body ends where the next entry or function begins.
    let rest = &ptx[start..];
    let end = [".entry ", ".func "].iter().filter_map(|m| rest[1..].find(m)).min().map_or(rest.len(), |i| i + 1);
    for line in rest[..end].lines() {
        let Some(declared) = line.trim().strip_prefix(".reg .") else { continue };
        let Some((kind, count)) = declared.split_once(' ') else { continue };
        let count = count.split('<').nth(1).and_then(|c| c.split('>').next()).and_then(|c| c.parse::<u64>().ok());
        if let Some(count) = count {
            *out.entry(kind.to_string()).or_insert(0) += count;
        }
    }
    out
}

/// Assembles `ptx` for `target` with `ptxas -v` and reads each kernel's registers and spills:
/// the assembler's name and version.
fn assemble(ptxas: &std::path::Path, ptx: &str, target: &str, kernels: &mut [Kernel]) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("cairn-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("Cannot make {}: {e}.", dir.display()))?;
    let file = dir.join("device.ptx");
    std::fs::write(&file, ptx).map_err(|e| format!("Cannot write {}: {e}.", file.display()))?;
    let output = Command::new(ptxas)
        .arg(format!("-arch={target}"))
        .arg("-v")
        .arg("-o")
        .arg(dir.join("device.cubin"))
        .arg(&file)
        .output()
        .map_err(|e| format!("Cannot run {}: {e}.", ptxas.display()));
    let version = Command::new(ptxas)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).to_string();
            text.lines().find(|l| l.contains("release")).or(text.lines().last()).map(str::to_string)
        })
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let output = output?;
    let messages = String::from_utf8_lossy(&output.stderr).to_string();
    if !output.status.success() {
        return Err(format!(
            "internal error (E-INTERNAL): ptxas refused the PTX this toolchain made for {target}: {}",
            messages.lines().next().unwrap_or_default()
        ));
    }
    read_assembler(&messages, kernels);
    Ok(format!("ptxas ({})", version.trim()))
}

/// `ptxas -v`'s report: after `Compiling entry function 'NAME'`, `Used N registers` and `… bytes
/// spill stores, … bytes spill loads` belong to NAME.
pub fn read_assembler(messages: &str, kernels: &mut [Kernel]) {
    let mut current: Option<usize> = None;
    let number_before = |line: &str, word: &str| -> Option<u64> {
        let at = line.find(word)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    for line in messages.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default();
            current = kernels.iter().position(|k| k.entry == name);
            continue;
        }
        // A device function's own report is not its caller's.
        if let Some(name) = line.split("Function properties for ").nth(1)
            && current.is_some_and(|at| kernels[at].entry != name.trim())
        {
            current = None;
            continue;
        }
        let Some(at) = current else { continue };
        if let Some(registers) = number_before(line, "registers") {
            kernels[at].registers = Some(registers);
        }
        if let Some(stores) = number_before(line, "bytes spill stores") {
            kernels[at].spill_stores = Some(stores);
        }
        if let Some(loads) = number_before(line, "bytes spill loads") {
            kernels[at].spill_loads = Some(loads);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_read_from_the_ptx_and_the_assembler_s_report() {
        let ptx = ".visible .entry k0(\n  .param .u64 a\n)\n{\n\t.reg .pred \t%p<3>;\n\t.reg .b32 \t%r<7>;\n\t.reg .b64 \t%rd<12>;\n}\n.func helper()\n{\n\t.reg .b32 \t%r<40>;\n}\n.visible .entry k1()\n{\n\t.reg .b32 \t%r<2>;\n}\n";
        let first = virtual_registers(ptx, "k0");
        assert_eq!(first, [("pred".to_string(), 3), ("b32".to_string(), 7), ("b64".to_string(), 12)].into());
        assert_eq!(virtual_registers(ptx, "k1"), [("b32".to_string(), 2)].into());
        let mut kernels = vec![
            Kernel { entry: "k0".into(), ..Kernel::default() },
            Kernel { entry: "k1".into(), ..Kernel::default() },
        ];
        let report = "ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function 'k1' for 'sm_90'\nptxas info    : Function properties for k1\n    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\nptxas info    : Used 12 registers, 360 bytes cmem[0]\nptxas info    : Compiling entry function 'k0' for 'sm_90'\nptxas info    : Used 20 registers\nptxas info    : Function properties for helper\n    0 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n";
        read_assembler(report, &mut kernels);
        assert_eq!((kernels[0].registers, kernels[0].spill_stores), (Some(20), None));
        assert_eq!(
            (kernels[1].registers, kernels[1].spill_stores, kernels[1].spill_loads),
            (Some(12), Some(4), Some(4))
        );
    }
}
