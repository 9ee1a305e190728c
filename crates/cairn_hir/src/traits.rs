//! Traits and impls (language §20): what a trait declares, what an impl defines, which impl a
//! type has, and the whole-program rules (an impl matches its trait exactly; one impl per trait
//! and type).
//!
//! A trait's member is a template over `Self` (`fn_generics` puts `Self` first), with no body; an
//! impl's method is an ordinary function whose `Self` is the impl's type and whose generic
//! parameters start with the impl's. Dispatch is static: the checker types the receiver
//! argument, [`find_impl`] names the impl of that type, and the call is a call of the impl's
//! method (an instance of it, for a generic impl).
//!
//! Queries: [`trait_def`] and [`impl_def`] read one declaration (and the scope); the impl and
//! member tables and [`members_of`] are whole-program tables; [`find_impl`], [`implements`] and
//! [`unmet`] answer whether a type has an impl or meets a bound. The rules that compare an impl
//! with its trait's signatures live above signatures, in `impl_rules.rs`; a member's receiver in
//! `signature.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::body::{TypeRef, lower_type};
use crate::db::Db;
use crate::decl::{TypeCtx, resolve_type};
use crate::diag::{Anchor, Diag};
use crate::generics::{Bound, Generic, GenericKind, substitute, unify};
use crate::input::{Item, ItemKind, Library, Program};
use crate::instance::InstanceArg;
use crate::scope::{Lookup, Resolver};
use crate::types::Ty;

fn member_name(db: &dyn Db, member: Item) -> Arc<str> {
    Resolver::new(db).info(member).map(|i| i.key.name.clone()).unwrap_or_default()
}

/// A trait: its members by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraitDef {
    pub members: Arc<[(Arc<str>, Item)]>,
}

impl TraitDef {
    pub fn member(&self, name: &str) -> Option<Item> {
        self.members.iter().find(|(n, _)| &**n == name).map(|(_, m)| *m)
    }
}

#[salsa::tracked(returns(ref))]
pub fn trait_def(db: &dyn Db, item: Item) -> TraitDef {
    TraitDef { members: members_of(db, item).iter().map(|&m| (member_name(db, m), m)).collect() }
}

/// An impl, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImplDef {
    /// The trait, when the path names one.
    pub trait_item: Option<Item>,
    pub trait_name: Arc<str>,
    /// The implementing type (it may mention the impl's parameters).
    pub self_ty: Ty,
    pub generics: Arc<[Generic]>,
    /// The methods by name, in declaration order.
    pub methods: Arc<[(Arc<str>, Item)]>,
    /// The first refusal of the declaration itself.
    pub error: Option<Diag>,
    /// The module the impl is declared in (its bounds name traits from there).
    pub module: Arc<str>,
}

impl ImplDef {
    pub fn method(&self, name: &str) -> Option<Item> {
        self.methods.iter().find(|(n, _)| &**n == name).map(|(_, m)| *m)
    }

    /// The trait's member of that name.
    pub fn trait_member(&self, db: &dyn Db, name: &str) -> Option<Item> {
        trait_def(db, self.trait_item?).member(name)
    }
}

/// The trait an impl implements (what a packet shows beside the impl), when it names one.
pub fn impl_trait(db: &dyn Db, item: Item) -> Option<Item> {
    impl_def(db, item).trait_item
}

#[salsa::tracked(returns(ref))]
pub fn impl_def(db: &dyn Db, item: Item) -> ImplDef {
    let node = item.syntax(db).syntax_node();
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let generics: Arc<[Generic]> = Arc::from(crate::generics::generics_of_node(&node));
    let mut def = ImplDef {
        trait_item: None,
        trait_name: Arc::from(""),
        self_ty: Ty::Error,
        generics: generics.clone(),
        methods: members_of(db, item).iter().map(|&m| (member_name(db, m), m)).collect(),
        error: None,
        module: module.clone(),
    };
    let Some(imp) = ast::Impl::cast(node) else { return def };
    let fail = |def: &mut ImplDef, message: String| {
        if def.error.is_none() {
            def.error = Some(Diag::new("E-TRAIT-IMPL", message, Anchor::Item));
        }
    };
    let path: Vec<Arc<str>> =
        imp.trait_path().map(|p| p.segments().map(|s| Arc::from(s.text())).collect()).unwrap_or_default();
    def.trait_name = Arc::from(path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join("."));
    match scope.resolve_path(&module, &path, |k| k == ItemKind::Trait) {
        Lookup::Found(decl) => def.trait_item = Some(decl.item),
        Lookup::None => {
            let name = def.trait_name.clone();
            fail(&mut def, format!("{name} names no trait visible here: an impl implements a declared trait."));
        }
    }
    let names = crate::generics::generic_names(&generics);
    let naturals = crate::generics::natural_names(&generics);
    let cx = TypeCtx { db, scope, module: &module, generics: &names, naturals: &naturals, self_ty: None };
    let written = imp.self_ty().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
    match resolve_type(cx, &written) {
        Ok(ty) => def.self_ty = ty,
        Err(e) => {
            if def.error.is_none() {
                def.error = Some(Diag::new(e.code, e.message, Anchor::Item));
            }
        }
    }
    for (index, generic) in generics.iter().enumerate() {
        let mut used = false;
        crate::generics::visit_all_params(&def.self_ty, &mut |i| used |= i as usize == index);
        if !used {
            let message = format!(
                "The impl parameter {} does not appear in the implementing type {}: every parameter of an impl must.",
                generic.name, def.self_ty
            );
            fail(&mut def, message);
        }
    }
    def
}

// The tables below come in two parts: the library's, over the HIGH-durability `Library` input
// (so that an edit of the program never re-validates what the library's own bodies read), and
// the program's own declarations, over `Program`. A lookup made for library code reads the
// library's part alone; one made for the program reads both.

/// The members of each trait and impl among `entries`, in declaration order.
fn members_among(db: &dyn Db, entries: &[crate::input::ItemEntry], library: bool) -> HashMap<Item, Vec<Item>> {
    let mut out: HashMap<Item, Vec<Item>> = HashMap::new();
    let scope = Resolver::new(db);
    for entry in entries.iter().filter(|e| e.library == library) {
        if matches!(entry.key.kind, ItemKind::Member | ItemKind::Method)
            && let Some(parent) = scope.info(entry.item).and_then(|i| i.parent)
        {
            out.entry(parent).or_default().push(entry.item);
        }
    }
    out
}

#[salsa::tracked(returns(ref))]
fn library_member_table(db: &dyn Db, library: Library) -> HashMap<Item, Vec<Item>> {
    members_among(db, library.items(db), true)
}

#[salsa::tracked(returns(ref))]
fn member_table(db: &dyn Db, program: Program) -> HashMap<Item, Vec<Item>> {
    members_among(db, program.items(db), false)
}

/// The members of a trait or the methods of an impl, in declaration order.
pub fn members_of(db: &dyn Db, parent: Item) -> &[Item] {
    let table = if Resolver::new(db).info(parent).is_some_and(|i| i.library) {
        library_member_table(db, Library::get(db))
    } else {
        member_table(db, Program::get(db))
    };
    table.get(&parent).map(Vec::as_slice).unwrap_or_default()
}

/// The member of a trait, or the method of an impl, named `name`.
pub fn member_named(db: &dyn Db, parent: Item, name: &str) -> Option<Item> {
    members_of(db, parent).iter().copied().find(|&m| &*member_name(db, m) == name)
}

/// The trait a trait's member or an impl's method belongs to, and the member's name — what a call
/// of either is dispatched through. `None` for any other item (and for an impl of no trait).
pub fn member_family(db: &dyn Db, item: Item) -> Option<(Item, Arc<str>)> {
    let tables = [member_table(db, Program::get(db)), library_member_table(db, Library::get(db))];
    let parent = tables.iter().find_map(|t| t.iter().find(|(_, members)| members.contains(&item)).map(|(p, _)| *p))?;
    let trait_item = match Resolver::new(db).info(parent)?.key.kind {
        ItemKind::Trait => parent,
        ItemKind::Impl => impl_def(db, parent).trait_item?,
        _ => return None,
    };
    Some((trait_item, member_name(db, item)))
}

/// Every impl of each trait among `entries`, in declaration order.
fn impls_among(db: &dyn Db, entries: &[crate::input::ItemEntry], library: bool) -> HashMap<Item, Vec<Item>> {
    let mut out: HashMap<Item, Vec<Item>> = HashMap::new();
    for entry in entries.iter().filter(|e| e.library == library) {
        if entry.key.kind == ItemKind::Impl
            && let Some(trait_item) = impl_def(db, entry.item).trait_item
        {
            out.entry(trait_item).or_default().push(entry.item);
        }
    }
    out
}

#[salsa::tracked(returns(ref))]
fn library_impl_table(db: &dyn Db, library: Library) -> HashMap<Item, Vec<Item>> {
    impls_among(db, library.items(db), true)
}

#[salsa::tracked(returns(ref))]
fn program_impl_table(db: &dyn Db, program: Program) -> HashMap<Item, Vec<Item>> {
    impls_among(db, program.items(db), false)
}

/// Every impl of `trait_item`, the library's first, then the program's.
pub fn impls_of(db: &dyn Db, trait_item: Item) -> Vec<Item> {
    let mut out = library_impl_table(db, Library::get(db)).get(&trait_item).cloned().unwrap_or_default();
    out.extend(program_impl_table(db, Program::get(db)).get(&trait_item).into_iter().flatten().copied());
    out
}

/// The methods a call of trait member `member` through `dyn` may run: the member's method in
/// every impl of its trait (a generic impl's as the template), in `impls_of`'s order. What the
/// call's edges name (rows, builds) and what the operand-order audit joins.
pub(crate) fn member_implementations(db: &dyn Db, member: Item) -> Vec<Item> {
    let Some((tr, name)) = member_family(db, member) else { return Vec::new() };
    impls_of(db, tr).into_iter().filter_map(|imp| impl_def(db, imp).method(&name)).collect()
}

/// Each member name among `entries`, with the traits declaring it and the member.
fn member_names_among(
    db: &dyn Db,
    entries: &[crate::input::ItemEntry],
    library: bool,
) -> HashMap<Arc<str>, Vec<(Item, Item)>> {
    let mut out: HashMap<Arc<str>, Vec<(Item, Item)>> = HashMap::new();
    for entry in entries.iter().filter(|e| e.library == library) {
        if entry.key.kind == ItemKind::Trait {
            for (name, member) in trait_def(db, entry.item).members.iter() {
                out.entry(name.clone()).or_default().push((entry.item, *member));
            }
        }
    }
    out
}

#[salsa::tracked(returns(ref))]
fn library_member_index(db: &dyn Db, library: Library) -> HashMap<Arc<str>, Vec<(Item, Item)>> {
    member_names_among(db, library.items(db), true)
}

#[salsa::tracked(returns(ref))]
fn program_member_index(db: &dyn Db, program: Program) -> HashMap<Arc<str>, Vec<(Item, Item)>> {
    member_names_among(db, program.items(db), false)
}

/// The traits declaring a member called `name`, with the member: the library's alone for code
/// in a library module, else the library's and then the program's.
pub fn traits_declaring(db: &dyn Db, name: &str, for_library: bool) -> Vec<(Item, Item)> {
    let mut out = library_member_index(db, Library::get(db)).get(name).cloned().unwrap_or_default();
    if !for_library {
        out.extend(program_member_index(db, Program::get(db)).get(name).into_iter().flatten().copied());
    }
    out
}

/// The arguments of a generic impl at which its type is `ty` and its bounds hold; `None`
/// when the impl does not apply to `ty`.
pub(crate) fn match_impl(db: &dyn Db, imp: Item, ty: &Ty) -> Option<Arc<[InstanceArg]>> {
    let def = impl_def(db, imp);
    if def.self_ty.is_error() {
        return None;
    }
    let mut slots: Vec<Option<InstanceArg>> = vec![None; def.generics.len()];
    unify(&def.self_ty, ty, &def.generics, &mut slots);
    let args: Vec<InstanceArg> = slots.into_iter().collect::<Option<_>>()?;
    if substitute(&def.self_ty, &def.generics, &args) != *ty {
        return None;
    }
    let module = &def.module;
    for (generic, arg) in def.generics.iter().zip(&args) {
        let (GenericKind::Type(bounds), InstanceArg::Type(arg)) = (&generic.kind, arg) else { continue };
        for bound in bounds.iter() {
            // A bound on the bare implementing parameter that asks the question the impl
            // answers is E-TRAIT-OVERLAP (coherence); as a match it never holds, so the search
            // ends. On an element (`impl[T:Eq] Eq for Vec[T]`) it is asked of a smaller type.
            if let Bound::Trait(name) = bound
                && matches!(def.self_ty, Ty::Param(_))
                && trait_named(db, module, name) == def.trait_item
            {
                return None;
            }
            if unmet(db, module, arg, bound).is_some() {
                return None;
            }
        }
    }
    Some(Arc::from(args))
}

/// The trait `name` names where `module` writes it.
pub fn trait_named(db: &dyn Db, module: &str, name: &str) -> Option<Item> {
    let path: Vec<Arc<str>> = name.split('.').map(Arc::from).collect();
    match Resolver::new(db).resolve_path(module, &path, |k| k == ItemKind::Trait) {
        Lookup::Found(decl) => Some(decl.item),
        Lookup::None => None,
    }
}

/// The impl of `trait_item` for `ty` and the impl's arguments, if the type implements it. The
/// library's impls are searched first; the program's are searched when that fails, except for
/// code in a library module asking about a type made only of the library's and the builtin
/// types — the program cannot have been asked there, and so library code reads nothing of the
/// program (a library template's bound on a program type, `Map[Word, u64]`, still finds the
/// program's `impl Hash for Word`).
pub fn find_impl(db: &dyn Db, module: &str, trait_item: Item, ty: &Ty) -> Option<(Item, Arc<[InstanceArg]>)> {
    let found = |impls: Option<&Vec<Item>>| {
        impls.into_iter().flatten().find_map(|&imp| match_impl(db, imp, ty).map(|args| (imp, args)))
    };
    let library = found(library_impl_table(db, Library::get(db)).get(&trait_item));
    let scope = Resolver::new(db);
    if library.is_some() || (scope.is_library_module(module) && !mentions_program(&scope, ty)) {
        return library;
    }
    found(program_impl_table(db, Program::get(db)).get(&trait_item))
}

/// True when `ty` implements `trait_item`: an impl exists, or `ty` is an opaque witness that
/// promises the trait (language §19.2).
pub fn implements(db: &dyn Db, module: &str, trait_item: Item, ty: &Ty) -> bool {
    match ty {
        Ty::Opaque(o) => o.traits.contains(&trait_item),
        _ => find_impl(db, module, trait_item, ty).is_some(),
    }
}

/// True when `ty` names a declaration of the program (not the library's).
fn mentions_program(scope: &Resolver<'_>, ty: &Ty) -> bool {
    let own = |item: Item| scope.info(item).is_none_or(|i| !i.library);
    match ty {
        Ty::Record(adt) | Ty::Enum(adt) => own(adt.item) || adt.args.iter().any(|a| mentions_program(scope, a)),
        Ty::Dyn(item, _) | Ty::DynBox(item, _) => own(*item),
        Ty::Borrow(_, inner) | Ty::Buf(inner) | Ty::Array(inner, _) => mentions_program(scope, inner),
        Ty::View(view) => mentions_program(scope, &view.elem),
        Ty::Fn(f) => f.params.iter().any(|p| mentions_program(scope, p)) || mentions_program(scope, &f.ret),
        _ => false,
    }
}

/// The members of a trait in the order of a `dyn` reference's table.
pub fn table_members(db: &dyn Db, tr: Item) -> Vec<Item> {
    trait_def(db, tr).members.iter().map(|(_, m)| *m).collect()
}

/// The methods of impl `imp` in its trait's table order (what a `dyn` reference lent from a
/// value of its type calls).
pub fn table_methods(db: &dyn Db, imp: Item) -> Vec<Item> {
    let def = impl_def(db, imp);
    let Some(tr) = def.trait_item else { return Vec::new() };
    trait_def(db, tr).members.iter().filter_map(|(name, _)| def.method(name)).collect()
}

/// Why `ty` does not meet `bound`: the refusal's code and the fact that fails, in the caller's
/// terms (`Buf[u8] is affine, not copy`); `None` when it does.
pub(crate) fn unmet(db: &dyn Db, module: &str, ty: &Ty, bound: &Bound) -> Option<(&'static str, String)> {
    if ty.is_error() {
        return None;
    }
    match bound {
        Bound::Copy | Bound::Affine => {
            let want = if *bound == Bound::Copy { crate::types::Kind::Copy } else { crate::types::Kind::Affine };
            let kind = crate::generics::kind_of(db, ty);
            (kind > want).then(|| ("E-BOUND", format!("{ty} is {}, not {}", kind.name(), want.name())))
        }
        Bound::Class(class) => {
            (!class.holds(ty)).then(|| ("E-BOUND", format!("{ty} is not {} {}", article(class.name()), class.name())))
        }
        Bound::Trait(name) => match trait_named(db, module, name) {
            None => Some(("E-TRAIT-IMPL", format!("{name} names no trait, kind or class"))),
            Some(trait_item) => (!implements(db, module, trait_item, ty.value()))
                .then(|| ("E-TRAIT-IMPL", format!("{ty} does not implement {name}"))),
        },
    }
}

/// The first promise a record or enum type inside `ty` breaks (language §19.1: "generic records
/// check their bounds when the type is formed"): `Pair[Buf[u8]]` where `struct Pair[T:copy]` is
/// `E-BOUND`, said as the code and the refusal's message. Arguments that still mention a
/// template's parameters are judged in each instance, where they are known.
pub(crate) fn formed_bounds(db: &dyn Db, ty: &Ty) -> Option<(&'static str, String)> {
    match ty {
        Ty::Record(adt) | Ty::Enum(adt) => {
            if let Some(found) = adt.args.iter().find_map(|arg| formed_bounds(db, arg)) {
                return Some(found);
            }
            let params = crate::decl::adt_generics(db, adt.item);
            let module = Resolver::new(db).module_of(adt.item);
            for (param, arg) in params.iter().zip(adt.args.iter()) {
                let GenericKind::Type(bounds) = &param.kind else { continue };
                if crate::generics::mentions_param(arg) {
                    continue;
                }
                for bound in bounds.iter() {
                    if let Some((code, fact)) = unmet(db, &module, arg, bound) {
                        return Some((code, format!("{fact}; {} needs `[{}]`", adt.name, param.text())));
                    }
                }
            }
            None
        }
        Ty::Borrow(_, inner) | Ty::Buf(inner) | Ty::Array(inner, _) | Ty::ArrayNat(inner, _) => {
            formed_bounds(db, inner)
        }
        Ty::View(view) => formed_bounds(db, &view.elem),
        Ty::Fn(fun) => fun.params.iter().chain(std::iter::once(&fun.ret)).find_map(|t| formed_bounds(db, t)),
        _ => None,
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}
