//! Function values and closures (language §21): calls through a `fn` value or a borrowed
//! callable ([`Cx::indirect_call`]), and closures: `|a:A| -> R { … }` written in place as the argument of a
//! `ro<fn(...)>` parameter. The closure's parameters and result must be the parameter's
//! function type; its body is checked where it is written, in the enclosing scope, with `return`
//! (and `try`) answering to the closure and loops of the enclosing body out of reach; its effects
//! are the enclosing function's. What it captures — the outer bindings its body names — is
//! returned, with whether it writes each, for the call's aliasing rule (`E-ALIAS`).

use std::sync::Arc;

use super::cx::{Cx, Local, LocalKind, R};
use super::expr::same;
use super::result::{CallTarget, GuardKind};
use crate::body::{BinderId, Block, Body, Else, Expr, ExprId, Stmt};
use crate::diag::{Anchor, Diag};
use crate::scopes::LocalRef;
use crate::types::{FnTy, Ty};

impl Cx<'_> {
    /// Checks the closure `e` against the function type `want`; returns one name expression of
    /// each outer binding it captures, and whether the closure assigns it.
    pub(crate) fn closure(&mut self, e: ExprId, want: &FnTy) -> R<Vec<(ExprId, bool)>> {
        let Expr::Closure(closure) = self.body.expr(e).clone() else {
            return Err(Diag::new("E-CLOSURE", "Expected a closure here.", Anchor::Expr(e)));
        };
        let (params, ret, body) = (&closure.params, &closure.ret, &closure.body);
        self.host_only(Anchor::Expr(e), "a closure")?;
        let shown = Ty::Fn(std::sync::Arc::new(want.clone()));
        if params.len() != want.params.len() {
            return Err(Diag::new(
                "E-TYPE-MISMATCH",
                format!("This closure takes {} parameters, and the parameter wants a {shown}.", params.len()),
                Anchor::Expr(e),
            ));
        }
        for ((binder, written), wanted) in params.iter().zip(want.params.iter()) {
            let ty = self
                .resolve_written(written)
                .map_err(|err| Diag::new(err.code, err.message, Anchor::Binder(*binder)))?;
            if !same(&ty, wanted) {
                return Err(Diag::new(
                    "E-TYPE-MISMATCH",
                    format!("This closure's parameter is {ty}, and the parameter wants a {shown}."),
                    Anchor::Binder(*binder),
                ));
            }
            self.fresh(*binder, |name| {
                format!("The closure parameter {name} would shadow a binding of the same name: rename it.")
            })?;
            let name = self.body.binder(*binder).clone();
            self.bind(*binder, Local { name, ty, mutable: false, kind: LocalKind::Let, literal: None });
        }
        let ret_ty = match &ret {
            Some(written) => {
                self.resolve_written(written).map_err(|err| Diag::new(err.code, err.message, Anchor::Expr(e)))?
            }
            None => Ty::Void,
        };
        if !same(&ret_ty, &want.ret) {
            return Err(Diag::new(
                "E-TYPE-MISMATCH",
                format!("This closure returns {ret_ty}, and the parameter wants a {shown}."),
                Anchor::Expr(e),
            ));
        }
        let loops = std::mem::replace(&mut self.loops, 0);
        self.closure_rets.push(ret_ty.clone());
        let first_lend = self.rw_lends.len();
        let result = self.block(&body);
        self.closure_rets.pop();
        self.loops = loops;
        let ends = result?;
        if !ends && ret_ty != Ty::Void && !ret_ty.is_error() {
            return Err(Diag::new(
                "E-RETURN",
                format!("Not all paths of this closure return: end every path with `return` of a {ret_ty}."),
                Anchor::Expr(e),
            ));
        }
        if let Some(slot) = self.types.get_mut(e.0 as usize) {
            *slot = shown;
        }
        // What it captures: the names its body resolves to bindings declared outside it.
        let mut inner: Vec<BinderId> = params.iter().map(|(b, _)| *b).collect();
        let mut names: Vec<ExprId> = Vec::new();
        let mut assigned: Vec<Arc<str>> = Vec::new();
        contents(&self.body, &body, &mut inner, &mut names, &mut assigned);
        // What the body lends to be written (`shrink(b)` with an `rw` parameter, `take(b)`,
        // `swap(b, c)`, `format(v, …)`) it writes as surely as an assignment.
        let lent: Vec<ExprId> = self.rw_lends[first_lend..].to_vec();
        for arg in lent {
            if let Some(root) = self.root_name(arg)
                && !assigned.contains(&root)
            {
                assigned.push(root);
            }
        }
        let mut seen: Vec<LocalRef> = Vec::new();
        let mut captures = Vec::new();
        for name in names {
            let Some(local) = self.scopes.resolve(name) else { continue };
            let outer = match local {
                LocalRef::Param(_) => true,
                LocalRef::Binder(b) => !inner.contains(&b),
            };
            if outer && !seen.contains(&local) {
                seen.push(local);
                let Expr::Name(text) = self.body.expr(name) else { continue };
                captures.push((name, assigned.contains(text)));
            }
        }
        Ok(captures)
    }
}

impl Cx<'_> {
    /// For each expression of the body the field access made on it, built once per body.
    pub(crate) fn field_parents(&mut self) -> Arc<std::collections::HashMap<ExprId, ExprId>> {
        if let Some(map) = &self.field_parents {
            return map.clone();
        }
        // A field access that is a call's callee is method syntax (`t.bump()` is `bump(t)`): it
        // touches `t` whole, so it does not narrow the place.
        let callees: std::collections::HashSet<ExprId> = self
            .body
            .exprs
            .iter()
            .filter_map(|expr| match expr {
                Expr::Call { callee, .. } => Some(self.body.unparen(*callee)),
                _ => None,
            })
            .collect();
        let mut map = std::collections::HashMap::new();
        for (at, expr) in self.body.exprs.iter().enumerate() {
            let at = ExprId(at as u32);
            if let Expr::Field { base, .. } = expr
                && !callees.contains(&at)
            {
                map.insert(self.body.unparen(*base), at);
            }
        }
        let map = Arc::new(map);
        self.field_parents = Some(map.clone());
        map
    }
}

/// The places closure `closure` touches through the binding `name` names: each use of that
/// binding in its body, widened to the longest field chain around it (`t.a.b`), so a capture
/// lends only the fields the closure reads or writes. `field_of` maps an expression to the
/// field access made on it.
pub(crate) fn uses_of(
    body: &Body,
    closure: ExprId,
    name: ExprId,
    field_of: &std::collections::HashMap<ExprId, ExprId>,
) -> Vec<ExprId> {
    let Expr::Closure(parts) = body.expr(closure) else { return vec![name] };
    let block = &parts.body;
    let Expr::Name(text) = body.expr(name) else { return vec![name] };
    let (mut binders, mut names, mut assigned) = (Vec::new(), Vec::new(), Vec::new());
    contents(body, block, &mut binders, &mut names, &mut assigned);
    let mut out: Vec<ExprId> = Vec::new();
    for used in names {
        if !matches!(body.expr(used), Expr::Name(t) if t == text) {
            continue;
        }
        let mut place = used;
        while let Some(&outer) = field_of.get(&place) {
            place = outer;
        }
        if !out.contains(&place) {
            out.push(place);
        }
    }
    if out.is_empty() { vec![name] } else { out }
}

/// The binders a block declares (nested closures' parameters included), the name expressions
/// it holds, and the roots of the places it assigns.
pub(crate) fn contents(
    body: &Body,
    block: &Block,
    binders: &mut Vec<BinderId>,
    names: &mut Vec<ExprId>,
    assigned: &mut Vec<Arc<str>>,
) {
    for &stmt in block.iter() {
        match body.stmt(stmt) {
            Stmt::Let { binder, init, .. } => {
                binders.push(*binder);
                expr(body, *init, binders, names, assigned);
            }
            Stmt::Stack { binder, capacity, .. } | Stmt::Buffer { binder, capacity, .. } => {
                binders.push(*binder);
                expr(body, *capacity, binders, names, assigned);
            }
            Stmt::Unpack { binders: bound, value, .. } => {
                binders.extend(bound.iter().copied());
                expr(body, *value, binders, names, assigned);
            }
            Stmt::Defer(inner) => contents(body, &Arc::from(vec![*inner]), binders, names, assigned),
            Stmt::Assign { target, value, .. } => {
                let mut root = body.unparen(*target);
                loop {
                    match body.expr(root) {
                        Expr::Field { base, .. } | Expr::Index { base, .. } => root = body.unparen(*base),
                        Expr::Name(name) => {
                            assigned.push(name.clone());
                            break;
                        }
                        _ => break,
                    }
                }
                expr(body, *target, binders, names, assigned);
                expr(body, *value, binders, names, assigned);
            }
            Stmt::Expr(e) | Stmt::Return(Some(e)) => expr(body, *e, binders, names, assigned),
            Stmt::If { cond, then, els } => {
                expr(body, *cond, binders, names, assigned);
                contents(body, then, binders, names, assigned);
                match els {
                    Some(Else::Block(b)) => contents(body, b, binders, names, assigned),
                    Some(Else::If(nested)) => {
                        contents(body, &std::sync::Arc::from(vec![*nested]), binders, names, assigned)
                    }
                    None => {}
                }
            }
            Stmt::While { cond, body: b } => {
                expr(body, *cond, binders, names, assigned);
                contents(body, b, binders, names, assigned);
            }
            Stmt::ForRange { binder, lo, hi, body: b } => {
                binders.push(*binder);
                expr(body, *lo, binders, names, assigned);
                expr(body, *hi, binders, names, assigned);
                contents(body, b, binders, names, assigned);
            }
            Stmt::ForEach { index, element, iterable, body: b } => {
                binders.extend(index.iter().copied());
                binders.push(*element);
                expr(body, *iterable, binders, names, assigned);
                contents(body, b, binders, names, assigned);
            }
            Stmt::Each { binder, count, body: b } => {
                binders.push(*binder);
                expr(body, *count, binders, names, assigned);
                contents(body, b, binders, names, assigned);
            }
            Stmt::Match { subject, arms } => {
                expr(body, *subject, binders, names, assigned);
                for arm in arms.iter() {
                    binders.extend(arm.binder.iter().copied());
                    contents(body, &arm.body, binders, names, assigned);
                }
            }
            Stmt::Block(b) | Stmt::Unsafe(b) => contents(body, b, binders, names, assigned),
            Stmt::Parallel { binder, count, body: b } => {
                binders.push(*binder);
                expr(body, *count, binders, names, assigned);
                contents(body, b, binders, names, assigned);
            }
            Stmt::Collect(c) => {
                binders.push(c.binder);
                binders.extend(c.name);
                for e in c.target.iter().chain([&c.count]).chain(c.pred.iter()).chain([&c.value]) {
                    expr(body, *e, binders, names, assigned);
                }
                if let Some(target) = c.target {
                    let mut root = body.unparen(target);
                    while let Expr::Index { base, .. } = body.expr(root) {
                        root = body.unparen(*base);
                    }
                    if let Expr::Name(name) = body.expr(root) {
                        assigned.push(name.clone());
                    }
                }
            }
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Missing | Stmt::Unsupported(_) => {}
        }
    }
}

pub(crate) fn expr(
    body: &Body,
    e: ExprId,
    binders: &mut Vec<BinderId>,
    names: &mut Vec<ExprId>,
    assigned: &mut Vec<Arc<str>>,
) {
    match body.expr(e) {
        Expr::Name(_) => names.push(e),
        Expr::Paren(inner) | Expr::Try(inner) | Expr::Unary { operand: inner, .. } => {
            expr(body, *inner, binders, names, assigned)
        }
        Expr::Call { callee, args } => {
            expr(body, *callee, binders, names, assigned);
            for &arg in args.iter() {
                expr(body, arg, binders, names, assigned);
            }
        }
        Expr::Field { base, .. } => expr(body, *base, binders, names, assigned),
        Expr::Index { base, indices } => {
            expr(body, *base, binders, names, assigned);
            for &i in indices.iter() {
                expr(body, i, binders, names, assigned);
            }
        }
        Expr::Part { base, lo, hi } => {
            for &x in [base, lo, hi] {
                expr(body, x, binders, names, assigned);
            }
        }
        Expr::Binary { lhs, rhs, .. } => {
            expr(body, *lhs, binders, names, assigned);
            expr(body, *rhs, binders, names, assigned);
        }
        Expr::Closure(closure) => {
            binders.extend(closure.params.iter().map(|(b, _)| *b));
            contents(body, &closure.body, binders, names, assigned);
        }
        Expr::Spawn { work, after } => {
            names.extend(after.iter().copied());
            match work {
                crate::body::SpawnWork::Call(call) => expr(body, *call, binders, names, assigned),
                crate::body::SpawnWork::Region(region) => {
                    contents(body, &Arc::from(vec![*region]), binders, names, assigned)
                }
            }
        }
        Expr::Missing | Expr::Literal(_) | Expr::TypeArg(_) | Expr::Unsupported(_) => {}
    }
}

impl Cx<'_> {
    /// `f(args)` with `f` a `fn` value or a borrowed callable: each argument typed against the
    /// function type's parameter; the call adds `indirect_call` and a `callable` guard (the zero
    /// value cannot be called), and its row absorbs what every address-taken function does
    /// (`crate::effects`).
    pub(crate) fn indirect_call(&mut self, e: ExprId, fun: &crate::types::FnTy, args: &Arc<[ExprId]>) -> R<Ty> {
        if args.len() != fun.params.len() {
            return Err(Diag::new(
                "E-ARITY",
                format!(
                    "This {} takes {} arguments; {} given.",
                    Ty::Fn(Arc::new(fun.clone())),
                    fun.params.len(),
                    args.len()
                ),
                Anchor::Expr(e),
            ));
        }
        let mut places: Vec<(super::alias::Place, bool)> = Vec::new();
        for (param, &arg) in fun.params.iter().zip(args.iter()) {
            // What each argument is passed as: the ownership walk lends a borrowed one instead
            // of moving it, as for a direct call.
            self.arguments.push((arg, param.clone()));
            match param {
                // The same rules as a direct call's borrow (a named writable place for `rw`, its
                // extent pair kept, no overlap with another argument): through a function value
                // they were skipped, and `f(n)` wrote an immutable extent (found by hold-out
                // round 10).
                Ty::Borrow(mode, inner) => {
                    self.borrow_argument(arg, *mode, inner)?;
                    places.push((self.place_of(arg, false), *mode == crate::types::Mode::Rw));
                }
                ty => {
                    self.check(arg, Some(ty))?;
                }
            }
        }
        self.alias_check(e, &places)?;
        self.effect("indirect_call");
        self.site(GuardKind::Callable);
        self.target(e, CallTarget::Indirect);
        Ok(fun.ret.clone())
    }
}
