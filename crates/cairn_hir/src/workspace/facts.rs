//! What the state, the documentation and the tools read from a checked workspace: the facts of
//! each function, the inferred `let` types, the state view, lookups by name.

use std::sync::Arc;

use super::{CheckKind, FileItem, Workspace, first_token};
use crate::effects::is_function;
use crate::input::{Item, ItemKind};

/// A function of the program's own files, by name ([`Workspace::own_functions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnFunction {
    /// Its module (`""` for the root module).
    pub module: Arc<str>,
    /// Its name as its module writes it (a method: `Area.Rect.area`).
    pub local: Arc<str>,
    /// Its full name (`module.name`).
    pub full: Arc<str>,
}

/// What the checker inferred about one function, for `cairn state`, `cairn doc` and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionFacts {
    /// Its declaration.
    pub item: Item,
    /// The module that declares it (`""` for the root).
    pub module: Arc<str>,
    /// Its name as the module writes it.
    pub name: Arc<str>,
    pub kind: ItemKind,
    pub library: bool,
    /// Its effect row, sorted; `None` when unknown (it, or something it reaches, was refused).
    pub row: Option<Vec<Arc<str>>>,
    /// Its guard sites by kind, in order of first occurrence.
    pub sites: Vec<(&'static str, u32)>,
    /// How many `unsafe` blocks its body writes (language §45: the receipt counts them).
    pub unsafe_blocks: u32,
    /// For an implementation (language §27): its reference's full name, and the identity of each
    /// of its instances (one for an untuned implementation), by instance name.
    pub implements: Option<(Arc<str>, Vec<(String, String)>)>,
}

impl Workspace {
    /// An implementation's reference and the identity of each of its instances.
    fn implementation_facts(&self, item: Item) -> Option<(Arc<str>, Vec<(String, String)>)> {
        let reference = crate::implementations::implementation_reference(&self.db, item)?;
        let tuned = crate::implementations::tuned_instances(&self.db, item);
        let instances: Vec<crate::instance::Instance<'_>> = if tuned.is_empty() {
            vec![crate::instance::Instance::monomorphic(&self.db, item)]
        } else {
            tuned.into_iter().map(|args| crate::instance::Instance::new(&self.db, item, args)).collect()
        };
        let identities = instances
            .into_iter()
            .filter_map(|i| Some((i.display(&self.db), crate::implementations::identity(&self.db, i)?)))
            .collect();
        Some((crate::scope::Resolver::new(&self.db).full_name(reference), identities))
    }

    /// `cairn check --generics`: each own template's verdict at its witnesses, by full name
    /// (`crate::certify`); every verdict is `unknown` when the program does not check.
    pub fn certify_generics(&mut self) -> Vec<(String, String)> {
        let own: Vec<Item> = self.own_templates().collect();
        self.certify(own)
    }

    /// `cairn check --std --generics`: each template of the linked library modules (functions,
    /// and the methods of generic impls), at its witnesses.
    pub fn certify_library_generics(&mut self) -> Vec<(String, String)> {
        let templates: Vec<Item> = self
            .program
            .items(&self.db)
            .iter()
            .filter(|e| matches!(e.key.kind, ItemKind::Fn | ItemKind::Method) && e.library)
            .filter(|e| !crate::foreign::is_extern(&self.db, e.item))
            .filter(|e| !crate::generics::fn_generics(&self.db, e.item).is_empty())
            .map(|e| e.item)
            .collect();
        self.certify(templates)
    }

    fn certify(&mut self, templates: Vec<Item>) -> Vec<(String, String)> {
        let typed = self.check().refusal.is_none();
        let scope = crate::scope::scope(&self.db);
        templates
            .into_iter()
            .map(|item| {
                let verdict = if typed {
                    crate::certify::certify(&self.db, item)
                } else {
                    "unknown: the program does not check".to_string()
                };
                (scope.full_name(item).to_string(), verdict)
            })
            .collect()
    }

    /// The program's own templates, in declaration order: function templates, and the methods
    /// of generic impls (templates over the impl's parameters).
    fn own_templates(&self) -> impl Iterator<Item = Item> + '_ {
        self.program
            .items(&self.db)
            .iter()
            .filter(|e| matches!(e.key.kind, ItemKind::Fn | ItemKind::Method) && !e.library)
            .filter(|e| !crate::foreign::is_extern(&self.db, e.item))
            .filter(|e| !crate::generics::fn_generics(&self.db, e.item).is_empty())
            .map(|e| e.item)
    }

    /// The program's own templates that no call, family or other instance instantiates, by
    /// full name (the receipt's `uninstantiated_templates`, language §19).
    pub fn uninstantiated_templates(&self) -> Vec<String> {
        let scope = crate::scope::scope(&self.db);
        self.own_templates()
            .filter(|&item| crate::requested::instances_of(&self.db, item).is_empty())
            .map(|item| scope.full_name(item).to_string())
            .collect()
    }

    /// The facts of every function and test, in declaration order (library ones last).
    pub fn function_facts(&self) -> Vec<FunctionFacts> {
        let rows = crate::effects::rows(&self.db);
        let scope = crate::scope::scope(&self.db);
        self.program
            .items(&self.db)
            .iter()
            .filter(|e| is_function(e.key.kind))
            .map(|entry| {
                let check = crate::requested::representative_check(&self.db, entry.item);
                FunctionFacts {
                    item: entry.item,
                    module: scope.module_of(entry.item),
                    name: entry.key.name.clone(),
                    kind: entry.key.kind,
                    library: entry.library,
                    row: rows.row(entry.item).map(|row| row.iter().cloned().collect()),
                    sites: check.sites.iter().map(|(kind, count)| (kind.name(), *count)).collect(),
                    unsafe_blocks: crate::body::fn_body(&self.db, entry.item)
                        .stmts
                        .iter()
                        .filter(|s| matches!(s, crate::body::Stmt::Unsafe(_)))
                        .count() as u32,
                    implements: self.implementation_facts(entry.item),
                }
            })
            .collect()
    }

    /// How the last [`Workspace::check`] was answered.
    pub fn last_check_kind(&self) -> CheckKind {
        self.last_kind
    }
}

impl Workspace {
    /// The type the checker gave each `let` of the program's own functions, as
    /// `(file, line, binder, type)` with 1-based lines, in declaration order. For the language
    /// tests' `// type:` annotations and for tools that show types.
    pub fn let_types(&self) -> Vec<(usize, u32, Arc<str>, String)> {
        let mut out = Vec::new();
        for (index, file) in self.files.iter().enumerate().take(self.own_files) {
            for entry in file.items.iter().filter(|i| is_function(i.key.kind)) {
                let body = crate::body::fn_body(&self.db, entry.item);
                let map = crate::body::fn_source_map(&self.db, entry.item);
                let check = crate::requested::representative_check(&self.db, entry.item);
                for (stmt, range) in body.stmts.iter().zip(map.stmts.iter()) {
                    let crate::body::Stmt::Let { binder, init, .. } = stmt else { continue };
                    let Some(ty) = check.expr_types.get(init.0 as usize) else { continue };
                    let at = entry.start + range.start();
                    let line = file.line_column(at).line;
                    out.push((index, line, body.binder(*binder).clone(), ty.to_string()));
                }
            }
        }
        out
    }
}

/// What `cairn state` and `cairn doc` show of a program, before either formats it.
#[derive(Debug, Clone, PartialEq)]
pub struct StateView {
    /// True when the program was accepted.
    pub typed: bool,
    /// False when the program does not parse: then no declaration is shown.
    pub parsed: bool,
    /// Functions and tests, in declaration order (library ones only when asked for).
    pub functions: Vec<DeclarationView>,
    /// Records, enums and constants, in declaration order (library ones only when asked for).
    pub types: Vec<DeclarationView>,
    /// The refusal that stopped the check, with the text of its line.
    pub first: Option<(cairn_diagnostics::Diagnostic, Option<String>)>,
    /// The parallel regions of the program's own functions, in declaration order.
    pub regions: Vec<RegionView>,
}

/// One parallel region as the state and packets show it (`crate::regions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionView {
    /// `<function>@<8 hex syntax digest>`.
    pub id: Arc<str>,
    pub kind: &'static str,
    pub binder: Arc<str>,
    /// The iteration count as written.
    pub count: Arc<str>,
    /// The line the region starts on (1-based), in `file`.
    pub line: u32,
    pub file: Arc<str>,
}

/// The kinds of declaration a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclarationKind {
    Function,
    Test,
    Record,
    /// A tag-only enum.
    Enum,
    /// An enum with payloads.
    Sum,
    Const,
    /// A trait: its members' signatures.
    Trait,
    /// An impl's head (`impl Area for Rect`); its methods are listed as functions.
    Impl,
    /// A checked instance of a function template (`largest[u64]`): the state lists it, the
    /// documentation does not.
    Instance,
}

/// One declaration as the state and the documentation show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationView {
    pub kind: DeclarationKind,
    pub module: Arc<str>,
    /// As the module writes it (`test$NAME` for a test).
    pub name: String,
    /// The signature of a function, or the declaration of a type or constant (render.rs).
    pub text: String,
    /// A function's row; `None` for a refused program (and for types).
    pub row: Option<Vec<Arc<str>>>,
    /// The comment above the declaration.
    pub comment: String,
    pub public: bool,
    pub library: bool,
    /// The file that declares it.
    pub file: String,
}

impl StateView {
    /// The `types` text of a state: records, tag-only enums, sums, then constants, each in
    /// declaration order, one per line (empty for a refused program).
    pub fn types_text(&self) -> String {
        if !self.typed {
            return String::new();
        }
        let order = [
            DeclarationKind::Record,
            DeclarationKind::Enum,
            DeclarationKind::Sum,
            DeclarationKind::Const,
            DeclarationKind::Trait,
            DeclarationKind::Impl,
        ];
        order
            .iter()
            .flat_map(|kind| self.types.iter().filter(move |t| t.kind == *kind && !t.library))
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Workspace {
    /// The parallel regions of `function`, with where each starts.
    pub fn regions_of(&self, function: Item) -> Vec<RegionView> {
        crate::regions::fn_regions(&self.db, function)
            .iter()
            .map(|r| {
                let position = self.position(function, cairn_syntax::TextRange::empty(r.offset));
                RegionView {
                    id: r.id.clone(),
                    kind: r.kind,
                    binder: r.binder.clone(),
                    count: r.count.clone(),
                    line: position.as_ref().map_or(0, |(_, _, at)| at.line),
                    file: position
                        .map_or_else(|| Arc::from(""), |(file, _, _)| Arc::from(self.files[file].name.as_str())),
                }
            })
            .collect()
    }

    /// Checks the program and gathers what its state and documentation show; library
    /// declarations are included only when `library` is set.
    pub fn state_view(&mut self, library: bool) -> StateView {
        let outcome = self.check();
        let typed = outcome.refusal.is_none();
        let parsed = self.syntax_refusal().is_none();
        let first = outcome.refusal.map(|refusal| {
            let line = self.line_text(refusal.first.file.as_deref(), refusal.first.line);
            (refusal.first, line)
        });
        let mut view =
            StateView { typed, parsed, functions: Vec::new(), types: Vec::new(), first, regions: Vec::new() };
        if !parsed {
            return view;
        }
        let rows = typed.then(|| crate::effects::rows(&self.db).clone());
        let scope = crate::scope::scope(&self.db);
        for file in self.files.iter().filter(|f| library || !f.library) {
            for entry in &file.items {
                let item = entry.item;
                let kind = match entry.key.kind {
                    ItemKind::Fn => DeclarationKind::Function,
                    ItemKind::Test => DeclarationKind::Test,
                    ItemKind::Struct => DeclarationKind::Record,
                    ItemKind::Enum if crate::decl::enum_def(&self.db, item).tag_only => DeclarationKind::Enum,
                    ItemKind::Enum => DeclarationKind::Sum,
                    ItemKind::Const => DeclarationKind::Const,
                    ItemKind::Trait => DeclarationKind::Trait,
                    ItemKind::Impl => DeclarationKind::Impl,
                    _ => continue,
                };
                let function = matches!(kind, DeclarationKind::Function | DeclarationKind::Test);
                let text = if function {
                    crate::render::signature_text(&self.db, item, typed)
                } else {
                    match crate::render::declaration_text(&self.db, item) {
                        Some(text) => text,
                        None => continue,
                    }
                };
                let declaration = DeclarationView {
                    kind,
                    module: scope.module_of(item),
                    name: if kind == DeclarationKind::Test {
                        format!("test${}", entry.key.name)
                    } else {
                        entry.key.name.to_string()
                    },
                    text,
                    // Unknown (`null`) where the rows know none — a template with no instance and
                    // no witness — never an empty row.
                    row: match (&rows, function) {
                        (Some(rows), true) => rows.row(item).map(|r| r.iter().cloned().collect()),
                        _ => None,
                    },
                    comment: crate::render::comment_above(
                        file.text(),
                        usize::from(entry.start + first_token(&self.db, item)),
                    ),
                    public: scope.info(item).is_some_and(|i| i.public),
                    library: file.library,
                    file: file.name.clone(),
                };
                if function {
                    if !file.library && entry.key.kind == ItemKind::Fn {
                        view.regions.extend(self.regions_of(item));
                    }
                    view.functions.push(declaration);
                } else {
                    view.types.push(declaration);
                }
            }
            // The checked instances of the program's own function templates (protocol §7.1),
            // named as their module writes them (`largest[u64]`), each with its template's row
            // (the join of its instances', sound for every one of them).
            if !file.library {
                for entry in file.items.iter().filter(|e| e.key.kind == ItemKind::Fn) {
                    if crate::generics::fn_generics(&self.db, entry.item).is_empty() {
                        continue;
                    }
                    let module = scope.module_of(entry.item);
                    for instance in crate::requested::instances_of(&self.db, entry.item) {
                        let full = instance.display(&self.db);
                        let name = if module.is_empty() { full } else { full[module.len() + 1..].to_string() };
                        view.functions.push(DeclarationView {
                            kind: DeclarationKind::Instance,
                            module: module.clone(),
                            name,
                            text: crate::render::instance_signature_text(&self.db, instance),
                            row: rows
                                .as_ref()
                                .and_then(|rows| rows.row(entry.item).map(|r| r.iter().cloned().collect())),
                            comment: String::new(),
                            public: scope.info(entry.item).is_some_and(|i| i.public),
                            library: false,
                            file: file.name.clone(),
                        });
                    }
                }
            }
            // An impl's methods, named as the protocol names them (`Area.Rect.area`).
            for entry in file.members.iter().filter(|m| m.key.kind == ItemKind::Method) {
                let item = entry.item;
                let full = member_name(&scope.full_name(item));
                let module = scope.module_of(item);
                let name = if module.is_empty() { full } else { full[module.len() + 1..].to_string() };
                view.functions.push(DeclarationView {
                    kind: DeclarationKind::Function,
                    module,
                    name,
                    text: crate::render::signature_text(&self.db, item, typed),
                    row: rows.as_ref().and_then(|rows| rows.row(item).map(|r| r.iter().cloned().collect())),
                    comment: crate::render::comment_above(
                        file.text(),
                        usize::from(entry.start + first_token(&self.db, item)),
                    ),
                    public: true,
                    library: file.library,
                    file: file.name.clone(),
                });
            }
        }
        view
    }

    /// The text of a line of a file (the first file when `file` is `None`), without its newline.
    pub fn line_text(&self, file: Option<&str>, line: u32) -> Option<String> {
        let state = match file {
            Some(name) => self.files.iter().find(|f| f.name == name)?,
            None => self.files.first()?,
        };
        state.line_index().line_text(state.text(), line).map(str::to_string)
    }
}

impl Workspace {
    /// The rows the last whole check judged against (`None` before a check that reached the rows).
    /// Cheap: the check keeps them; no query runs.
    pub fn last_rows(&self) -> Option<Arc<crate::effects::Rows>> {
        self.last.as_ref().filter(|l| l.record.bodies_checked).map(|l| l.rows.clone())
    }

    /// The method of a trait's impl that `name` names as the protocol writes it
    /// (`Area.Rect.area`, qualified with its module when it has one) or as the checker does
    /// (`Area for Rect.area`).
    pub fn method_named(&self, name: &str) -> Option<Item> {
        let scope = crate::scope::scope(&self.db);
        self.files.iter().flat_map(|f| f.members.iter()).filter(|m| m.key.kind == ItemKind::Method).find_map(|m| {
            let full = scope.full_name(m.item);
            (*full == *name || member_name(&full) == name).then_some(m.item)
        })
    }

    /// The function (or test) declared under `full_name` (`module.name`, or `name` in the root).
    pub fn function_named(&self, full_name: &str) -> Option<Item> {
        let scope = crate::scope::scope(&self.db);
        let declared = scope.by_full_name.get(full_name).and_then(|d| d.iter().find(|d| d.kind == ItemKind::Fn));
        // A method of a trait's impl is a function too, named `Trait.Type.method`.
        declared.map(|d| d.item).or_else(|| self.method_named(full_name))
    }

    /// Where a declaration is listed: its file and its entry.
    pub fn entry_of(&self, item: Item) -> Option<(usize, &FileItem)> {
        if let Some(&(file, index)) = self.places.get(&item) {
            return Some((file, &self.files[file].items[index]));
        }
        // A member of a trait or an impl.
        let &(file, index) = self.member_places.get(&item)?;
        Some((file, &self.files[file].members[index]))
    }

    /// Every function of the program's own files (declared functions and impl methods), with
    /// its module and its name as the module writes it, sorted by module then name. Made once
    /// after the files are split into declarations: a body edit leaves it as it is, so a packet
    /// listing the functions it does not show costs a walk of this list, not a name lookup per
    /// function.
    pub fn own_functions(&self) -> Arc<[OwnFunction]> {
        self.directory
            .get_or_init(|| {
                let mut out: Vec<OwnFunction> = Vec::new();
                for file in self.files.iter().filter(|f| !f.library) {
                    for entry in file.items.iter().chain(&file.members) {
                        if !matches!(entry.key.kind, ItemKind::Fn | ItemKind::Method) {
                            continue;
                        }
                        let full = self.full_name(entry.item);
                        // Named as its module writes it (a method: `Area.Rect.area`).
                        let local: Arc<str> = match entry.key.module.is_empty() {
                            true => full.clone(),
                            false => Arc::from(&full[entry.key.module.len() + 1..]),
                        };
                        out.push(OwnFunction { module: entry.key.module.clone(), local, full });
                    }
                }
                out.sort_by(|a, b| (&a.module, &a.local).cmp(&(&b.module, &b.local)));
                Arc::from(out)
            })
            .clone()
    }

    /// A declaration's full name (`module.name`).
    pub fn full_name(&self, item: Item) -> Arc<str> {
        let full = crate::scope::scope(&self.db).full_name(item);
        // What an agent sees: a method of a trait's impl is `Trait.Type.method` (protocol §7).
        match self.member_places.contains_key(&item) && full.contains(" for ") {
            true => Arc::from(member_name(&full)),
            false => full,
        }
    }

    /// A function's guard sites by kind, in order of first occurrence.
    pub fn function_sites(&self, item: Item) -> Vec<(&'static str, u32)> {
        crate::requested::representative_check(&self.db, item).sites.iter().map(|(k, n)| (k.name(), *n)).collect()
    }

    /// The functions (and tests) that call `item`, each once, in declaration order: read from
    /// the call graph the last check's rows were computed over (empty before a check reached
    /// the rows). Free after an edit that changed no call, since those rows are kept.
    pub fn callers(&self, item: Item) -> Vec<Item> {
        self.last_rows().map(|rows| rows.callers_of(item)).unwrap_or_default()
    }

    /// The declared functions a function calls, each once, in first-call order.
    pub fn callees(&self, item: Item) -> Vec<Item> {
        crate::requested::representative_check(&self.db, item).callees()
    }
}

/// A trait impl member's name as the protocol writes it (protocol §7: `Trait.Type.method`) from
/// the checker's (`Trait for Type.method`); any other name unchanged.
pub fn member_name(full: &str) -> String {
    full.replacen(" for ", ".", 1)
}
