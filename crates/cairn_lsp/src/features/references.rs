//! `textDocument/references` and `textDocument/documentHighlight`: every place that names what the
//! cursor names. A declaration or a variant is found across the program's files (not the
//! library's) by every identifier spelt like it that means the same (a trait's member and the
//! impls' methods of it are one family, calls through the trait included); a local within its function,
//! by the uses the scope resolution ties to its binder, nothing else of that name. Highlights are
//! write (3) at declarations, binders and assignment targets (and the root of one, `p` in
//! `p.x = 1`), read (2) elsewhere.

use std::cell::OnceCell;

use cairn_syntax::{SyntaxKind, TextRange};
use serde_json::{Value, json};

use super::cursor::{Cursor, Meaning, item_at, locals_of, meaning};
use crate::convert::LineMap;
use crate::world::Snapshot;

pub(super) fn references(snapshot: &Snapshot<'_>, cursor: &Cursor<'_>, include_declaration: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for (file, start, end, _) in reference_spans(cursor, include_declaration) {
        if let Some((uri, text)) = snapshot.file_location(cursor.project, file) {
            out.push(json!({"uri": uri, "range": LineMap::new(&text).range(&text, start, end)}));
        }
    }
    out
}

pub(super) fn highlights(cursor: &Cursor<'_>) -> Vec<Value> {
    reference_spans(cursor, true)
        .into_iter()
        .filter(|(file, ..)| *file == cursor.file)
        .map(|(_, start, end, written)| json!({"range": cursor.map.range(cursor.text, start, end), "kind": if written { 3 } else { 2 }}))
        .collect()
}

/// Every place naming what the cursor names: `(file, start, end, is_write)` in byte offsets.
pub(super) fn reference_spans(cursor: &Cursor<'_>, include_declaration: bool) -> Vec<(usize, usize, usize, bool)> {
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let Some((item, _, token)) = item_at(workspace, cursor.file, cursor.offset) else { return Vec::new() };
    let item_locals = OnceCell::new();
    let Some(named) = meaning(workspace, item, &token, &item_locals) else { return Vec::new() };
    let mut out: Vec<(usize, usize, usize, bool)> = Vec::new();
    match named {
        Meaning::Local { function, binder } => {
            // The binder and the uses the scope resolution ties to it, nothing else of that name.
            let Some((file, entry)) = workspace.entry_of(function) else { return out };
            let base = usize::from(entry.start);
            let span = |r: TextRange, written: bool| {
                (file, base + usize::from(r.start()), base + usize::from(r.end()), written)
            };
            if include_declaration {
                out.push(span(binder, true));
            }
            let locals = item_locals.get_or_init(|| locals_of(db, function));
            if let Some(binding) = locals.binding_at(binder) {
                out.extend(locals.uses.iter().filter(|u| u.binding == binding).map(|u| span(u.range, u.written)));
            }
        }
        Meaning::Declaration(_) | Meaning::Variant { .. } => {
            // Every identifier of the program spelt like it that means the same — for a trait's
            // member or an impl's method, anything of its family: the trait's declaration, every
            // impl's method, and every call dispatched through the trait, statically or by `dyn`.
            let family = match &named {
                Meaning::Declaration(target) => cairn_hir::member_family(db, *target),
                _ => None,
            };
            let same = |other: &Meaning| match (other, &family) {
                (Meaning::Declaration(x), Some(family)) => cairn_hir::member_family(db, *x).as_ref() == Some(family),
                _ => *other == named,
            };
            let name: String = match &named {
                Meaning::Variant { name, .. } => name.clone(),
                Meaning::Declaration(target) => {
                    workspace.full_name(*target).rsplit('.').next().unwrap_or("").to_string()
                }
                _ => return out,
            };
            for (file, state) in workspace.files().iter().enumerate().filter(|(_, f)| !f.library) {
                for entry in &state.items {
                    let node = entry.item.syntax(db).syntax_node();
                    let base = usize::from(entry.start);
                    let entry_locals = OnceCell::new();
                    for t in node.descendants_with_tokens().filter_map(|e| e.into_token()) {
                        if t.kind() != SyntaxKind::IDENT || t.text() != name {
                            continue;
                        }
                        if !meaning(workspace, entry.item, &t, &entry_locals).is_some_and(|m| same(&m)) {
                            continue;
                        }
                        let declaration = t.parent().is_some_and(|p| p.kind() == SyntaxKind::NAME);
                        if declaration && !include_declaration {
                            continue;
                        }
                        let r = t.text_range();
                        out.push((file, base + usize::from(r.start()), base + usize::from(r.end()), declaration));
                    }
                }
            }
        }
        Meaning::Builtin(_) => {}
    }
    out.sort();
    out.dedup();
    out
}
