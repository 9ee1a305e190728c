//! `textDocument/formatting`: the document in `cairn fmt`'s layout (`cairn_syntax::format`), as
//! one edit replacing the whole text; no edit when it is already formatted, and none (an empty
//! list) when it does not parse — the editor keeps the text, as `cairn fmt` would.

use serde_json::{Value, json};

use crate::convert::LineMap;
use crate::world::Project;

pub(super) fn formatting(project: &Project, file: usize) -> Value {
    let text = project.workspace.files()[file].text();
    match cairn_syntax::format::format(text) {
        Ok(formatted) if formatted != text => {
            let map = LineMap::new(text);
            json!([{"range": map.range(text, 0, text.len()), "newText": formatted}])
        }
        _ => json!([]),
    }
}
