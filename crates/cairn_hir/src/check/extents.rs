//! View arguments and extents at a call (language §6): what shape a view argument has (a
//! place, a part, a string), the view it lends, parts and their bounds, which expressions may be
//! evaluated again (`repeatable`), and the extent a view parameter asks for — given, or left out
//! and decided by the first view bound to it — with the identities extents are compared by.

use std::sync::Arc;

use super::cx::{Cx, R};
use super::result::GuardKind;
use crate::body::{Expr, ExprId, Literal};
use crate::builtins::Builtin;
use crate::diag::{Anchor, Diag};
use crate::types::{Extent, Ty, ViewTy};

impl Cx<'_> {
    pub(crate) fn is_string_literal(&self, e: ExprId) -> bool {
        matches!(self.body.expr(self.body.unparen(e)), Expr::Literal(Literal::String(_)))
    }

    /// A view argument's shape allows leaving extents out: a place — a name, a field path, an
    /// element whose indices are repeatable (`rows[k]`, `table.keys[a.slot].bytes`) — a part, or
    /// a string. The left-out extent is the length of the view the argument lends, read once.
    pub(crate) fn is_view_argument_shape(&self, e: ExprId) -> bool {
        self.is_place_path(e)
            || matches!(self.body.expr(self.body.unparen(e)), Expr::Part { .. } | Expr::Literal(Literal::String(_)))
    }

    /// A name, or fields and elements of one, every index repeatable.
    fn is_place_path(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(_) => true,
            Expr::Field { base, .. } => self.is_place_path(*base),
            Expr::Index { base, indices } => indices.iter().all(|i| self.repeatable(*i)) && self.is_place_path(*base),
            _ => false,
        }
    }

    /// The view an argument lends: a view local, a part, or a string literal.
    pub(crate) fn view_argument(&mut self, arg: ExprId) -> R<Ty> {
        let inner = self.body.unparen(arg);
        match self.body.expr(inner).clone() {
            Expr::Part { base, lo, hi } => self.part(inner, base, lo, hi),
            _ => self.check(arg, None),
        }
    }

    /// `x[lo..hi]` as an argument: a view of unknown static extent, one bounds site.
    pub(crate) fn part(&mut self, e: ExprId, base: ExprId, lo: ExprId, hi: ExprId) -> R<Ty> {
        let base_ty = match self.body.expr(self.body.unparen(base)).clone() {
            Expr::Part { base: inner, lo: l, hi: h } => self.part(self.body.unparen(base), inner, l, h)?,
            _ => self.check(base, None)?,
        };
        let view = match &self.lend(base, base_ty.clone()) {
            Ty::View(view) => view.clone(),
            Ty::Error => return Ok(Ty::Error),
            other => {
                return Err(Diag::new(
                    "E-INDEX",
                    format!("Only views and arrays have parts, and this is a {other}."),
                    Anchor::Expr(e),
                ));
            }
        };
        for bound in [lo, hi] {
            if !self.repeatable(bound) {
                return Err(Diag::new(
                    "E-CALL-SHAPE",
                    "A part's bounds are names, literals and arithmetic, which its guard evaluates again: bind a call to a name first.",
                    Anchor::Expr(bound),
                ));
            }
            self.check(bound, Some(&Ty::usize()))?;
        }
        self.site(GuardKind::Bounds);
        let ty = Ty::View(ViewTy { extent: Extent::Unknown, ..view });
        self.types[e.0 as usize] = ty.clone();
        Ok(ty)
    }

    /// True for an expression a guard may evaluate again: names, literals, fields, indexes,
    /// operators, and calls of `len`, `min`, `max`, the wrapping builtins and conversions.
    pub(crate) fn repeatable(&self, e: ExprId) -> bool {
        match self.body.expr(e) {
            Expr::Literal(_) | Expr::Name(_) | Expr::Missing => true,
            Expr::Paren(inner) => self.repeatable(*inner),
            Expr::Field { base, .. } => self.repeatable(*base),
            Expr::Index { base, indices } => self.repeatable(*base) && indices.iter().all(|i| self.repeatable(*i)),
            Expr::Unary { operand, .. } => self.repeatable(*operand),
            Expr::Binary { lhs, rhs, .. } => self.repeatable(*lhs) && self.repeatable(*rhs),
            Expr::Call { callee, args } => {
                let pure_builtin = match self.body.expr(self.body.unparen(*callee)) {
                    Expr::Name(name) => Builtin::from_name(name).is_some_and(|b| {
                        matches!(
                            b,
                            Builtin::Len
                                | Builtin::Min
                                | Builtin::Max
                                | Builtin::AddWrap
                                | Builtin::SubWrap
                                | Builtin::MulWrap
                                | Builtin::ShlWrap
                                | Builtin::Shr
                        ) || b.conversion().is_some()
                    }),
                    _ => false,
                };
                pure_builtin && args.iter().all(|a| self.repeatable(*a))
            }
            _ => false,
        }
    }

    /// The extent a view parameter asks for at this call (language §6, extent identity).
    pub(crate) fn wanted_extent(
        &mut self,
        want: &ViewTy,
        params: &[crate::signature::Param],
        args: &[Option<ExprId>],
        index: usize,
    ) -> R<Extent> {
        match &want.extent {
            Extent::Name(name) => {
                let Some(extent_index) = params.iter().position(|p| p.name == *name) else {
                    return Ok(Extent::Unknown);
                };
                match args[extent_index] {
                    Some(arg) => self.extent_identity(arg),
                    None => {
                        // Left out: the first view argument bound to this extent decides it.
                        let first = crate::signature::deciding_view(params, name).unwrap_or(index);
                        match args[first] {
                            // A part decides the extent as `hi - lo`, which a whole view cannot be
                            // checked against (it is what the call means written out).
                            Some(arg)
                                if first != index
                                    && matches!(self.body.expr(self.body.unparen(arg)), Expr::Part { .. }) =>
                            {
                                match args[index] {
                                    Some(view) => Err(self.call_shape(view)),
                                    None => Ok(Extent::Unknown),
                                }
                            }
                            Some(arg) => Ok(self.view_extent(arg)),
                            None => Ok(Extent::Unknown),
                        }
                    }
                }
            }
            other => Ok(other.clone()),
        }
    }

    /// True when the view argument at `index` decides its left-out extent (the first view bound
    /// to an extent parameter the call leaves out): its length is the extent by definition.
    pub(crate) fn decides_extent(
        &self,
        want: &ViewTy,
        params: &[crate::signature::Param],
        args: &[Option<ExprId>],
        index: usize,
    ) -> bool {
        let Extent::Name(name) = &want.extent else { return false };
        let Some(extent_index) = params.iter().position(|p| p.name == *name) else { return false };
        args[extent_index].is_none() && crate::signature::deciding_view(params, name) == Some(index)
    }

    /// The extent of a view argument as an identity.
    pub(crate) fn view_extent(&self, arg: ExprId) -> Extent {
        let arg = self.body.unparen(arg);
        match self.types.get(arg.0 as usize) {
            Some(Ty::View(view)) => view.extent.clone(),
            Some(owner @ (Ty::Buf(_) | Ty::Array(..))) => match self.lent(arg, owner.clone()) {
                Ty::View(view) => view.extent,
                _ => Extent::Unknown,
            },
            _ => Extent::Unknown,
        }
    }

    /// The identity of an argument given for an extent parameter.
    pub(crate) fn extent_identity(&self, arg: ExprId) -> R<Extent> {
        let inner = self.body.unparen(arg);
        match self.body.expr(inner) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Ok(Extent::Literal(*v as u64)),
            Expr::Name(name) => {
                if self.local(name).is_some() {
                    return Ok(Extent::Name(name.clone()));
                }
                match crate::consts::integer_constant(self.db, &self.module, name) {
                    Some(v) => Ok(Extent::Literal(v)),
                    None => Ok(Extent::Name(name.clone())),
                }
            }
            Expr::Field { .. } => match self.dotted_path(inner) {
                Some(path) => {
                    Ok(Extent::Name(Arc::from(path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join("."))))
                }
                None => Err(self.call_shape(arg)),
            },
            Expr::Call { callee, args }
                if matches!(self.body.expr(self.body.unparen(*callee)),
                    Expr::Name(n) if crate::builtins::Builtin::from_name(n) == Some(crate::builtins::Builtin::Len)) =>
            {
                match args.first() {
                    Some(view) => Ok(self.view_extent(*view)),
                    None => Err(self.call_shape(arg)),
                }
            }
            _ => Err(self.call_shape(arg)),
        }
    }

    pub(crate) fn call_shape(&self, arg: ExprId) -> Diag {
        Diag::new(
            "E-CALL-SHAPE",
            "A view's extent argument must be a name, a literal, a constant, a field path or len(view): bind a computed extent to a name first.",
            Anchor::Expr(arg),
        )
    }
}
