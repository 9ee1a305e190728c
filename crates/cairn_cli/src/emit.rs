//! `cairn emit`: the code the compiler generates, for reading (tools.md §3.18). By default the
//! optimized LLVM IR of the executable; `--mir` prints the MIR of every function instead,
//! `--unoptimized` the LLVM IR before the pipeline. A refused program prints its refusal (exit 1).

use std::path::Path;

use cairn_codegen::{Entry, Options, Site};
use cairn_diagnostics::record::refusal_record;
use cairn_mir::{Anchor, FnKind, Function};

use crate::build::{items_by_symbol, site_of};
use crate::check::load_workspace;
use crate::output::Output;

pub fn run(path: &Path, mir: bool, unoptimized: bool, keep_guards: bool, debug: bool, out: Output) -> u8 {
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
    // As a build compiles it: a plan's `fuse` joins regions unless every guard is kept.
    if !keep_guards {
        cairn_mir::fuse::fuse_regions(&mut functions);
    }
    if mir {
        let text: String = functions.iter().map(|f| format!("{f}\n")).collect();
        out.text(&text);
        return 0;
    }
    let items = items_by_symbol(&workspace);
    let site = |function: &Function, at: Option<Anchor>| -> Site { site_of(&workspace, &items, function, at) };
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
