//! Type queries: the index of one query (its private workspace and the entries drawn from it), the
//! given and wanted types resolved in the root module, and the probe functions the checker judges.
//!
//! Type queries are decided by the checker, never by a type rule repeated here: each candidate call
//! (the values in every order, the extents a call may omit left out or not, each parameter left
//! open as a further probe parameter of its declared type) is written as a probe function in the
//! root module, in a probe file loaded before the program, and the probes are judged by
//! `check_fn` in one database after one edit of that file. The only thing decided before the
//! checker is a pre-filter that skips placing a scalar where a different scalar, a view, or a
//! record is declared (the checker has no implicit conversion, so it refuses all of those).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cairn_diagnostics::Diagnostic;
use cairn_hir::Row;
use cairn_hir::body::{ExtentRef, TypeArg, TypeRef};
use cairn_hir::types::Ty;
use cairn_hir::{Item, ItemKind, SourceText, Workspace};
use cairn_syntax::ast::{self, AstNode};

use super::entries::{Entry, entries_of, short};
use super::{Candidate, MAX_PROBES};
use crate::edit::Sources;

/// The candidates of one query: a workspace holding the probe file (first, in the root module),
/// the program when it was accepted, and a module importing every packaged library module
/// (last), with the entries drawn from them.
pub(super) struct Index {
    workspace: Workspace,
    /// What every name this module writes into the probe file starts with; no program text holds it.
    prefix: String,
    pub(super) entries: Vec<Entry>,
    /// The code that refused the given program, when it was refused.
    pub(super) refused: Option<String>,
    /// Modules declaring a given or wanted type.
    pub(super) home: BTreeSet<Arc<str>>,
}

impl Index {
    pub(super) fn new(program: Option<&Sources>) -> Result<Index, Diagnostic> {
        let texts: Vec<&str> = program.map(|p| p.files.iter().map(|f| f.text.as_str()).collect()).unwrap_or_default();
        let prefix = unique_prefix(&texts);
        let probe_file = SourceText { name: format!("{prefix}_probes.cairn"), text: String::new() };
        let mut loader_text = format!("module {prefix}_library;\n");
        for module in cairn_hir::library::MODULES {
            loader_text.push_str(&format!("import {};\n", module.name));
        }
        let loader = SourceText { name: format!("{prefix}_library.cairn"), text: loader_text };
        let mut refused = None;
        if let Some(program) = program {
            let mut files = vec![probe_file.clone()];
            files.extend(program.files.iter().cloned());
            files.push(loader.clone());
            let mut workspace = Workspace::new(files);
            match workspace.check().refusal {
                Some(refusal) => refused = Some(refusal.first.code.clone()),
                None => {
                    let entries = entries_of(&workspace);
                    return Ok(Index { workspace, prefix, entries, refused, home: BTreeSet::new() });
                }
            }
        }
        let mut workspace = Workspace::new(vec![probe_file, loader]);
        if let Some(refusal) = workspace.check().refusal {
            return Err(Diagnostic::new(
                "E-INTERNAL",
                format!("The packaged library does not check ({}), so no answer is complete.", refusal.first.code),
            ));
        }
        let entries = entries_of(&workspace);
        Ok(Index { workspace, prefix, entries, refused, home: BTreeSet::new() })
    }

    /// Resolves the given and wanted types in the root module: each is written as the parameter
    /// of a probe whose signature the checker judges, so a type it cannot resolve is refused with
    /// its own code.
    pub(super) fn given(&mut self, takes: &[String], returns: Option<&str>) -> Result<Given, Diagnostic> {
        let p = self.prefix.clone();
        let mut asked: Vec<(&str, String, String)> =
            takes.iter().enumerate().map(|(i, t)| (t.as_str(), format!("{p}_a{i}"), format!("{p}_e{i}"))).collect();
        if let Some(returns) = returns {
            asked.push((returns, format!("{p}_w"), format!("{p}_ew")));
        }
        let mut text = String::new();
        let mut declared: Vec<(String, Vec<String>, String)> = Vec::new();
        for (i, (written, value, extent)) in asked.iter().enumerate() {
            let ty = self.written_type(written)?;
            let (ty, extent) = rename_extent(&ty, extent);
            let type_text = cairn_hir::render::type_ref_text(&ty);
            let mut params: Vec<String> = extent.iter().map(|e| format!("{e}:usize")).collect();
            params.push(format!("{value}:{type_text}"));
            let probe = format!("fn {p}_t{i}({}) {{ }}\n", params.join(", "));
            if !parses_cleanly(&probe) {
                return Err(not_one_type(written));
            }
            text.push_str(&probe);
            declared.push((type_text, params, value.clone()));
        }
        self.workspace.set_file_text(0, text.clone());
        let items = self.probe_items();
        let db = self.workspace.db();
        let mut resolved: Vec<GivenValue> = Vec::new();
        for (i, (type_text, params, value)) in declared.into_iter().enumerate() {
            let written = asked.get(i).map_or("", |a| a.0);
            let Some(&item) = items.get(&format!("{p}_t{i}")) else { return Err(not_one_type(written)) };
            let signature = cairn_hir::fn_signature(db, item);
            if let Some(error) = &signature.error {
                // The checker's message names the probe's parameters; the query knows them as
                // the value and its extent.
                let extent = asked.get(i).map_or("", |a| a.2.as_str());
                let message = error.message.replace(&value, "value").replace(extent, "n");
                return Err(Diagnostic::new(
                    error.code,
                    format!("No parameter of the root module can have the type {}: {message}", written.trim()),
                ));
            }
            let Some(ty) = signature.params.last().map(|param| param.ty.clone()) else {
                return Err(not_one_type(written));
            };
            // A value (not a borrow) is moved into a local the probe owns, so that a call may lend
            // it (`ro`/`rw`) as well as pass it.
            let by_value = !matches!(ty, Ty::View(_) | Ty::Borrow(..));
            let argument = if by_value { format!("{p}_x{i}") } else { value.clone() };
            resolved.push(GivenValue {
                text: type_text,
                params,
                argument,
                value,
                ty,
                written: written.trim().to_string(),
            });
        }
        let returns = if returns.is_some() { resolved.pop() } else { None };
        let moves: String = resolved
            .iter()
            .filter(|v| v.argument != v.value)
            .map(|v| format!("let mut {} = {}; ", v.argument, v.value))
            .collect();
        let params: Vec<String> = resolved.iter().flat_map(|v| v.params.iter().cloned()).collect();
        text.push_str(&format!("fn {p}_base({}) {{ {moves}}}\n", params.join(", ")));
        let scope = cairn_hir::scope(db);
        for value in resolved.iter().chain(returns.iter()) {
            if let Some(item) = adt_item(&value.ty) {
                self.home.insert(scope.module_of(item));
            }
        }
        Ok(Given { takes: resolved, returns, text, moves })
    }

    /// A written type, parsed as exactly one type, its names qualified where the root module does
    /// not reach them and exactly one module declares a record or enum so named.
    fn written_type(&self, written: &str) -> Result<TypeRef, Diagnostic> {
        let trimmed = written.trim();
        if trimmed.is_empty() {
            return Err(not_one_type(written));
        }
        let probe = format!("fn t(v:{trimmed}) {{ }}\n");
        let parse = cairn_syntax::parse(&probe);
        if !parse.errors().is_empty() {
            return Err(not_one_type(written));
        }
        let root = parse.syntax_node();
        let declarations: Vec<cairn_syntax::SyntaxNode> = root.children().collect();
        let [declaration] = declarations.as_slice() else { return Err(not_one_type(written)) };
        let Some(function) = ast::Fn::cast(declaration.clone()) else { return Err(not_one_type(written)) };
        let params: Vec<ast::Param> = function.param_list().map(|l| l.params().collect()).unwrap_or_default();
        let [param] = params.as_slice() else { return Err(not_one_type(written)) };
        let Some(ty) = param.ty() else { return Err(not_one_type(written)) };
        if ty.syntax().text().to_string().trim() != trimmed {
            return Err(not_one_type(written));
        }
        Ok(self.qualified(&cairn_hir::body::lower_type(&ty)))
    }

    fn qualified(&self, ty: &TypeRef) -> TypeRef {
        match ty {
            TypeRef::Path { path, args } => {
                let args: Arc<[TypeArg]> = args
                    .iter()
                    .map(|arg| match arg {
                        TypeArg::Type(t) => TypeArg::Type(self.qualified(t)),
                        TypeArg::Nat(n) => TypeArg::Nat(n.clone()),
                    })
                    .collect();
                TypeRef::Path { path: self.qualified_path(path), args }
            }
            TypeRef::Borrow { rw, inner, extent, place } => TypeRef::Borrow {
                rw: *rw,
                inner: Arc::new(self.qualified(inner)),
                extent: extent.clone(),
                place: place.clone(),
            },
            other => other.clone(),
        }
    }

    /// `path` as written when the root module reaches a record or enum by it (or it names a
    /// scalar), else the full name of the one record or enum so named, else as written (the
    /// checker then refuses it with its own code).
    fn qualified_path(&self, path: &Arc<[Arc<str>]>) -> Arc<[Arc<str>]> {
        let joined = path.iter().map(|s| &**s).collect::<Vec<_>>().join(".");
        if Ty::scalar_named(&joined).is_some() {
            return path.clone();
        }
        let scope = cairn_hir::scope(self.workspace.db());
        let is_type = |kind: ItemKind| matches!(kind, ItemKind::Struct | ItemKind::Enum);
        if let cairn_hir::Lookup::Found(_) = scope.resolve_path("", path, is_type) {
            return path.clone();
        }
        let found: Vec<&Arc<str>> = scope
            .by_full_name
            .iter()
            .filter(|(name, decls)| {
                // Only a type the root module may name counts: a private one of another module
                // (std.draw's `Span`) is no candidate.
                name.rsplit('.').next() == Some(joined.as_str())
                    && decls.iter().any(|d| is_type(d.kind) && scope.visible_from(d.item, ""))
            })
            .map(|(name, _)| name)
            .collect();
        match found.as_slice() {
            [one] => one.split('.').map(Arc::from).collect(),
            _ => path.clone(),
        }
    }

    /// The probe file's functions by name.
    fn probe_items(&self) -> BTreeMap<String, Item> {
        let Some(file) = self.workspace.files().first() else { return BTreeMap::new() };
        file.items.iter().filter(|i| i.key.kind == ItemKind::Fn).map(|i| (i.key.name.to_string(), i.item)).collect()
    }

    /// Writes every candidate call as a probe, judges them all in one database (one edit of the
    /// probe file), and returns the calls the checker accepts.
    pub(super) fn judged(&mut self, given: &Given) -> Result<Vec<Candidate>, Diagnostic> {
        let mut writer = ProbeWriter {
            prefix: self.prefix.clone(),
            take_params: given.takes.iter().flat_map(|v| v.params.iter().cloned()).collect(),
            moves: given.moves.clone(),
            returns: given.returns.as_ref().map(|r| r.text.clone()),
            text: given.text.clone(),
            probes: Vec::new(),
        };
        let db = self.workspace.db();
        let scope = cairn_hir::scope(db);
        let take_types: Vec<&Ty> = given.takes.iter().map(|v| &v.ty).collect();
        for (index, entry) in self.entries.iter().enumerate() {
            match entry.item {
                Some(item) => {
                    // A function the root module cannot name is refused by the checker at every
                    // call (tools.md §3.11); no probe is written for it.
                    if !scope.visible_from(item, "") {
                        continue;
                    }
                    let signature = cairn_hir::fn_signature(db, item);
                    if signature.error.is_some() || signature.test {
                        continue;
                    }
                    let all: Vec<usize> = (0..signature.params.len()).collect();
                    let mut variants = vec![all.clone()];
                    if !signature.extent_params.is_empty() {
                        variants.push(all.into_iter().filter(|i| !signature.extent_params.contains(i)).collect());
                    }
                    let void = signature.ret == Ty::Void;
                    for listed in variants {
                        let slots: Vec<&Ty> =
                            listed.iter().filter_map(|&i| signature.params.get(i)).map(|p| &p.ty).collect();
                        for placement in placements(&slots, &take_types) {
                            let Some((params, args)) = writer.open_parameters(db, &slots, &placement, &given.takes)
                            else {
                                continue;
                            };
                            let call = format!("{}({})", entry.name, args.join(", "));
                            let left = slots.len() - placement.len();
                            writer.add(index, &params, &call, (left, 0), Some(void), "")?;
                        }
                    }
                }
                None => {
                    // A builtin is called with exactly the values given, in every order.
                    if given.takes.is_empty() {
                        continue;
                    }
                    for (arrangement, order) in permutations(given.takes.len()).into_iter().enumerate() {
                        let args: Vec<&str> =
                            order.iter().filter_map(|&i| given.takes.get(i)).map(|v| v.argument.as_str()).collect();
                        let shown: Vec<String> =
                            order.iter().filter_map(|&i| given.takes.get(i)).map(|v| short(&v.written)).collect();
                        let of_values = |name: &&&str| {
                            !cairn_hir::builtins::Builtin::from_name(name).is_some_and(|b| b.on_places())
                        };
                        for name in entry.names.iter().filter(of_values) {
                            let call = format!("{name}({})", args.join(", "));
                            let head = format!("{name}({})", shown.join(", "));
                            writer.add(index, &[], &call, (0, arrangement), None, &head)?;
                        }
                    }
                }
            }
        }
        let wanted = given.returns.as_ref().and_then(|r| probe_type(db, &r.ty, Some("_")));
        let ProbeWriter { text, probes, prefix, .. } = writer;
        self.workspace.set_file_text(0, text);
        let items = self.probe_items();
        let db = self.workspace.db();
        let base_row: Row = items
            .get(&format!("{prefix}_base"))
            .map(|&item| cairn_hir::check::check_fn(db, item).local_row.clone())
            .unwrap_or_default();
        let mut out = Vec::new();
        for probe in probes {
            let Some(&item) = items.get(&probe.name) else { continue };
            let Some(entry) = self.entries.get(probe.entry) else { continue };
            if cairn_hir::fn_signature(db, item).error.is_some() {
                continue;
            }
            let check = cairn_hir::check::check_fn(db, item);
            // A probe refused only because it drops a linear value it was handed still fits: the
            // call checked, and the drop is the probe's.
            if check.error.as_ref().is_some_and(|e| e.code != "E-LINEAR-LEAK") {
                continue;
            }
            let mut holder = false;
            if probe.bound {
                let body = cairn_hir::body::fn_body(db, item);
                let init = body.root.last().and_then(|&stmt| match body.stmt(stmt) {
                    cairn_hir::body::Stmt::Let { init, .. } => Some(*init),
                    _ => None,
                });
                let Some(ty) = init.and_then(|init| check.expr_types.get(init.0 as usize)) else { continue };
                let Some(wanted) = &wanted else { continue };
                if probe_type(db, ty.value(), Some("_")).as_ref() == Some(wanted) {
                    holder = false;
                } else if holds(db, ty.value(), wanted) {
                    holder = true;
                } else {
                    continue;
                }
            }
            // A builtin's row belongs to the call: what the probe performs beyond the base probe,
            // less the footprints of the values it is passed.
            let own_row = entry.item.is_some();
            let row = (!own_row && check.error.is_none()).then(|| {
                check
                    .local_row
                    .iter()
                    .filter(|e| !base_row.contains(*e) && !e.starts_with("read:") && !e.starts_with("write:"))
                    .cloned()
                    .collect()
            });
            out.push(Candidate {
                entry: probe.entry,
                holder,
                left: probe.left,
                head: probe.head,
                arrangement: probe.arrangement,
                row,
                own_row,
            });
        }
        Ok(out)
    }
}

/// The types of a query and the probe text that declares them (kept first in the probe file).
#[derive(Debug, Clone)]
pub(super) struct Given {
    takes: Vec<GivenValue>,
    returns: Option<GivenValue>,
    text: String,
    /// The statements that move each value into a local of the probe.
    moves: String,
}

/// One value type of a query (or the wanted type), resolved in the root module.
#[derive(Debug, Clone)]
struct GivenValue {
    /// The type as a probe writes it (modules filled in, a named extent renamed to the probe's).
    text: String,
    /// The probe parameters that declare it: its extent (`e:usize`) when it names one, then it.
    params: Vec<String>,
    /// What a call passes: the parameter itself for a borrow, else the local it was moved into.
    argument: String,
    /// The parameter's name.
    value: String,
    ty: Ty,
    /// The type as the query wrote it, as a builtin's call shows it.
    written: String,
}

/// One probe function: whose call it is, whether the call's type is still to be compared with the
/// wanted one (the `let _ =` form when a type is wanted), how many parameters the call leaves
/// open, and a builtin's call as a hit shows it.
#[derive(Debug, Clone)]
struct Probe {
    name: String,
    entry: usize,
    bound: bool,
    left: usize,
    head: String,
    arrangement: usize,
}

/// Writes probe functions into the probe file's text.
struct ProbeWriter {
    prefix: String,
    /// The parameters declaring the given values, first in every probe.
    take_params: Vec<String>,
    moves: String,
    /// The wanted type as a probe writes it.
    returns: Option<String>,
    text: String,
    probes: Vec<Probe>,
}

impl ProbeWriter {
    /// The probe parameters and call arguments of one placement: a placed slot gets its value,
    /// every other slot a further parameter of its declared type (a view with its own extent
    /// parameter). `None` when a declared type cannot be written from the root module.
    fn open_parameters(
        &self,
        db: &dyn cairn_hir::Db,
        slots: &[&Ty],
        placement: &[usize],
        takes: &[GivenValue],
    ) -> Option<(Vec<String>, Vec<String>)> {
        let p = &self.prefix;
        let mut params = Vec::new();
        let mut args = Vec::new();
        for (slot, ty) in slots.iter().enumerate() {
            if let Some(take) = placement.iter().position(|&s| s == slot) {
                args.push(takes.get(take)?.argument.clone());
                continue;
            }
            let extent = format!("{p}_m{slot}");
            let text = probe_type(db, ty, Some(&extent))?;
            if ty.as_view().is_some_and(|v| !matches!(v.extent, cairn_hir::types::Extent::Literal(_))) {
                params.push(format!("{extent}:usize"));
            }
            params.push(format!("{p}_p{slot}:{text}"));
            args.push(format!("{p}_p{slot}"));
        }
        Some((params, args))
    }

    /// A probe of each form the query asks for: the call returned as the wanted type (when one
    /// is wanted), the call bound to `_` (whose type may hold the wanted one, or any type when
    /// none is wanted), or the call as a statement. `void` is `None` for a builtin, whose result
    /// type only its rule knows: it gets every form.
    fn add(
        &mut self,
        entry: usize,
        params: &[String],
        call: &str,
        (left, arrangement): (usize, usize),
        void: Option<bool>,
        head: &str,
    ) -> Result<(), Diagnostic> {
        let mut forms: Vec<(String, bool, bool)> = Vec::new();
        if self.returns.is_some() {
            forms.push((format!("return {call};"), false, true));
        } else if void != Some(false) {
            forms.push((format!("{call};"), false, false));
        }
        if void != Some(true) {
            forms.push((format!("let _ = {call};"), self.returns.is_some(), false));
        }
        for (body, bound, returning) in forms {
            if self.probes.len() >= MAX_PROBES {
                return Err(Diagnostic::new(
                    "E-EXPANSION-LIMIT",
                    format!(
                        "This type query needs more than {MAX_PROBES} candidate calls: give fewer or more specific types, or ask with words."
                    ),
                ));
            }
            let name = format!("{}_{}", self.prefix, self.probes.len() + 1);
            let mut all = self.take_params.clone();
            all.extend(params.iter().cloned());
            let result = match (&self.returns, returning) {
                (Some(wanted), true) => format!(" -> {wanted}"),
                _ => String::new(),
            };
            self.text.push_str(&format!("fn {name}({}){result} {{ {}{body} }}\n", all.join(", "), self.moves));
            self.probes.push(Probe { name, entry, bound, left, head: head.to_string(), arrangement });
        }
        Ok(())
    }
}

/// A prefix that no program text holds, for every name the probe file declares.
fn unique_prefix(texts: &[&str]) -> String {
    let mut prefix = "cairn_find".to_string();
    let mut n = 0u32;
    while texts.iter().any(|t| t.contains(prefix.as_str())) {
        n += 1;
        prefix = format!("cairn_find{n}");
    }
    prefix
}

/// A type reference with a named view extent renamed to `extent`, and the extent parameter the
/// probe then declares.
fn rename_extent(ty: &TypeRef, extent: &str) -> (TypeRef, Option<String>) {
    match ty {
        TypeRef::Borrow { rw, inner, extent: Some(ExtentRef::Name(_)), place } => (
            TypeRef::Borrow {
                rw: *rw,
                inner: inner.clone(),
                extent: Some(ExtentRef::Name(Arc::from(extent))),
                place: place.clone(),
            },
            Some(extent.to_string()),
        ),
        other => (other.clone(), None),
    }
}

fn parses_cleanly(text: &str) -> bool {
    cairn_syntax::parse(text).errors().is_empty()
}

fn not_one_type(written: &str) -> Diagnostic {
    Diagnostic::new("E-PARSE", format!("{:?} is not one type.", written.trim()))
}

/// The record or enum a type is about (through a borrow or a view).
fn adt_item(ty: &Ty) -> Option<Item> {
    match ty.value() {
        Ty::Record(adt) | Ty::Enum(adt) => Some(adt.item),
        Ty::View(view) => adt_item(&view.elem),
        _ => None,
    }
}

/// A resolved type as the root module writes it: records and enums by their full names, a view's
/// non-literal extent as `extent`. `None` for what cannot be written (a generic parameter, an
/// unknown type, or a view without an extent name to give it).
fn probe_type(db: &dyn cairn_hir::Db, ty: &Ty, extent: Option<&str>) -> Option<String> {
    match ty {
        Ty::Bool | Ty::Int(_) | Ty::Float(_) => Some(ty.to_string()),
        Ty::Record(adt) | Ty::Enum(adt) => {
            let mut out = cairn_hir::scope(db).full_name(adt.item).to_string();
            if !adt.args.is_empty() {
                let args: Option<Vec<String>> = adt.args.iter().map(|a| probe_type(db, a, None)).collect();
                out.push_str(&format!("[{}]", args?.join(", ")));
            }
            Some(out)
        }
        Ty::Borrow(mode, inner) => Some(format!("{}<{}>", mode.name(), probe_type(db, inner, None)?)),
        Ty::View(view) => {
            let size = match &view.extent {
                cairn_hir::types::Extent::Literal(n) => n.to_string(),
                _ => extent?.to_string(),
            };
            Some(format!("{}<{}>[{size}]@{}", view.mode.name(), probe_type(db, &view.elem, None)?, view.place.name()))
        }
        Ty::Buf(elem) => Some(format!("Buf[{}]", probe_type(db, elem, None)?)),
        Ty::Array(elem, n) => Some(format!("Array[{}, {n}]", probe_type(db, elem, None)?)),
        Ty::DynBox(_, name) => Some(format!("Dyn[{name}]")),
        Ty::Nat(n) => Some(n.to_string()),
        Ty::Void
        | Ty::Param(_)
        | Ty::NatParam(_)
        | Ty::ArrayNat(..)
        | Ty::Fn(_)
        | Ty::Dyn(..)
        | Ty::Opaque(_)
        | Ty::Ticket
        | Ty::Error => None,
    }
}

/// Whether a record or enum type holds the wanted type among its type arguments (an `Option` or
/// a `Result` of it).
fn holds(db: &dyn cairn_hir::Db, ty: &Ty, wanted: &str) -> bool {
    match ty {
        Ty::Record(adt) | Ty::Enum(adt) => {
            adt.args.iter().any(|a| probe_type(db, a.value(), Some("_")).as_deref() == Some(wanted))
        }
        _ => false,
    }
}

/// Every way to place the given values into distinct slots (`out[i]` is the slot of value `i`),
/// skipping a value whose type the slot's certainly refuses: a scalar where a different scalar,
/// a record or an enum is declared, or a view where none is (and the reverse). The checker has
/// no implicit conversion, so every skipped call is one it refuses.
fn placements(slots: &[&Ty], takes: &[&Ty]) -> Vec<Vec<usize>> {
    fn go(slots: &[&Ty], takes: &[&Ty], current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        let Some(take) = takes.get(current.len()) else {
            out.push(current.clone());
            return;
        };
        for (slot, ty) in slots.iter().enumerate() {
            if current.contains(&slot) || !compatible(take, ty) {
                continue;
            }
            current.push(slot);
            go(slots, takes, current, out);
            current.pop();
        }
    }
    let mut out = Vec::new();
    if takes.len() <= slots.len() {
        go(slots, takes, &mut Vec::new(), &mut out);
    }
    out
}

fn compatible(take: &Ty, slot: &Ty) -> bool {
    let (take, slot) = (take.value(), slot.value());
    let view = |t: &Ty| matches!(t, Ty::View(_));
    let adt = |t: &Ty| matches!(t, Ty::Record(_) | Ty::Enum(_));
    if view(take) != view(slot) {
        return false;
    }
    if (take.is_scalar() && adt(slot)) || (adt(take) && slot.is_scalar()) {
        return false;
    }
    if take.is_scalar() && slot.is_scalar() {
        return take == slot;
    }
    true
}

/// Every order of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let slots: Vec<Ty> = vec![Ty::Error; n];
    let slots: Vec<&Ty> = slots.iter().collect();
    placements(&slots, &slots)
}
