//! The `let` → `let mut` fix for `E-IMMUTABLE`. The assigned name is resolved by scope to the
//! binding it names, and only an immutable `let` gets the fix: not a parameter, a loop or arm
//! binder, nor a `let` of a string, which stays a view.

use cairn_syntax::{TextRange, TextSize};
use serde_json::json;

use super::Fix;
use crate::features::cursor::{BindingKind, Cursor, item_at, locals_of};

/// `x = …` on an immutable `let x`: make that `let` mutable. The assigned name is resolved by
/// scope to the binding it names; only a `let` (not a parameter, loop or arm binder, nor a `let`
/// of a string, which stays a view) is offered the fix.
pub(super) fn immutable_fix(cursor: &Cursor<'_>, start: usize, end: usize) -> Option<Fix> {
    let workspace = &cursor.project.workspace;
    let (item, base, _) = item_at(workspace, cursor.file, start)?;
    let relative =
        TextRange::new(TextSize::from((start.checked_sub(base)?) as u32), TextSize::from((end - base) as u32));
    let locals = locals_of(workspace.db(), item);
    let assigned = locals.use_at(relative)?;
    let binding = &locals.bindings[assigned.binding];
    if binding.kind != (BindingKind::Let { mutable: false, string: false }) {
        return None;
    }
    let name = &binding.name;
    let at = base + usize::from(binding.range.start());
    Some((
        format!("Make `{name}` mutable (`let mut {name}`)"),
        vec![json!({"range": cursor.map.range(cursor.text, at, at), "newText": "mut "})],
    ))
}
