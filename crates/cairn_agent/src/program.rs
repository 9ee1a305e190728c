//! Read-only questions over a checked workspace, which the hosts and the tools outside a session
//! (`cairn tune`, `diff`, investigations, the command line) ask alike: which function a name
//! means, who calls a function, its component, its source and comment, rows, the types texts
//! mention, and what a packet leaves out.
//!
//! Boundary: nothing here changes the workspace or a host; each answer reads the last check
//! (its rows and call graph) or the syntax of one declaration. A leaf of the crate: it asks
//! `cairn_hir` only.

use std::collections::{BTreeSet, HashSet};

use cairn_hir::{Item, Workspace};

/// A function's effect row in `rows`, as its effects' names (empty when the rows do not cover
/// it, or there are none).
pub(crate) fn row_of(rows: Option<&cairn_hir::Rows>, item: Item) -> Vec<String> {
    rows.and_then(|r| r.row(item)).map(|r| r.iter().map(|e| e.to_string()).collect()).unwrap_or_default()
}

/// The one function `name` names: its full name, or a module-local name only one module
/// declares. `Err` holds how many functions the name matched (0, or 2 and more).
pub(crate) fn resolve_function(workspace: &Workspace, name: &str) -> Result<Item, usize> {
    if let Some(item) = workspace.function_named(name).or_else(|| workspace.method_named(name)) {
        return Ok(item);
    }
    let mut found = Vec::new();
    for file in workspace.files() {
        for entry in &file.items {
            if entry.key.kind == cairn_hir::ItemKind::Fn && *entry.key.name == *name {
                found.push(entry.item);
            }
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        _ => Err(found.len()),
    }
}

/// The declared function `name` names (a full name, or a name one module declares), for the tools
/// that plan, tune, predict or promote outside a session.
pub fn function_item(workspace: &Workspace, name: &str) -> Option<Item> {
    // A declared function: a plan, a tune, a prediction or a promotion is about one (a method of
    // an impl is not planned: a plan names its function as a path of the module).
    let item = resolve_function(workspace, name).ok()?;
    workspace.entry_of(item).is_some_and(|(_, e)| e.key.kind == cairn_hir::ItemKind::Fn).then_some(item)
}

/// The qualified names of the functions named `name` (any module).
pub(crate) fn qualified_names(workspace: &Workspace, name: &str) -> Vec<String> {
    let scope = cairn_hir::Resolver::new(workspace.db());
    workspace
        .files()
        .iter()
        .filter(|f| !f.library)
        .flat_map(|f| f.items.iter())
        .filter(|e| e.key.kind == cairn_hir::ItemKind::Fn && *e.key.name == *name)
        .map(|e| scope.full_name(e.item).to_string())
        .collect()
}

/// The names of the functions that call `item`, sorted (tests are not functions an agent
/// edits, so they are left out).
pub(crate) fn callers_of(workspace: &Workspace, item: Item) -> Vec<String> {
    let mut out: Vec<String> = workspace
        .callers(item)
        .into_iter()
        .filter(|c| *c != item && workspace.entry_of(*c).is_some_and(|(_, e)| is_function(e.key.kind)))
        .map(|c| workspace.full_name(c).to_string())
        .collect();
    out.sort();
    out
}

/// Every own function connected to `item` through calls, either way (the call graph of the
/// last check's rows).
pub(crate) fn component_of(workspace: &Workspace, item: Item) -> Vec<String> {
    let Some(rows) = workspace.last_rows() else { return vec![workspace.full_name(item).to_string()] };
    let own = |i: Item| {
        workspace.entry_of(i).is_some_and(|(file, e)| !workspace.files()[file].library && is_function(e.key.kind))
    };
    let mut seen: HashSet<Item> = HashSet::new();
    let mut stack = vec![item];
    seen.insert(item);
    while let Some(current) = stack.pop() {
        for next in rows.callees_of(current).into_iter().chain(rows.callers_of(current)) {
            if own(next) && seen.insert(next) {
                stack.push(next);
            }
        }
    }
    let mut names: Vec<String> = seen.into_iter().map(|i| workspace.full_name(i).to_string()).collect();
    names.sort();
    names
}

/// A function's source as written (its declaration text, without the comment above it).
pub fn source_of(workspace: &Workspace, item: Item) -> String {
    let node = item.syntax(workspace.db()).syntax_node();
    let text = node.text().to_string();
    let skip = significant_start(&node);
    text[skip..].trim_end().to_string()
}

/// The first line of the comment above a function (what a focused packet shows as `comment`).
pub(crate) fn first_comment_line(workspace: &Workspace, item: Item) -> String {
    let Some((file, entry)) = workspace.entry_of(item) else { return String::new() };
    let text = &workspace.files()[file].text();
    let start = usize::from(entry.start) + significant_start(&item.syntax(workspace.db()).syntax_node());
    cairn_syntax::comment_lines_above(text, start).first().map(|line| line.to_string()).unwrap_or_default()
}

/// How many of the program's types `name` names (exactly, or by a module-local name).
pub(crate) fn type_matches(workspace: &Workspace, name: &str) -> usize {
    let exact = workspace
        .files()
        .iter()
        .flat_map(|f| &f.items)
        .filter(|e| matches!(e.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum))
        .filter(|e| workspace.full_name(e.item).as_ref() == name)
        .count();
    if exact > 0 {
        return exact;
    }
    workspace
        .files()
        .iter()
        .flat_map(|f| &f.items)
        .filter(|e| {
            matches!(e.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum) && *e.key.name == *name
        })
        .count()
}

/// The declaration text of a type or constant named `name`.
pub(crate) fn type_declaration(workspace: &Workspace, name: &str) -> Option<String> {
    for file in workspace.files() {
        for entry in &file.items {
            if matches!(entry.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum)
                && (*entry.key.name == *name || workspace.full_name(entry.item).as_ref() == name)
            {
                return cairn_hir::render::declaration_text(workspace.db(), entry.item);
            }
        }
    }
    None
}

/// The declarations of the program's types that the texts mention by name.
pub(crate) fn types_mentioned(workspace: &Workspace, texts: &[&str]) -> String {
    let mut words: BTreeSet<String> = BTreeSet::new();
    for text in texts {
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            words.insert(word.to_string());
            if let Some(last) = word.rsplit('.').next() {
                words.insert(last.to_string());
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if matches!(entry.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum)
                && words.contains(&*entry.key.name)
                && let Some(text) = cairn_hir::render::declaration_text(workspace.db(), entry.item)
            {
                out.push(text);
            }
        }
    }
    out.join("\n")
}

/// The traits and impls `item` dispatches through, one declaration a line, in order of first
/// use: a call of an impl's method (static dispatch) brings the impl's trait and the impl
/// (`impl Area for Rect`); a call through `dyn` brings the trait. What the check resolved, read
/// back: nothing is looked up by name.
pub(crate) fn traits_used(workspace: &Workspace, item: Item) -> Vec<String> {
    let db = workspace.db();
    let parent_of = |member: Item| -> Option<Item> {
        let (file, entry) = workspace.entry_of(member)?;
        let parent = entry.key.parent.as_deref()?;
        workspace.files()[file].items.iter().find(|e| e.key == *parent).map(|e| e.item)
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |declaration: Option<Item>| {
        if let Some(text) = declaration.and_then(|d| cairn_hir::render::declaration_text(db, d))
            && !out.contains(&text)
        {
            out.push(text);
        }
    };
    for (_, target) in cairn_hir::representative_check(db, item).call_targets.iter() {
        match target {
            cairn_hir::check::CallTarget::Function(callee, _) => {
                let Some(owner) = parent_of(*callee) else { continue };
                if workspace.entry_of(owner).is_some_and(|(_, e)| e.key.kind == cairn_hir::ItemKind::Impl) {
                    let trait_item = cairn_hir::impl_trait(db, owner);
                    push(trait_item);
                    push(Some(owner));
                }
            }
            cairn_hir::check::CallTarget::Dynamic { member, .. } => push(parent_of(*member)),
            _ => {}
        }
    }
    out
}

/// The declarations of every own type of the program, one per line (a component packet's `types`).
pub(crate) fn all_types(workspace: &Workspace) -> String {
    let mut out: Vec<String> = Vec::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if matches!(entry.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum)
                && let Some(text) = cairn_hir::render::declaration_text(workspace.db(), entry.item)
            {
                out.push(text);
            }
        }
    }
    out.join("\n")
}

/// Every other own function, by module, named as its module writes it (a focused packet's
/// `not_shown`), modules and names sorted. Written straight from the workspace's directory as the
/// packet is serialized: at 86k lines it names about 15,000 functions, and collecting them as
/// strings first, looked up by hash, took 1.5 ms of every open (issue 22).
#[derive(Debug)]
pub(crate) struct NotShown {
    functions: std::sync::Arc<[cairn_hir::OwnFunction]>,
    visible: BTreeSet<String>,
}

impl NotShown {
    pub(crate) fn of(workspace: &Workspace, visible: &BTreeSet<String>) -> NotShown {
        NotShown { functions: workspace.own_functions(), visible: visible.clone() }
    }

    /// The directory's runs of one module, each with at least one function not shown.
    fn runs(&self) -> impl Iterator<Item = &[cairn_hir::OwnFunction]> {
        // The directory is sorted by module and name: one map entry per run of a module.
        self.functions
            .chunk_by(|a, b| a.module == b.module)
            .filter(|run| run.iter().any(|f| !self.visible.contains(f.full.as_ref())))
    }
}

impl serde::Serialize for NotShown {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for run in self.runs() {
            map.serialize_entry(run[0].module.as_ref(), &Names { run, visible: &self.visible })?;
        }
        map.end()
    }
}

/// The functions of one module's run that are not shown.
struct Names<'a> {
    run: &'a [cairn_hir::OwnFunction],
    visible: &'a BTreeSet<String>,
}

impl serde::Serialize for Names<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer
            .collect_seq(self.run.iter().filter(|f| !self.visible.contains(f.full.as_ref())).map(|f| f.local.as_ref()))
    }
}

/// Where a declaration's own text starts inside its node (past the comment attached to it).
fn significant_start(node: &cairn_syntax::SyntaxNode) -> usize {
    cairn_syntax::first_significant_token(node).map_or(0, |t| usize::from(t.text_range().start()))
}

/// A function an agent edits or sees as one: a declared function, or a method of an impl.
fn is_function(kind: cairn_hir::ItemKind) -> bool {
    matches!(kind, cairn_hir::ItemKind::Fn | cairn_hir::ItemKind::Method)
}
