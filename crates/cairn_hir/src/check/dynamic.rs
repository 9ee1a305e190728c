//! `ro<dyn Trait>` and `rw<dyn Trait>` (language §20): a borrowed reference to a value of any
//! type implementing the trait, lent from a named place at a call, and calls of the trait's
//! members through it, which add `dispatch` and may call every implementation of the member.
//!
//! A trait may stand behind `dyn` only when it is dyn-compatible (`E-DYN`), judged where a
//! reference is formed or called through. Two decisions where the spec is silent
//! (docs/decisions.md): a member with generic parameters of its own is not dyn-compatible (a
//! table holds one entry per member), and a member that takes its receiver by value (`self:Self`)
//! is called with a copy of the object, so only a `copy` type may be lent or boxed for a trait
//! that has one.

use std::sync::Arc;

use super::cx::{Cx, R};
use super::result::{CallEdge, CallTarget, Mapped};
use crate::body::ExprId;
use crate::diag::{Anchor, Diag};
use crate::input::Item;
use crate::types::{Mode, Ty};

/// True when `ty` mentions `Self` (a trait member's first generic parameter).
fn mentions_self(ty: &Ty) -> bool {
    let mut found = false;
    crate::generics::visit_params(ty, &mut |i| found |= i == 0);
    found
}

/// A member's type as the trait writes it: its first generic parameter shown as `Self`.
fn as_written(ty: &Ty) -> String {
    let this = crate::types::OpaqueTy {
        name: Arc::from("Self"),
        kind: crate::types::Kind::Linear,
        traits: Arc::from(Vec::new()),
    };
    ty.substitute(&[Ty::Opaque(Arc::new(this))]).to_string()
}

impl Cx<'_> {
    /// `E-DYN` unless trait `tr` can stand behind `dyn`.
    pub(crate) fn dyn_compatible(&self, e: ExprId, tr: Item) -> R<()> {
        let name = self.scope.full_name(tr);
        for (member, item) in crate::traits::trait_def(self.db, tr).members.iter() {
            let signature = crate::signature::fn_signature(self.db, *item);
            let fail = |why: String| {
                Err(Diag::new("E-DYN", format!("{name} cannot stand behind dyn: {why}."), Anchor::Expr(e)))
            };
            let Some(receiver) = crate::signature::receiver_index(self.db, *item) else {
                return fail(format!("its member {member} has no receiver"));
            };
            for (i, param) in signature.params.iter().enumerate() {
                if i != receiver && (param.borrowed() || mentions_self(&param.ty)) {
                    return fail(format!("{member} takes {} as {}", as_written(&param.ty), param.name));
                }
            }
            if mentions_self(&signature.ret) {
                return fail(format!("{member} returns {}", as_written(&signature.ret)));
            }
            // A static table holds one entry per member: a member with generic parameters of
            // its own has no one entry to hold (a decision, docs/decisions.md).
            if crate::generics::fn_generics(self.db, *item).len() > 1 {
                return fail(format!(
                    "its member {member} has generic parameters of its own, and a dyn table holds one entry per member"
                ));
            }
        }
        Ok(())
    }

    /// `E-DYN` when trait `tr` has a member taking its receiver by value and `ty`, the type lent
    /// or boxed behind it, is not `copy`: through `dyn` such a call gets a copy of the object.
    fn by_value_receivers(&self, at: ExprId, tr: Item, ty: &Ty) -> R<()> {
        for (member, item) in crate::traits::trait_def(self.db, tr).members.iter() {
            let Some(receiver) = crate::signature::receiver_index(self.db, *item) else { continue };
            let signature = crate::signature::fn_signature(self.db, *item);
            if matches!(signature.params[receiver].ty, Ty::Borrow(..)) {
                continue;
            }
            let kind = crate::generics::kind_of(self.db, ty);
            if kind != crate::types::Kind::Copy {
                let name = self.scope.full_name(tr);
                return Err(Diag::new(
                    "E-DYN",
                    format!(
                        "{member} of {name} takes its receiver by value, so a call through dyn gets a copy of the object, and {ty} is {}, not copy.",
                        kind.name()
                    ),
                    Anchor::Expr(at),
                )
                .with_hint(format!("Take the receiver as a borrow in {name} and its impls (`self:ro<Self>`), or lend a copy type.")));
            }
        }
        Ok(())
    }

    /// An argument lent to a `ro<dyn Tr>` / `rw<dyn Tr>` parameter: a named place of a type that
    /// implements the trait (its table is recorded), or a `dyn` reference of that trait.
    pub(crate) fn dyn_argument(&mut self, arg: ExprId, mode: Mode, tr: Item) -> R<Mapped> {
        self.dyn_compatible(arg, tr)?;
        let name = self.scope.full_name(tr);
        if self.root_name(arg).is_none() {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                format!("A dyn {name} reference is made from a named place: bind the value to a name first."),
                Anchor::Expr(arg),
            )
            .with_hint("Bind it first (`let v = …;`) and pass `v`."));
        }
        let got = self.check(arg, None)?;
        let value = got.value().clone();
        if mode == Mode::Rw && !self.writable_root(arg) {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                "A `rw<dyn …>` needs a mutable local or an rw borrow: declare the local `let mut`.",
                Anchor::Expr(arg),
            ));
        }
        match &value {
            Ty::Dyn(other, _) if *other == tr => {}
            // A `Dyn` lends itself: it must hold a value (a guard).
            Ty::DynBox(other, _) if *other == tr => self.site(super::result::GuardKind::DynLent),
            Ty::Error => {}
            _ => {
                let Some((imp, args)) = crate::traits::find_impl(self.db, &self.module, tr, &value) else {
                    return Err(Diag::new(
                        "E-TRAIT-IMPL",
                        format!("{value} does not implement {name}, which the dyn {name} parameter needs."),
                        Anchor::Expr(arg),
                    ));
                };
                self.host_only(Anchor::Expr(arg), "a `dyn` reference")?;
                self.by_value_receivers(arg, tr, &value)?;
                // A generic impl's table is its methods' instances at the impl's arguments.
                self.dyn_lends.push((self.body.unparen(arg), imp, args));
            }
        }
        if mode == Mode::Rw
            && let Some(root) = self.root_name(arg)
            && self.local(&root).is_some_and(|l| l.mutable && !matches!(l.ty, Ty::View(_)))
        {
            self.effect(format!("write:{root}"));
        }
        Ok(self.mapped(arg))
    }

    /// `Dyn[Trait](value)` / `Dyn(value)`: the value moves to the heap behind the trait's table
    /// (`alloc`, an allocation site). Not a linear value (`E-LINEAR-STORAGE`); a generic impl's
    /// table is its methods' instances at the impl's arguments.
    pub(crate) fn dyn_new(
        &mut self,
        e: ExprId,
        explicit: Option<&[ExprId]>,
        args: &[ExprId],
        expected: Option<&Ty>,
    ) -> R<Ty> {
        self.target(e, CallTarget::Builtin(crate::builtins::Builtin::Dyn));
        let owner =
            self.constructed_type(e, "Dyn", explicit, expected, |t| matches!(t, Ty::DynBox(..)), "Dyn[Trait](value)")?;
        let Ty::DynBox(tr, name) = owner.clone() else { return Ok(owner) };
        self.dyn_compatible(e, tr)?;
        let [value] = args else {
            return Err(Diag::new(
                "E-ARITY",
                format!("Dyn[{name}](value) takes the one value it holds."),
                Anchor::Expr(e),
            ));
        };
        let ty = self.check(*value, None)?.value().clone();
        if ty == Ty::Error {
            return Ok(owner);
        }
        match crate::generics::kind_of(self.db, &ty) {
            crate::types::Kind::Linear => {
                return Err(Diag::new(
                    "E-LINEAR-STORAGE",
                    format!(
                        "A Dyn may be released without a call that consumes it, so it cannot hold the linear {ty}."
                    ),
                    Anchor::Expr(*value),
                ));
            }
            crate::types::Kind::Affine | crate::types::Kind::Copy => {}
        }
        let Some((imp, args)) = crate::traits::find_impl(self.db, &self.module, tr, &ty) else {
            return Err(Diag::new(
                "E-TRAIT-IMPL",
                format!("{ty} does not implement {name}, so a Dyn[{name}] cannot hold it: add `impl {name} for {ty}`."),
                Anchor::Expr(*value),
            ));
        };
        self.host_only(Anchor::Expr(e), "a `Dyn` box")?;
        self.by_value_receivers(*value, tr, &ty)?;
        self.dyn_lends.push((e, imp, args));
        for effect in ["alloc", "trap"] {
            self.effect(effect);
        }
        self.site(super::result::GuardKind::Allocation);
        Ok(owner)
    }

    /// A call of member `member` (at `index` in the trait's table) through the `dyn` reference
    /// that is the call's receiver (argument `at`): `dispatch`, and a possible call of every
    /// implementation.
    pub(crate) fn dyn_call(&mut self, e: ExprId, tr: Item, member: Item, given: &[ExprId], at: usize) -> R<Ty> {
        self.dyn_compatible(e, tr)?;
        let signature = crate::signature::fn_signature(self.db, member);
        if given.len() != signature.params.len() {
            let name = self.scope.full_name(member);
            return Err(Diag::new(
                "E-ARITY",
                format!("{name} takes {} arguments; {} given.", signature.params.len(), given.len()),
                Anchor::Expr(e),
            ));
        }
        // Arguments in order; the receiver is the reference itself.
        let mut mapping = Vec::with_capacity(given.len());
        for (i, (param, &arg)) in signature.params.iter().zip(given).enumerate() {
            if i == at {
                if matches!(self.check(arg, None)?.value(), Ty::DynBox(..)) {
                    self.site(super::result::GuardKind::DynLent);
                }
                mapping.push(self.mapped(arg));
            } else {
                self.check(arg, Some(&param.ty))?;
                mapping.push(Mapped::Dropped);
            }
        }
        let mapping: Arc<[Mapped]> = Arc::from(mapping);
        // Any implementation may run: each is a possible callee (rows, and what a build compiles).
        // A generic impl's method is named bare: its row is the join of its instances', and the
        // instances a table holds are requested where the table is made (the lend).
        for method in crate::traits::member_implementations(self.db, member) {
            self.calls.push(CallEdge { callee: method, args: Arc::from(Vec::new()), mapping: mapping.clone() });
        }
        let index = crate::traits::trait_def(self.db, tr).members.iter().position(|(_, m)| *m == member).unwrap_or(0);
        self.effect("dispatch");
        self.target(e, CallTarget::Dynamic { member, index: index as u32 });
        Ok(signature.ret.clone())
    }
}
