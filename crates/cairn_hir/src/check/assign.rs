//! Assignments (language §8): the target's place (a mutable local, a field of one, an element
//! of an `rw` view), read again for compound assignment.

use std::sync::Arc;

use crate::body::{Expr, ExprId};
use crate::diag::{Anchor, Diag};
use crate::types::Ty;

use super::cx::{Cx, R};

impl Cx<'_> {
    // ----- assignment ----------------------------------------------------------------------

    pub(crate) fn assign(&mut self, target: ExprId, op: Option<crate::body::BinaryOp>, value: ExprId) -> R<()> {
        let place_ty = self.place(target)?;
        self.keep_extent_pair(target, "assigning")?;
        match op {
            None => {
                self.check(value, Some(&place_ty))?;
            }
            Some(op) => {
                // `p op= v` is `p = p op v`: the place read again, then the operator's rules.
                let place_value = self.place_read(target)?;
                self.binary_with(op, target, value, place_value, None)?;
            }
        }
        Ok(())
    }

    /// Checks an assignment target and returns its type.
    pub(crate) fn place(&mut self, target: ExprId) -> R<Ty> {
        let body = self.body.clone();
        let target = body.unparen(target);
        match body.expr(target) {
            Expr::Name(name) => {
                let Some(local) = self.local(name).cloned() else {
                    return Err(self.not_assignable_name(name, target));
                };
                let writable = local.mutable || matches!(local.ty, Ty::Borrow(crate::types::Mode::Rw, _));
                if !writable || matches!(local.ty, Ty::View(_)) {
                    return Err(immutable_local(name, &local, target));
                }
                if let Ty::Borrow(_, inner) = &local.ty {
                    self.effect(format!("write:{name}"));
                    self.effect(format!("read:{name}"));
                    self.types[target.0 as usize] = (**inner).clone();
                    return Ok((**inner).clone());
                }
                self.types[target.0 as usize] = local.ty.clone();
                Ok(local.ty)
            }
            Expr::Index { base, indices } => {
                let root = self.root_name(*base);
                let writable = match root.as_deref().and_then(|r| self.local(r)) {
                    Some(local) => match &local.ty {
                        Ty::View(view) => view.mode == crate::types::Mode::Rw,
                        Ty::Borrow(mode, _) => *mode == crate::types::Mode::Rw,
                        _ => local.mutable,
                    },
                    None => false,
                };
                if !writable {
                    if root.is_none() && self.root_is_unbound(*base) {
                        // An element of a name that does not exist: the original says the write
                        // needs an rw view before anything else.
                    }
                    return Err(Diag::new(
                        "E-WRITE-LEASE",
                        "An element can be written only through an rw view (a `stack` array, or an rw view parameter).",
                        Anchor::Expr(target),
                    ));
                }
                let ty = self.index(target, *base, indices, true)?;
                Ok(ty)
            }
            Expr::Field { base, name } => {
                let base_ty = self.place(*base)?;
                let field = self.field_of(target, &base_ty, name)?;
                if let Some(root) = self.root_name(*base)
                    && self.local(&root).is_some_and(|l| matches!(l.ty, Ty::Borrow(..)))
                {
                    self.effect(format!("read:{root}"));
                }
                self.types[target.0 as usize] = field.clone();
                Ok(field)
            }
            _ => Err(Diag::new(
                "E-LVALUE",
                "Only a mutable local, a field of one, or an element of an rw view can be assigned.",
                Anchor::Expr(target),
            )),
        }
    }

    /// `E-IMMUTABLE` for a name that is no local: a constant, or nothing bound here.
    fn not_assignable_name(&self, name: &Arc<str>, target: ExprId) -> Diag {
        if self.constant(std::slice::from_ref(name)).is_some() {
            let copy = name.to_lowercase();
            return Diag::new(
                "E-IMMUTABLE",
                format!("{name} is a constant, and a constant never changes: change a `let mut` copy of it instead."),
                Anchor::Expr(target),
            )
            .with_hint(format!("Bind a copy, `let mut {copy} = {name};`, and assign to {copy}."));
        }
        Diag::new(
            "E-IMMUTABLE",
            format!("{name} is not a mutable local: only a `let mut` local or an rw borrow can be assigned."),
            Anchor::Expr(target),
        )
        .with_hint(format!("Declare it first: `let mut {name} = …;`."))
    }

    pub(crate) fn root_is_unbound(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(name) => self.local(name).is_none(),
            Expr::Field { base, .. } | Expr::Index { base, .. } => self.root_is_unbound(*base),
            _ => false,
        }
    }

    /// The value of an assignment target read again (for compound assignment).
    pub(crate) fn place_read(&mut self, target: ExprId) -> R<Ty> {
        let body = self.body.clone();
        let target = body.unparen(target);
        match body.expr(target) {
            Expr::Index { base, indices } => self.index(target, *base, indices, false),
            _ => Ok(self.types[target.0 as usize].clone()),
        }
    }
}

/// `E-IMMUTABLE` for a local that cannot be assigned: the message names what kind of binding it
/// is (the fix differs), the hint gives the smallest fix for that kind.
fn immutable_local(name: &str, local: &super::cx::Local, target: ExprId) -> Diag {
    use super::cx::LocalKind;
    let (message, hint) = match local.kind {
        LocalKind::Stack => (
            format!("{name} names its stack storage, which is never replaced: write its elements instead."),
            format!("Copy element by element: `for i in 0..len({name}) {{ {name}[i] = …; }}`."),
        ),
        _ if matches!(local.ty, Ty::View(_)) => (
            format!("{name} is a view, which is never replaced: write its elements instead."),
            match &local.ty {
                Ty::View(view) if view.mode == crate::types::Mode::Rw => {
                    format!("Copy element by element: `for i in 0..len({name}) {{ {name}[i] = …; }}`.")
                }
                _ => format!("Take it as `rw<…>[n]` and write its elements: `{name}[i] = …;`."),
            },
        ),
        LocalKind::Param => (
            format!(
                "{name} is a parameter, and a parameter is not assigned: change a `let mut` copy, or take it `rw`."
            ),
            format!("Bind a copy `let mut {name}_now = {name};`, or take `rw<…>` to change the caller's value."),
        ),
        LocalKind::LoopBinder | LocalKind::MatchBinder => (
            format!("{name} is bound by its loop or arm, which sets it: change a `let mut` copy of it instead."),
            format!("Bind a copy, `let mut {name}_now = {name};`, and assign to that."),
        ),
        LocalKind::Let => (
            format!("{name} is not a mutable local: declare it `let mut {name}` to change it."),
            format!("Declare it `let mut {name} = …;` where it is bound."),
        ),
    };
    Diag::new("E-IMMUTABLE", message, Anchor::Expr(target)).with_hint(hint)
}
