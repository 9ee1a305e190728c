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
