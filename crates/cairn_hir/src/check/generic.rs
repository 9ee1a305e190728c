//! The instance a call of a template makes (language §19): its arguments inferred in the spec's
//! order — explicit arguments (`largest[u64](3, 9)`), then typed (non-literal) arguments, then
//! the expected result type, then literal arguments (a literal left alone takes its default,
//! `u64`/`f64`; a string literal gives a natural its length) — then every bound checked in the
//! caller's terms (`E-BOUND`, `E-TRAIT-IMPL`), and `E-INFER` for a parameter nothing binds.
//!
//! Arguments are typed for inference by a *probe*: the argument is checked without an expected
//! type and everything the check counted (sites, effects, calls) is rolled back, so the real check
//! against the instance's parameter type, which follows, counts it once.

use std::sync::Arc;

use super::cx::{Cx, R};
use crate::body::{Expr, ExprId, Literal};
use crate::diag::{Anchor, Diag};
use crate::generics::{Generic, GenericKind, unify};
use crate::input::Item;
use crate::instance::InstanceArg;
use crate::traits::unmet;
use crate::types::Ty;

impl Cx<'_> {
    /// The arguments of the instance a call of template `item` makes. `filled` pairs each
    /// template parameter with the argument written for it (`None` for an omitted extent).
    pub(crate) fn infer_instance(
        &mut self,
        e: ExprId,
        item: Item,
        written: &str,
        call: super::call::Generic<'_>,
        filled: &[Option<ExprId>],
    ) -> R<Arc<[InstanceArg]>> {
        let (explicit, expected) = (call.explicit, call.expected);
        let generics = crate::generics::fn_generics(self.db, item);
        let template = crate::signature::fn_signature(self.db, item);
        let mut slots: Vec<Option<InstanceArg>> = vec![None; generics.len()];
        for (slot, arg) in slots.iter_mut().zip(call.preset.unwrap_or_default()) {
            *slot = Some(arg.clone());
        }
        // 1. Explicit arguments, in order (a prefix of the list).
        if let Some(explicit) = explicit {
            if explicit.len() + call.preset.map_or(0, <[InstanceArg]>::len) > generics.len() {
                return Err(Diag::new(
                    "E-GENERIC-ARITY",
                    format!("{written} takes {} generic arguments; {} given.", generics.len(), explicit.len()),
                    Anchor::Expr(e),
                ));
            }
            // After what the callee's name fixes (an impl's arguments, for a method).
            let skip = call.preset.map_or(0, <[InstanceArg]>::len);
            for (slot, (generic, &arg)) in
                slots.iter_mut().zip(generics.iter()).skip(skip).zip(explicit).map(|((s, g), a)| (s, (g, a)))
            {
                *slot = Some(self.explicit_arg(arg, generic, written)?);
            }
        }
        // 3. Typed arguments, then 4. the expected result, then 5. literals.
        let pairs: Vec<(usize, ExprId)> =
            filled.iter().enumerate().filter_map(|(i, a)| a.map(|arg| (i, arg))).collect();
        for literals in [false, true] {
            if literals && let Some(want) = expected {
                unify(&template.ret, want, generics, &mut slots);
            }
            for &(index, arg) in &pairs {
                if slots.iter().all(Option::is_some) {
                    break;
                }
                let pattern = &template.params[index].ty;
                if self.is_literal(arg) != literals || !self.may_bind(pattern, generics) {
                    continue;
                }
                if let Some(actual) = self.probe(arg, matches!(pattern, Ty::View(_))) {
                    // A record that lends is its lent part where a view is expected.
                    let actual = match (pattern, actual.value()) {
                        (Ty::View(_), Ty::Record(_)) => self.lent(arg, actual.value().clone()),
                        _ => actual,
                    };
                    unify(pattern, &actual, generics, &mut slots);
                }
            }
        }
        let mut args = Vec::with_capacity(generics.len());
        for (generic, slot) in generics.iter().zip(slots) {
            let Some(arg) = slot else {
                return Err(Diag::new(
                    "E-INFER",
                    format!(
                        "Cannot infer {} of {written}: nothing in the call binds it. Write it explicitly, {written}[...](...).",
                        generic.name
                    ),
                    Anchor::Expr(e),
                ));
            };
            args.push(arg);
        }
        self.check_bounds(e, item, written, generics, &args)?;
        Ok(Arc::from(args))
    }

    /// `E-BOUND` / `E-TRAIT-IMPL` for the first argument that does not keep its parameter's
    /// promises, said in the caller's terms.
    fn check_bounds(&self, e: ExprId, item: Item, written: &str, generics: &[Generic], args: &[InstanceArg]) -> R<()> {
        // A bound means what it means in the template's module.
        let module = self.scope.module_of(item);
        for (generic, arg) in generics.iter().zip(args) {
            let (GenericKind::Type(bounds), InstanceArg::Type(ty)) = (&generic.kind, arg) else { continue };
            for bound in bounds.iter() {
                if let Some((code, fact)) = unmet(self.db, &module, ty, bound) {
                    return Err(Diag::new(
                        code,
                        format!("{fact}; {written} needs `[{}]`.", generic.text()),
                        Anchor::Expr(e),
                    ));
                }
            }
        }
        Ok(())
    }

    /// One explicit generic argument: a type for a type parameter, a natural (a literal, a
    /// constant, or a natural of the instance being checked) for a natural.
    fn explicit_arg(&mut self, arg: ExprId, generic: &Generic, written: &str) -> R<InstanceArg> {
        let expr = self.body.expr(self.body.unparen(arg)).clone();
        let natural = match &expr {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Some(u64::try_from(*v).unwrap_or(u64::MAX)),
            Expr::Name(name) => self
                .natural(name)
                .or_else(|| crate::consts::integer_constant(self.db, &self.module, name))
                .filter(|_| self.local(name).is_none()),
            _ => None,
        };
        match (&generic.kind, natural) {
            (GenericKind::Nat, Some(n)) => Ok(InstanceArg::Nat(n)),
            (GenericKind::Nat, None) => Err(Diag::new(
                "E-GENERIC-KIND",
                format!("{} of {written} is a natural: pass a literal or an integer constant.", generic.name),
                Anchor::Expr(arg),
            )),
            (GenericKind::Type(_), Some(_)) => Err(Diag::new(
                "E-GENERIC-KIND",
                format!("{} of {written} is a type, and this is a natural.", generic.name),
                Anchor::Expr(arg),
            )),
            (GenericKind::Type(_), None) => Ok(InstanceArg::Type(self.type_of_expr(arg)?)),
        }
    }

    /// True when inference can learn something from a parameter of this type.
    fn may_bind(&self, pattern: &Ty, generics: &[Generic]) -> bool {
        let natural = |n: &str| generics.iter().any(|g| g.is_nat() && *g.name == *n);
        crate::generics::mentions_param(pattern)
            || matches!(pattern, Ty::View(v) if matches!(&v.extent, crate::types::Extent::Name(n) if natural(n)))
            || matches!(pattern, Ty::ArrayNat(_, n) if natural(&n.name))
    }

    /// A literal argument (a number, a character, a string, `true`/`false`, or a negated number).
    fn is_literal(&self, arg: ExprId) -> bool {
        match self.body.expr(self.body.unparen(arg)) {
            Expr::Literal(_) => true,
            Expr::Unary { operand, .. } => matches!(self.body.expr(self.body.unparen(*operand)), Expr::Literal(_)),
            _ => false,
        }
    }

    /// The type `arg` has on its own, with everything its check counted rolled back; `None`
    /// when it does not check without an expected type (the real check reports it).
    pub(crate) fn probe(&mut self, arg: ExprId, view: bool) -> Option<Ty> {
        let sites = self.sites.clone();
        let effects = self.effects.clone();
        let lengths = (self.calls.len(), self.call_targets.len(), self.arguments.len(), self.arm_variants.len());
        let taken = (self.address_taken.len(), self.captures.len());
        let stack_bytes = self.stack_bytes;
        self.probing += 1;
        let result = if view { self.view_argument(arg) } else { self.check(arg, None) };
        self.probing -= 1;
        self.sites = sites;
        self.effects = effects;
        self.calls.truncate(lengths.0);
        self.call_targets.truncate(lengths.1);
        self.arguments.truncate(lengths.2);
        self.arm_variants.truncate(lengths.3);
        self.address_taken.truncate(taken.0);
        self.captures.truncate(taken.1);
        self.stack_bytes = stack_bytes;
        result.ok()
    }

    /// The type arguments of a record a constructor builds (`Pair(1, 2)` is `Pair[u64]`):
    /// explicit, then the expected type, then the fields' typed values, then their literals. A
    /// natural parameter takes a [`Ty::Nat`] (`Ring[16](...)`, or inferred from an `Array` field).
    pub(crate) fn record_args(
        &mut self,
        e: ExprId,
        item: Item,
        name: &str,
        args: &[ExprId],
        generic: super::call::Generic<'_>,
    ) -> R<Arc<[Ty]>> {
        let params = crate::decl::adt_generics(self.db, item).clone();
        if params.is_empty() {
            if generic.explicit.is_some() {
                return Err(Diag::new("E-GENERIC-ARITY", format!("{name} takes 0 type arguments."), Anchor::Expr(e)));
            }
            return Ok(Arc::from(Vec::new()));
        }
        if let Some(explicit) = generic.explicit {
            return self.adt_explicit_args(e, name, &params, explicit);
        }
        if let Some(Ty::Record(want)) = generic.expected.map(Ty::value)
            && want.item == item
            && !want.args.iter().any(crate::generics::mentions_param)
        {
            return Ok(want.args.clone());
        }
        let fields = crate::decl::record_def(self.db, item).fields.clone();
        let mut slots: Vec<Option<InstanceArg>> = vec![None; params.len()];
        for literals in [false, true] {
            for ((_, pattern), &arg) in fields.iter().zip(args) {
                if self.is_literal(arg) != literals || !crate::generics::mentions_param(pattern) {
                    continue;
                }
                if let Some(actual) = self.probe(arg, false) {
                    unify(pattern, &actual, &params, &mut slots);
                }
            }
        }
        let mut out = Vec::with_capacity(params.len());
        for (param, slot) in params.iter().zip(slots) {
            match slot {
                Some(InstanceArg::Type(ty)) => out.push(ty),
                Some(InstanceArg::Nat(n)) => out.push(Ty::Nat(n)),
                None => {
                    return Err(Diag::new(
                        "E-INFER",
                        format!("Cannot infer {} of {name}: write {name}[...](...).", param.name),
                        Anchor::Expr(e),
                    ));
                }
            }
        }
        Ok(Arc::from(out))
    }

    /// The written arguments of a record or enum (`Ring[16]`, `Found[u64]`): a type for a type
    /// parameter, a natural (as [`Ty::Nat`]) for a natural one.
    pub(crate) fn adt_explicit_args(
        &mut self,
        e: ExprId,
        name: &str,
        params: &[Generic],
        explicit: &[ExprId],
    ) -> R<Arc<[Ty]>> {
        if explicit.len() != params.len() {
            return Err(Diag::new(
                "E-GENERIC-ARITY",
                format!("{name} takes {} type arguments.", params.len()),
                Anchor::Expr(e),
            ));
        }
        let mut out = Vec::with_capacity(params.len());
        for (param, &arg) in params.iter().zip(explicit) {
            out.push(match self.explicit_arg(arg, param, name)? {
                InstanceArg::Type(ty) => ty,
                InstanceArg::Nat(n) => Ty::Nat(n),
            });
        }
        Ok(Arc::from(out))
    }
}
