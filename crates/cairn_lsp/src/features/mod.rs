//! The requests (protocol §17): hover, definition, references, highlights, document and
//! workspace symbols, code actions, semantic tokens, code lenses, formatting, completion, signature help, rename, inlay hints. This module hands each request
//! to the file of its feature, with the document or the cursor its parameters name; parameters
//! were checked for shape before anything is looked up (`protocol::check_params`).
//!
//! Boundary: the features read the analysis state only through the read-only `world::Snapshot`
//! they are handed; nothing under `features/` imports `analysis`, the thread that calls them.
//! What a name at the cursor means comes from `cursor`, the one door to the resolution of locals.

mod code_actions;
mod code_lens;
mod completion;
mod cursor;
mod definition;
mod formatting;
mod hover;
mod inlay_hints;
mod references;
mod rename;
mod semantic_tokens;
mod signature_help;
mod symbols;

use serde_json::{Value, json};

use crate::convert::LineMap;
use crate::protocol::Failure;
use crate::world::{Project, Snapshot};

use self::code_actions::code_actions;
use self::code_lens::code_lenses;
use self::completion::completion;
use self::cursor::Cursor;
use self::definition::definition;
use self::formatting::formatting;
use self::hover::hover;
use self::inlay_hints::inlay_hints;
use self::references::{highlights, references};
use self::rename::rename;
use self::semantic_tokens::semantic_tokens;
use self::signature_help::signature_help;
use self::symbols::{document_symbols, workspace_symbols};

/// Answers one request.
pub fn answer(snapshot: &Snapshot<'_>, method: &str, params: &Value) -> Result<Value, Failure> {
    match method {
        "textDocument/hover" => Ok(at(snapshot, params).and_then(|c| hover(&c)).unwrap_or(Value::Null)),
        "textDocument/definition" => {
            Ok(at(snapshot, params).and_then(|c| definition(snapshot, &c)).unwrap_or(Value::Null))
        }
        "textDocument/references" => {
            let include = params.pointer("/context/includeDeclaration").and_then(Value::as_bool).unwrap_or(true);
            Ok(at(snapshot, params).map_or(Value::Null, |c| json!(references(snapshot, &c, include))))
        }
        "textDocument/documentHighlight" => Ok(at(snapshot, params).map_or(Value::Null, |c| json!(highlights(&c)))),
        "textDocument/documentSymbol" => {
            Ok(document(snapshot, params).map_or(Value::Null, |(p, f)| json!(document_symbols(p, f))))
        }
        "workspace/symbol" => {
            let query = params.get("query").and_then(Value::as_str).unwrap_or_default();
            Ok(json!(workspace_symbols(snapshot, query)))
        }
        "textDocument/codeAction" => {
            Ok(at_range(snapshot, params).map_or(Value::Null, |(c, end)| json!(code_actions(snapshot, &c, end))))
        }
        "textDocument/semanticTokens/full" => {
            Ok(document(snapshot, params).map_or(Value::Null, |(p, f)| json!({"data": semantic_tokens(p, f)})))
        }
        "textDocument/codeLens" => {
            Ok(document(snapshot, params).map_or(Value::Null, |(p, f)| json!(code_lenses(p, f))))
        }
        "textDocument/signatureHelp" => Ok(at(snapshot, params).map_or(Value::Null, |c| signature_help(&c))),
        "textDocument/rename" => {
            let name = params.get("newName").and_then(Value::as_str).unwrap_or_default();
            match at(snapshot, params) {
                Some(c) => rename(snapshot, &c, name),
                None => Ok(Value::Null),
            }
        }
        "textDocument/inlayHint" => Ok(document(snapshot, params).map_or(json!([]), |(p, f)| {
            let text = p.workspace.files()[f].text();
            let map = LineMap::of_file(&p.workspace.files()[f]);
            let point = |key: &str| -> Option<usize> {
                let line = params.pointer(&format!("/range/{key}/line"))?.as_u64()? as u32;
                let character = params.pointer(&format!("/range/{key}/character"))?.as_u64()? as u32;
                Some(map.offset(text, line, character))
            };
            inlay_hints(p, f, point("start").unwrap_or(0), point("end").unwrap_or(text.len()))
        })),
        "textDocument/completion" => Ok(at(snapshot, params).map_or(json!([]), |c| completion(&c))),
        "textDocument/formatting" => Ok(document(snapshot, params).map_or(Value::Null, |(p, f)| formatting(p, f))),
        _ => Err((-32601, format!("method not found: {method}"))),
    }
}

fn document<'a>(snapshot: &Snapshot<'a>, params: &Value) -> Option<(&'a Project, usize)> {
    let uri = params.pointer("/textDocument/uri")?.as_str()?;
    let (doc, project) = snapshot.document(uri)?;
    Some((project, doc.file))
}

fn at<'a>(snapshot: &Snapshot<'a>, params: &Value) -> Option<Cursor<'a>> {
    let (project, file) = document(snapshot, params)?;
    let line = params.pointer("/position/line")?.as_u64()? as u32;
    let character = params.pointer("/position/character")?.as_u64()? as u32;
    let text = project.workspace.files()[file].text();
    let map = LineMap::of_file(&project.workspace.files()[file]);
    let offset = map.offset(text, line, character);
    Some(Cursor { project, file, text, map, offset })
}

fn at_range<'a>(snapshot: &Snapshot<'a>, params: &Value) -> Option<(Cursor<'a>, usize)> {
    let (project, file) = document(snapshot, params)?;
    let text = project.workspace.files()[file].text();
    let map = LineMap::of_file(&project.workspace.files()[file]);
    let point = |key: &str| -> Option<usize> {
        let line = params.pointer(&format!("/range/{key}/line"))?.as_u64()? as u32;
        let character = params.pointer(&format!("/range/{key}/character"))?.as_u64()? as u32;
        Some(map.offset(text, line, character))
    };
    let (start, end) = (point("start")?, point("end")?);
    Some((Cursor { project, file, text, map, offset: start }, end))
}
