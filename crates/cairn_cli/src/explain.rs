//! `cairn explain` (tools.md §3.13): a static cost map of each function from the code the compiler
//! emits — its guards by kind and line (the checker's sites, the guards emitted, the ones proved
//! and left out), its heap allocations, its calls (foreign ones marked), its loops, and whether the
//! optimized code of its loops is vectorized (the widest vector the optimized IR of the function,
//! and of its lanes and closures, operates on). Nothing runs; the map reads the program as `cairn
//! build` compiles it (plans' fusion included).
//!
//! LLVM's loop-vectorization remarks (why a loop was not vectorized, or with what width it was) are
//! collected while the program is optimized with line information, and each is given to the
//! function whose declaration comes last before its line.
//!
//! Exit: 0; 1 for a refused program; 2 for an environment error.

use std::collections::BTreeMap;
use std::path::Path;

use cairn_codegen::{Entry, Options, Site};
use cairn_mir::{Anchor, FnKind, Function, Inst, Rvalue, Terminator};
use serde::Serialize;

use crate::build::{items_by_symbol, site_of};
use crate::output::{Output, to_map};

#[derive(Serialize)]
struct Explain {
    protocol: &'static str,
    reading: &'static str,
    functions: BTreeMap<String, FunctionCost>,
}

#[derive(Serialize, Default)]
struct FunctionCost {
    /// Guards by kind and line: the checker's sites there, and the guards emitted and discharged.
    guards: Vec<GuardLine>,
    allocations: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    calls: Vec<Call>,
    loops: usize,
    /// The widest vector (elements) its optimized code operates on; 1 when it has none.
    vector_width: u32,
    vectorized: bool,
    /// LLVM's loop-vectorization remarks about its loops, by line: why a loop was not
    /// vectorized, or the width and interleaving it was vectorized with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    remarks: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
}

#[derive(Serialize)]
struct GuardLine {
    kind: &'static str,
    line: u32,
    emitted: usize,
    discharged: usize,
}

#[derive(Serialize)]
struct Call {
    callee: String,
    count: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    foreign: bool,
}

pub fn run(path: &Path, symbols: &[String], out: Output) -> u8 {
    let (_program, workspace) = match crate::check::load_checked(path, out) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let status = match explain_program(&workspace, symbols) {
        Ok(record) => {
            out.summary(&to_map(&record), true, "a static reading of the emitted code");
            0
        }
        Err(message) => {
            out.environment(&message);
            2
        }
    };
    std::mem::forget(workspace);
    status
}

/// The cost map of the accepted program in `workspace` (every function, or those `symbols`
/// names): what `cairn explain` prints and the edit host's `explain` request answers.
pub fn explain_program(workspace: &cairn_hir::Workspace, symbols: &[String]) -> Result<impl Serialize, String> {
    let lowered = cairn_mir::program_mir(workspace.db());
    if let Some((name, error)) = lowered.errors.first() {
        return Err(format!("internal error (E-INTERNAL): {name} could not be lowered: {}", error.0));
    }
    let mut functions: Vec<_> = lowered.functions.iter().filter(|f| f.kind != FnKind::Test).cloned().collect();
    cairn_mir::rewrite_for_build(&mut functions);
    let items = items_by_symbol(workspace);
    let site = |function: &Function, at: Option<Anchor>| -> Site { site_of(workspace, &items, function, at) };
    // Compiled as a library, so every function keeps its own optimized body to read (an
    // executable's would be inlined into `main` and dropped).
    // With line information, so LLVM's remarks say where each loop is.
    let options = Options { keep_functions: true, debug: true, remarks: true, ..Options::default() };
    let compiled = cairn_codegen::compile(&functions, &Entry::None, &site, options)
        .map_err(|message| format!("internal error (E-INTERNAL): the code generator failed: {message}"))?;
    // Where each shown function starts: a remark belongs to the last one starting at or above it.
    let mut starts: Vec<(String, u32, String)> = Vec::new();
    let foreign: Vec<&str> = functions.iter().filter(|f| f.kind == FnKind::Foreign).map(|f| &*f.symbol).collect();
    let mut map: BTreeMap<String, FunctionCost> = BTreeMap::new();
    for function in functions.iter().filter(|f| matches!(f.kind, FnKind::Function | FnKind::Main)) {
        // Lanes, closures and `$when` functions belong to the function that made them.
        let owner = function.name.split('$').next().unwrap_or(&function.name).to_string();
        if items.get(function.symbol.split(['[', '$']).next().unwrap_or(&function.symbol)).is_some_and(|(_, lib)| *lib)
        {
            continue;
        }
        if !symbols.is_empty() && !symbols.contains(&owner) {
            continue;
        }
        let cost = map.entry(owner.clone()).or_default();
        let mut guards: BTreeMap<(&'static str, u32), (usize, usize)> = BTreeMap::new();
        for guard in function.guards() {
            let line = site(function, guard.at.map(Anchor::Expr)).line;
            let entry = guards.entry((guard.kind.name(), line)).or_default();
            if guard.elided { entry.1 += 1 } else { entry.0 += 1 }
        }
        for ((kind, line), (emitted, discharged)) in guards {
            cost.guards.push(GuardLine { kind, line, emitted, discharged });
        }
        let mut calls: BTreeMap<String, usize> = BTreeMap::new();
        for (index, block) in function.blocks.iter().enumerate() {
            for inst in &block.insts {
                match inst {
                    Inst::Assign(_, Rvalue::Alloc { .. }) => cost.allocations += 1,
                    Inst::Call { callee, .. } => *calls.entry(callee.to_string()).or_default() += 1,
                    _ => {}
                }
            }
            // A back edge closes a loop.
            let targets: Vec<usize> = match &block.term {
                Terminator::Goto(b) => vec![b.0 as usize],
                Terminator::Branch(_, a, b) => vec![a.0 as usize, b.0 as usize],
                Terminator::Switch(_, arms, default) => {
                    arms.iter().map(|(_, b)| b.0 as usize).chain([default.0 as usize]).collect()
                }
                _ => Vec::new(),
            };
            cost.loops += targets.iter().filter(|&&t| t <= index).count();
        }
        for (callee, count) in calls {
            let is_foreign = foreign.contains(&callee.as_str());
            match cost.calls.iter_mut().find(|c| c.callee == callee) {
                Some(call) => call.count += count,
                None => cost.calls.push(Call { callee, count, foreign: is_foreign }),
            }
        }
        let width = vector_width(&compiled.llvm_ir, &function.symbol);
        cost.vector_width = cost.vector_width.max(width);
        if !function.name.contains('$') {
            let at = site(function, None);
            if let Some(file) = at.file {
                starts.push((base_name(&file).to_string(), at.line, owner.clone()));
            }
        }
    }
    for remark in &compiled.remarks {
        // Only the vectorizer's (the code generator's own remarks — stack bytes, instruction
        // counts, unrolling — say nothing about vectors).
        let Some((file, line, text)) = parse_remark(remark).filter(|(_, _, t)| t.contains("vectoriz")) else {
            continue;
        };
        let owner = starts
            .iter()
            .filter(|(f, start, _)| *f == base_name(file) && *start <= line)
            .max_by_key(|(_, start, _)| *start)
            .map(|(_, _, owner)| owner.clone());
        if let Some(cost) = owner.and_then(|owner| map.get_mut(&owner)) {
            let entry = format!("line {line}: {text}");
            if !cost.remarks.contains(&entry) {
                cost.remarks.push(entry);
            }
        }
    }
    for cost in map.values_mut() {
        cost.vector_width = cost.vector_width.max(1);
        cost.vectorized = cost.vector_width > 1;
        if cost.loops > 0 && !cost.vectorized && cost.remarks.is_empty() {
            cost.note = Some(
                "no vector instructions in the optimized code of its loops, and no remark from LLVM's vectorizer about them",
            );
        }
    }
    Ok(Explain {
        protocol: "cairn.explain/1",
        reading: "a static reading of the emitted code; nothing ran",
        functions: map,
    })
}

/// A file name without its directories (remarks and sites may spell the path differently).
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `file:line:column: text` → (file, line, text); `None` for a remark without a place.
fn parse_remark(remark: &str) -> Option<(&str, u32, &str)> {
    let mut parts = remark.splitn(4, ':');
    let file = parts.next()?;
    let line: u32 = parts.next()?.trim().parse().ok()?;
    let _column: u32 = parts.next()?.trim().parse().ok()?;
    let text = parts.next()?.trim();
    (line > 0 && !text.is_empty()).then_some((file, line, text))
}

/// The widest `<N x …>` vector in the optimized IR of the function emitted as `symbol`.
fn vector_width(ir: &str, symbol: &str) -> u32 {
    let header = [format!("@\"{symbol}\"("), format!("@{symbol}(")];
    let Some(start) = ir.lines().position(|l| l.starts_with("define") && header.iter().any(|h| l.contains(h.as_str())))
    else {
        return 1;
    };
    let mut widest = 1;
    for line in ir.lines().skip(start + 1) {
        if line.starts_with('}') {
            break;
        }
        let mut rest = line;
        while let Some(at) = rest.find('<') {
            rest = &rest[at + 1..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() && rest[digits.len()..].starts_with(" x ") {
                widest = widest.max(digits.parse().unwrap_or(1));
            }
        }
    }
    widest
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_widest_vector_of_a_function_s_body() {
        let ir = "define void @\"cairn.f\"(ptr %0) {\n  %1 = load <4 x double>, ptr %0\n  %2 = fadd <2 x double> %a, %b\n}\ndefine void @\"cairn.g\"() {\n  ret void\n}\n";
        assert_eq!(super::vector_width(ir, "cairn.f"), 4);
        assert_eq!(super::vector_width(ir, "cairn.g"), 1);
        assert_eq!(super::vector_width(ir, "cairn.h"), 1);
    }

    #[test]
    fn a_remark_is_a_place_and_a_text() {
        assert_eq!(
            super::parse_remark("dir/p.cairn:4:3: loop not vectorized: call instruction cannot be vectorized"),
            Some(("dir/p.cairn", 4, "loop not vectorized: call instruction cannot be vectorized"))
        );
        assert_eq!(super::parse_remark("<unknown>:0:0: loop not vectorized"), None);
    }
}
