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
    let is_fn = |k| k == cairn_hir::ItemKind::Fn;
    // Method syntax (`q.push(…)`): the function named last, whose first argument is the
    // receiver (protocol §17: "method syntax counts the receiver").
    let (found, receiver) = match scope.resolve_path(&module, &segments, is_fn) {
        cairn_hir::Lookup::Found(decl) => (Some(decl), 0),
        cairn_hir::Lookup::None if segments.len() > 1 => {
            match scope.resolve_path(&module, &segments[segments.len() - 1..], is_fn) {
                cairn_hir::Lookup::Found(decl) => (Some(decl), 1),
                cairn_hir::Lookup::None => (None, 0),
            }
        }
        cairn_hir::Lookup::None => (None, 0),
    };
    let Some(decl) = found else { return Value::Null };
    let label = cairn_hir::render::signature_text(db, decl.item, true);
    // Each parameter as the label writes it (a template's as written: `a:T`, not `a:T0`).
    let parameters: Vec<Value> = written_params(&label).into_iter().map(|p| json!({"label": p})).collect();
    let active = (commas + receiver).min(parameters.len().saturating_sub(1));
    json!({
        "signatures": [{"label": label, "parameters": parameters}],
        "activeSignature": 0,
        "activeParameter": active
    })
}

/// The parameters of a signature's text (`fn f[T:integer](a:T, b:ro<T>[n]) -> T`), each as
/// written, split at the commas of the parameter list's own depth.
fn written_params(label: &str) -> Vec<String> {
    let mut depth = 0i32;
    let mut start = None;
    let mut out = Vec::new();
    for (i, c) in label.char_indices() {
        match c {
            '[' | '<' => depth += 1,
            ']' | '>' if !label[..i].ends_with('-') => depth -= 1,
            '(' if depth == 0 && start.is_none() => start = Some(i + 1),
            '(' => depth += 1,
            ')' if depth == 0 => {
                if let Some(from) = start {
                    let part = label[from..i].trim();
                    if !part.is_empty() {
                        out.push(part.to_string());
                    }
                }
                return out;
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                if let Some(from) = start {
                    out.push(label[from..i].trim().to_string());
                    start = Some(i + 1);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::written_params;

    #[test]
    fn parameters_are_read_from_the_label_at_its_own_depth() {
        assert_eq!(written_params("fn largest[T:integer](a:T, b:T) -> T"), ["a:T", "b:T"]);
        assert_eq!(
            written_params("fn f(n:usize, xs:ro<u8>[n]@host, g:fn(u64, u8) -> u64)"),
            ["n:usize", "xs:ro<u8>[n]@host", "g:fn(u64, u8) -> u64"]
        );
        assert!(written_params("fn none()").is_empty());
    }
}
