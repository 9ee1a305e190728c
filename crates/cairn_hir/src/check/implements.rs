//! An implementation's `when` condition (language §27) and calls of implementations.
//!
//! The condition is typed as a `bool` over the implementation's parameters and held to the rule
//! that it cannot trap or read memory (`E-IMPL-WHEN`): scalar value parameters, `len` of view
//! parameters, literals, constants and naturals, combined by comparisons, `&& || !`, `& | ^ ~`,
//! `min`, `max`, the wrapping builtins on integers, `/` or `%` by a positive literal or natural,
//! `shr`/`shl_wrap` by a literal or natural below the width, and float arithmetic. It is checked
//! with the body but contributes nothing to the implementation's row or guard sites: it runs at
//! the reference's entry (the lowering makes it a function of its own), and by this rule it has
//! no effect. A condition naming no parameter that folds to false is refused too.
//!
//! Only a test may call an implementation by name or take it as a value (`E-IMPL-CALL`).

use crate::body::{Expr, ExprId};
use crate::diag::{Anchor, Diag};
use crate::input::Item;
use crate::types::Ty;

use super::cx::{Cx, R};
use super::result::{CallTarget, Resolution};
use crate::body::{BinaryOp, Literal, UnaryOp};
use crate::builtins::Builtin;
use crate::consts::Value;

impl Cx<'_> {
    /// Checks the `when` condition `e` (see the module comment).
    pub(crate) fn when_condition(&mut self, e: ExprId) -> R<()> {
        let effects = self.effects.clone();
        let sites = self.sites.clone();
        self.check(e, Some(&Ty::Bool))?;
        self.effects = effects;
        self.sites = sites;
        if let Some((at, why)) = self.when_refusal(e) {
            return Err(Diag::new(
                "E-IMPL-WHEN",
                format!(
                    "The `when` condition {why}: a condition may not trap or read memory. It may use scalar value parameters, `len` of view parameters, literals, constants and naturals, with comparisons, `&& || !`, `& | ^ ~`, `min`, `max`, `add_wrap`/`sub_wrap`/`mul_wrap`, `/` or `%` by a positive literal or natural, `shr`/`shl_wrap` by a literal or natural below the width, and float arithmetic."
                ),
                Anchor::Expr(at),
            ));
        }
        if !self.names_parameter(e) && self.fold_when(e) == Some(Value::Bool(false)) {
            return Err(Diag::new(
                "E-IMPL-WHEN",
                "The `when` condition names no parameter and is always false, so the implementation could never run: test a parameter, or remove the implementation.",
                Anchor::Expr(e),
            ));
        }
        Ok(())
    }

    /// `E-IMPL-CALL` for a call of, or a value naming, the implementation `callee` outside a test.
    pub(crate) fn implementation_use(&self, callee: Item, e: ExprId) -> R<()> {
        if !crate::implementations::is_implementation(self.db, callee)
            || self.scope.info(self.item).is_some_and(|info| info.key.kind == crate::input::ItemKind::Test)
        {
            return Ok(());
        }
        let name = self.scope.full_name(callee);
        let reference = crate::implementations::implementation_def(self.db, callee)
            .as_ref()
            .map(|def| def.reference.join("."))
            .unwrap_or_default();
        Err(Diag::new(
            "E-IMPL-CALL",
            format!(
                "{name} is an implementation of {reference}: only a test may call it by name or take it as a value. Call {reference} (a plan `plan {reference} use {name};` makes it run {name})."
            ),
            Anchor::Expr(e),
        ))
    }

    /// `E-IMPL-PARAM` for a test's call of a tuned implementation at values its `tune` lists do
    /// not name.
    pub(crate) fn tuned_instance(&self, callee: Item, args: &[crate::instance::InstanceArg], e: ExprId) -> R<()> {
        if args.is_empty() || !crate::implementations::is_implementation(self.db, callee) {
            return Ok(());
        }
        let listed = crate::implementations::tuned_instances(self.db, callee);
        if listed.is_empty() || listed.iter().any(|l| **l == *args) {
            return Ok(());
        }
        let name = self.scope.full_name(callee);
        let shown: Vec<String> = listed
            .iter()
            .map(|l| crate::instance::Instance::new(self.db, callee, l.clone()).display(self.db))
            .collect();
        Err(Diag::new(
            "E-IMPL-PARAM",
            format!("This instance of {name} is not one its `tune` list names: call one of {}.", shown.join(", ")),
            Anchor::Expr(e),
        ))
    }

    /// The first part of the condition `e` that breaks the rule, and why.
    fn when_refusal(&self, e: ExprId) -> Option<(ExprId, String)> {
        let body = self.body.clone();
        let ty = |x: ExprId| self.types.get(x.0 as usize).cloned().unwrap_or(Ty::Error);
        match body.expr(e) {
            Expr::Literal(Literal::String(_)) => Some((e, "reads a string literal".into())),
            Expr::Literal(_) => None,
            Expr::Paren(inner) => self.when_refusal(*inner),
            Expr::Name(_) => match self.resolutions.get(e.0 as usize) {
                Some(Resolution::Const(_) | Resolution::Natural(_)) => None,
                _ if self.scopes.resolve(e).is_some() && ty(e).is_scalar() => None,
                _ if self.scopes.resolve(e).is_some() => {
                    Some((e, "reads a parameter that is not a scalar value".into()))
                }
                _ => Some((e, "names something other than a parameter, constant or natural".into())),
            },
            Expr::Unary { op, operand } => {
                if *op == UnaryOp::Neg
                    && ty(*operand).is_integer()
                    && !matches!(body.expr(body.unparen(*operand)), Expr::Literal(_))
                {
                    return Some((e, "negates an integer, which can overflow".into()));
                }
                self.when_refusal(*operand)
            }
            Expr::Binary { op, lhs, rhs } => {
                let integer = ty(*lhs).is_integer();
                match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul if integer => Some((
                        e,
                        format!("uses integer `{}`, which can overflow (use the wrapping builtins)", op.text()),
                    )),
                    BinaryOp::Div | BinaryOp::Rem if integer && !self.positive_constant(*rhs) => Some((
                        e,
                        format!("divides (`{}`) by something that is not a positive literal or natural", op.text()),
                    )),
                    _ => self.when_refusal(*lhs).or_else(|| self.when_refusal(*rhs)),
                }
            }
            Expr::Call { args, .. } => {
                let Some(CallTarget::Builtin(builtin)) = self.call_target_of(e) else {
                    return Some((e, "calls a function".into()));
                };
                match builtin {
                    Builtin::Min | Builtin::Max => args.iter().find_map(|&a| self.when_refusal(a)),
                    Builtin::AddWrap | Builtin::SubWrap | Builtin::MulWrap => {
                        args.iter().find_map(|&a| self.when_refusal(a))
                    }
                    Builtin::Shr | Builtin::ShlWrap => {
                        let width = match ty(e) {
                            Ty::Int(int) => u64::from(int.bits()),
                            _ => 0,
                        };
                        match args.get(1) {
                            Some(&count) if self.constant_below(count, width) => self.when_refusal(args[0]),
                            _ => {
                                Some((e, "shifts by something that is not a literal or natural below the width".into()))
                            }
                        }
                    }
                    Builtin::Len => match args.first().map(|&a| (a, body.expr(body.unparen(a)))) {
                        Some((a, Expr::Name(_)))
                            if self.scopes.resolve(body.unparen(a)).is_some() && matches!(ty(a), Ty::View(_)) =>
                        {
                            None
                        }
                        _ => Some((e, "takes `len` of something that is not a view parameter".into())),
                    },
                    _ => Some((e, format!("calls `{}`", builtin.name()))),
                }
            }
            _ => Some((e, "reads memory or does something other than compute on parameters".into())),
        }
    }

    /// True when `e` folds to a positive integer (a literal, constant or natural).
    fn positive_constant(&self, e: ExprId) -> bool {
        matches!(self.fold_when(e), Some(Value::Int(n)) if n > 0)
    }

    /// True when `e` folds to an integer below `width`.
    fn constant_below(&self, e: ExprId, width: u64) -> bool {
        matches!(self.fold_when(e), Some(Value::Int(n)) if n >= 0 && n < i128::from(width))
    }

    /// True when the condition names a parameter anywhere.
    fn names_parameter(&self, e: ExprId) -> bool {
        let body = self.body.clone();
        match body.expr(e) {
            Expr::Name(_) => self.scopes.resolve(e).is_some(),
            Expr::Paren(inner) | Expr::Unary { operand: inner, .. } => self.names_parameter(*inner),
            Expr::Binary { lhs, rhs, .. } => self.names_parameter(*lhs) || self.names_parameter(*rhs),
            Expr::Call { args, .. } => args.iter().any(|&a| self.names_parameter(a)),
            _ => false,
        }
    }

    /// The value of `e` when it is made of literals, constants and naturals only.
    fn fold_when(&self, e: ExprId) -> Option<Value> {
        crate::implementations::fold_condition(&self.body, e, &|x| match self.resolutions.get(x.0 as usize)? {
            Resolution::Natural(n) => Some(Value::Int(i128::from(*n))),
            Resolution::Const(item) => crate::implementations::constant(self.db, *item),
            _ => None,
        })
    }
}
