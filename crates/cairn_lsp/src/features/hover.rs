//! `textDocument/hover`: on a function, its signature, effect row, declared ceiling, guard sites
//! and the comment above it; on a test, `test name` as written and its effect row; on an
//! expression, its type, the type expected of it and, for a binding, whether it is mutable; on a
//! binder, what a use of it shows; on a variant, the variant as declared and its enum; on a type
//! or a constant, its declaration. Sections are Markdown, separated by rules.

use std::cell::OnceCell;

use cairn_hir::{Item, ItemKind, Workspace};
use cairn_syntax::SyntaxKind;
use serde_json::{Value, json};

use super::cursor::{BindingKind, Cursor, Locals, Meaning, item_at, locals_of, meaning, variant_node};

pub(super) fn hover(cursor: &Cursor<'_>) -> Option<Value> {
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let (item, start, token) = item_at(workspace, cursor.file, cursor.offset)?;
    let mut sections: Vec<String> = Vec::new();
    let locals = OnceCell::new();
    let mut binder = false;
    match meaning(workspace, item, &token, &locals) {
        Some(Meaning::Declaration(target)) => sections.push(declaration_hover(workspace, target)),
        Some(Meaning::Variant { owner, name }) => sections.extend(variant_hover(workspace, owner, &name)),
        Some(Meaning::Builtin(name)) => sections.push(format!("`{name}`: a builtin (`cairn rules calls`)")),
        // A binder (a parameter, a `let`, …): what a use of it would show.
        Some(Meaning::Local { function, binder: range }) if range == token.text_range() => {
            binder = true;
            let locals = locals.get_or_init(|| locals_of(db, function));
            sections.extend(locals.binding_at(range).and_then(|b| binding_hover(workspace, function, locals, b)));
        }
        _ => {}
    }
    // The smallest checked expression under the cursor: its type, what is expected of it, and
    // for a binding whether it is mutable.
    let kind = workspace.entry_of(item).map(|(_, e)| e.key.kind);
    if token.kind() == cairn_syntax::SyntaxKind::PARALLEL_KW && kind == Some(ItemKind::Fn) {
        let relative = usize::from(token.text_range().start()).saturating_sub(start);
        sections.extend(region_hover(workspace, item, cairn_syntax::TextSize::from(relative as u32)));
    }
    if !binder && matches!(kind, Some(ItemKind::Fn | ItemKind::Test)) {
        let relative = cursor.offset - start;
        let map = cairn_hir::body::fn_source_map(db, item);
        let check = cairn_hir::representative_check(db, item);
        let best = map
            .exprs
            .iter()
            .enumerate()
            .filter(|(_, r)| usize::from(r.start()) <= relative && relative <= usize::from(r.end()))
            .filter(|(i, _)| check.expr_types.get(*i).is_some_and(|t| !t.is_error()))
            .min_by_key(|(_, r)| r.len());
        if let Some((_, range)) = best
            && let Some(facts) = cairn_hir::site::site_facts(db, item, *range)
        {
            let mut line = format!("`{}`", facts.ty.clone().unwrap_or_else(|| "?".into()));
            if let Some(expected) = &facts.expected {
                line.push_str(&format!(" (expected `{expected}`)"));
            }
            if facts.tag == "name" {
                let name = token.text().to_string();
                if let Some(binding) = facts.bindings.iter().find(|b| b.name == name) {
                    line.push_str(if binding.mutable { ", a mutable binding" } else { ", an immutable binding" });
                }
            }
            if sections.is_empty() || facts.tag != "call" {
                sections.push(line);
            }
        }
    }
    if sections.is_empty() {
        return None;
    }
    Some(json!({"contents": {"kind": "markdown", "value": sections.join("\n\n---\n\n")}}))
}

/// The hover of a `parallel` keyword (`relative` to the declaration): the region's stable id, how
/// its lanes run, and the plan that splits them.
fn region_hover(workspace: &Workspace, function: Item, relative: cairn_syntax::TextSize) -> Option<String> {
    let db = workspace.db();
    let regions = cairn_hir::regions::fn_regions(db, function);
    let region = regions.iter().find(|r| r.offset == relative)?;
    let schedule = cairn_hir::plans::fn_schedule(db, function);
    if region.kind == "device" {
        let block = if schedule.block == 0 { 256 } else { schedule.block };
        let per_lane = match schedule.per_lane {
            0 | 1 => "one index a thread".to_string(),
            k => format!("{k} consecutive indices a thread"),
        };
        let shaped = if schedule.block == 0 && schedule.per_lane == 0 { "no plan" } else { "the plan's" };
        return Some(format!(
            "`parallel` region `{}` (device, `par:device`): one lane per `{}` in `0..{}`, as device lanes — built for a GPU, a kernel of {block} threads a block and {per_lane} ({shaped}); with `--emulate`, on the host's lane pool. Lanes are race-free by the lane rules, and may touch only device memory (`cairn rules parallel`).",
            region.id, region.binder, region.count
        ));
    }
    let plan = if *schedule == cairn_hir::plans::Schedule::default() {
        "no plan: claims of at least 8,192 elements, every lane of the pool".to_string()
    } else {
        let mut items = Vec::new();
        if schedule.grain > 0 {
            items.push(format!("grain {}", schedule.grain));
        }
        if schedule.lanes > 0 {
            items.push(format!("lanes {}", schedule.lanes));
        }
        if schedule.fuse > 0 {
            items.push(format!("fuse {}", schedule.fuse));
        }
        format!("plan: {}", items.join("; "))
    };
    Some(format!(
        "`parallel` region `{}` ({}): one lane per `{}` in `0..{}`, on the lane pool (one lane per core, or `CAIRN_LANES`; below 16,384 elements the plain loop); {plan}. Lanes are race-free by the lane rules (`cairn rules parallel`).",
        region.id, region.kind, region.binder, region.count
    ))
}

/// A binder's hover, as a use of it shows: its type as the check gave it, and whether it is
/// mutable. The type is the parameter's declared one, else that of a checked use, else that of a
/// `let`'s initializer; none when the check did not reach any of them.
fn binding_hover(workspace: &Workspace, function: Item, locals: &Locals, binding: usize) -> Option<String> {
    let db = workspace.db();
    let found = &locals.bindings[binding];
    let body = cairn_hir::body::fn_body(db, function);
    let map = cairn_hir::body::fn_source_map(db, function);
    let check = cairn_hir::representative_check(db, function);
    let type_of = |id: usize| check.expr_types.get(id).filter(|t| !t.is_error()).map(ToString::to_string);
    let declared = match found.kind {
        BindingKind::Param => cairn_hir::fn_signature(db, function)
            .params
            .iter()
            .find(|p| p.name == found.name)
            .filter(|p| !p.ty.is_error())
            .map(|p| p.ty.to_string()),
        _ => None,
    };
    // A use is a name expression whose identifier is the use's range.
    let used = || {
        locals.uses.iter().filter(|u| u.binding == binding).find_map(|u| {
            map.exprs
                .iter()
                .enumerate()
                .filter(|(i, r)| {
                    r.contains_range(u.range) && matches!(body.exprs.get(*i), Some(cairn_hir::body::Expr::Name(_)))
                })
                .min_by_key(|(_, r)| r.len())
                .and_then(|(i, _)| type_of(i))
        })
    };
    let initialized = || {
        body.stmts.iter().find_map(|stmt| match stmt {
            cairn_hir::body::Stmt::Let { binder, init, .. }
                if map.binders.get(binder.0 as usize).is_some_and(|r| r.contains_range(found.range)) =>
            {
                type_of(init.0 as usize)
            }
            _ => None,
        })
    };
    let ty = declared.or_else(used).or_else(initialized)?;
    let mutable = matches!(found.kind, BindingKind::Let { mutable: true, .. } | BindingKind::Stack);
    Some(format!("`{ty}`{}", if mutable { ", a mutable binding" } else { ", an immutable binding" }))
}

/// A variant's hover: the variant as written, qualified by its enum, and the enum's full name.
fn variant_hover(workspace: &Workspace, owner: Item, name: &str) -> Option<String> {
    let node = variant_node(workspace, owner, name)?;
    let written = node.text().to_string();
    let written = written.trim().trim_end_matches(';').trim_end();
    let full_name = workspace.full_name(owner);
    let short = full_name.rsplit('.').next().unwrap_or(&full_name);
    Some(format!("```cairn\n{short}.{written}\n```\n\na variant of `{full_name}`"))
}

/// A declaration's hover: its signature or declaring line, and for a function its effect row,
/// declared ceiling and guard sites; the comment above it.
fn declaration_hover(workspace: &Workspace, item: Item) -> String {
    let db = workspace.db();
    let Some((file, entry)) = workspace.entry_of(item) else { return String::new() };
    let mut out = String::new();
    match entry.key.kind {
        ItemKind::Fn | ItemKind::Test => {
            // A test is shown as written, not by the internal name it is compiled under.
            let signature = match entry.key.kind {
                ItemKind::Test => format!("test {}", entry.key.name.trim_start_matches("test$")),
                _ => cairn_hir::render::signature_text(db, item, true),
            };
            out.push_str(&format!("```cairn\n{signature}\n```\n"));
            let row = workspace
                .last_rows()
                .and_then(|r| r.row(item).map(|row| row.iter().map(|e| e.to_string()).collect::<Vec<_>>()));
            match row {
                Some(row) if row.is_empty() => out.push_str("\neffects: `pure`"),
                Some(row) => out.push_str(&format!("\neffects: `{}`", row.join(", "))),
                None => out.push_str("\neffects: unknown (the program is refused)"),
            }
            let node = item.syntax(db).syntax_node();
            if let Some(ceiling) = node.children().find(|c| c.kind() == SyntaxKind::CEILING) {
                out.push_str(&format!("  \nceiling: `{}`", ceiling.text().to_string().trim()));
            }
            let sites = workspace.function_sites(item);
            if !sites.is_empty() {
                let list: Vec<String> = sites.iter().map(|(k, n)| format!("{k} {n}")).collect();
                out.push_str(&format!("  \nguard sites: {}", list.join(", ")));
            }
        }
        _ => {
            let text = cairn_hir::render::declaration_text(db, item).unwrap_or_else(|| {
                let node = item.syntax(db).syntax_node();
                node.text()
                    .to_string()
                    .lines()
                    .find(|l| !l.trim_start().starts_with("//"))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            });
            out.push_str(&format!("```cairn\n{text}\n```\n"));
        }
    }
    let comment = comment_above(workspace, file, usize::from(entry.start), item);
    if !comment.is_empty() {
        out.push_str(&format!("\n\n{comment}"));
    }
    out
}

/// The `//` lines directly above a declaration (attached to it as leading trivia, or in the file
/// just before it), joined.
fn comment_above(workspace: &Workspace, file: usize, start: usize, item: Item) -> String {
    let node = item.syntax(workspace.db()).syntax_node();
    let first = cairn_syntax::first_significant_token(&node).map_or(0, |t| usize::from(t.text_range().start()));
    cairn_hir::render::comment_above(&workspace.files()[file].text(), start + first)
}
