//! The diagnostics published for an open document (protocol §17): every refusal of its project's
//! check as an LSP diagnostic, with the exact token range, the message and its repair hint on a
//! new line, a link to the rule card that owns the code, and the `data` the code actions read.
//! The project's first refusal shows on every open file (at the top, prefixed `file:line:`, with
//! related information, when it lies in another file); further ones on their own file. A manifest
//! that does not load, and a text over the source limit, are the document's one diagnostic.
//!
//! Invariant: a diagnostic's line and column stay as the checker reports them (the command line
//! prints the same); only the range an editor marks may narrow, to the written type of an
//! unknown type (`diagnostic_span`).

use cairn_syntax::TextSize;
use serde_json::{Value, json};

use crate::convert::{LineMap, path_to_uri};
use crate::world::{Environment, Project, Snapshot};

/// The diagnostics of one open document (protocol §17): the project's first refusal on every
/// open file (at the top, prefixed with `file:line`, when it lies elsewhere), each further
/// refusal on its own file.
pub fn diagnostics_for(snapshot: &Snapshot<'_>, uri: &str) -> Vec<Value> {
    let Some((doc, project)) = snapshot.document(uri) else { return Vec::new() };
    if let Some(size) = doc.oversized {
        let diagnostic = cairn_diagnostics::Diagnostic::new(
            "E-SOURCE-LIMIT",
            format!(
                "This document holds {size} bytes; a program's sources hold at most {} bytes together, so it is not analysed. Split it into modules, then reopen it.",
                cairn_vfs::SOURCE_LIMIT
            ),
        );
        let place = Place::Elsewhere { prefix: String::new(), related: None };
        return vec![lsp_diagnostic(snapshot, &diagnostic, "", &LineMap::new(""), place)];
    }
    if let Some(environment) = &project.environment {
        return vec![environment_diagnostic(snapshot, environment, &project.workspace.files()[doc.file].text())];
    }
    let Some(refusal) = project.outcome.as_ref().and_then(|o| o.refusal.as_ref()) else { return Vec::new() };
    let name = &project.files[doc.file].name;
    let text = &project.workspace.files()[doc.file].text();
    let map = LineMap::new(text);
    let own_file = |d: &cairn_diagnostics::Diagnostic| match &d.file {
        Some(file) => file == name,
        None => project.files.len() == 1,
    };
    let mut out = Vec::new();
    let root = project.workspace.files()[doc.file].parse().syntax_node();
    for (i, diagnostic) in std::iter::once(&refusal.first).chain(refusal.further.iter()).enumerate() {
        if own_file(diagnostic) && diagnostic.line > 0 {
            out.push(lsp_diagnostic(snapshot, diagnostic, text, &map, Place::Here(&root, uri)));
        } else if i == 0 {
            let (prefix, related) = elsewhere(snapshot, project, diagnostic);
            out.push(lsp_diagnostic(snapshot, diagnostic, text, &map, Place::Elsewhere { prefix, related }));
        }
    }
    out
}

/// The byte range of the token that starts at a 1-based line and character column (zero-width
/// when none does, or when the position is 0).
pub fn token_at(text: &str, map: &LineMap, line: u32, column: u32) -> (usize, usize) {
    if line == 0 {
        return (0, 0);
    }
    let start = map.offset_of_char_column(text, line, column);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let lexed = cairn_syntax::lex(&text[start..line_end]);
    match lexed.tokens.first() {
        Some(token) if !token.kind.is_trivia() => (start, start + usize::from(token.len)),
        _ => (start, start),
    }
}

/// The byte range a diagnostic marks in `text`: the token at its line and column, except that an
/// unknown type (`E-TYPE` "Unknown type T.", reported at the start of the declaration or statement
/// that writes it) marks the written type's path, found in `root`, the text's syntax tree, when
/// given. The command line's line and column stay as the checker reports them; only the range
/// narrows, so that the import quick fix reads the type's name from it.
pub fn diagnostic_span(
    diagnostic: &cairn_diagnostics::Diagnostic,
    text: &str,
    map: &LineMap,
    root: Option<&cairn_syntax::SyntaxNode>,
) -> (usize, usize) {
    let token = token_at(text, map, diagnostic.line, diagnostic.column);
    // Boundary: the checker's message (crates/cairn_hir/src/decl.rs and consts.rs) is the only
    // place the unknown type is named; a change of its wording leaves the token's range.
    let written = match diagnostic.code.as_str() {
        // "Unknown type T." or "Unknown type T: it is the library's, …".
        "E-TYPE" => diagnostic.message.strip_prefix("Unknown type ").and_then(|rest| match rest.split_once(": ") {
            Some((written, _)) => Some(written),
            None => rest.strip_suffix('.'),
        }),
        _ => None,
    };
    match (written, root) {
        (Some(written), Some(root)) if diagnostic.line > 0 => unknown_type_at(root, token.0, written).unwrap_or(token),
        _ => token,
    }
}

/// `E-PROJECT-OR-ENVIRONMENT` at the top of the document, with the manifest as related
/// information.
fn environment_diagnostic(snapshot: &Snapshot<'_>, environment: &Environment, text: &str) -> Value {
    let mut diagnostic =
        cairn_diagnostics::Diagnostic::new(cairn_diagnostics::record::ENVIRONMENT_CODE, environment.message.clone());
    // The manifest is read when a document opens, and again when the editor says it changed.
    diagnostic.repair_hint =
        Some(format!("Fix {}; saving it reloads this file's project.", environment.manifest.display()));
    let top = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    let manifest = json!({
        "location": {"uri": path_to_uri(&environment.manifest), "range": top},
        "message": format!("the project's manifest, {}", environment.manifest.display()),
    });
    let place = Place::Elsewhere { prefix: String::new(), related: Some(manifest) };
    lsp_diagnostic(snapshot, &diagnostic, text, &LineMap::new(text), place)
}

/// Where a refusal outside this file lies: its prefix and, when it is a file with a URI, a
/// location for the related information.
fn elsewhere(
    snapshot: &Snapshot<'_>,
    project: &Project,
    diagnostic: &cairn_diagnostics::Diagnostic,
) -> (String, Option<Value>) {
    let file = diagnostic.file.clone().unwrap_or_default();
    let prefix = if diagnostic.line > 0 { format!("{file}:{}: ", diagnostic.line) } else { String::new() };
    let uri = match project.files.iter().position(|f| f.name == file) {
        Some(i) => {
            let state = &project.workspace.files()[i];
            Some((project.files[i].uri.clone(), state.text().to_string(), Some(state.parse().syntax_node())))
        }
        None => cairn_hir::library::MODULES
            .iter()
            .find(|m| m.file == file)
            .and_then(|m| snapshot.materialized.map(|dir| (path_to_uri(&dir.join(m.file)), m.text.to_string(), None))),
    };
    let location = uri.filter(|_| diagnostic.line > 0).map(|(uri, text, root)| {
        let map = LineMap::new(&text);
        let (start, end) = diagnostic_span(diagnostic, &text, &map, root.as_ref());
        json!({"location": {"uri": uri, "range": map.range(&text, start, end)}, "message": diagnostic.message})
    });
    (prefix, location)
}

/// One refusal as the LSP shows it, at `place` on the document whose text and line map are given.
fn lsp_diagnostic(
    snapshot: &Snapshot<'_>,
    diagnostic: &cairn_diagnostics::Diagnostic,
    text: &str,
    map: &LineMap,
    place: Place<'_>,
) -> Value {
    let here = matches!(place, Place::Here(..));
    let (range, prefix, related) = match place {
        Place::Here(root, uri) => {
            let (start, end) = diagnostic_span(diagnostic, text, map, Some(root));
            // The rule's second places (where the value moved, where the name was bound first).
            // Places in this document (a place in another file is named in the message's file).
            let places =
                cairn_diagnostics::RelatedPlace::of(diagnostic).into_iter().filter(|p| p.file.is_none()).map(|place| {
                    let (start, end) = token_at(text, map, place.line, place.column);
                    json!({"location": {"uri": uri, "range": map.range(text, start, end)}, "message": place.label})
                });
            (map.range(text, start, end), String::new(), places.collect())
        }
        Place::Elsewhere { prefix, related } => (map.range(text, 0, 0), prefix, related.into_iter().collect()),
    };
    let card = cairn_diagnostics::registry::card_of(&diagnostic.code);
    let hint = diagnostic
        .repair_hint
        .clone()
        .or_else(|| cairn_diagnostics::hints::static_hint(&diagnostic.code).map(str::to_string));
    let mut message = format!("{prefix}{}", diagnostic.message);
    if let Some(hint) = &hint {
        message.push('\n');
        message.push_str(hint);
    }
    let source_line = if diagnostic.line > 0 && here {
        cairn_diagnostics::LineIndex::new(text).line_text(text, diagnostic.line).map(str::to_string)
    } else {
        None
    };
    let mut out = json!({
        "range": range,
        "severity": 1,
        "code": diagnostic.code,
        "source": "cairn",
        "message": message,
        "data": {"code": diagnostic.code, "hint": hint, "card": card.map(|c| c.name), "source_line": source_line,
                 "details": Value::Object(diagnostic.details.iter().map(|(k, v)| (k.clone(), v.clone())).collect())},
    });
    let mut related_information: Vec<Value> = related;
    if let (Some(card), Some(dir)) = (card, snapshot.materialized) {
        // A core card lives in SKILL.md's core rules, any other in cards/<name>.md.
        let relative = cairn_diagnostics::skill::card_path(card);
        let (file, anchor) = relative.split_once('#').map_or((relative.as_str(), None), |(f, a)| (f, Some(a)));
        let mut card_uri = path_to_uri(&dir.join(file));
        if let Some(anchor) = anchor {
            card_uri.push('#');
            card_uri.push_str(anchor);
        }
        out["codeDescription"] = json!({"href": card_uri});
        // The card as related information too, for clients that show no code links.
        related_information.push(json!({
            "location": {"uri": card_uri, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}},
            "message": format!("rule card `{}` (cairn rules {})", card.name, diagnostic.code),
        }));
    }
    if !related_information.is_empty() {
        out["relatedInformation"] = json!(related_information);
    }
    out
}

/// Where a diagnostic is shown on a document.
enum Place<'a> {
    /// At its own line and column of this document (its syntax tree and URI).
    Here(&'a cairn_syntax::SyntaxNode, &'a str),
    /// At the top: it lies in another file (or is about the manifest); `prefix` says where, and
    /// `related` points there when it can.
    Elsewhere { prefix: String, related: Option<Value> },
}

/// The first type path written `written` from `from` on, inside the top-level node that holds
/// `from`: its byte range without generic arguments (`Option` of `Option[u32]`).
fn unknown_type_at(root: &cairn_syntax::SyntaxNode, from: usize, written: &str) -> Option<(usize, usize)> {
    let offset = TextSize::from(from as u32);
    let declaration = root.children().find(|c| c.text_range().contains_inclusive(offset))?;
    let path = declaration
        .descendants()
        .filter(|n| n.kind() == cairn_syntax::SyntaxKind::PATH_TYPE && n.text_range().start() >= offset)
        .filter_map(|n| n.children().find(|c| c.kind() == cairn_syntax::SyntaxKind::PATH))
        .find(|p| p.text().to_string().split_whitespace().collect::<String>() == written)?;
    Some((usize::from(path.text_range().start()), usize::from(path.text_range().end())))
}
