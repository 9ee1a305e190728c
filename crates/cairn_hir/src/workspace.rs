//! The workspace: the files of one program, their parses, and the database inputs made from them.
//!
//! This is the boundary between text and queries. It parses each file (re-parsing only the edited
//! body when it can), splits the tree into declarations, and keeps one `Item` input per
//! declaration, matched across edits by key so that an unchanged declaration keeps its input and
//! nothing that depends on it re-runs. It also keeps, per file, where each declaration starts, so
//! that positions relative to a declaration can be turned into file positions.
//!
//! Invariant: the `Program` input is written only when the list of declarations (keys, files)
//! changes; an `Item` input only when its declaration's syntax changes.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_diagnostics::{LineColumn, LineIndex};
use cairn_syntax::{Parse, SyntaxKind, SyntaxNode, TextEdit, TextRange, TextSize, ast};
use salsa::{Durability, Setter};

use crate::db::RootDatabase;
use crate::input::{Item, ItemEntry, ItemKey, ItemKind, ItemSyntax, Program};
use crate::library;

/// One file of the workspace.
#[derive(Debug, Clone)]
pub struct FileState {
    /// The file as the manifest names it (`std/core.cairn` for a library module).
    pub name: String,
    pub text: String,
    pub parse: Parse,
    pub line_index: LineIndex,
    /// The declarations of the file in order, each with its start offset.
    pub items: Vec<(ItemKey, Item, TextSize)>,
    /// True for a packaged library module.
    pub library: bool,
    /// The module in effect where the file starts (the previous file's last module).
    pub module_at_start: Arc<str>,
}

/// A source file to load: its name and text.
#[derive(Debug, Clone)]
pub struct SourceText {
    pub name: String,
    pub text: String,
}

/// The files of a program and the database built from them.
pub struct Workspace {
    db: RootDatabase,
    program: Program,
    files: Vec<FileState>,
    /// Inputs by key, reused across edits.
    inputs: HashMap<ItemKey, Item>,
    /// How many files belong to the program (the library files follow them).
    own_files: usize,
}

impl Workspace {
    /// Loads the program's files, then the library modules they import (transitively).
    pub fn new(sources: Vec<SourceText>) -> Workspace {
        let db = RootDatabase::default();
        let program = Program::builder(Arc::from(Vec::new())).durability(Durability::LOW).new(&db);
        let mut workspace =
            Workspace { db, program, files: Vec::new(), inputs: HashMap::new(), own_files: sources.len() };
        let mut module: Arc<str> = Arc::from("");
        for source in sources {
            let parse = cairn_syntax::parse(&source.text);
            let file = workspace.make_file(source.name, source.text, parse, false, module.clone());
            module = last_module(&file.parse.syntax_node()).unwrap_or(module);
            workspace.files.push(file);
        }
        workspace.link_library();
        workspace.split_all();
        workspace
    }

    /// The database (read-only: queries take `&db`).
    pub fn db(&self) -> &RootDatabase {
        &self.db
    }

    /// The program input.
    pub fn program(&self) -> Program {
        self.program
    }

    /// Every file, the program's own first.
    pub fn files(&self) -> &[FileState] {
        &self.files
    }

    /// How many of the files are the program's own (the rest are library modules).
    pub fn own_file_count(&self) -> usize {
        self.own_files
    }

    /// Replaces a file's text after an edit. When the edit falls inside one body, only that body
    /// is re-parsed and only its declaration's input changes.
    pub fn edit_file(&mut self, file: usize, edit: &TextEdit) {
        let state = &self.files[file];
        let new_text = edit.apply(&state.text);
        let parse = state.parse.reparse(edit, &new_text);
        self.replace_file(file, new_text, parse);
    }

    /// Replaces a file's whole text.
    pub fn set_file_text(&mut self, file: usize, text: String) {
        let parse = cairn_syntax::parse(&text);
        self.replace_file(file, text, parse);
    }

    fn replace_file(&mut self, file: usize, text: String, parse: Parse) {
        let state = &mut self.files[file];
        state.line_index = LineIndex::new(&text);
        state.text = text;
        state.parse = parse;
        // A file's last module decides where the next file starts: recompute the chain.
        let mut module: Arc<str> = Arc::from("");
        for state in &mut self.files[..self.own_files] {
            state.module_at_start = module.clone();
            module = last_module(&state.parse.syntax_node()).unwrap_or(module);
        }
        self.link_library();
        self.split_all();
    }

    fn make_file(
        &self,
        name: String,
        text: String,
        parse: Parse,
        library: bool,
        module_at_start: Arc<str>,
    ) -> FileState {
        let line_index = LineIndex::new(&text);
        FileState { name, text, parse, line_index, items: Vec::new(), library, module_at_start }
    }

    /// Adds the library modules the program imports, and the ones they import, once each.
    fn link_library(&mut self) {
        loop {
            let loaded: Vec<String> = self.files.iter().filter(|f| f.library).map(|f| f.name.clone()).collect();
            let mut wanted = Vec::new();
            for file in &self.files {
                for import in imported_modules(&file.parse.syntax_node()) {
                    if let Some(module) = library::module(&import)
                        && !loaded.iter().any(|name| name == module.file)
                        && !wanted.iter().any(|m: &library::LibraryModule| m.file == module.file)
                    {
                        wanted.push(module);
                    }
                }
            }
            if wanted.is_empty() {
                return;
            }
            for module in wanted {
                let parse = cairn_syntax::parse(module.text);
                let file = self.make_file(module.file.to_string(), module.text.to_string(), parse, true, Arc::from(""));
                self.files.push(file);
            }
        }
    }

    /// Splits every file into declarations and updates the inputs that changed.
    fn split_all(&mut self) {
        let mut entries: Vec<ItemEntry> = Vec::new();
        let mut ordinals: HashMap<(Arc<str>, ItemKind, Arc<str>), u32> = HashMap::new();
        let mut live: HashMap<ItemKey, ()> = HashMap::new();
        for (index, file) in self.files.iter_mut().enumerate() {
            let root = file.parse.syntax_node();
            let mut module = file.module_at_start.clone();
            file.items.clear();
            for child in root.children() {
                let kind = child.kind();
                if kind == SyntaxKind::MODULE_DECL {
                    if let Some(path) = ast::AstNode::cast(child.clone()).and_then(|m: ast::ModuleDecl| m.path()) {
                        module = Arc::from(path.text());
                    }
                    continue;
                }
                let Some((item_kind, name)) = classify(&child) else { continue };
                let ordinal = ordinals.entry((module.clone(), item_kind, name.clone())).or_insert(0);
                let key = ItemKey { module: module.clone(), kind: item_kind, name, ordinal: *ordinal };
                *ordinal += 1;
                let syntax = ItemSyntax { green: child.green().to_owned() };
                let durability = if file.library { Durability::HIGH } else { Durability::LOW };
                let item = match self.inputs.get(&key) {
                    Some(&item) => {
                        if item.syntax(&self.db) != &syntax {
                            item.set_syntax(&mut self.db).with_durability(durability).to(syntax);
                        }
                        item
                    }
                    None => {
                        let item = Item::builder(syntax).durability(durability).new(&self.db);
                        self.inputs.insert(key.clone(), item);
                        item
                    }
                };
                live.insert(key.clone(), ());
                file.items.push((key.clone(), item, child.text_range().start()));
                let public = child.children().any(|c| c.kind() == SyntaxKind::VISIBILITY);
                entries.push(ItemEntry { key, item, file: index as u32, library: file.library, public });
            }
        }
        self.inputs.retain(|key, _| live.contains_key(key));
        let entries: Arc<[ItemEntry]> = Arc::from(entries);
        if self.program.items(&self.db) != &entries {
            self.program.set_items(&mut self.db).to(entries);
        }
    }

    /// The file that declares `item`, and the declaration's start offset in it.
    pub fn locate(&self, item: Item) -> Option<(usize, TextSize)> {
        self.files
            .iter()
            .enumerate()
            .find_map(|(index, file)| file.items.iter().find(|(_, i, _)| *i == item).map(|(_, _, at)| (index, *at)))
    }

    /// A range relative to `item` as a file index, absolute range, and 1-based line and column.
    pub fn position(&self, item: Item, relative: TextRange) -> Option<(usize, TextRange, LineColumn)> {
        let (file, start) = self.locate(item)?;
        let absolute = relative + start;
        let state = &self.files[file];
        Some((file, absolute, state.line_index.line_column(&state.text, absolute.start())))
    }
}

/// The kind and name of a top-level declaration node; `None` for nodes that declare nothing
/// (module headers are handled by the caller, error nodes are syntax errors).
fn classify(node: &SyntaxNode) -> Option<(ItemKind, Arc<str>)> {
    use SyntaxKind::*;
    let kind = match node.kind() {
        FN => ItemKind::Fn,
        CONST => ItemKind::Const,
        STRUCT => ItemKind::Struct,
        ENUM => ItemKind::Enum,
        TEST => ItemKind::Test,
        IMPORT => ItemKind::Import,
        TRAIT | IMPL | EXTERN_FN | FAMILY | RECIPE | DERIVE | PLAN | LAYOUT => ItemKind::Unsupported(node.kind()),
        _ => return None,
    };
    let name: String = match kind {
        ItemKind::Import => {
            let import: ast::Import = ast::AstNode::cast(node.clone())?;
            import.path().map(|p| p.text()).unwrap_or_default()
        }
        _ => node
            .children()
            .find(|c| c.kind() == NAME)
            .map(|n| n.text().to_string())
            .or_else(|| node.children().find(|c| c.kind() == PATH).map(|p| p.text().to_string()))
            .unwrap_or_default(),
    };
    Some((kind, Arc::from(name.trim())))
}

/// The last `module` header of a file.
fn last_module(root: &SyntaxNode) -> Option<Arc<str>> {
    root.children()
        .filter_map(|c| ast::AstNode::cast(c).and_then(|m: ast::ModuleDecl| m.path()))
        .last()
        .map(|p| Arc::from(p.text()))
}

/// The module paths a file imports.
fn imported_modules(root: &SyntaxNode) -> Vec<String> {
    root.children()
        .filter_map(|c| ast::AstNode::cast(c).and_then(|i: ast::Import| i.path()))
        .map(|p| p.text())
        .collect()
}

/// The outcome of `cairn check` on a workspace.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    pub refusal: Option<cairn_diagnostics::Refusal>,
    /// Functions of the program, library ones included.
    pub functions: usize,
    pub library_functions: usize,
}

impl Workspace {
    /// Checks the whole program with every-refusal semantics (syntax errors first: a program
    /// that does not parse gets only its syntax refusals).
    pub fn check(&self) -> CheckOutcome {
        if let Some(refusal) = self.syntax_refusal() {
            return CheckOutcome { refusal: Some(refusal), functions: 0, library_functions: 0 };
        }
        let result = crate::report::check_program(&self.db);
        let mut located: Vec<(bool, Arc<str>, usize, TextSize, cairn_diagnostics::Diagnostic)> = result
            .refusals
            .iter()
            .map(|(item, diag)| {
                let (library, module, file, offset, diagnostic) = self.locate_diag(*item, diag);
                (library, module, file, offset, diagnostic)
            })
            .collect();
        let refusal = if located.is_empty() {
            None
        } else {
            let first = located.remove(0).4;
            located.sort_by(|a, b| (a.0, &a.1, a.2, a.3).cmp(&(b.0, &b.1, b.2, b.3)));
            let mut diagnostics = vec![first];
            diagnostics.extend(located.into_iter().map(|l| l.4));
            cairn_diagnostics::Refusal::from_diagnostics(diagnostics).map(|mut r| {
                r.not_judged = result.not_judged;
                r
            })
        };
        CheckOutcome { refusal, functions: result.functions, library_functions: result.library_functions }
    }

    /// The program's syntax errors as one refusal (first as the original reports it).
    pub fn syntax_refusal(&self) -> Option<cairn_diagnostics::Refusal> {
        let mut first_hard: Option<cairn_diagnostics::Diagnostic> = None;
        let mut diagnostics = Vec::new();
        for file in self.files.iter().take(self.own_files) {
            let stop = file.parse.lexer_stop().cloned();
            for error in file.parse.errors() {
                let diagnostic =
                    cairn_diagnostics::syntax_diagnostic(Some(&file.name), &file.text, &file.line_index, error);
                if stop.as_ref() == Some(error) && first_hard.is_none() {
                    first_hard = Some(diagnostic);
                } else {
                    diagnostics.push(diagnostic);
                }
            }
        }
        if let Some(hard) = first_hard {
            diagnostics.insert(0, hard);
        }
        cairn_diagnostics::Refusal::from_diagnostics(diagnostics)
    }

    /// A refusal's position and its diagnostic.
    fn locate_diag(
        &self,
        item: Item,
        diag: &crate::diag::Diag,
    ) -> (bool, Arc<str>, usize, TextSize, cairn_diagnostics::Diagnostic) {
        let scope = crate::scope::scope(&self.db);
        let module = scope.module_of(item);
        let relative = self.anchor_range(item, diag.anchor);
        let mut diagnostic = cairn_diagnostics::Diagnostic::new(diag.code, diag.message.to_string());
        let (library, file, offset) = match self.position(item, relative) {
            Some((file, range, position)) => {
                let state = &self.files[file];
                diagnostic = diagnostic.at(Some(state.name.clone()), position);
                (state.library, file, range.start())
            }
            None => (false, usize::MAX, TextSize::from(0)),
        };
        if !module.is_empty() {
            diagnostic.module = Some(module.to_string());
        }
        diagnostic.repair_hint = diag
            .hint
            .as_ref()
            .map(|h| h.to_string())
            .or_else(|| cairn_diagnostics::hints::static_hint(diag.code).map(str::to_string));
        diagnostic.details = diag
            .details
            .iter()
            .map(|(key, value)| {
                let value = match value {
                    crate::diag::Detail::Text(t) => serde_json::Value::String(t.to_string()),
                    crate::diag::Detail::List(items) => serde_json::Value::Array(
                        items.iter().map(|i| serde_json::Value::String(i.to_string())).collect(),
                    ),
                    crate::diag::Detail::Null => serde_json::Value::Null,
                };
                (key.to_string(), value)
            })
            .collect();
        (library, module, file, offset, diagnostic)
    }

    /// The range an anchor names, relative to its declaration.
    pub fn anchor_range(&self, item: Item, anchor: crate::diag::Anchor) -> TextRange {
        use crate::diag::Anchor;
        let map = || crate::body::fn_source_map(&self.db, item);
        let first_token = || {
            let node = item.syntax(&self.db).syntax_node();
            node.descendants_with_tokens()
                .filter_map(|e| e.into_token())
                .find(|t| !t.kind().is_trivia())
                .map_or(node.text_range(), |t| t.text_range())
        };
        match anchor {
            Anchor::Item => first_token(),
            Anchor::Range(range) => range,
            Anchor::Expr(id) => map().exprs.get(id.0 as usize).copied().unwrap_or_else(first_token),
            Anchor::Stmt(id) => map().stmts.get(id.0 as usize).copied().unwrap_or_else(first_token),
            Anchor::Binder(id) => map().binders.get(id.0 as usize).copied().unwrap_or_else(first_token),
        }
    }
}
