//! `cairn emit`: the code the compiler generates, for reading (tools.md §3.18). By default the
//! optimized LLVM IR of the executable; `--mir` prints the MIR of every function instead,
//! `--unoptimized` the LLVM IR before the pipeline, `--ptx` the PTX of the program's device lanes
//! for its device target (`cairn_codegen::compile_ptx`; `E-TARGET` without one,
//! `E-TARGET-TOOLKIT` for a target LLVM 19 cannot compile). A refused program prints its refusal
//! (exit 1).

use std::path::Path;

use cairn_codegen::{Entry, Options, Site};
use cairn_diagnostics::record::refusal_record;
use cairn_mir::{Anchor, FnKind, Function};

use crate::build::{items_by_symbol, site_of};
use crate::check::load_workspace;
use crate::output::Output;

/// What `cairn emit` prints and how.
#[derive(Debug, Clone, Default)]
pub struct EmitFlags {
    pub mir: bool,
    pub unoptimized: bool,
    pub keep_guards: bool,
    pub debug: bool,
    /// The PTX of the device lanes.
    pub ptx: bool,
    /// `--device-target` (for `--ptx`).
    pub device_target: Option<String>,
}

pub fn run(path: &Path, flags: &EmitFlags, out: Output) -> u8 {
    let EmitFlags { mir, unoptimized, keep_guards, debug, .. } = *flags;
    let Some(program) = crate::check::load_program(path, out) else { return 2 };
    let mut workspace = load_workspace(&program);
    if let Some(refusal) = workspace.check().refusal {
        let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
        out.refusal(&refusal_record(&refusal), &lines);
        return 1;
    }
    let lowered = cairn_mir::program_mir(workspace.db());
    if let Some((name, error)) = lowered.errors.first() {
        out.environment(&format!("internal error (E-INTERNAL): {name} could not be lowered: {}", error.0));
        return 2;
    }
    let mut functions: Vec<_> = lowered.functions.iter().filter(|f| f.kind != FnKind::Test).cloned().collect();
    // As a build compiles it: regions fused, small checked `if`/`else`s speculated, unless every
    // guard is kept.
    if !keep_guards {
        cairn_mir::rewrite_for_build(&mut functions);
    }
    if mir {
        let text: String = functions.iter().map(|f| format!("{f}\n")).collect();
        out.text(&text);
        return 0;
    }
    let items = items_by_symbol(&workspace);
    let site = |function: &Function, at: Option<Anchor>| -> Site { site_of(&workspace, &items, function, at) };
    if flags.ptx {
        let refuse = |code: &str, message: String| {
            let diagnostic = cairn_diagnostics::Diagnostic::new(code, message);
            if let Some(refusal) = cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]) {
                let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
                out.refusal(&refusal_record(&refusal), &lines);
            }
            1
        };
        let target = flags.device_target.clone().or_else(|| program.build.device_target.clone());
        return match crate::ptx::device_ptx(&functions, target.as_deref(), &site, keep_guards) {
            Ok(ptx) => {
                out.text(&ptx.text);
                0
            }
            Err(crate::ptx::PtxError::Refused(code, message)) => refuse(code, message),
            Err(crate::ptx::PtxError::Internal(message)) => {
                out.environment(&format!("internal error (E-INTERNAL): the device code generator failed: {message}"));
                2
            }
        };
    }
    let entry = match functions.iter().find(|f| f.kind == FnKind::Main) {
        Some(main) => Entry::Main(main.symbol.clone()),
        None => Entry::None,
    };
    match cairn_codegen::compile(
        &functions,
        &entry,
        &site,
        Options { keep_guards, optimize: !unoptimized, debug, keep_functions: false, remarks: false },
    ) {
        Ok(compiled) => {
            out.text(&compiled.llvm_ir);
            0
        }
        Err(message) => {
            out.environment(&format!("internal error (E-INTERNAL): the code generator failed: {message}"));
            2
        }
    }
}
