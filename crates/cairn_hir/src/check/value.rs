//! Declared functions as values (language §21): `f` of a plain host function of values, and
//! `f[A, …]` of a template's instance, each a `fn(A) -> R` whose address is taken (recorded for
//! the rows of indirect calls, and, for an instance, in `value_instances` so that the instance is
//! requested and compiled). Views, borrows, foreign functions and kernels are no `fn` values
//! (`E-FN-TYPE`); an instance names every argument (`E-GENERIC-ARITY`).

use std::sync::Arc;

use super::cx::{Cx, R};
use super::result::Resolution;
use crate::body::ExprId;
use crate::diag::{Anchor, Diag};
use crate::signature::Signature;
use crate::types::Ty;

impl Cx<'_> {
    /// `f[A, …]` as a value: the instance of template `f` with those arguments, as a `fn` value.
    pub(crate) fn instance_value(&mut self, e: ExprId, item: crate::input::Item, indices: &[ExprId]) -> R<Ty> {
        let name = self.value_of(e, item)?;
        let generics = crate::generics::fn_generics(self.db, item);
        if indices.len() != generics.len() {
            return Err(Diag::new(
                "E-GENERIC-ARITY",
                format!(
                    "{name} takes {} generic argument{}, and a function value names every one ({} given): write {name}[{}].",
                    generics.len(),
                    if generics.len() == 1 { "" } else { "s" },
                    indices.len(),
                    generics.iter().map(|g| g.name.to_string()).collect::<Vec<_>>().join(", ")
                ),
                Anchor::Expr(e),
            ));
        }
        let explicit = super::call::Generic { explicit: Some(indices), expected: None, preset: None };
        let args = self.infer_instance(e, item, &name, explicit, &[])?;
        self.instance_taken(e, item, &name, args)
    }

    /// A family's copy used as a value (`sc_3` for `family sc = scaled[1..6]`): the instance
    /// `scaled[3]` as a `fn` value, requested and compiled like any instance taken as one.
    pub(crate) fn copy_value(&mut self, e: ExprId, template: crate::input::Item, k: u64) -> R<Ty> {
        let name = self.value_of(e, template)?;
        self.instance_taken(e, template, &name, Arc::from(vec![crate::instance::InstanceArg::Nat(k)]))
    }

    /// The instance of `item` at `args` as a `fn` value, recorded so that it is requested.
    fn instance_taken(
        &mut self,
        e: ExprId,
        item: crate::input::Item,
        name: &str,
        args: Arc<[crate::instance::InstanceArg]>,
    ) -> R<Ty> {
        let instance = crate::instance::Instance::new(self.db, item, args.clone());
        let ty = self.taken(e, item, name, crate::signature::instance_signature(self.db, instance))?;
        self.value_instances.push((e, args));
        Ok(ty)
    }

    /// A declared function used as a value: `fn(A) -> R`, when it is a plain host function of
    /// values (language §21, `E-FN-TYPE` otherwise).
    pub(crate) fn function_value(&mut self, e: ExprId, item: crate::input::Item) -> R<Ty> {
        let name = self.value_of(e, item)?;
        if !crate::generics::fn_generics(self.db, item).is_empty() {
            return Err(Diag::new(
                "E-FN-TYPE",
                format!(
                    "{name} is a template: a function value is one of its instances, with every argument written out (`{name}[u64]`)."
                ),
                Anchor::Expr(e),
            ));
        }
        if crate::foreign::is_extern(self.db, item) {
            return Err(Diag::new(
                "E-FN-TYPE",
                format!(
                    "{name} is a foreign (C) function: wrap the call in a CAIRN function and use that as the value."
                ),
                Anchor::Expr(e),
            ));
        }
        self.taken(e, item, &name, crate::signature::fn_signature(self.db, item))
    }

    /// The full name of `item` used as a value at `e`, once it may be named here (`E-PRIVATE`,
    /// and the implementation rules of a direct use).
    fn value_of(&mut self, e: ExprId, item: crate::input::Item) -> R<Arc<str>> {
        let name = self.scope.full_name(item);
        if !self.scope.visible_from(item, &self.module) {
            let owner = self.scope.module_of(item);
            return Err(Diag::new("E-PRIVATE", format!("{name} is private to module {owner}."), Anchor::Expr(e)));
        }
        self.implementation_use(item, e)?;
        Ok(name)
    }

    /// The `fn` value of a function (or instance) with `signature`: a host function of values
    /// (`E-FN-TYPE` for a kernel or a view or borrow parameter), recorded as taken.
    fn taken(&mut self, e: ExprId, item: crate::input::Item, name: &str, signature: &Signature) -> R<Ty> {
        if signature.kernel {
            return Err(Diag::new(
                "E-FN-TYPE",
                format!("{name} is a kernel fn, which is device code: a function value is a host function."),
                Anchor::Expr(e),
            ));
        }
        if signature.params.iter().any(|p| p.borrowed()) {
            return Err(Diag::new(
                "E-FN-TYPE",
                format!("{name} takes a view or a borrow: only a function of values can be a `fn` value."),
                Anchor::Expr(e),
            ));
        }
        let fun = crate::types::FnTy {
            params: signature.params.iter().map(|p| p.ty.clone()).collect(),
            ret: signature.ret.clone(),
        };
        self.host_only(Anchor::Expr(e), "a function value")?;
        self.resolved(e, Resolution::Function(item));
        if !self.address_taken.contains(&item) {
            self.address_taken.push(item);
        }
        Ok(Ty::Fn(Arc::new(fun)))
    }
}
