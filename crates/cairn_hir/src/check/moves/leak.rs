//! What the ownership walk says of a linear value left unconsumed (language §22.4): the
//! `E-LINEAR-LEAK` and `E-LINEAR-BRANCH` refusals (a queued-work ticket's own wording among
//! them), with a repair hint naming the program's function that ends such a value, and a
//! temporary nobody keeps.

use super::*;

impl Walk<'_, '_> {
    /// The refusal of a linear local still held (or held on some paths) where its scope is left.
    pub(super) fn leak(&self, local: LocalRef, held: Held, exit: Option<Anchor>) -> Diag {
        let name = self.name_of(local);
        let anchor = exit.clone().unwrap_or(match local {
            LocalRef::Binder(b) => Anchor::Binder(b),
            LocalRef::Param(_) => Anchor::Item,
        });
        let at = if exit.is_some() { "this exit" } else { "the end of its block" };
        let ticket = match local {
            LocalRef::Binder(b) => self.cx.binder_types.get(b.0 as usize) == Some(&Ty::Ticket),
            LocalRef::Param(_) => false,
        };
        if ticket {
            let (code, paths) =
                if held == Held::Maybe { ("E-LINEAR-BRANCH", "on some paths only") } else { ("E-LINEAR-LEAK", "") };
            return Diag::new(
                code,
                format!(
                    "{name} is the ticket of queued work, and it is not waited{} before {at}: write `wait({name});` on every path, once the host needs the work done.",
                    if paths.is_empty() { String::new() } else { format!(" {paths}") }
                ),
                anchor,
            );
        }
        if held == Held::Maybe {
            return Diag::new(
                "E-LINEAR-BRANCH",
                format!(
                    "{name} is linear and consumed on some paths only, so it may still be held at {at}: consume it on every path (pass it on, return it, or take it apart with `let`), or on none."
                ),
                anchor,
            );
        }
        let diag = Diag::new(
            "E-LINEAR-LEAK",
            format!(
                "{name} is linear and still held at {at}: consume it exactly once first — pass it to the function that ends it, return it, or `defer` that call right after it is made."
            ),
            anchor,
        );
        let ty = match local {
            LocalRef::Binder(b) => self.cx.binder_types.get(b.0 as usize).cloned(),
            LocalRef::Param(i) => self.cx.signature.params.get(i as usize).map(|p| p.ty.clone()),
        };
        match ty.and_then(|ty| self.consumer(&ty)) {
            Some(end) => diag.with_hint(format!(
                "Pass {name} to {end}({name}) before {at}, or write `defer {end}({name});` right after it is made."
            )),
            None => diag,
        }
    }

    /// A function of the program this body can call that takes a `ty` by value and does not
    /// hand one back — the call that ends such a value, for a leak's repair hint — named as this
    /// module writes it.
    fn consumer(&self, ty: &Ty) -> Option<String> {
        let db = self.cx.db;
        let module = &self.cx.module;
        crate::input::Program::get(db).items(db).iter().find_map(|entry| {
            if entry.key.kind != crate::input::ItemKind::Fn
                || entry.item == self.cx.item
                || !crate::generics::fn_generics(db, entry.item).is_empty()
                || !self.cx.scope.visible_from(entry.item, module)
            {
                return None;
            }
            let signature = crate::signature::fn_signature(db, entry.item);
            let takes = signature.params.iter().any(|p| p.ty == *ty);
            (takes && signature.ret != *ty && signature.error.is_none()).then(|| {
                let full = self.cx.scope.full_name(entry.item);
                match self.cx.scope.module_of(entry.item) == *module {
                    true => full.rsplit('.').next().unwrap_or(&full).to_string(),
                    false => full.to_string(),
                }
            })
        })
    }

    /// A value of type `ty` that nobody keeps is released at `at`: refused when it is linear.
    pub(super) fn discarded(&mut self, ty: &Ty, at: Anchor) -> R<()> {
        match crate::generics::kind_of(self.cx.db, ty) {
            Kind::Copy => Ok(()),
            Kind::Affine => {
                self.frees = true;
                Ok(())
            }
            Kind::Linear => Err(Diag::new(
                "E-LINEAR-LEAK",
                format!(
                    "This {ty} is linear, and here nobody keeps it: bind it (`let v = …;`) and consume it exactly once, or pass it straight to the call that ends it."
                ),
                at,
            )),
        }
    }
}
