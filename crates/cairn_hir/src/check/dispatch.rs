//! Calls of trait members (language §20): `area(x)`, `x.area()` and `Area.area(x)`, dispatched
//! statically on the type of the receiver argument to the one impl of that type; the call is
//! then an ordinary call of the impl's method (with the impl's arguments fixed, for a generic
//! impl). Two implemented traits sharing the name are `E-TRAIT-AMBIGUOUS`; none is
//! `E-TRAIT-IMPL`.

use std::sync::Arc;

use super::call::Generic;
use super::cx::{Cx, R};
use crate::body::ExprId;
use crate::diag::{Anchor, Diag};
use crate::input::Item;
use crate::types::Ty;

impl Cx<'_> {
    /// The call of member `name` of the visible traits declaring it (only `only`, when the
    /// call names its trait); `None` when no visible trait declares it.
    pub(crate) fn trait_call(
        &mut self,
        e: ExprId,
        name: &Arc<str>,
        only: Option<Item>,
        receiver: Option<ExprId>,
        args: &Arc<[ExprId]>,
        generic: Generic<'_>,
    ) -> R<Option<Ty>> {
        let declaring = crate::traits::traits_declaring(self.db, name, self.scope.is_library_module(&self.module));
        let candidates: Vec<(Item, Item)> = declaring
            .iter()
            .filter(|(tr, _)| only.is_none_or(|o| o == *tr) && self.scope.visible_from(*tr, &self.module))
            .copied()
            .collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        let mut given: Vec<ExprId> = receiver.into_iter().collect();
        given.extend(args.iter().copied());
        let mut found: Vec<(Item, Item, Arc<[crate::instance::InstanceArg]>)> = Vec::new();
        let mut opaque: Vec<(Item, Item, Ty)> = Vec::new();
        let mut receiver_ty: Option<Ty> = None;
        for &(tr, member) in &candidates {
            let Some(at) = crate::signature::receiver_index(self.db, member) else { continue };
            let Some(&arg) = given.get(at) else { continue };
            let Some(ty) = self.probe(arg, false) else { continue };
            let ty = ty.value().clone();
            // Through a `dyn` reference of this trait: dispatched at run time.
            if let Ty::Dyn(behind, _) | Ty::DynBox(behind, _) = &ty
                && *behind == tr
            {
                return self.dyn_call(e, tr, member, &given, at).map(Some);
            }
            // An opaque witness promising the trait: the member itself is called, at the witness
            // (its signature with `Self` replaced; language §19.2).
            if let Ty::Opaque(o) = &ty
                && o.traits.contains(&tr)
            {
                opaque.push((tr, member, ty.clone()));
            } else if let Some((imp, impl_args)) = crate::traits::find_impl(self.db, &self.module, tr, &ty) {
                found.push((tr, imp, impl_args));
            }
            receiver_ty.get_or_insert(ty);
        }
        let traits = || candidates.iter().map(|(t, _)| self.scope.full_name(*t).to_string()).collect::<Vec<_>>();
        if let [(_, member, witness)] = &opaque[..]
            && found.is_empty()
        {
            let preset: Arc<[crate::instance::InstanceArg]> =
                Arc::from(vec![crate::instance::InstanceArg::Type(witness.clone())]);
            let call = Generic { preset: Some(&preset), ..generic };
            return self.call_function(e, *member, name, receiver, args, call).map(Some);
        }
        if opaque.len() > 1 {
            let names: Vec<String> = opaque.iter().map(|(t, _, _)| self.scope.full_name(*t).to_string()).collect();
            return Err(Diag::new(
                "E-TRAIT-AMBIGUOUS",
                format!(
                    "{} promises {}, which all declare {name}: write the trait, {}.{name}(x).",
                    opaque[0].2,
                    names.join(" and "),
                    names[0]
                ),
                Anchor::Expr(e),
            ));
        }
        match &found[..] {
            [] => {
                let message = match &receiver_ty {
                    Some(ty) => format!(
                        "{ty} implements none of the traits declaring {name} ({}): add an impl, or pass a value of a type that has one.",
                        traits().join(", ")
                    ),
                    None => format!(
                        "{name} is a member of {}, called here without the receiver its dispatch needs.",
                        traits().join(", ")
                    ),
                };
                Err(Diag::new("E-TRAIT-IMPL", message, Anchor::Expr(e)))
            }
            [(_, imp, impl_args)] => {
                let def = crate::traits::impl_def(self.db, *imp);
                let Some(method) = def.method(name) else {
                    let message = format!("The impl {} for {} does not define {name}.", def.trait_name, def.self_ty);
                    return Err(Diag::new("E-TRAIT-IMPL", message, Anchor::Expr(e)));
                };
                let impl_args = impl_args.clone();
                let call = Generic { preset: Some(&impl_args), ..generic };
                self.call_function(e, method, name, receiver, args, call).map(Some)
            }
            several => {
                let names: Vec<String> = several.iter().map(|(t, _, _)| self.scope.full_name(*t).to_string()).collect();
                let ty = receiver_ty.map(|t| t.to_string()).unwrap_or_default();
                Err(Diag::new(
                    "E-TRAIT-AMBIGUOUS",
                    format!(
                        "{ty} implements {}, which all declare {name}: write the trait, {}.{name}(x).",
                        names.join(" and "),
                        names[0]
                    ),
                    Anchor::Expr(e),
                ))
            }
        }
    }
}
