//! `textDocument/codeAction`: the quick fixes the checker can state without guessing, one file per
//! fix, each offered for a published diagnostic of its code that the request's range touches:
//! `make_mutable` (`E-IMMUTABLE`), `cover_variants` (`E-MATCH-COVERAGE`), `import_type`
//! (`E-CALLEE`, `E-TYPE`, `E-UNBOUND`).
//!
//! Invariant: no fix widens a ceiling, a borrow mode or a signature.

mod cover_variants;
mod import_type;
mod make_mutable;

use serde_json::{Value, json};

use self::cover_variants::coverage_fix;
use self::import_type::import_fix;
use self::make_mutable::immutable_fix;
use super::cursor::Cursor;
use crate::diagnostics::diagnostics_for;
use crate::world::Snapshot;

/// Quick fixes the checker can state without guessing (protocol §17): `let` → `let mut` for an
/// assigned immutable local, the missing arms of a `match`, a missing import. None ever widens a
/// ceiling, a borrow mode or a signature.
pub(super) fn code_actions(snapshot: &Snapshot<'_>, cursor: &Cursor<'_>, end: usize) -> Vec<Value> {
    let Some(uri) = cursor.project.files.get(cursor.file).map(|f| f.uri.clone()) else { return Vec::new() };
    let diagnostics = diagnostics_for(snapshot, &uri);
    let mut out = Vec::new();
    for diagnostic in diagnostics {
        let code = diagnostic["code"].as_str().unwrap_or_default();
        let range = &diagnostic["range"];
        let offset = |key: &str| -> usize {
            let line = range.pointer(&format!("/{key}/line")).and_then(Value::as_u64).unwrap_or(0) as u32;
            let character = range.pointer(&format!("/{key}/character")).and_then(Value::as_u64).unwrap_or(0) as u32;
            cursor.map.offset(cursor.text, line, character)
        };
        let (d_start, d_end) = (offset("start"), offset("end"));
        if d_end < cursor.offset || d_start > end {
            continue;
        }
        let edit = match code {
            "E-IMMUTABLE" => immutable_fix(cursor, d_start, d_end),
            "E-MATCH-COVERAGE" => coverage_fix(cursor, d_start, &diagnostic),
            "E-CALLEE" | "E-TYPE" | "E-UNBOUND" => import_fix(cursor, d_start, d_end),
            _ => None,
        };
        if let Some((title, edits)) = edit {
            out.push(json!({
                "title": title,
                "kind": "quickfix",
                "diagnostics": [diagnostic],
                "isPreferred": true,
                "edit": {"changes": {uri.clone(): edits}},
            }));
        }
    }
    out
}

type Fix = (String, Vec<Value>);
