//! Generic parameters of function templates (language §19): their kinds and bounds, whether a
//! type meets a bound, and the substitution that turns a template's types into an instance's.
//!
//! [`fn_generics`] reads only the declaration's `[...]` list, so editing the body or the rest of
//! the signature leaves it equal. A type parameter is `Ty::Param(i)` in the template's signature,
//! `i` its position in the whole list (naturals included); a natural is an extent name
//! (`ro<u8>[N]`) in the signature and a `usize` constant in the body. [`substitute`] replaces
//! both by an instance's arguments: what an instance's signature and check see is ordinary,
//! monomorphic code.

use std::sync::Arc;

use crate::db::Db;
use crate::input::Item;
use crate::instance::InstanceArg;
use crate::types::{Extent, Kind, Ty, ViewTy};

pub use crate::params::{Bound, Generic, GenericKind, ScalarClass, generic_names, generics_of_node, natural_names};

/// The generic parameters of a function (empty for an ordinary function). A trait's member
/// is a template over `Self` (first), then its own; an impl's method takes the impl's
/// parameters first, then its own.
#[salsa::tracked(returns(ref))]
pub fn fn_generics(db: &dyn Db, item: Item) -> Arc<[Generic]> {
    let scope = crate::scope::Resolver::new(db);
    let mut out: Vec<Generic> = Vec::new();
    if let Some(info) = scope.info(item)
        && let Some(parent) = info.parent
    {
        match info.key.kind {
            crate::input::ItemKind::Member => {
                let name = scope.full_name(parent);
                out.push(Generic {
                    name: Arc::from("Self"),
                    kind: GenericKind::Type(Arc::from(vec![Bound::Trait(name)])),
                });
            }
            crate::input::ItemKind::Method => out.extend(generics_of_node(&parent.syntax(db).syntax_node())),
            _ => {}
        }
    }
    out.extend(generics_of_node(&item.syntax(db).syntax_node()));
    Arc::from(out)
}

/// The kind of a value type (language §22): scalars, tag-only enums, views, borrows and function
/// values are `copy`; a `Buf` is `affine`; a `linear struct` is `linear`; any other record or sum
/// takes the greatest kind among its fields and payloads.
pub fn kind_of(db: &dyn Db, ty: &Ty) -> Kind {
    kind_memo(db, ty, &mut std::collections::HashMap::new())
}

/// [`kind_of`], each distinct type judged once: `P[P[P[…]]]` (`struct P[T] { a:T; b:T; }`)
/// judged its fields' types again and again, exponential in its depth, so a runaway
/// instantiation took minutes to reach its limit. Fields are read at the record's arguments
/// (an owner's elements are never looked into: a `Buf` is affine whatever it holds, which is
/// also what ends the walk of a record that holds itself through one).
fn kind_memo(db: &dyn Db, ty: &Ty, memo: &mut std::collections::HashMap<Ty, Kind>) -> Kind {
    if let Some(kind) = memo.get(ty) {
        return *kind;
    }
    let kind = match ty {
        Ty::Buf(_) | Ty::DynBox(..) => Kind::Affine,
        Ty::Ticket => Kind::Linear,
        Ty::Opaque(o) => o.kind,
        Ty::Array(elem, _) | Ty::ArrayNat(elem, _) => kind_memo(db, elem, memo),
        Ty::Record(adt) => {
            if crate::decl::record_def(db, adt.item).linear {
                Kind::Linear
            } else {
                let fields = crate::decl::fields_of(db, adt);
                fields.iter().map(|(_, t)| kind_memo(db, t, memo)).max().unwrap_or(Kind::Copy)
            }
        }
        Ty::Enum(adt) => {
            let variants = crate::decl::variants_of(db, adt);
            variants.iter().filter_map(|(_, p)| p.as_ref().map(|t| kind_memo(db, t, memo))).max().unwrap_or(Kind::Copy)
        }
        _ => Kind::Copy,
    };
    if matches!(ty, Ty::Record(_) | Ty::Enum(_)) {
        memo.insert(ty.clone(), kind);
    }
    kind
}

/// A template's type with the instance's arguments in place of its parameters: `Ty::Param(i)`
/// becomes the `i`-th argument's type, an extent naming a natural becomes its value.
pub(crate) fn substitute(ty: &Ty, generics: &[Generic], args: &[InstanceArg]) -> Ty {
    if generics.is_empty() {
        return ty.clone();
    }
    match ty {
        Ty::Param(i) => match args.get(*i as usize) {
            Some(InstanceArg::Type(t)) => t.clone(),
            _ => Ty::Error,
        },
        Ty::Record(adt) => Ty::Record(substitute_adt(adt, generics, args)),
        Ty::Enum(adt) => Ty::Enum(substitute_adt(adt, generics, args)),
        Ty::Borrow(mode, inner) => Ty::Borrow(*mode, Arc::new(substitute(inner, generics, args))),
        Ty::View(view) => Ty::View(ViewTy {
            elem: Arc::new(substitute(&view.elem, generics, args)),
            extent: substitute_extent(&view.extent, generics, args),
            ..view.clone()
        }),
        Ty::Fn(fun) => Ty::Fn(Arc::new(crate::types::FnTy {
            params: fun.params.iter().map(|p| substitute(p, generics, args)).collect(),
            ret: substitute(&fun.ret, generics, args),
        })),
        Ty::Buf(elem) => Ty::Buf(Arc::new(substitute(elem, generics, args))),
        Ty::Array(elem, n) => Ty::Array(Arc::new(substitute(elem, generics, args)), *n),
        // The natural's value is the length; a name that is no natural of the instance is an
        // error the declaration's check reports.
        Ty::ArrayNat(elem, natural) => match args.get(natural.index as usize) {
            Some(InstanceArg::Nat(n)) => Ty::Array(Arc::new(substitute(elem, generics, args)), *n),
            _ => Ty::Error,
        },
        Ty::NatParam(natural) => match args.get(natural.index as usize) {
            Some(InstanceArg::Nat(n)) => Ty::Nat(*n),
            _ => Ty::Error,
        },
        other => other.clone(),
    }
}

fn substitute_adt(adt: &crate::types::AdtTy, generics: &[Generic], args: &[InstanceArg]) -> crate::types::AdtTy {
    crate::types::AdtTy {
        item: adt.item,
        name: adt.name.clone(),
        args: adt.args.iter().map(|a| substitute(a, generics, args)).collect(),
    }
}

/// An extent naming a natural parameter, as the instance's value.
pub(crate) fn substitute_extent(extent: &Extent, generics: &[Generic], args: &[InstanceArg]) -> Extent {
    if let Extent::Name(name) = extent
        && let Some(value) = natural(name, generics, args)
    {
        return Extent::Literal(value);
    }
    extent.clone()
}

/// The value of the natural parameter `name` in an instance.
pub fn natural(name: &str, generics: &[Generic], args: &[InstanceArg]) -> Option<u64> {
    let index = generics.iter().position(|g| g.is_nat() && &*g.name == name)?;
    match args.get(index) {
        Some(InstanceArg::Nat(n)) => Some(*n),
        _ => None,
    }
}

/// Calls `f` with the index of every type parameter `ty` mentions where a type is written.
pub(crate) fn visit_params(ty: &Ty, f: &mut dyn FnMut(u32)) {
    visit(ty, &mut |i, natural| {
        if !natural {
            f(i)
        }
    });
}

/// Calls `f` with the index of every parameter `ty` mentions, types and naturals alike (a
/// natural as an `Array`'s length or as a record's argument).
pub(crate) fn visit_all_params(ty: &Ty, f: &mut dyn FnMut(u32)) {
    visit(ty, &mut |i, _| f(i));
}

/// Calls `f(index, natural)` for every parameter `ty` mentions.
fn visit(ty: &Ty, f: &mut dyn FnMut(u32, bool)) {
    match ty {
        Ty::Param(i) => f(*i, false),
        Ty::NatParam(n) => f(n.index, true),
        Ty::Record(adt) | Ty::Enum(adt) => adt.args.iter().for_each(|a| visit(a, f)),
        Ty::Borrow(_, inner) => visit(inner, f),
        Ty::View(view) => visit(&view.elem, f),
        Ty::Buf(elem) | Ty::Array(elem, _) => visit(elem, f),
        Ty::ArrayNat(elem, n) => {
            visit(elem, f);
            f(n.index, true);
        }
        Ty::Fn(fun) => {
            fun.params.iter().for_each(|p| visit(p, f));
            visit(&fun.ret, f);
        }
        _ => {}
    }
}

/// True when `ty` mentions a parameter (a type or a natural): it is a template's, not an
/// instance's.
pub(crate) fn mentions_param(ty: &Ty) -> bool {
    let mut any = false;
    visit_all_params(ty, &mut |_| any = true);
    any
}

/// Binds the natural parameter `natural` to `value` when its slot is still open.
fn bind_natural(natural: &crate::types::NatRef, value: u64, generics: &[Generic], slots: &mut [Option<InstanceArg>]) {
    let index = natural.index as usize;
    if generics.get(index).is_some_and(Generic::is_nat)
        && let Some(slot) = slots.get_mut(index)
        && slot.is_none()
    {
        *slot = Some(InstanceArg::Nat(value));
    }
}

/// Binds the parameters `pattern` mentions from `actual` (the inference of language §19):
/// the slots still `None` take what `actual` shows; a slot already bound keeps its value (a
/// mismatch is the argument check's to report). A natural named as a view's extent takes a
/// literal extent.
pub(crate) fn unify(pattern: &Ty, actual: &Ty, generics: &[Generic], slots: &mut [Option<InstanceArg>]) {
    match (pattern, actual) {
        (_, Ty::Error) => {}
        (Ty::Param(i), actual) => {
            if let Some(slot) = slots.get_mut(*i as usize)
                && slot.is_none()
                && !matches!(actual, Ty::View(_) | Ty::Void)
            {
                *slot = Some(InstanceArg::Type(actual.value().clone()));
            }
        }
        (Ty::Record(p), Ty::Record(a)) | (Ty::Enum(p), Ty::Enum(a)) if p.item == a.item => {
            for (p, a) in p.args.iter().zip(a.args.iter()) {
                unify(p, a, generics, slots);
            }
        }
        (Ty::Borrow(_, p), a) => unify(p, a.value(), generics, slots),
        (Ty::Buf(p), Ty::Buf(a)) => unify(p, a, generics, slots),
        (Ty::Array(p, _), Ty::Array(a, _)) => unify(p, a, generics, slots),
        // An array whose length is a natural binds the natural.
        (Ty::ArrayNat(p, natural), Ty::Array(a, n)) => {
            unify(p, a, generics, slots);
            bind_natural(natural, *n, generics, slots);
        }
        // A record's or enum's natural argument binds the natural it names.
        (Ty::NatParam(natural), Ty::Nat(n)) => bind_natural(natural, *n, generics, slots),
        // A fixed array lent whole to a view binds the view's element and a natural extent.
        (Ty::View(p), Ty::Array(a, n)) => {
            unify(&p.elem, a, generics, slots);
            if let Extent::Name(name) = &p.extent
                && let Some(index) = generics.iter().position(|g| g.is_nat() && g.name == *name)
                && slots[index].is_none()
            {
                slots[index] = Some(InstanceArg::Nat(*n));
            }
        }
        // An owner lent whole to a view parameter binds the view's element.
        (Ty::View(p), Ty::Buf(a)) => unify(&p.elem, a, generics, slots),
        (Ty::View(p), Ty::View(a)) => {
            unify(&p.elem, &a.elem, generics, slots);
            if let (Extent::Name(name), Extent::Literal(n)) = (&p.extent, &a.extent)
                && let Some(index) = generics.iter().position(|g| g.is_nat() && g.name == *name)
                && slots[index].is_none()
            {
                slots[index] = Some(InstanceArg::Nat(*n));
            }
        }
        _ => {}
    }
}
