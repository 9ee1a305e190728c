//! A function's plans as program text (language §26): the items of its schedule plan now, the
//! program with a schedule plan or a selection (`plan f use g;`) written right after it, a plan's
//! and a selection's text, and an implementation's `when` condition as written.
//!
//! Shared by the plan and implementation hosts, `cairn tune`, validation and investigations, so
//! it is a leaf of the crate: it reads a checked workspace and its syntax through `cairn_hir` and
//! `cairn_syntax` only, and writes new texts without judging them (the hosts and tools do that).
//!
//! Invariant: a plan's items come in their documented order (`grain`, `lanes`, `fuse`), and a plan
//! or selection written for a function replaces every earlier one of it, taking its line break
//! along, so rewriting a plan does not leave blank lines behind.

use std::collections::BTreeMap;

use cairn_hir::{Item, ItemKind, SourceText, Workspace};
use cairn_syntax::ast::{self, AstNode};

/// The host items and their ranges (language §26).
pub(crate) const HOST_ITEMS: [(&str, u64, u64); 2] = [("grain", 1, (1 << 63) - 1), ("lanes", 1, 1024)];
/// The item that fuses regions, and its range (with two regions or more).
pub(crate) const FUSE: (&str, u64, u64) = ("fuse", 2, 16);

/// A plan's text (`plan f { grain 4096; }`), or `(no plan for f)`.
pub fn plan_text(full: &str, items: &[(&'static str, u64)]) -> String {
    let bare = full.rsplit('.').next().unwrap_or(full);
    if items.is_empty() {
        return format!("(no plan for {bare})");
    }
    let order = ["grain", "lanes", "fuse"];
    let mut items = items.to_vec();
    items.sort_by_key(|(w, _)| order.iter().position(|o| o == w));
    let text: Vec<String> = items.iter().map(|(w, v)| format!("{w} {v};")).collect();
    format!("plan {bare} {{ {} }}", text.join(" "))
}

/// The items of `item`'s schedule plan now, in the documented order.
pub fn plan_items(workspace: &Workspace, item: Item) -> Vec<(&'static str, u64)> {
    let current = current_plan(workspace, item);
    HOST_ITEMS
        .iter()
        .map(|i| i.0)
        .chain([FUSE.0])
        .filter_map(|w| current.get(w).map(|&v| (w, v)))
        .filter(|(_, v)| *v != 0)
        .collect()
}

/// The program's `files` with `item`'s schedule plan set to `items` (written after the function,
/// any other schedule plan of it removed; no plan when `items` is empty).
pub fn with_plan(
    workspace: &Workspace,
    files: &[SourceText],
    item: Item,
    items: &[(&'static str, u64)],
) -> Vec<SourceText> {
    let symbol = cairn_hir::Resolver::new(workspace.db()).full_name(item).to_string();
    let plan = plan_text(&symbol, items);
    let (candidate, _) = write_plan(workspace, files, item, (!items.is_empty()).then_some(plan.as_str()));
    candidate
}

/// The program's `files` with `plan <f> use <symbol>;` written after `item` (any other selection
/// of it removed): how `cairn tune` makes an implementation's candidate.
pub fn with_selection(
    workspace: &Workspace,
    files: &[SourceText],
    item: Item,
    symbol: Option<&str>,
) -> Vec<SourceText> {
    let db = workspace.db();
    let full = cairn_hir::Resolver::new(db).full_name(item).to_string();
    let bare = full.rsplit('.').next().unwrap_or(&full).to_string();
    let mut out = files.to_vec();
    let Some((file, start)) = workspace.locate(item) else { return out };
    let name = workspace.files()[file].name.clone();
    let mut end = usize::from(start) + usize::from(item.syntax(db).syntax_node().text_range().len());
    let state = &workspace.files()[file];
    let mut cuts: Vec<(usize, usize)> = state
        .items
        .iter()
        .filter(|e| e.key.kind == ItemKind::Plan)
        .filter(|e| {
            cairn_hir::implementations::selection_def(db, e.item).as_ref().is_some_and(|s| s.reference == Some(item))
        })
        .map(|e| {
            let s = usize::from(e.start);
            (s, s + usize::from(e.item.syntax(db).syntax_node().text_range().len()))
        })
        .collect();
    cuts.sort_unstable();
    let Some(target) = out.iter_mut().find(|f| f.name == name) else { return out };
    for &(s, e) in cuts.iter().rev() {
        // The selection's line break goes with it (it is written as `\n<plan>`).
        let s = if target.text[..s].ends_with('\n') { s - 1 } else { s };
        target.text.replace_range(s..e, "");
        if s < end {
            end -= e - s;
        }
    }
    if let Some(symbol) = symbol {
        let bare_symbol = symbol.rsplit('.').next().unwrap_or(symbol);
        target.text.insert_str(end, &format!("\nplan {bare} use {bare_symbol};"));
    }
    out
}

/// The selection a plan makes for `item` now, as its label (`plan f use g;`), if any.
pub fn selection_label(workspace: &Workspace, item: Item) -> Option<String> {
    let db = workspace.db();
    program_plans(workspace).find_map(|plan| {
        let selection = cairn_hir::implementations::selection_def(db, plan).as_ref()?.clone();
        (selection.reference == Some(item)).then(|| {
            let values: Vec<String> = selection.values.iter().flatten().map(u64::to_string).collect();
            let brackets = if values.is_empty() { String::new() } else { format!("[{}]", values.join(", ")) };
            let bare = selection.reference_written.rsplit('.').next().unwrap_or("").to_string();
            let chosen = selection.implementation_written.rsplit('.').next().unwrap_or("").to_string();
            format!("plan {bare} use {chosen}{brackets};")
        })
    })
}

/// An implementation's `when` condition as written.
pub fn when_text(db: &dyn cairn_hir::Db, item: Item) -> Option<String> {
    let function = ast::Fn::cast(item.syntax(db).syntax_node())?;
    let condition = function.implements_clause()?.when_clause()?.condition()?;
    Some(condition.syntax().to_string().trim().to_string())
}

/// The `when` condition of `item` with each natural parameter named in `naturals` replaced by its
/// value (an identifier token of that name, never part of a longer word): a tuned instance's
/// condition as its instance sees it.
pub fn when_text_at(db: &dyn cairn_hir::Db, item: Item, naturals: &[(String, u64)]) -> Option<String> {
    let function = ast::Fn::cast(item.syntax(db).syntax_node())?;
    let condition = function.implements_clause()?.when_clause()?.condition()?;
    let mut out = String::new();
    for token in condition.syntax().descendants_with_tokens().filter_map(|e| e.into_token()) {
        let text = token.text();
        match naturals.iter().find(|(name, _)| token.kind() == cairn_syntax::SyntaxKind::IDENT && name == text) {
            Some((_, value)) => out.push_str(&value.to_string()),
            None => out.push_str(text),
        }
    }
    Some(out.trim().to_string())
}

/// The plan a function has now, item by item.
pub(crate) fn current_plan(workspace: &Workspace, item: Item) -> BTreeMap<String, u64> {
    let db = workspace.db();
    let mut out = BTreeMap::new();
    for plan in schedule_plans(workspace, item) {
        for entry in cairn_hir::plans::plan_def(db, plan).items.iter() {
            out.insert(entry.word.to_string(), entry.value.unwrap_or(0));
        }
    }
    out
}

/// The program's `files` with `plan` written right after the function (every schedule plan of it
/// removed; none written when `plan` is `None`), and the index of the function's file: what the plan
/// host admits and [`with_plan`] hands out.
pub(crate) fn write_plan(
    workspace: &Workspace,
    files: &[SourceText],
    item: Item,
    plan: Option<&str>,
) -> (Vec<SourceText>, usize) {
    let db = workspace.db();
    let range = |i: Item| -> Option<(String, usize, usize)> {
        let (file, start) = workspace.locate(i)?;
        let start = usize::from(start);
        Some((
            workspace.files()[file].name.clone(),
            start,
            start + usize::from(i.syntax(db).syntax_node().text_range().len()),
        ))
    };
    let mut candidate = files.to_vec();
    let (name, _, end) = range(item).unwrap_or_default();
    // Removals from the end of each file first, so earlier offsets stay right.
    let mut removals: Vec<(String, usize, usize)> =
        schedule_plans(workspace, item).into_iter().filter_map(range).collect();
    removals.sort_by(|a, b| b.1.cmp(&a.1));
    let mut end = end;
    for (file, start, stop) in removals {
        if let Some(f) = candidate.iter_mut().find(|f| f.name == file) {
            // The line break before the plan goes with it (a plan is written as `\n<plan>`), so a
            // rewritten plan does not leave a blank line behind each time.
            let start = if f.text[..start].ends_with('\n') { start - 1 } else { start };
            f.text.replace_range(start..stop, "");
            if file == name && start < end {
                end -= stop - start;
            }
        }
    }
    let file = candidate.iter().position(|f| f.name == name).unwrap_or(0);
    if let Some(plan) = plan {
        candidate[file].text.insert_str(end, &format!("\n{plan}"));
    }
    (candidate, file)
}

/// The schedule plans (not selections) that name `item`.
fn schedule_plans(workspace: &Workspace, item: Item) -> Vec<Item> {
    let db = workspace.db();
    program_plans(workspace)
        .filter(|&plan| !cairn_hir::plans::plan_def(db, plan).selection)
        .filter(|&plan| cairn_hir::plans::plan_target(db, plan) == Some(item))
        .collect()
}

/// The program's own `plan` declarations (the library's left out), in file and declaration order.
fn program_plans(workspace: &Workspace) -> impl Iterator<Item = Item> + '_ {
    workspace
        .files()
        .iter()
        .filter(|f| !f.library)
        .flat_map(|f| f.items.iter())
        .filter(|e| e.key.kind == ItemKind::Plan)
        .map(|e| e.item)
}
