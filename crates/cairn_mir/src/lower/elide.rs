//! Facts for eliding guards: what a loop's upper bound names, which locals never change, and
//! whether an index is a loop binder already known to stay below a view's extent (or an operand
//! a known bound keeps from overflowing). A guard is elided only where these facts prove it.

use super::*;

impl Lower<'_> {
    /// What a range's upper end names, for elision: an immutable name, `len(x)`, or a literal.
    pub(super) fn bound_of(&self, hi: ExprId) -> Option<Bound> {
        match self.body.expr(self.body.unparen(hi)) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Some(Bound::Literal(*v as u64)),
            Expr::Name(_) => match self.check.resolution(self.body.unparen(hi)) {
                // Only immutable names: a parameter or a `let` (loop binders are immutable
                // too). A `let mut` can change, so it bounds nothing.
                Resolution::Local(r) => {
                    let local = self.local_of(hi)?;
                    (!self.is_mutable(r) && self.local_ty(local) == &MTy::usize()).then_some(Bound::Name(local))
                }
                _ => self.integer_constant(hi).map(Bound::Literal),
            },
            Expr::Call { args, .. }
                if args.len() == 1
                    && self.check.call_target(self.body.unparen(hi)) == Some(&CallTarget::Builtin(Builtin::Len)) =>
            {
                // Only a length nothing in the loop can change: an `Array`'s (fixed by its
                // type), or an immutable binding's. A `let mut` Buf may be swapped for a shorter
                // one inside the loop (`for i in 0..len(b) { swap(b, s); b[i] = 7; }`).
                match self.body.expr(self.body.unparen(args[0])) {
                    Expr::Name(_) => {
                        let local = self.local_of(args[0])?;
                        let fixed = matches!(self.local_ty(local), MTy::Array(..))
                            || match self.check.resolution(self.body.unparen(args[0])) {
                                Resolution::Local(r) => !self.is_mutable(r),
                                _ => false,
                            };
                        fixed.then_some(Bound::Len(local))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// True when `local` was bound by `let mut` (parameters and loop binders never are).
    pub(super) fn is_mutable(&self, local: LocalRef) -> bool {
        let LocalRef::Binder(id) = local else { return false };
        self.body.stmts.iter().any(|s| matches!(s, Stmt::Let { binder, mutable: true, .. } if *binder == id))
    }

    /// The value of the integer constant a name expression means, when it is one and folded.
    pub(super) fn integer_constant(&self, e: ExprId) -> Option<u64> {
        let Resolution::Const(item) = self.check.resolution(self.body.unparen(e)) else { return None };
        match cairn_hir::constant_value(self.db, item).as_ref()? {
            ConstValue::Folded { ty: Ty::Int(_), value: Value::Int(v) } => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// True when `index` is a loop binder known to stay below the extent of `place`.
    pub(super) fn index_proved(&self, place: &Place, index: ExprId) -> bool {
        if place.proj.is_empty()
            && self.block_views.contains(&place.local)
            && self.block_indices.iter().any(|&i| self.body.unparen(i) == self.body.unparen(index))
        {
            return true;
        }
        let Expr::Name(_) = self.body.expr(self.body.unparen(index)) else { return false };
        let Some(binder) = self.local_of(index) else { return false };
        if !place.proj.is_empty() {
            return false;
        }
        let view = place.local;
        self.facts.iter().any(|(local, bound)| {
            *local == binder
                && match bound {
                    Bound::Len(of) => *of == view,
                    Bound::Name(n) => self.extents.iter().any(|(v, e)| *v == view && e == n),
                    Bound::Literal(k) => matches!(self.local_ty(view), MTy::Array(_, n) if k <= n),
                }
        })
    }

    /// True when `operand` is a loop binder known to stay below some bound.
    pub(super) fn bounded(&self, operand: &Operand) -> bool {
        match operand {
            Operand::Copy(Place { local, proj }) if proj.is_empty() => self.facts.iter().any(|(l, _)| l == local),
            _ => false,
        }
    }
}
