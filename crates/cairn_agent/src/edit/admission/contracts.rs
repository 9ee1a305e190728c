//! Step 9 of judging a reply: a refactoring contract (`preserve`, protocol §3.5–§3.6) admits
//! only a change of an admitted class (`E-PRESERVE`). `identical` admits the same emitted code
//! up to renaming (`identical-code`); `equivalent` also admits a change Z3 finds equivalent
//! (`smt-equivalent`), comparing the original — the pinned program, which the workspace holds
//! again — against the candidate.
//!
//! Boundary: an undecided comparison is a refusal with reason `unknown`, never a pass.

use cairn_hir::{Item, Workspace};
use serde_json::Value;

use super::checked::Checked;
use crate::edit::EditHost;
use crate::edit::refusal::Refusal;
use crate::equiv;

impl EditHost {
    /// The class of the change under the session's preserve contract (`None` without one).
    pub(super) fn preserved(
        &self,
        index: usize,
        item: Item,
        checked: &Checked,
    ) -> Result<Option<&'static str>, Refusal> {
        let Some(kind) = &checked.preserve else { return Ok(None) };
        if checked.code.is_some() && checked.code == checked.original_code {
            return Ok(Some("identical-code"));
        }
        let workspace = self.ws(self.sessions[index].program);
        let symbol_of = equiv::symbol_of(workspace, item);
        let verdict = match (&checked.lowered, equiv::Lowered::closure(workspace, item)) {
            (Some(new), Some(old)) => {
                let comparison =
                    equiv::compare(&old, &symbol_of, new, &symbol_of, None, false, cairn_smt::Options::default());
                Some((comparison.verdict, old))
            }
            _ => None,
        };
        if kind == "equivalent" && matches!(verdict, Some((cairn_smt::Verdict::Equivalent, _))) {
            return Ok(Some("smt-equivalent"));
        }
        let (reason, witness, hint) = match &verdict {
            Some((cairn_smt::Verdict::Equivalent, _)) => (
                "not-identical-code: the emitted code differs from the original's, though Z3 finds the two equivalent (preserve: equivalent would admit it)".to_string(),
                None,
                "Keep the original's code: rename locals or reformat, but compute exactly what the original computes, the same way.".to_string(),
            ),
            Some((cairn_smt::Verdict::Differs(w), old)) => {
                let function = old.get(&symbol_of).expect("lowered");
                (
                    "behavior-changed".to_string(),
                    Some(equiv::witness_record(w, function)),
                    format!("{} Keep the original's answer on these inputs.", equiv::witness_sentence(w, function)),
                )
            }
            Some((cairn_smt::Verdict::Unknown(why), _)) => (
                format!("unknown: {why}"),
                None,
                "Make a smaller change whose effect Z3 can decide, or keep the original's code.".to_string(),
            ),
            _ => (
                "unknown: the function could not be compared".to_string(),
                None,
                "Keep the original's code.".to_string(),
            ),
        };
        let symbol = &self.sessions[index].symbol;
        Err(self
            .rejection(
                "E-PRESERVE",
                format!("Under preserve: {kind}, the new body of {symbol} must keep the original's behaviour, and this change could not be shown to."),
            )
            .detail("reason", Value::String(reason))
            .detail("witness", serde_json::to_value(witness).unwrap_or_default())
            .hint(hint))
    }
}

/// A function's emitted code up to renaming: its MIR without names, source anchors or the
/// guarded expressions' ids (what `preserve: identical` compares).
pub(super) fn emitted_code(workspace: &Workspace, item: Item) -> Option<Vec<cairn_mir::Function>> {
    let db = workspace.db();
    let own = cairn_mir::fn_mir(db, item).as_ref().ok().map(|function| equiv::strip(function))?;
    // What its lowering made — its closures' code, lanes, adapters — is its emitted code too: a
    // closure whose body changed is not the same code.
    let instance = cairn_hir::instance::Instance::monomorphic(db, item);
    let mut code = vec![own];
    code.extend(cairn_mir::instance_extra_mir(db, instance).iter().map(|f| equiv::strip(f)));
    Some(code)
}
