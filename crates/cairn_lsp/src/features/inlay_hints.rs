//! `textDocument/inlayHint`: the type the checker gave each `let` written without one
//! (`let n = 3;` shows `:u64` after `n`), in the range asked for. Types come from the function's
//! check (`representative_check`'s binder types), never a second inference.

use serde_json::{Value, json};

use super::cursor::locals_of;
use crate::world::Project;
use cairn_hir::scopes::{BindingKind, LocalRef};

pub(super) fn inlay_hints(project: &Project, file: usize, start: usize, end: usize) -> Value {
    let workspace = &project.workspace;
    let db = workspace.db();
    let state = &workspace.files()[file];
    let text = state.text.as_str();
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
        let check = cairn_hir::check::representative_check(db, entry.item);
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
    }
    json!(hints)
}
