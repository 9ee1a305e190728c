//! The missing arms of a `match` for `E-MATCH-COVERAGE`: an arm for each variant the checker
//! names, the bare variant with an empty body `{ }` to fill in and a payload bound to `_`,
//! inserted before the arm list's closing brace (one line per arm when it stands on its own line).

use cairn_hir::{ItemKind, Workspace};
use cairn_syntax::{SyntaxKind, TextSize};
use serde_json::{Value, json};

use super::Fix;
use crate::features::cursor::{Cursor, item_at, significant_range, variant_node};

/// A `match` missing variants: an arm for each, with an empty body to fill in. The checker names
/// each missing variant qualified by its enum's full name (`Light.Amber`,
/// `orchard.fruit.Ripeness.Green`); the arm is written with the bare variant, and a payload
/// variant binds its payload to `_` (always fresh; rename it to use the payload).
pub(super) fn coverage_fix(cursor: &Cursor<'_>, start: usize, diagnostic: &Value) -> Option<Fix> {
    let missing: Vec<&str> =
        diagnostic.pointer("/data/details/missing_variants")?.as_array()?.iter().filter_map(Value::as_str).collect();
    if missing.is_empty() {
        return None;
    }
    let workspace = &cursor.project.workspace;
    let scope = cairn_hir::scope(workspace.db());
    let mut arms: Vec<String> = Vec::new();
    for qualified in &missing {
        let (enum_name, variant) = qualified.rsplit_once('.')?;
        let payload = variant_has_payload(workspace, scope, enum_name, variant)?;
        arms.push(format!("{variant}{} => {{ }}", if payload { "(_)" } else { "" }));
    }
    let (item, base, _) = item_at(workspace, cursor.file, start)?;
    let node = item.syntax(workspace.db()).syntax_node();
    let relative = TextSize::from((start.checked_sub(base)?) as u32);
    // The innermost `match` at the refusal (a nested one lies inside an outer one's range).
    let statement = node
        .descendants()
        .filter(|n| n.kind() == SyntaxKind::MATCH_STMT)
        .filter(|n| n.text_range().contains_inclusive(relative))
        .min_by_key(|n| n.text_range().len())?;
    let arm_list = statement.children().find(|c| c.kind() == SyntaxKind::MATCH_ARM_LIST)?;
    let close = arm_list
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| t.kind() == SyntaxKind::R_CURLY)
        .last()?;
    let close_at = base + usize::from(close.text_range().start());
    let line_start = cursor.text[..close_at].rfind('\n').map_or(0, |i| i + 1);
    let (at, insert) = if cursor.text[line_start..close_at].trim().is_empty() {
        // `}` on a line of its own: one line per arm, indented like the first arm (else two
        // spaces deeper than the `match`).
        let statement_at = base + usize::from(significant_range(&statement).start());
        let indent_of = |offset: usize| -> String {
            let from = cursor.text[..offset].rfind('\n').map_or(0, |i| i + 1);
            cursor.text[from..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
        };
        let first_arm = arm_list
            .children()
            .find(|c| c.kind() == SyntaxKind::MATCH_ARM)
            .map(|arm| base + usize::from(significant_range(&arm).start()))
            .filter(|at| cursor.text[..*at].rfind('\n').map_or(0, |i| i + 1) > statement_at);
        let indent = match first_arm {
            Some(arm_at) => indent_of(arm_at),
            None => format!("{}  ", indent_of(statement_at)),
        };
        (line_start, arms.iter().map(|arm| format!("{indent}{arm}\n")).collect::<String>())
    } else {
        // `}` after other text on its line: the arms go in before it, on that line.
        (close_at, arms.iter().map(|arm| format!("{arm} ")).collect::<String>())
    };
    let names: Vec<&str> = missing.iter().filter_map(|m| m.rsplit_once('.').map(|(_, v)| v)).collect();
    Some((
        format!("Add the missing arms ({})", names.join(", ")),
        vec![json!({"range": cursor.map.range(cursor.text, at, at), "newText": insert})],
    ))
}

/// Whether `variant` of the enum whose full name is `enum_name` carries a payload; `None` when
/// there is no such enum or variant.
fn variant_has_payload(
    workspace: &Workspace,
    scope: &cairn_hir::ProgramScope,
    enum_name: &str,
    variant: &str,
) -> Option<bool> {
    let decl = scope.by_full_name.get(enum_name)?.iter().find(|d| d.kind == ItemKind::Enum)?;
    let found = variant_node(workspace, decl.item, variant)?;
    Some(found.children_with_tokens().any(|e| e.kind() == SyntaxKind::L_PAREN))
}
