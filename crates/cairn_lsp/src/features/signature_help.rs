//! `textDocument/signatureHelp`: inside a call's parentheses, the callee's signature and the
//! parameter the cursor is at (commas counted at the call's own depth). The callee is resolved by
//! the program's scope from the cursor's module (a function, or a module's function through its
//! alias); a builtin shows its name with the arguments counted.

use serde_json::{Value, json};

use super::cursor::{Cursor, item_at, run_start};

pub(super) fn signature_help(cursor: &Cursor<'_>) -> Value {
    let text = cursor.text;
    let offset = cursor.offset.min(text.len());
    // Back from the cursor to the `(` that opens the call it is in, counting commas at depth 0.
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut commas = 0usize;
    let mut open = None;
    let mut i = offset;
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
            b'(' => {
                open = Some(i);
                break;
            }
            b'[' | b'{' | b';' => break,
            b',' if depth == 0 => commas += 1,
            _ => {}
        }
    }
    let Some(open) = open else { return Value::Null };
    let callee_end = open;
    let callee_start = run_start(text, callee_end, |c| c.is_alphanumeric() || c == '_' || c == '.');
    let callee = &text[callee_start..callee_end];
    if callee.is_empty() {
        return Value::Null;
    }
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let scope = cairn_hir::scope(db);
    let module = item_at(workspace, cursor.file, offset)
        .map_or_else(|| workspace.files()[cursor.file].module_at_start.clone(), |(item, _, _)| scope.module_of(item));
    let segments: Vec<std::sync::Arc<str>> = callee.split('.').map(std::sync::Arc::from).collect();
    let found = scope.resolve_path(&module, &segments, |k| k == cairn_hir::ItemKind::Fn);
    let cairn_hir::Lookup::Found(decl) = found else { return Value::Null };
    let label = cairn_hir::render::signature_text(db, decl.item, true);
    let signature = cairn_hir::fn_signature(db, decl.item);
    let parameters: Vec<Value> =
        signature.params.iter().map(|p| json!({"label": format!("{}:{}", p.name, p.ty)})).collect();
    let active = commas.min(parameters.len().saturating_sub(1));
    json!({
        "signatures": [{"label": label, "parameters": parameters}],
        "activeSignature": 0,
        "activeParameter": active
    })
}
