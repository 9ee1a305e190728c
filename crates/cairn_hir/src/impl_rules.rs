//! The rules of language §20 that compare declarations' signatures, run by the report after
//! every signature is known: an impl matches its trait exactly ([`impl_refusal`]: the trait's
//! members, with exactly their modes and types, `Self` replaced, and no wider ceiling), and one
//! type has one impl of a trait ([`coherence_refusal`], `E-TRAIT-OVERLAP`).
//!
//! They sit above `signature.rs` and `traits.rs` (which read declarations only), so neither of
//! those has to know the other's rules.

use std::sync::Arc;

use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::generics::{Bound, GenericKind, substitute};
use crate::input::{Item, ItemKind, Program};
use crate::instance::InstanceArg;
use crate::signature::fn_signature;
use crate::traits::{ImplDef, impl_def, impls_of, match_impl, trait_def, trait_named};
use crate::types::{Extent, FloatTy, IntTy, Ty};
use cairn_syntax::ast::{self, AstNode};

/// The parameter names of a trait's member and of an impl's method, in order: an extent names
/// a parameter, and the two extents agree when they name the parameter at the same place.
type Names<'a> = (&'a [Arc<str>], &'a [Arc<str>]);

/// True when two types agree as a trait's parameter and an impl's: views by mode, element,
/// place and extent (the same literal, or parameters at the same place whatever their names),
/// everything else exactly. A callee's view holds exactly its declared extent (the range
/// analysis relies on it), so `[n]` in the trait and `[8]` in the impl disagree.
fn agrees(want: &Ty, got: &Ty, names: Names<'_>) -> bool {
    match (want, got) {
        (Ty::View(w), Ty::View(g)) => {
            w.mode == g.mode
                && w.place == g.place
                && extents_agree(&w.extent, &g.extent, names)
                && agrees(&w.elem, &g.elem, names)
        }
        (Ty::Borrow(m, w), Ty::Borrow(n, g)) => m == n && agrees(w, g, names),
        (Ty::Error, _) | (_, Ty::Error) => true,
        _ => want == got,
    }
}

fn extents_agree(want: &Extent, got: &Extent, (theirs, ours): Names<'_>) -> bool {
    match (want, got) {
        (Extent::Name(a), Extent::Name(b)) => {
            match (theirs.iter().position(|n| n == a), ours.iter().position(|n| n == b)) {
                (Some(i), Some(j)) => i == j,
                (None, None) => a == b,
                _ => false,
            }
        }
        _ => want == got,
    }
}

/// The first refusal of one impl: the declaration's own, then its members against the
/// trait's (exactly the trait's members, with exactly their modes and types, `Self` replaced,
/// and no wider ceiling).
#[salsa::tracked(returns(ref))]
pub fn impl_refusal(db: &dyn Db, imp: Item) -> Option<Diag> {
    let def = impl_def(db, imp);
    if let Some(diag) = &def.error {
        return Some(diag.clone());
    }
    let trait_item = def.trait_item?;
    let tr = trait_def(db, trait_item);
    let fail = |message: String| Some(Diag::new("E-TRAIT-IMPL", message, Anchor::Item));
    let for_what = format!("{} for {}", def.trait_name, def.self_ty);
    for (name, _) in def.methods.iter() {
        if tr.member(name).is_none() {
            return fail(format!(
                "{name} is not a member of {}: an impl defines exactly the trait's members ({for_what}).",
                def.trait_name
            ));
        }
    }
    for (name, member) in tr.members.iter() {
        let Some(method) = def.method(name) else {
            // Another block for the same type defines it: the blocks split the trait (§20).
            let split = impls_of(db, trait_item).iter().any(|&other| {
                let o = impl_def(db, other);
                other != imp && o.self_ty == def.self_ty && o.generics == def.generics && o.method(name).is_some()
            });
            if split {
                return Some(Diag::new(
                    "E-TRAIT-OVERLAP",
                    format!(
                        "{for_what} is split over two impl blocks ({name} is in the other): one type has one implementation of a trait, in one impl block."
                    ),
                    Anchor::Item,
                ));
            }
            return fail(format!(
                "The impl {for_what} does not define {name}: an impl defines every member of its trait."
            ));
        };
        let want = fn_signature(db, *member);
        let got = fn_signature(db, method);
        if want.error.is_some() || got.error.is_some() {
            continue;
        }
        let own = crate::generics::fn_generics(db, *member).len() - 1;
        let theirs = crate::generics::fn_generics(db, method);
        if own != theirs.len() - def.generics.len() {
            return fail(format!("{name} in {for_what} must take the generic parameters the trait declares."));
        }
        // The member's own parameters, one by one: the same kind and the same promises.
        let ours = crate::generics::fn_generics(db, *member);
        for k in 0..own {
            let (want, got) = (&ours[1 + k], &theirs[def.generics.len() + k]);
            if want.kind != got.kind {
                return fail(format!(
                    "{name} in {for_what} takes [{}] where the trait declares [{}]: a member's own generic parameters are the trait's, kinds and promises alike.",
                    got.text(),
                    want.text()
                ));
            }
        }
        // `Self` is the impl's type; the member's own parameters follow the impl's in the method.
        let mut args: Vec<InstanceArg> = vec![InstanceArg::Type(def.self_ty.clone())];
        args.extend((0..own).map(|k| InstanceArg::Type(Ty::Param((def.generics.len() + k) as u32))));
        let generics = crate::generics::fn_generics(db, *member);
        let expected: Vec<Ty> = want.params.iter().map(|p| substitute(&p.ty, generics, &args)).collect();
        let ret = substitute(&want.ret, generics, &args);
        let theirs: Vec<Arc<str>> = want.params.iter().map(|p| p.name.clone()).collect();
        let ours: Vec<Arc<str>> = got.params.iter().map(|p| p.name.clone()).collect();
        let names = (&theirs[..], &ours[..]);
        let same_params = expected.len() == got.params.len()
            && expected.iter().zip(got.params.iter()).all(|(w, g)| agrees(w, &g.ty, names));
        if !same_params || !agrees(&ret, &got.ret, names) {
            let shown: Vec<String> = expected.iter().map(ToString::to_string).collect();
            return fail(format!(
                "{name} in {for_what} must take ({}) and return {ret}, as the trait declares with Self = {}.",
                shown.join(", "),
                def.self_ty
            ));
        }
        // A declared ceiling wider than the member's.
        let declared = method.syntax(db).syntax_node().children().any(|c| ast::Ceiling::can_cast(c.kind()));
        if declared
            && let (Some(wide), Some(narrow)) = (&got.ceiling, &want.ceiling)
            && wide
                .effects
                .iter()
                .map(|e| &**e)
                .chain(wide.pure.then_some(crate::signature::PURE).unwrap_or_default().iter().copied())
                .any(|e| !narrow.admits(e))
        {
            return fail(format!("{name} in {for_what} declares a wider ceiling than the trait's member allows."));
        }
    }
    None
}

/// `E-TRAIT-OVERLAP`: the first impl of a trait that another impl of it already covers (two
/// blocks for one type, a generic and a concrete impl that both match, two generic impls over
/// a bare parameter, or a generic impl whose bound is the trait it implements).
pub fn coherence_refusal(db: &dyn Db) -> Option<(Item, Diag)> {
    let entries = Program::get(db).items(db);
    let traits: Vec<Item> = entries.iter().filter(|e| e.key.kind == ItemKind::Trait).map(|e| e.item).collect();
    for trait_item in traits {
        let impls = &impls_of(db, trait_item);
        for (j, &later) in impls.iter().enumerate() {
            let b = impl_def(db, later);
            let module = b.module.clone();
            // `impl[T:Ord] Ord for T` answers its own question; `impl[T:Ord] Ord for Vec[T]`
            // does not (a vector is ordered when its elements are).
            let self_bound = match b.self_ty {
                Ty::Param(i) => b.generics.get(i as usize).is_some_and(|g| match &g.kind {
                    GenericKind::Type(bounds) => bounds.iter().any(
                        |bound| matches!(bound, Bound::Trait(name) if trait_named(db, &module, name) == Some(trait_item)),
                    ),
                    GenericKind::Nat => false,
                }),
                _ => false,
            };
            let overlap = self_bound
                || impls[..j].iter().any(|&earlier| {
                    let a = impl_def(db, earlier);
                    let generic = |d: &ImplDef| !d.generics.is_empty();
                    match (generic(a), generic(b)) {
                        (false, false) => a.self_ty == b.self_ty,
                        (true, false) => match_impl(db, earlier, &b.self_ty).is_some(),
                        (false, true) => match_impl(db, later, &a.self_ty).is_some(),
                        (true, true) => generic_impls_overlap(a, b),
                    }
                });
            // A second block for the same type that repeats a member is a duplicate first.
            let repeats = impls[..j].iter().any(|&earlier| {
                let a = impl_def(db, earlier);
                // Two generic impls name one type only when their parameters are alike too
                // (`impl[T:integer] … for T` and `impl[T:float] … for T` are two).
                a.self_ty == b.self_ty
                    && a.generics == b.generics
                    && b.methods.iter().any(|(n, _)| a.method(n).is_some())
            });
            if repeats {
                // A derivation's impl repeating a written one is the derivation's collision.
                let generated = Program::get(db).items(db).iter().any(|e| e.item == later && e.origin.is_some());
                let (code, message) = if generated {
                    (
                        "E-DERIVE-COLLISION",
                        format!(
                            "{} for {} is written already; drop the derivation or the written impl.",
                            b.trait_name, b.self_ty
                        ),
                    )
                } else {
                    (
                        "E-DUPLICATE",
                        format!(
                            "{} for {} is defined in two impl blocks that both define a member: define each member once, in one block.",
                            b.trait_name, b.self_ty
                        ),
                    )
                };
                return Some((later, Diag::new(code, message, Anchor::Item)));
            }
            if overlap {
                let message = format!(
                    "{} is implemented for {} more than once: one type has one implementation of a trait, in one impl block.",
                    b.trait_name, b.self_ty
                );
                return Some((later, Diag::new("E-TRAIT-OVERLAP", message, Anchor::Item)));
            }
        }
    }
    None
}

/// Whether two generic impls of one trait can match one type: never when neither implements a
/// bare parameter (their self types are distinct constructors or judged by their instances),
/// and for a bare parameter bounded by a scalar class only when the other side can be of that
/// class (`impl[T:integer] Ord for T` beside `impl[T:Ord] Ord for Vec[T]` is coherent).
fn generic_impls_overlap(a: &ImplDef, b: &ImplDef) -> bool {
    let class = |d: &ImplDef| match d.self_ty {
        Ty::Param(i) => Some(d.generics.get(i as usize).and_then(|g| match &g.kind {
            GenericKind::Type(bounds) => bounds.iter().find_map(|b| match b {
                Bound::Class(c) => Some(*c),
                _ => None,
            }),
            GenericKind::Nat => None,
        })),
        _ => None,
    };
    // One type of each kind a class can hold.
    let samples = [Ty::Int(IntTy::U8), Ty::Int(IntTy::I8), Ty::Float(FloatTy::F32), Ty::Bool];
    match (class(a), class(b)) {
        (None, None) => false,
        (Some(None), _) | (_, Some(None)) => true,
        (Some(Some(ca)), Some(Some(cb))) => samples.iter().any(|t| ca.holds(t) && cb.holds(t)),
        (Some(Some(c)), None) => c.holds(&b.self_ty),
        (None, Some(Some(c))) => c.holds(&a.self_ty),
    }
}
