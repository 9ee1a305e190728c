//! `textDocument/inlayHint`: the type the checker gave each `let` written without one
//! (`let n = 3;` shows `:u64` after `n`), and the effect row of each call of a declared function
//! that has one (`sum(n, xs)` shows ` effects(read:xs, trap)` after it, in the callee's terms), in
//! the range asked for. Types and call targets come from the function's check
//! (`representative_check`), rows from the last whole check's rows — never a second inference.

use serde_json::{Value, json};

use super::cursor::locals_of;
use crate::world::Project;
use cairn_hir::scopes::{BindingKind, LocalRef};

pub(super) fn inlay_hints(project: &Project, file: usize, start: usize, end: usize) -> Value {
    let workspace = &project.workspace;
    let db = workspace.db();
    let state = &workspace.files()[file];
    let text = state.text();
    let map = crate::convert::LineMap::new(text);
    let mut hints = Vec::new();
    for entry in &state.items {
        let item_start = usize::from(entry.start);
        let node = entry.item.syntax(db).syntax_node();
        let item_end = item_start + usize::from(node.text_range().len());
        if item_end < start
            || item_start > end
            || !matches!(node.kind(), cairn_syntax::SyntaxKind::FN | cairn_syntax::SyntaxKind::TEST)
        {
            continue;
        }
        let check = cairn_hir::representative_check(db, entry.item);
        for binding in locals_of(db, entry.item).bindings {
            let (LocalRef::Binder(binder), BindingKind::Let { .. }) = (binding.local, binding.kind) else { continue };
            let at = item_start + usize::from(binding.range.end());
            if at < start || at > end {
                continue;
            }
            // Only a binder written without its type: the next significant character is not `:`.
            if text[at..].trim_start().starts_with(':') {
                continue;
            }
            let Some(ty) = check.binder_types.get(binder.0 as usize).filter(|t| !t.is_error()) else { continue };
            let (line, character) = map.position(text, at);
            hints.push(
                json!({"position": {"line": line, "character": character}, "label": format!(":{ty}"), "kind": 1}),
            );
        }
        // Calls: the callee's row after the call.
        let rows = workspace.last_rows();
        let map_of = cairn_hir::body::fn_source_map(db, entry.item);
        for (expr, target) in check.call_targets.iter() {
            let cairn_hir::check::CallTarget::Function(callee, _) = target else { continue };
            let Some(row) = rows.as_ref().and_then(|r| r.row(*callee)).filter(|r| !r.is_empty()) else { continue };
            let Some(range) = map_of.exprs.get(expr.0 as usize) else { continue };
            let at = item_start + usize::from(range.end());
            if at < start || at > end || at > text.len() {
                continue;
            }
            let effects: Vec<&str> = row.iter().map(|e| &**e).collect();
            let (line, character) = map.position(text, at);
            hints.push(json!({
                "position": {"line": line, "character": character},
                "label": format!(" effects({})", effects.join(", ")),
                "kind": 2,
                "paddingLeft": false
            }));
        }
    }
    json!(hints)
}
