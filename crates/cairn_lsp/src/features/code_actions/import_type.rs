//! The import of a missing name for `E-CALLEE`, `E-TYPE` and `E-UNBOUND`, offered when exactly one
//! other module declares the name `pub`: among the program's modules, the library modules it
//! links, and the packaged library modules it does not import yet (`Option` →
//! `import std.core (Option);`). The import goes after the file's last import or module header,
//! else at the top.

use cairn_syntax::SyntaxKind;
use serde_json::json;

use super::Fix;
use crate::features::cursor::{Cursor, item_at};

/// A name another module declares `pub`, exactly one: import it. The modules are the program's,
/// the library modules it links, and the packaged library modules it does not import yet (which
/// the import then links).
pub(super) fn import_fix(cursor: &Cursor<'_>, start: usize, end: usize) -> Option<Fix> {
    let name = cursor.text.get(start..end)?.to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let workspace = &cursor.project.workspace;
    let scope = cairn_hir::scope(workspace.db());
    let (here, _, _) = item_at(workspace, cursor.file, start)?;
    let module = scope.module_of(here);
    let linked = scope
        .by_full_name
        .iter()
        .filter(|(full, decls)| {
            full.rsplit_once('.').is_some_and(|(m, n)| n == name && *m != *module)
                && decls.iter().any(|d| scope.info(d.item).is_some_and(|i| i.public || i.library))
        })
        .filter_map(|(full, _)| full.rsplit_once('.').map(|(m, _)| m.to_string()));
    let packaged = library_declarations()
        .iter()
        .filter(|(m, n)| n == &name && *m != &*module && !scope.modules.contains_key(*m))
        .map(|(m, _)| m.to_string());
    let candidates: std::collections::BTreeSet<String> = linked.chain(packaged).collect();
    let mut candidates = candidates.into_iter();
    let (Some(from), None) = (candidates.next(), candidates.next()) else { return None };
    // After the last import or module header of the file, else at the top.
    let root = workspace.files()[cursor.file].parse().syntax_node();
    let after = root
        .children()
        .filter(|c| matches!(c.kind(), SyntaxKind::IMPORT | SyntaxKind::MODULE_DECL))
        .last()
        .map_or(0, |n| usize::from(n.text_range().end()));
    let (at, text) = if after == 0 {
        (0, format!("import {from} ({name});\n"))
    } else {
        (after, format!("\nimport {from} ({name});"))
    };
    Some((
        format!("Import {name} from {from}"),
        vec![json!({"range": cursor.map.range(cursor.text, at, at), "newText": text})],
    ))
}

/// The `pub` declarations of every packaged library module, as (module, name), read once from
/// the texts compiled into the binary: a program that does not import a module has none of its
/// declarations in its scope.
fn library_declarations() -> &'static [(&'static str, String)] {
    static DECLARATIONS: std::sync::OnceLock<Vec<(&'static str, String)>> = std::sync::OnceLock::new();
    DECLARATIONS.get_or_init(|| {
        let mut out = Vec::new();
        for module in cairn_hir::library::MODULES {
            let parse = cairn_syntax::parse(module.text);
            for node in parse.syntax_node().children() {
                let public = node.children().any(|c| c.kind() == SyntaxKind::VISIBILITY);
                let declares = matches!(
                    node.kind(),
                    SyntaxKind::FN
                        | SyntaxKind::EXTERN_FN
                        | SyntaxKind::STRUCT
                        | SyntaxKind::ENUM
                        | SyntaxKind::CONST
                        | SyntaxKind::TRAIT
                );
                if let (true, true, Some(name)) =
                    (public, declares, node.children().find(|c| c.kind() == SyntaxKind::NAME))
                {
                    out.push((module.name, name.text().to_string().trim().to_string()));
                }
            }
        }
        out
    })
}
