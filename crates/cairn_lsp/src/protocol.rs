//! What the server says about itself on the wire (protocol §17): the capabilities `initialize`
//! answers with, the semantic token legend they advertise, and the shape check every request's
//! parameters pass before anything is looked up.
//!
//! Invariant: a method `check_params` accepts is one the capabilities advertise and the features
//! answer; any other is `-32601`. Nothing here reads the documents or the analysis state.

use serde_json::{Value, json};

/// A request's failure: a JSON-RPC error code and message.
pub type Failure = (i32, String);

/// The capabilities `initialize` answers with.
pub fn capabilities() -> Value {
    json!({
        "positionEncoding": "utf-16",
        // Incremental: an edit sends its range, not the whole text (docs/decisions.md).
        "textDocumentSync": {"openClose": true, "change": 2},
        "hoverProvider": true,
        "definitionProvider": true,
        "referencesProvider": true,
        "documentHighlightProvider": true,
        "documentSymbolProvider": true,
        "workspaceSymbolProvider": true,
        "codeActionProvider": {"codeActionKinds": ["quickfix"]},
        "codeLensProvider": {"resolveProvider": false},
        "documentFormattingProvider": true,
        "completionProvider": {"triggerCharacters": ["."]},
        "signatureHelpProvider": {"triggerCharacters": ["(", ","]},
        "renameProvider": true,
        "inlayHintProvider": true,
        "semanticTokensProvider": {
            "legend": {"tokenTypes": TOKEN_TYPES, "tokenModifiers": TOKEN_MODIFIERS},
            "full": true
        }
    })
}

/// The semantic token types, in legend order (protocol §17).
pub const TOKEN_TYPES: &[&str] = &[
    "namespace",
    "type",
    "struct",
    "enum",
    "interface",
    "typeParameter",
    "parameter",
    "variable",
    "property",
    "enumMember",
    "function",
    "method",
    "macro",
    "effect",
];
/// The semantic token modifiers, in bit order.
pub const TOKEN_MODIFIERS: &[&str] = &["declaration", "readonly", "defaultLibrary", "mutable"];

/// Checks a request's method and the shape of its parameters before anything is looked up:
/// `-32601` for a method the server does not offer, `-32602` (invalid params) for parameters
/// missing what the method needs or holding the wrong types (a position whose line or character
/// is not a non-negative 32-bit integer, a `uri` that is not a string, …).
pub fn check_params(method: &str, params: &Value) -> Result<(), Failure> {
    let invalid = |what: &str| Err((-32602, format!("invalid params for {method}: {what}")));
    let needs_position = match method {
        "textDocument/hover"
        | "textDocument/definition"
        | "textDocument/references"
        | "textDocument/documentHighlight"
        | "textDocument/completion"
        | "textDocument/signatureHelp"
        | "textDocument/rename" => true,
        "textDocument/documentSymbol"
        | "textDocument/codeAction"
        | "textDocument/semanticTokens/full"
        | "textDocument/codeLens"
        | "textDocument/formatting"
        | "textDocument/inlayHint" => false,
        "workspace/symbol" => {
            return match params.get("query") {
                Some(Value::String(_)) => Ok(()),
                _ => invalid("`query` must be a string"),
            };
        }
        _ => return Err((-32601, format!("method not found: {method}"))),
    };
    if !params.pointer("/textDocument/uri").is_some_and(Value::is_string) {
        return invalid("`textDocument.uri` must be a string");
    }
    let is_position = |value: Option<&Value>| -> bool {
        let number = |key: &str| {
            value.and_then(|v| v.get(key)).and_then(Value::as_u64).is_some_and(|n| n <= u64::from(u32::MAX))
        };
        number("line") && number("character")
    };
    if needs_position && !is_position(params.get("position")) {
        return invalid("`position` must hold a `line` and a `character`, each a non-negative integer");
    }
    if method == "textDocument/codeAction"
        && !(is_position(params.pointer("/range/start")) && is_position(params.pointer("/range/end")))
    {
        return invalid("`range` must hold a `start` and an `end` position");
    }
    if method == "textDocument/references"
        && params.pointer("/context/includeDeclaration").is_some_and(|v| !v.is_boolean())
    {
        return invalid("`context.includeDeclaration` must be a boolean");
    }
    Ok(())
}
