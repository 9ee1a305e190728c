//! Steps 6 and 8 of judging a reply: effects. The target's new row stays within the host's
//! ceiling (`E-EFFECT-EXPANSION`), and no other function's row gains an effect through it
//! (`E-CALLER-EFFECT`); the rows that moved are shown in the admission's `changed`.

use cairn_hir::{Item, Workspace};
use serde_json::Value;

use super::checked::Checked;
use super::checked::Moved;
use crate::edit::EditHost;
use crate::edit::refusal::Refusal;
use crate::program::row_of;

impl EditHost {
    /// The target's new row holds nothing outside the ceiling.
    pub(super) fn within_ceiling(&self, index: usize, checked: &Checked) -> Result<(), Refusal> {
        let session = &self.sessions[index];
        let added: Vec<&str> =
            checked.row.iter().filter(|e| !session.ceiling.contains(*e)).map(String::as_str).collect();
        if added.is_empty() {
            return Ok(());
        }
        Err(self
            .rejection(
                "E-EFFECT-EXPANSION",
                format!("The new body of {} does more than the host allows.", session.symbol),
            )
            .detail("added_effects", Value::from(added.clone()))
            .hint(effects_hint(&added)))
    }

    /// No other function's row gained an effect.
    pub(super) fn callers_unmoved(&self, checked: &Checked) -> Result<(), Refusal> {
        let Some(moved) = checked.moved.iter().find(|m| !m.gained.is_empty()) else { return Ok(()) };
        let gained: Vec<&str> = moved.gained.iter().map(String::as_str).collect();
        Err(self
            .rejection(
                "E-CALLER-EFFECT",
                format!("The edit makes {} do more: its row gains {}.", moved.name, gained.join(", ")),
            )
            .detail("symbol", Value::from(moved.name.as_str()))
            .detail("added_effects", Value::from(gained.clone()))
            .hint(effects_hint(&gained)))
    }
}

/// The other own functions whose rows differ between two checks (none when the rows are shared).
pub(super) fn moved_rows(
    workspace: &Workspace,
    before: Option<&cairn_hir::Rows>,
    after: Option<&cairn_hir::Rows>,
    target: Item,
) -> Vec<Moved> {
    let (Some(before), Some(after)) = (before, after) else { return Vec::new() };
    if std::ptr::eq(before, after) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        // Functions, and the methods of impls (their rows move with what they call too).
        for entry in file.items.iter().chain(&file.members) {
            if !matches!(entry.key.kind, cairn_hir::ItemKind::Fn | cairn_hir::ItemKind::Method) || entry.item == target
            {
                continue;
            }
            let old = before.row(entry.item);
            if old == after.row(entry.item) {
                continue;
            }
            let new_row = row_of(Some(after), entry.item);
            let gained: Vec<String> = new_row
                .iter()
                .filter(|e| old.is_none_or(|o| !o.iter().any(|x| x.as_ref() == e.as_str())))
                .cloned()
                .collect();
            let name = workspace.full_name(entry.item).to_string();
            let local = match entry.key.module.is_empty() {
                true => name.clone(),
                false => name[entry.key.module.len() + 1..].to_string(),
            };
            out.push(Moved {
                module: entry.key.module.to_string(),
                local,
                name,
                signature: cairn_hir::render::signature_text(workspace.db(), entry.item, true),
                row: new_row,
                gained,
            });
        }
    }
    out
}

/// The hint of an effect refusal: how each added effect arises, and that the ceiling stays.
fn effects_hint(added: &[&str]) -> String {
    let parts: Vec<String> = added.iter().map(|e| cairn_diagnostics::hints::effect_construct(e)).collect();
    format!("{}; the ceiling is the host's, so change the code rather than the ceiling.", parts.join("; "))
}
