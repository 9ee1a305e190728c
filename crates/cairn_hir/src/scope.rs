//! Modules, imports and name lookup.
//!
//! [`program_scope`] reads the program's item list and its import declarations. A written name
//! `a.b…` is looked up from module `M` by trying, in order (language §23.1): a name `a` imported
//! by name (`import p (a);` → `p.a.b…`), an import alias `a` (`import p as a;` → `p.b…`), the
//! module's own declaration (`M.a.b…`), and finally the name as written (root declarations, or a
//! full name `m.f`). The first candidate that exists among the declarations of the wanted kind
//! wins. The scope depends on no body, so a body edit never re-runs it.
//!
//! Module scopes and per-name lookups (issue 12): the checks of single declarations never read
//! the whole scope. Each module has a scope of its own ([`module_scope`]: its declarations and its
//! imports, a projection of the program's scope that backdates when the module did not change),
//! and a [`Resolver`]'s answers come from narrow queries over them — [`resolve_name`] per (module,
//! written path) reads the scope of the module it is written in and [`declared`] per candidate
//! full name, which reads the scope of the module that could declare it; [`module_alias`] per
//! (module, name); [`decl_info`] per declaration. So adding, removing or renaming a declaration
//! re-runs the program's scope and the module projections (cheap), re-runs only the lookups that
//! read the changed module, and re-checks only the bodies whose lookups now answer differently. Only error paths (hints
//! that list every function, "a variant of which sum?") read the whole scope, so only a body
//! already refused re-runs for a name it does not mention.
//!
//! The packaged library has a scope of its own ([`library_scope`], over the HIGH-durability
//! [`Library`] input): a lookup from a library module, and the facts of a library declaration,
//! read only it, so an edit of the program never re-validates a library query.
//!
//! Invariant: collections that are iterated are ordered (`BTreeMap`); hash maps are only looked
//! up, so no hash order leaks into an answer.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::db::Db;
use crate::input::{Item, ItemEntry, ItemKey, ItemKind, Library, Program};

/// A declaration a name can mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decl {
    pub item: Item,
    pub kind: ItemKind,
}

/// One import declaration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Import {
    pub item: Item,
    /// The importing module.
    pub in_module: Arc<str>,
    /// The imported module's full name.
    pub module: Arc<str>,
    /// The name the module is reached by (`b` for `import a.b;`, `c` for `import a.b as c;`).
    pub alias: Arc<str>,
    /// Names brought in unqualified.
    pub names: Arc<[Arc<str>]>,
    /// True when the module exists in the program or the library.
    pub resolved: bool,
}

/// Facts about one declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclInfo {
    pub key: ItemKey,
    /// `module.name`, or `name` in the root module.
    pub full_name: Arc<str>,
    pub public: bool,
    pub library: bool,
    /// The trait or impl a member belongs to.
    pub parent: Option<Item>,
}

/// Every module and declaration of the program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramScope {
    /// Declarations (not tests or imports) by full name.
    pub by_full_name: BTreeMap<Arc<str>, Vec<Decl>>,
    /// Module names that exist.
    pub modules: BTreeMap<Arc<str>, bool>,
    /// Imports, in declaration order.
    pub imports: Vec<Import>,
    /// Facts about every item (tests and imports included).
    pub info: HashMap<Item, DeclInfo>,
    /// Each module's own part ([`module_scope`] hands one out).
    pub by_module: BTreeMap<Arc<str>, Arc<ModuleScope>>,
}

/// One module's own names: what a lookup written in the module reads first, and what a lookup
/// of one of its declarations' full names reads. An edit of another module leaves it equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleScope {
    /// The module's declarations (not tests or imports) by full name.
    pub declarations: BTreeMap<Arc<str>, Vec<Decl>>,
    /// The imports written in the module, in declaration order.
    pub imports: Vec<Import>,
}

/// The scope of the program in the database.
pub fn scope(db: &dyn Db) -> &ProgramScope {
    program_scope(db, Program::get(db))
}

#[salsa::tracked(returns(ref))]
pub fn program_scope(db: &dyn Db, program: Program) -> ProgramScope {
    build(db, program.items(db))
}

/// The scope of the packaged library alone: what library modules can name.
#[salsa::tracked(returns(ref))]
pub fn library_scope(db: &dyn Db, library: Library) -> ProgramScope {
    build(db, library.items(db))
}

fn build(db: &dyn Db, entries: &[ItemEntry]) -> ProgramScope {
    let mut scope = ProgramScope::default();
    let by_key: HashMap<&ItemKey, Item> = entries.iter().map(|e| (&e.key, e.item)).collect();
    // Nothing positional enters the scope (no declaration order, no file), so reordering
    // declarations leaves it equal and nothing that reads it re-runs.
    for entry in entries.iter() {
        // A member is named under its parent: `Area for Rect.area`, `Area.area`.
        let local: Arc<str> = match &entry.key.parent {
            Some(parent) => Arc::from(format!("{}.{}", parent.name, entry.key.name)),
            None => entry.key.name.clone(),
        };
        let full_name: Arc<str> =
            if entry.key.module.is_empty() { local } else { Arc::from(format!("{}.{}", entry.key.module, local)) };
        let parent = entry.key.parent.as_deref().and_then(|p| by_key.get(p).copied());
        scope.modules.entry(entry.key.module.clone()).or_insert(entry.library);
        scope.info.insert(
            entry.item,
            DeclInfo {
                key: entry.key.clone(),
                full_name: full_name.clone(),
                public: entry.public,
                library: entry.library,
                parent,
            },
        );
        if entry.key.kind.declares_name() {
            scope.by_full_name.entry(full_name).or_default().push(Decl { item: entry.item, kind: entry.key.kind });
        }
    }
    for entry in entries.iter().filter(|e| e.key.kind == ItemKind::Import) {
        let Some(import) = ast::Import::cast(entry.item.syntax(db).syntax_node()) else { continue };
        let path: Arc<str> = Arc::from(import.path().map(|p| p.text()).unwrap_or_default());
        let alias: Arc<str> = match import.alias() {
            Some(name) => Arc::from(name.text()),
            None => Arc::from(path.rsplit('.').next().unwrap_or("")),
        };
        let names: Arc<[Arc<str>]> =
            import.import_list().map(|list| list.names().map(|n| Arc::from(n.text())).collect()).unwrap_or_default();
        let resolved = scope.modules.contains_key(&path);
        scope.imports.push(Import {
            item: entry.item,
            in_module: entry.key.module.clone(),
            module: path,
            alias,
            names,
            resolved,
        });
    }
    let mut by_module: BTreeMap<Arc<str>, ModuleScope> = BTreeMap::new();
    for (full, decls) in &scope.by_full_name {
        for decl in decls {
            let module = scope.info[&decl.item].key.module.clone();
            by_module.entry(module).or_default().declarations.entry(full.clone()).or_default().push(*decl);
        }
    }
    for import in &scope.imports {
        by_module.entry(import.in_module.clone()).or_default().imports.push(import.clone());
    }
    for module in scope.modules.keys() {
        by_module.entry(module.clone()).or_default();
    }
    scope.by_module = by_module.into_iter().map(|(m, s)| (m, Arc::new(s))).collect();
    scope
}

/// A module's name as a lookup sees it, the key of [`module_scope`]: `library` when the lookup
/// is written in a library module, which sees the library alone.
#[salsa::interned(debug)]
pub struct ModuleName<'db> {
    #[returns(ref)]
    pub text: Arc<str>,
    pub library: bool,
}

/// One module's own scope (empty for a name no module has): a projection of the library's own
/// scope for a library module or a lookup from one (so a program edit never reaches a library
/// lookup), else of the program's. Adding, removing or renaming a declaration changes only its
/// own module's.
#[salsa::tracked(returns(ref))]
pub fn module_scope<'db>(db: &'db dyn Db, module: ModuleName<'db>) -> Arc<ModuleScope> {
    let text = module.text(db);
    let scope = if *module.library(db) { library_scope(db, Library::get(db)) } else { scope_of_module(db, text) };
    scope.by_module.get(text).cloned().unwrap_or_default()
}

/// The own scope of `module`, for a lookup from the library when `library`.
fn own_scope<'db>(db: &'db dyn Db, module: &str, library: bool) -> &'db ModuleScope {
    module_scope(db, ModuleName::new(db, Arc::from(module), library))
}

/// True when `module` is a library module (its lookups see the library alone).
fn in_library(db: &dyn Db, module: &str) -> bool {
    library_scope(db, Library::get(db)).modules.contains_key(module)
}

/// A written path and the module it is written in: the key of one lookup.
#[salsa::interned(debug)]
pub struct NamePath<'db> {
    #[returns(ref)]
    pub module: Arc<str>,
    #[returns(ref)]
    pub segments: Arc<[Arc<str>]>,
}

/// Every declaration a path written in a module can mean, in the order the lookup rule tries
/// them (language §23.1): the first that the caller's kind accepts is the one.
#[salsa::tracked(returns(ref))]
pub fn resolve_name<'db>(db: &'db dyn Db, path: NamePath<'db>) -> Arc<[Decl]> {
    let library = in_library(db, path.module(db));
    let imports = &own_scope(db, path.module(db), library).imports;
    candidates(imports, path.module(db), path.segments(db))
        .into_iter()
        .flat_map(|candidate| declared(db, FullName::new(db, Arc::from(candidate), library)).iter().copied())
        .collect()
}

/// True when `name` is an import alias (a module reached by name) inside `module`.
#[salsa::tracked(returns(copy))]
pub fn module_alias<'db>(db: &'db dyn Db, path: NamePath<'db>) -> bool {
    let imports = &own_scope(db, path.module(db), in_library(db, path.module(db))).imports;
    path.segments(db).first().is_some_and(|name| imports.iter().any(|i| &i.alias == name))
}

/// The module an import alias reaches inside a module (`import a.b as c;` in `m`: `c` → `a.b`),
/// a narrow projection of the scope like [`module_alias`].
#[salsa::tracked(returns(ref))]
pub fn alias_target<'db>(db: &'db dyn Db, path: NamePath<'db>) -> Option<Arc<str>> {
    let name = path.segments(db).first()?;
    own_scope(db, path.module(db), in_library(db, path.module(db)))
        .imports
        .iter()
        .find(|i| &i.alias == name)
        .map(|i| i.module.clone())
}

/// A declaration's full name (`module.name`), the key of [`declared`]: `library` when the
/// lookup is written in a library module.
#[salsa::interned(debug)]
pub struct FullName<'db> {
    #[returns(ref)]
    pub text: Arc<str>,
    pub library: bool,
}

/// The declarations of one full name, in declaration order (more than one is `E-DUPLICATE`).
#[salsa::tracked(returns(ref))]
pub fn declared<'db>(db: &'db dyn Db, name: FullName<'db>) -> Arc<[Decl]> {
    // The declaring module is a prefix of the full name (`m.f`, `m.Area.area`, root `Area.area`):
    // each prefix's own scope is asked, longest first, so only the scopes that could hold the
    // name are read.
    let text = name.text(db);
    let mut module: &str = text;
    loop {
        module = module.rsplit_once('.').map_or("", |(m, _)| m);
        if let Some(decls) = own_scope(db, module, *name.library(db)).declarations.get(text) {
            return Arc::from(decls.as_slice());
        }
        if module.is_empty() {
            return Arc::from(Vec::new());
        }
    }
}

/// Facts about one declaration (its key, full name, visibility).
#[salsa::tracked(returns(ref))]
pub fn decl_info(db: &dyn Db, item: Item) -> Option<DeclInfo> {
    if let Some(info) = library_scope(db, Library::get(db)).info(item) {
        return Some(info.clone());
    }
    scope(db).info(item).cloned()
}

/// The full names to try, in order (language §23.1), for `segments` written in `module`, whose
/// imports are `imports`.
fn candidates(imports: &[Import], module: &str, segments: &[Arc<str>]) -> Vec<String> {
    let mut out = Vec::new();
    let Some((first, rest)) = segments.split_first() else { return out };
    let tail = |prefix: &str| {
        let mut name = prefix.to_string();
        for segment in rest {
            name.push('.');
            name.push_str(segment);
        }
        name
    };
    for import in imports.iter() {
        if import.names.iter().any(|n| n == first) {
            out.push(tail(&format!("{}.{}", import.module, first)));
        }
    }
    for import in imports.iter() {
        if &import.alias == first {
            out.push(tail(&import.module));
        }
    }
    if !module.is_empty() {
        out.push(tail(&format!("{module}.{first}")));
    }
    out.push(tail(first));
    out
}

/// The first of `decls` that `wanted` accepts: what a path names (one home for both lookups).
fn first_wanted(mut decls: impl Iterator<Item = Decl>, wanted: impl Fn(ItemKind) -> bool) -> Lookup {
    decls.find(|decl| wanted(decl.kind)).map_or(Lookup::None, Lookup::Found)
}

/// The scope a lookup from `module` reads: the library's own for a library module.
fn scope_of_module<'db>(db: &'db dyn Db, module: &str) -> &'db ProgramScope {
    let library = library_scope(db, Library::get(db));
    if library.modules.contains_key(module) { library } else { scope(db) }
}

/// Name lookups for the check of one declaration, through the narrow queries above (see the
/// module comment). The whole scope is reachable only through [`Resolver::whole`], for error
/// paths.
#[derive(Clone, Copy)]
pub struct Resolver<'db> {
    db: &'db dyn Db,
}

impl<'db> Resolver<'db> {
    pub fn new(db: &'db dyn Db) -> Resolver<'db> {
        Resolver { db }
    }

    /// The declaration `segments` names from `module`, among those `wanted` accepts.
    pub fn resolve_path(&self, module: &str, segments: &[Arc<str>], wanted: impl Fn(ItemKind) -> bool) -> Lookup {
        let path = NamePath::new(self.db, Arc::from(module), Arc::from(segments));
        first_wanted(resolve_name(self.db, path).iter().copied(), wanted)
    }

    /// True when `name` is an import alias (a module reached by name) inside `module`.
    pub fn is_module_alias(&self, module: &str, name: &str) -> bool {
        let segments: Arc<[Arc<str>]> = Arc::from(vec![Arc::<str>::from(name)]);
        let path = NamePath::new(self.db, Arc::from(module), segments);
        module_alias(self.db, path)
    }

    /// The module the import alias `name` reaches inside `module`, if it is one.
    pub fn alias_target(&self, module: &str, name: &str) -> Option<Arc<str>> {
        let segments: Arc<[Arc<str>]> = Arc::from(vec![Arc::<str>::from(name)]);
        let path = NamePath::new(self.db, Arc::from(module), segments);
        alias_target(self.db, path).clone()
    }

    /// The declarations named exactly `full` (`module.name`).
    pub fn declared(&self, full: &str) -> &'db [Decl] {
        declared(self.db, FullName::new(self.db, Arc::from(full), false))
    }

    /// What `format(out, …)` appends with (language §13.1): `std.vec.extend_from`, the one
    /// home of a vector's growth, which the checker records as the call's edge and MIR lowering
    /// calls at `u8`. None when the program links no `std.vec` (then no `Vec[u8]` exists either).
    pub fn format_append(&self) -> Option<Item> {
        self.declared(crate::library::FORMAT_APPEND).iter().find(|d| d.kind == ItemKind::Fn).map(|d| d.item)
    }

    /// Facts about a declaration.
    pub fn info(&self, item: Item) -> Option<&'db DeclInfo> {
        decl_info(self.db, item).as_ref()
    }

    /// The module a declaration belongs to.
    pub fn module_of(&self, item: Item) -> Arc<str> {
        self.info(item).map(|i| i.key.module.clone()).unwrap_or_else(|| Arc::from(""))
    }

    /// True when `module` is a packaged library module (read from the library's own scope).
    pub fn is_library_module(&self, module: &str) -> bool {
        library_scope(self.db, Library::get(self.db)).modules.contains_key(module)
    }

    /// The full name of a declaration.
    pub fn full_name(&self, item: Item) -> Arc<str> {
        self.info(item).map(|i| i.full_name.clone()).unwrap_or_else(|| Arc::from("?"))
    }

    /// Whether `item` may be named from `module` (root declarations and `pub` ones always may).
    pub fn visible_from(&self, item: Item, module: &str) -> bool {
        match self.info(item) {
            Some(info) => info.key.module.is_empty() || info.public || &*info.key.module == module,
            None => true,
        }
    }

    /// The whole scope: only for error paths (hints over every declaration), which therefore
    /// re-run whenever any declaration changes.
    pub fn whole(&self) -> &'db ProgramScope {
        scope(self.db)
    }
}

impl ProgramScope {
    /// Facts about a declaration.
    pub fn info(&self, item: Item) -> Option<&DeclInfo> {
        self.info.get(&item)
    }

    /// The module a declaration belongs to.
    pub fn module_of(&self, item: Item) -> Arc<str> {
        self.info(item).map(|i| i.key.module.clone()).unwrap_or_else(|| Arc::from(""))
    }

    /// The full name of a declaration.
    pub fn full_name(&self, item: Item) -> Arc<str> {
        self.info(item).map(|i| i.full_name.clone()).unwrap_or_else(|| Arc::from("?"))
    }

    /// The full names to try, in order, for `segments` written in `module`.
    pub fn candidates(&self, module: &str, segments: &[Arc<str>]) -> Vec<String> {
        let imports: Vec<Import> = self.imports.iter().filter(|i| &*i.in_module == module).cloned().collect();
        candidates(&imports, module, segments)
    }

    /// Every declaration `segments` may name from `module`, candidates in order (imports by
    /// name, then aliases, then the module's own, then the root), each candidate's in
    /// declaration order.
    fn named<'a>(&'a self, module: &str, segments: &[Arc<str>]) -> impl Iterator<Item = Decl> + 'a {
        self.candidates(module, segments)
            .into_iter()
            .flat_map(move |candidate| self.by_full_name.get(candidate.as_str()).into_iter().flatten().copied())
    }

    /// The declaration `segments` names from `module`, among those `wanted` accepts (the same
    /// rule as [`Resolver::resolve_path`], over this scope directly).
    pub fn resolve_path(&self, module: &str, segments: &[Arc<str>], wanted: impl Fn(ItemKind) -> bool) -> Lookup {
        first_wanted(self.named(module, segments), wanted)
    }

    /// True when `name` is an import alias (a module reached by name) inside `module`.
    pub fn is_module_alias(&self, module: &str, name: &str) -> bool {
        self.imports.iter().any(|i| &*i.in_module == module && &*i.alias == name)
    }

    /// Whether `item` may be named from `module` (root declarations and `pub` ones always may).
    pub fn visible_from(&self, item: Item, module: &str) -> bool {
        match self.info(item) {
            Some(info) => info.key.module.is_empty() || info.public || &*info.key.module == module,
            None => true,
        }
    }
}

/// The outcome of looking a name up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Found(Decl),
    None,
}
