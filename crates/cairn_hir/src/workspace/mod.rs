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
//!
//! Rooms: this file keeps the files and their inputs (edits, splitting, positions); `check.rs`
//! runs `cairn check` on them (the fast path and the whole pass); `facts.rs` answers what the
//! state, the documentation and the tools read (facts per function, the state view).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cairn_diagnostics::{LineColumn, LineIndex};
use cairn_syntax::{Parse, Reparsed, SyntaxKind, SyntaxNode, TextEdit, TextRange, TextSize, ast};
use salsa::{Durability, Setter};

use crate::db::RootDatabase;
use crate::effects::{Rows, Summary, is_function};
use crate::input::{Item, ItemEntry, ItemKey, ItemKind, ItemSyntax, Library, Program};
use crate::library;
use crate::report::ProgramRecord;
use crate::signature::{Signature, fn_signature};

mod check;
mod facts;
mod source;

pub use check::{CheckKind, CheckOutcome};
pub use facts::{DeclarationKind, DeclarationView, FunctionFacts, OwnFunction, RegionView, StateView, member_name};

/// One file of the workspace.
#[derive(Debug, Clone)]
pub struct FileState {
    /// The file as the manifest names it (`std/core.cairn` for a library module).
    pub name: String,
    /// Its text and tree ([`FileState::text`], [`FileState::parse`]).
    source: source::FileSource,
    /// Built on first use: an edit of one body does not pay for indexing the whole file.
    line_index: OnceLock<LineIndex>,
    /// The declarations of the file in order.
    pub items: Vec<FileItem>,
    /// The members of its traits and impls, in order (each an item of its own; `child` is its
    /// parent's index among the root's children).
    pub members: Vec<FileItem>,
    /// True for a packaged library module.
    pub library: bool,
    /// The module in effect where the file starts (the previous file's last module).
    pub module_at_start: Arc<str>,
    /// For a generated file (what one `derive` expands to, language §29): that derivation. A
    /// generated file is no file of the program: it follows the library's, is never edited, and
    /// is replaced whenever its derivation's expansion changes.
    pub generated: Option<Item>,
}

impl FileState {
    /// The file's text.
    pub fn text(&self) -> &str {
        self.source.text()
    }

    /// The file's syntax tree and errors.
    pub fn parse(&self) -> &Parse {
        self.source.parse()
    }

    /// The file's syntax errors, in order of position (read without making a patched file's tree).
    pub fn errors(&self) -> &[cairn_syntax::SyntaxError] {
        self.source.errors()
    }

    /// The first error that stops the original's lexer, if any (`Parse::lexer_stop`).
    pub fn lexer_stop(&self) -> Option<&cairn_syntax::SyntaxError> {
        self.source.lexer_stop()
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.source.len()
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes `range` of the file's text (read without making a patched file's text when the
    /// range lies outside every patched declaration or inside one).
    pub fn slice(&self, range: std::ops::Range<usize>) -> std::borrow::Cow<'_, str> {
        self.source.slice(range)
    }

    /// 0-based line `line`'s first byte and the first byte after its break (the text's length
    /// for the last line), from the line index, which a body edit updates rather than remakes.
    pub fn line_bounds(&self, line: usize) -> Option<(usize, usize)> {
        let (start, end) = self.line_index().line_bounds(line, self.len() as u32)?;
        Some((start as usize, end as usize))
    }

    /// The 1-based line and column of `offset` (clamped to the end), read from the line index and
    /// that one line: a patched file's text is not made.
    pub fn line_column(&self, offset: TextSize) -> LineColumn {
        let offset = u32::from(offset).min(self.len() as u32);
        let index = self.line_index();
        let line = index.line_of(offset);
        let (start, end) = index.line_bounds(line, self.len() as u32).unwrap_or((0, self.len() as u32));
        index.line_column_in(line, &self.slice(start as usize..end as usize), offset)
    }

    /// How many edited declarations wait to be spliced into the file's text and tree, which are
    /// made again only when read (`source.rs`; for tests and tracing).
    pub fn patched(&self) -> usize {
        self.source.patched()
    }

    /// Where the file's lines start.
    pub fn line_index(&self) -> &LineIndex {
        self.line_index.get_or_init(|| LineIndex::new(self.text()))
    }
}

/// One declaration of a file.
#[derive(Debug, Clone)]
pub struct FileItem {
    pub key: ItemKey,
    pub item: Item,
    /// Where the declaration starts in the file.
    pub start: TextSize,
    /// Its index among the children (nodes and tokens) of the file's root.
    pub child: usize,
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
    library: Library,
    files: Vec<FileState>,
    /// Inputs by key, reused across edits.
    inputs: HashMap<ItemKey, Item>,
    /// How many files belong to the program (the library files follow them).
    own_files: usize,
    /// Where each declaration is listed: its file and its index in that file's `items`.
    places: HashMap<Item, (usize, usize)>,
    /// Where each member of a trait or impl is listed: its file and its index in `members`.
    member_places: HashMap<Item, (usize, usize)>,
    /// The record of the last whole-program check, and the rows it read.
    last: Option<LastCheck>,
    /// What changed since `last` was made.
    pending: Pending,
    /// How many declared functions (`fn`, the library's included) the files hold, counted
    /// whenever they are split into declarations (a body edit changes no declaration).
    functions: usize,
    /// The program's own functions by name ([`Workspace::own_functions`]), made on first use
    /// after the files were last split into declarations.
    directory: OnceLock<Arc<[OwnFunction]>>,
    last_kind: CheckKind,
}

/// The last whole-program check: what the pass found and the rows it judged against.
#[derive(Debug, Clone)]
struct LastCheck {
    record: ProgramRecord,
    rows: Arc<Rows>,
    /// The instances the program requested at that check: while no summary moves they are the
    /// same, and reading them here spares the fast path the whole-program walk.
    requested: crate::requested::Requested,
}

/// Edits since the last check.
#[derive(Debug, Clone)]
enum Pending {
    /// Only bodies of these functions changed; each holds its summary and signature as the last
    /// check saw them.
    Bodies(Vec<(Item, Summary, Signature)>),
    /// Anything else: the next check runs the whole pass (over memoized queries).
    Everything,
}

impl Workspace {
    /// Loads the program's files, then the library modules they import (transitively).
    pub fn new(sources: Vec<SourceText>) -> Workspace {
        Workspace::with_database(RootDatabase::default(), sources)
    }

    /// As [`Workspace::new`], over a database that logs executed queries (for tests).
    pub fn with_execution_log(sources: Vec<SourceText>) -> Workspace {
        Workspace::with_database(RootDatabase::with_execution_log(), sources)
    }

    fn with_database(db: RootDatabase, sources: Vec<SourceText>) -> Workspace {
        crate::stack::ensure_pool();
        let program = Program::builder(Arc::from(Vec::new())).durability(Durability::MEDIUM).new(&db);
        let library = Library::builder(Arc::from(Vec::new())).durability(Durability::HIGH).new(&db);
        let mut workspace = Workspace {
            db,
            program,
            library,
            files: Vec::new(),
            inputs: HashMap::new(),
            own_files: sources.len(),
            places: HashMap::new(),
            member_places: HashMap::new(),
            last: None,
            pending: Pending::Everything,
            functions: 0,
            directory: OnceLock::new(),
            last_kind: CheckKind::Whole,
        };
        let mut module: Arc<str> = Arc::from("");
        for source in sources {
            let parse = cairn_syntax::parse(&source.text);
            let file = workspace.make_file(source.name, source.text, parse, false, module.clone());
            module = last_module(&file.parse().syntax_node()).unwrap_or(module);
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

    /// The files a person wrote (neither a library module nor code a `derive` generated), as
    /// sources a new workspace can be made from: what a rewrite of the program starts from.
    pub fn written_sources(&self) -> Vec<SourceText> {
        self.files
            .iter()
            .filter(|f| !f.library && f.generated.is_none())
            .map(|f| SourceText { name: f.name.clone(), text: f.text().to_string() })
            .collect()
    }

    /// How many functions (`fn` declarations, the library's included) the files declare.
    pub fn function_count(&self) -> usize {
        self.functions
    }

    /// How many of the files are the program's own (the rest are library modules).
    pub fn own_file_count(&self) -> usize {
        self.own_files
    }

    /// Replaces a file's text after an edit. When the edit falls inside one body, only that body
    /// is re-parsed, only its declaration's input changes, and nothing is done per declaration of
    /// the program (design.md, "the cost of one body edit").
    pub fn edit_file(&mut self, file: usize, edit: &TextEdit) {
        if edit.delete.is_empty() && edit.insert.is_empty() {
            return;
        }
        if self.patch_body(file, edit) {
            return;
        }
        let state = &self.files[file];
        let new_text = edit.apply(state.text());
        let (parse, how) = state.parse().reparse_traced(edit, &new_text);
        if let Reparsed::Block { item: child } = how
            && file < self.own_files
            && let Ok(index) = state.items.binary_search_by_key(&child, |i| i.child)
            && is_function(state.items[index].key.kind)
        {
            self.replace_body(file, index, new_text, parse);
        } else {
            self.replace_file(file, new_text, parse);
        }
    }

    /// The fastest path of `edit_file`, in proportion to the edit rather than to the file: an
    /// edit strictly inside the body of one top-level function of a file without syntax errors,
    /// whose new body parses without error. The function's declaration is parsed again alone and
    /// patched into the file, whose text and tree are made again only when read (`source.rs`).
    /// False (and nothing done) when the edit is not such an edit.
    fn patch_body(&mut self, file: usize, edit: &TextEdit) -> bool {
        let Some(state) = self.files.get(file) else { return false };
        if file >= self.own_files || !state.source.patchable() {
            return false;
        }
        let Some(index) = state.items.partition_point(|i| i.start <= edit.delete.start()).checked_sub(1) else {
            return false;
        };
        let entry = &state.items[index];
        if !is_function(entry.key.kind) {
            return false;
        }
        let green = entry.item.syntax(&self.db).green.clone();
        if edit.delete.end() > entry.start + green.text_len() {
            return false;
        }
        let relative = TextEdit { delete: edit.delete - entry.start, insert: edit.insert.clone() };
        let Some(reparsed) = cairn_syntax::reparse_declaration(&green, &relative) else { return false };
        if !reparsed.errors.is_empty() {
            return false;
        }
        let delta = i64::from(u32::from(reparsed.new_len)) - i64::from(u32::from(reparsed.body.len()));
        let (child, start) = (entry.child, usize::from(entry.start));
        if !self.files[file].source.patch(child, start, reparsed.green.clone()) {
            return false;
        }
        self.body_replaced(file, index, reparsed.green, delta);
        let state = &mut self.files[file];
        // A line index already made follows the edit instead of being made again.
        if let Some(lines) = state.line_index.get_mut() {
            lines.edited(u32::from(edit.delete.start()), u32::from(edit.delete.end()), &edit.insert);
        }
        true
    }

    /// The fast path of `edit_file`: the declaration at `index` of `file` is the only one whose
    /// syntax changed, and only inside its body.
    fn replace_body(&mut self, file: usize, index: usize, text: String, parse: Parse) {
        let state = &self.files[file];
        let delta =
            i64::from(u32::from(TextSize::of(text.as_str()))) - i64::from(u32::from(TextSize::of(state.text())));
        let entry = &state.items[index];
        let Some(green) = parse.green().children().nth(entry.child).and_then(|c| c.into_node()).map(|n| n.to_owned())
        else {
            return self.replace_file(file, text, parse);
        };
        self.body_replaced(file, index, green, delta);
        let state = &mut self.files[file];
        state.source.replace(text, parse);
        state.line_index = OnceLock::new();
    }

    /// What a body edit changes besides the file's text and tree: the declaration's input (with
    /// what the last check saw of it remembered first), and where the later declarations start.
    fn body_replaced(&mut self, file: usize, index: usize, green: cairn_syntax::GreenNode, delta: i64) {
        let item = self.files[file].items[index].item;
        // Remember what the last check saw of this function before its input changes.
        if let (Some(last), Pending::Bodies(changed)) = (&self.last, &mut self.pending)
            && !changed.iter().any(|(i, _, _)| *i == item)
        {
            let summary = check::summary_now(&self.db, &last.requested, item);
            let signature = fn_signature(&self.db, item).clone();
            changed.push((item, summary, signature));
        }
        item.set_syntax(&mut self.db).with_durability(Durability::LOW).to(ItemSyntax { green });
        let state = &mut self.files[file];
        let edited_start = state.items[index].start;
        for later in &mut state.items[index + 1..] {
            later.start = TextSize::from((i64::from(u32::from(later.start)) + delta) as u32);
        }
        for member in state.members.iter_mut().filter(|m| m.start > edited_start) {
            member.start = TextSize::from((i64::from(u32::from(member.start)) + delta) as u32);
        }
    }

    /// Replaces a file's whole text.
    pub fn set_file_text(&mut self, file: usize, text: String) {
        let parse = cairn_syntax::parse(&text);
        self.replace_file(file, text, parse);
    }

    fn replace_file(&mut self, file: usize, text: String, parse: Parse) {
        self.pending = Pending::Everything;
        let state = &mut self.files[file];
        state.line_index = OnceLock::new();
        state.source.replace(text, parse);
        // A file's last module decides where the next file starts: recompute the chain.
        let mut module: Arc<str> = Arc::from("");
        for state in &mut self.files[..self.own_files] {
            state.module_at_start = module.clone();
            module = last_module(&state.parse().syntax_node()).unwrap_or(module);
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
        FileState {
            name,
            source: source::FileSource::new(text, parse),
            line_index: OnceLock::new(),
            items: Vec::new(),
            members: Vec::new(),
            library,
            module_at_start,
            generated: None,
        }
    }

    /// Links exactly the library modules the program imports, and the ones they import, once
    /// each, in the order a fresh workspace finds them: a module no longer imported is unlinked
    /// (its declarations leave the program), and a module still imported keeps its parse.
    fn link_library(&mut self) {
        let (generated, library): (Vec<FileState>, Vec<FileState>) =
            self.files.drain(self.own_files..).partition(|f| f.generated.is_some());
        let mut loaded: HashMap<String, FileState> = library.into_iter().map(|f| (f.name.clone(), f)).collect();
        let mut linked: Vec<FileState> = Vec::new();
        loop {
            let mut wanted: Vec<library::LibraryModule> = Vec::new();
            let roots = self.files.iter().chain(linked.iter()).map(|f| f.parse().syntax_node());
            for root in roots {
                for import in imported_modules(&root).into_iter().chain(derived_modules(&root)) {
                    if let Some(module) = library::module(&import)
                        && !linked.iter().any(|f| f.name == module.file)
                        && !wanted.iter().any(|m| m.file == module.file)
                    {
                        wanted.push(module);
                    }
                }
            }
            if wanted.is_empty() {
                break;
            }
            for module in wanted {
                let file = match loaded.remove(module.file) {
                    Some(file) => file,
                    None => {
                        let parse = cairn_syntax::parse(module.text);
                        self.make_file(module.file.to_string(), module.text.to_string(), parse, true, Arc::from(""))
                    }
                };
                linked.push(file);
            }
        }
        self.files.extend(linked);
        self.files.extend(generated);
    }

    /// Splits every file into declarations and updates the inputs that changed, then expands
    /// the derivations into generated files and splits again until what they generate is stable
    /// (a derivation whose target another derivation generates finds it on the next round).
    fn split_all(&mut self) {
        self.split_files();
        for _ in 0..DERIVE_ROUNDS {
            if !self.sync_generated() {
                break;
            }
            self.split_files();
        }
    }

    /// Replaces the generated files by what the derivations now expand to; false when nothing
    /// changed. An unchanged expansion keeps its file (and so its inputs).
    fn sync_generated(&mut self) -> bool {
        let mut wanted: Vec<(Item, String, Arc<str>, Arc<str>, bool)> = Vec::new();
        for entry in self.program.items(&self.db).iter() {
            if entry.key.kind != ItemKind::Derive || entry.origin.is_some() {
                continue;
            }
            let expansion = crate::recipes::derive_expansion(&self.db, entry.item);
            if expansion.text.is_empty() {
                continue;
            }
            let file = &self.files[entry.file as usize];
            let name = format!("{}#derive({})", file.name, entry.key.name);
            wanted.push((entry.item, name, entry.key.module.clone(), expansion.text.clone(), entry.library));
        }
        let current: Vec<(Option<Item>, &str, &str)> = self
            .files
            .iter()
            .filter(|f| f.generated.is_some())
            .map(|f| (f.generated, f.name.as_str(), f.text()))
            .collect();
        let same = current.len() == wanted.len()
            && current.iter().zip(&wanted).all(|(c, w)| c.0 == Some(w.0) && c.1 == w.1 && c.2 == &*w.3);
        if same {
            return false;
        }
        let mut old: HashMap<(String, String), FileState> = HashMap::new();
        let keep = self.files.len() - self.files.iter().filter(|f| f.generated.is_some()).count();
        for file in self.files.drain(keep..) {
            old.insert((file.name.clone(), file.text().to_string()), file);
        }
        for (derive, name, module, text, library) in wanted {
            let file = match old.remove(&(name.clone(), text.to_string())) {
                Some(mut file) => {
                    file.generated = Some(derive);
                    file
                }
                None => {
                    let parse = cairn_syntax::parse(&text);
                    let mut file = self.make_file(name, text.to_string(), parse, library, module);
                    file.generated = Some(derive);
                    file
                }
            };
            self.files.push(file);
        }
        true
    }

    /// Splits every file into declarations and updates the inputs that changed.
    fn split_files(&mut self) {
        self.directory = OnceLock::new();
        let mut entries: Vec<ItemEntry> = Vec::new();
        let mut ordinals: HashMap<(Arc<str>, ItemKind, Arc<str>), u32> = HashMap::new();
        let mut live: HashMap<ItemKey, ()> = HashMap::new();
        self.places.clear();
        self.member_places.clear();
        for (index, file) in self.files.iter_mut().enumerate() {
            let root = file.parse().syntax_node();
            let mut module = file.module_at_start.clone();
            file.items.clear();
            file.members.clear();
            for (child_index, child) in root.children_with_tokens().enumerate() {
                let Some(child) = child.into_node() else { continue };
                let kind = child.kind();
                if kind == SyntaxKind::MODULE_DECL {
                    if let Some(path) = ast::AstNode::cast(child.clone()).and_then(|m: ast::ModuleDecl| m.path()) {
                        module = Arc::from(path.text());
                    }
                    continue;
                }
                let Some((item_kind, name)) = classify(&child) else { continue };
                let ordinal = ordinals.entry((module.clone(), item_kind, name.clone())).or_insert(0);
                let key = ItemKey { module: module.clone(), kind: item_kind, name, ordinal: *ordinal, parent: None };
                *ordinal += 1;
                let durability = input_durability(file.library, item_kind);
                let item = input_for(&mut self.db, &mut self.inputs, &key, &child, durability);
                live.insert(key.clone(), ());
                // The members of a trait or impl: items of their own, keyed under it (listed after
                // it).
                let mut member_entries = Vec::new();
                if matches!(kind, SyntaxKind::TRAIT | SyntaxKind::IMPL) {
                    let parent = Arc::new(key.clone());
                    let mut member_ordinals: HashMap<Arc<str>, u32> = HashMap::new();
                    for member in
                        child.children().filter(|c| matches!(c.kind(), SyntaxKind::TRAIT_MEMBER | SyntaxKind::FN))
                    {
                        let name: Arc<str> = Arc::from(
                            member
                                .children()
                                .find(|c| c.kind() == SyntaxKind::NAME)
                                .map(|n| n.text().to_string())
                                .unwrap_or_default()
                                .trim(),
                        );
                        let ordinal = member_ordinals.entry(name.clone()).or_insert(0);
                        let member_key = ItemKey {
                            module: module.clone(),
                            kind: if member.kind() == SyntaxKind::FN { ItemKind::Method } else { ItemKind::Member },
                            name,
                            ordinal: *ordinal,
                            parent: Some(parent.clone()),
                        };
                        *ordinal += 1;
                        let member_durability = input_durability(file.library, member_key.kind);
                        let member_item =
                            input_for(&mut self.db, &mut self.inputs, &member_key, &member, member_durability);
                        live.insert(member_key.clone(), ());
                        self.member_places.insert(member_item, (index, file.members.len()));
                        file.members.push(FileItem {
                            key: member_key.clone(),
                            item: member_item,
                            start: member.text_range().start(),
                            child: child_index,
                        });
                        member_entries.push(ItemEntry {
                            key: member_key,
                            item: member_item,
                            file: index as u32,
                            library: file.library,
                            origin: file.generated,
                            // An impl's members are always public (language §20); a trait's
                            // are as visible as the trait.
                            public: member.kind() == SyntaxKind::FN
                                || child.children().any(|c| c.kind() == SyntaxKind::VISIBILITY),
                        });
                    }
                }
                self.places.insert(item, (index, file.items.len()));
                file.items.push(FileItem {
                    key: key.clone(),
                    item,
                    start: child.text_range().start(),
                    child: child_index,
                });
                let public = child.children().any(|c| c.kind() == SyntaxKind::VISIBILITY);
                entries.push(ItemEntry {
                    key,
                    item,
                    file: index as u32,
                    library: file.library,
                    public,
                    origin: file.generated,
                });
                entries.extend(member_entries);
            }
        }
        self.inputs.retain(|key, _| live.contains_key(key));
        let library: Arc<[ItemEntry]> = entries.iter().filter(|e| e.library).cloned().collect();
        if self.library.items(&self.db) != &library {
            self.library.set_items(&mut self.db).with_durability(Durability::HIGH).to(library);
        }
        self.functions = entries.iter().filter(|e| e.key.kind == ItemKind::Fn).count();
        let entries: Arc<[ItemEntry]> = Arc::from(entries);
        if self.program.items(&self.db) != &entries {
            self.program.set_items(&mut self.db).with_durability(Durability::MEDIUM).to(entries);
        }
    }

    /// The file that declares `item`, and the declaration's start offset in it (a member's own
    /// start, inside its parent).
    pub fn locate(&self, item: Item) -> Option<(usize, TextSize)> {
        if let Some(&(file, index)) = self.places.get(&item) {
            return Some((file, self.files[file].items[index].start));
        }
        let &(file, index) = self.member_places.get(&item)?;
        Some((file, self.files[file].members[index].start))
    }

    /// A range relative to `item` as a file index, absolute range, and 1-based line and column.
    pub fn position(&self, item: Item, relative: TextRange) -> Option<(usize, TextRange, LineColumn)> {
        let (file, start) = self.locate(item)?;
        let absolute = relative + start;
        let state = &self.files[file];
        Some((file, absolute, state.line_column(absolute.start())))
    }
}

/// How often a declaration's input is expected to change, which salsa uses to skip re-validating
/// what reads only steadier inputs: the library never (HIGH); the program's functions, methods and
/// tests with every edit of a body (LOW); its other declarations — constants, types, traits,
/// impls, plans — and the list of declarations only with an edit outside the bodies (MEDIUM). So
/// after a body edit the constant table and the type declarations are confirmed at once instead
/// of input by input (issue 22: an edit costs in proportion to the edit).
fn input_durability(library: bool, kind: ItemKind) -> Durability {
    match (library, kind) {
        (true, _) => Durability::HIGH,
        (false, ItemKind::Fn | ItemKind::Method | ItemKind::Test) => Durability::LOW,
        (false, _) => Durability::MEDIUM,
    }
}

/// The input of the declaration `key` (its syntax `node`), reused when the key is known and its
/// syntax set only when it changed.
fn input_for(
    db: &mut RootDatabase,
    inputs: &mut HashMap<ItemKey, Item>,
    key: &ItemKey,
    node: &SyntaxNode,
    durability: Durability,
) -> Item {
    let syntax = ItemSyntax { green: node.green().to_owned() };
    match inputs.get(key) {
        Some(&item) => {
            if item.syntax(db) != &syntax {
                item.set_syntax(db).with_durability(durability).to(syntax);
            }
            item
        }
        None => {
            let item = Item::builder(syntax).durability(durability).new(db);
            inputs.insert(key.clone(), item);
            item
        }
    }
}

/// Where a declaration's first token (past any comment attached to it) starts, relative to the
/// declaration.
fn first_token(db: &RootDatabase, item: Item) -> TextSize {
    cairn_syntax::first_significant_token(&item.syntax(db).syntax_node())
        .map_or(TextSize::from(0), |t| t.text_range().start())
}

/// The kind and name of a top-level declaration node; `None` for nodes that declare nothing
/// (module headers are handled by the caller, error nodes are syntax errors).
fn classify(node: &SyntaxNode) -> Option<(ItemKind, Arc<str>)> {
    use SyntaxKind::*;
    let kind = match node.kind() {
        // A foreign function is a function whose body is C's (`foreign.rs`).
        FN | EXTERN_FN => ItemKind::Fn,
        CONST => ItemKind::Const,
        STRUCT => ItemKind::Struct,
        ENUM => ItemKind::Enum,
        TEST => ItemKind::Test,
        IMPORT => ItemKind::Import,
        FAMILY => ItemKind::Family,
        TRAIT => ItemKind::Trait,
        IMPL => ItemKind::Impl,
        PLAN => ItemKind::Plan,
        RECIPE => ItemKind::Recipe,
        DERIVE => ItemKind::Derive,
        LAYOUT => ItemKind::Unsupported(node.kind()),
        _ => return None,
    };
    let name: String = match kind {
        ItemKind::Import => {
            let import: ast::Import = ast::AstNode::cast(node.clone())?;
            import.path().map(|p| p.text()).unwrap_or_default()
        }
        // An impl is named by what it implements for what (`Shape for Sq`): one trait has many
        // impls, and an impl inserted before another must not take the other's key.
        ItemKind::Impl => {
            let imp: ast::Impl = ast::AstNode::cast(node.clone())?;
            let of = |n: Option<SyntaxNode>| n.map(|n| cairn_syntax::compact_text(&n)).unwrap_or_default();
            let trait_path = of(imp.trait_path().map(|p| ast::AstNode::syntax(&p).clone()));
            let self_ty = of(imp.self_ty().map(|t| ast::AstNode::syntax(&t).clone()));
            format!("{trait_path} for {self_ty}")
        }
        // A derivation is named by what it applies to what (`eq for Size`, `cols.unrolled[4] for
        // Trade`): one recipe derives for many records.
        ItemKind::Derive => {
            let derive: ast::Derive = ast::AstNode::cast(node.clone())?;
            let mut name = derive.recipe().map(|p| p.text()).unwrap_or_default();
            if let Some(args) = derive.arg_list() {
                name.push_str(&cairn_syntax::compact_text(ast::AstNode::syntax(&args)));
            }
            if let Some(target) = derive.target() {
                name.push_str(" for ");
                name.push_str(&target.text());
            }
            name
        }
        // A plan is named by the function it plans; a selection by `f use g`.
        ItemKind::Plan => {
            let plan: ast::Plan = ast::AstNode::cast(node.clone())?;
            let of = |n: Option<SyntaxNode>| n.map(|n| cairn_syntax::compact_text(&n)).unwrap_or_default();
            let target = of(plan.target().map(|p| ast::AstNode::syntax(&p).clone()));
            match plan.plan_use() {
                Some(selection) => {
                    format!("{target} use {}", of(selection.implementation().map(|p| ast::AstNode::syntax(&p).clone())))
                }
                None => target,
            }
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

/// Computes what the whole-program pass reads — every body's check, the rows, the program
/// record — into the memos of `db` (a clone of a workspace's database), so that the workspace's
/// next check only reads them. Runs on any thread; a write to the workspace meanwhile cancels it
/// (the queries unwind with `salsa::Cancelled`, which the caller catches).
pub fn precompute(db: &RootDatabase) {
    use rayon::prelude::*;
    let program = Program::get(db);
    let functions: Vec<Item> = program.items(db).iter().filter(|e| is_function(e.key.kind)).map(|e| e.item).collect();
    if functions.len() >= 64 && rayon::current_num_threads() >= 2 {
        functions.par_iter().for_each_with(db.clone(), |db, &item| {
            let _ = crate::check::check_fn(db, item);
        });
    }
    let _ = crate::report::program_record(db);
    let _ = crate::effects::rows(db);
}

/// The last `module` header of a file.
fn last_module(root: &SyntaxNode) -> Option<Arc<str>> {
    root.children()
        .filter_map(|c| ast::AstNode::cast(c).and_then(|m: ast::ModuleDecl| m.path()))
        .last()
        .map(|p| Arc::from(p.text()))
}

/// How many times the workspace expands derivations after a structural edit: a derivation may
/// target a record another derivation generates, to this depth.
const DERIVE_ROUNDS: usize = 32;

/// The packaged modules a file's bare `derive` names may fall back to (language §29:
/// `std.<name>`, then `std.derived`), linked without an import.
fn derived_modules(root: &SyntaxNode) -> Vec<String> {
    let mut out = Vec::new();
    for derive in root.children().filter_map(<ast::Derive as ast::AstNode>::cast) {
        let Some(path) = derive.recipe() else { continue };
        let name = path.text();
        if name.contains('.') || name.is_empty() {
            continue;
        }
        let own = format!("std.{name}");
        if library::module(&own).is_some() {
            out.push(own);
        } else {
            out.push("std.derived".to_string());
        }
    }
    out
}

/// The module paths a file imports.
fn imported_modules(root: &SyntaxNode) -> Vec<String> {
    root.children()
        .filter_map(|c| ast::AstNode::cast(c).and_then(|i: ast::Import| i.path()))
        .map(|p| p.text())
        .collect()
}
