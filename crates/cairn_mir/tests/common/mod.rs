//! What the MIR tests share: a program checked, lowered and verified.

use std::sync::Arc;

use cairn_hir::{SourceText, Workspace};
use cairn_mir::Function;

/// The MIR of every function of an accepted one-file program, each verified (every discharged
/// guard's proof audited).
pub fn lowered(text: &str) -> Vec<Arc<Function>> {
    let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.into() }]);
    let outcome = workspace.check();
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal.map(|r| r.first.message));
    let program = cairn_mir::program_mir(workspace.db());
    assert!(program.errors.is_empty(), "{:?}", program.errors);
    for function in &program.functions {
        cairn_mir::verify::verify(function).expect("the MIR verifies, every discharge audited");
    }
    program.functions
}

/// The functions after a build's rewrites (`rewrite_for_build`), each verified.
#[allow(dead_code)] // not every test crate that shares this module rewrites
pub fn rewritten(functions: &[Arc<Function>]) -> Vec<Arc<Function>> {
    let mut functions = functions.to_vec();
    cairn_mir::rewrite_for_build(&mut functions);
    for function in &functions {
        cairn_mir::verify::verify(function).expect("the rewritten MIR verifies");
    }
    functions
}

/// The function named `name` (`module.name` outside the root module).
#[allow(dead_code)]
pub fn named<'a>(functions: &'a [Arc<Function>], name: &str) -> &'a Function {
    functions.iter().find(|f| &*f.name == name).unwrap_or_else(|| panic!("no function {name}"))
}
