//! The operand-order audit (language §16): after the rows exist, a body's statements are walked
//! once more — a nested call that writes through a borrow (or allocates) must stand alone, and an
//! observable call (I/O, foreign calls, …) may not sit beside another call or a guarded operand;
//! with it, what a parallel lane may call, judged against the callees' rows
//! (`lanes::lane_refusal`). Both read rows (`effects.rs`) and the checks; nothing below reads
//! them.

use std::sync::Arc;

use crate::body::{BinaryOp, Body, Else, Expr, ExprId, Stmt, StmtId, UnaryOp, fn_body};
use crate::check::{CallTarget, FnCheck, check_fn};
use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::effects::{Row, effect_row};
use crate::input::Item;

/// The operand-order audit of one function, against its callees' rows.
#[salsa::tracked(returns(ref))]
pub fn fn_order(db: &dyn Db, item: Item) -> Option<Diag> {
    order_refusal(db, &|callee| effect_row(db, callee).clone(), item)
}

/// Effects that make a call observable from outside (rule 3).
fn observable(effect: &str) -> bool {
    matches!(
        effect,
        "io" | "mmio"
            | "asm"
            | "atomic"
            | "lock"
            | "spawn"
            | "join"
            | "indirect_call"
            | "gpu_alloc"
            | "gpu_free"
            | "fence"
            | "barrier"
    ) || ["ffi:", "transfer:", "par:", "asm:"].iter().any(|p| effect.starts_with(p))
}

/// The first `E-EFFECT-ORDER` refusal of `item`'s body, if any, judged against the callees' rows
/// that `row_of` gives (unknown rows count as empty).
pub fn order_refusal(db: &dyn Db, row_of: &dyn Fn(Item) -> Option<Row>, item: Item) -> Option<Diag> {
    // A template is audited at each of its instances (what calls what differs between them).
    if !crate::generics::fn_generics(db, item).is_empty() {
        return instances_order_refusal(db, row_of, item, &crate::requested::instances_of(db, item));
    }
    order_audit(db, row_of, item, check_fn(db, item))
}

/// The operand-order audit of a template at each of `instances`.
pub fn instances_order_refusal(
    db: &dyn Db,
    row_of: &dyn Fn(Item) -> Option<Row>,
    item: Item,
    instances: &[crate::instance::Instance<'_>],
) -> Option<Diag> {
    instances.iter().find_map(|&instance| order_audit(db, row_of, item, crate::check::instance_check(db, instance)))
}

fn order_audit<'db>(
    db: &'db dyn Db,
    row_of: &'db dyn Fn(Item) -> Option<Row>,
    item: Item,
    check: &'db FnCheck,
) -> Option<Diag> {
    // Only calls of declared functions that write, allocate or can be observed, `take` and
    // `swap`, and a `try` in a body that handles owners can break the rules; most bodies make
    // none of them, and need no walk.
    let body = fn_body(db, item);
    let relevant = check.local_row.contains("indirect_call")
        || check.calls.iter().any(|edge| {
            row_of(edge.callee)
                .is_some_and(|row| row.iter().any(|e| e.starts_with("write:") || &**e == "alloc" || observable(e)))
        })
        || check.call_targets.iter().any(|(_, t)| matches!(t, CallTarget::Builtin(b) if b.on_places()))
        || (body.exprs.iter().any(|e| matches!(e, Expr::Try(_))) && {
            // Each distinct type judged once.
            check.expr_types.distinct().iter().any(|t| crate::generics::kind_of(db, t) != crate::types::Kind::Copy)
        });
    if let Some(diag) = crate::lanes::lane_refusal(db, row_of, item, check) {
        return Some(diag);
    }
    if !relevant {
        return None;
    }
    let mut audit = Audit { db, row_of, body, check, found: None };
    audit.block(&audit.body.root.clone());
    audit.found
}

struct Audit<'db> {
    db: &'db dyn Db,
    row_of: &'db dyn Fn(Item) -> Option<Row>,
    body: &'db Arc<Body>,
    check: &'db FnCheck,
    found: Option<Diag>,
}

impl Audit<'_> {
    fn block(&mut self, block: &[StmtId]) {
        for &stmt in block {
            if self.found.is_some() {
                return;
            }
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, id: StmtId) {
        let body = self.body.clone();
        match body.stmt(id) {
            Stmt::Let { init, .. } => self.root(*init, true),
            // `p op= e` means `p = p op e` (language §8): one group holding the place and the
            // value, with no root call (the value is an operand of the implied operation).
            Stmt::Assign { target, value, op: Some(_) } if self.found.is_none() => {
                self.group(&[*target, *value], false);
            }
            Stmt::Assign { op: Some(_), .. } => {}
            Stmt::Assign { target, value, op: None } => {
                self.root(*target, false);
                self.root(*value, true);
            }
            Stmt::Expr(e) => self.root(*e, true),
            Stmt::Return(Some(e)) => self.root(*e, true),
            Stmt::If { cond, then, els } => {
                self.root(*cond, true);
                self.block(then);
                match els {
                    Some(Else::Block(block)) => self.block(block),
                    Some(Else::If(nested)) => self.stmt(*nested),
                    None => {}
                }
            }
            Stmt::While { cond, body: block } => {
                self.root(*cond, true);
                self.block(block);
            }
            Stmt::ForRange { lo, hi, body: block, .. } => {
                self.root(*lo, true);
                self.root(*hi, true);
                self.block(block);
            }
            Stmt::ForEach { iterable, body: block, .. } => {
                self.root(*iterable, true);
                self.block(block);
            }
            Stmt::Each { count, body: block, .. } | Stmt::Parallel { count, body: block, .. } => {
                self.root(*count, true);
                self.block(block);
            }
            Stmt::Collect(c) => {
                for e in c.target.iter().chain([&c.count]).chain(c.pred.iter()).chain([&c.value]) {
                    self.root(*e, true);
                }
            }
            Stmt::Match { subject, arms } => {
                self.root(*subject, true);
                for arm in arms.iter() {
                    self.block(&arm.body);
                }
            }
            Stmt::Block(block) | Stmt::Unsafe(block) => self.block(block),
            Stmt::Stack { capacity, .. } | Stmt::Buffer { capacity, .. } => self.root(*capacity, true),
            Stmt::Unpack { value, .. } => self.root(*value, true),
            // The deferred call is judged where it is written, as the statement it is.
            Stmt::Defer(inner) => self.stmt(*inner),
            _ => {}
        }
    }

    /// One statement expression: split on `&&`/`||`, then each group judged alone.
    fn root(&mut self, e: ExprId, at_root: bool) {
        if self.found.is_some() {
            return;
        }
        // A closure's statements are audited as statements of the body that wrote it.
        let mut inside = Vec::new();
        self.descendants(e, &mut inside);
        for node in inside {
            if let Expr::Closure(closure) = self.body.expr(node) {
                let body = closure.body.clone();
                self.block(&body);
                if self.found.is_some() {
                    return;
                }
            }
        }
        let mut groups = Vec::new();
        self.split(e, &mut groups);
        let split = groups.len() > 1;
        for group in groups {
            self.group(&[group], at_root && !split);
            if self.found.is_some() {
                return;
            }
        }
    }

    fn split(&self, e: ExprId, out: &mut Vec<ExprId>) {
        let e = self.body.unparen(e);
        match self.body.expr(e) {
            Expr::Binary { op: BinaryOp::And | BinaryOp::Or, lhs, rhs } => {
                self.split(*lhs, out);
                self.split(*rhs, out);
            }
            _ => out.push(e),
        }
    }

    /// Judges the expressions `tops` as one group (what runs between two sequence points).
    fn group(&mut self, tops: &[ExprId], at_root: bool) {
        // The root call, through transparent wrappers (try, unary operators, one-argument
        // numeric conversions).
        let mut root_call = None;
        if at_root && let [top] = tops {
            let mut node = self.body.unparen(*top);
            loop {
                match self.body.expr(node) {
                    Expr::Try(inner) | Expr::Unary { operand: inner, .. } => node = self.body.unparen(*inner),
                    Expr::Call { args, .. }
                        if args.len() == 1
                            && matches!(self.check.call_target(node), Some(CallTarget::Builtin(b)) if b.conversion().is_some()) =>
                    {
                        node = self.body.unparen(args[0]);
                    }
                    Expr::Call { .. } => {
                        root_call = Some(node);
                        break;
                    }
                    _ => break,
                }
            }
        }
        let mut calls: Vec<ExprId> = Vec::new();
        let mut guarded: Vec<ExprId> = Vec::new();
        for &top in tops {
            self.collect(top, &mut calls, &mut guarded);
        }
        for &call in calls.iter().filter(|c| Some(**c) != root_call) {
            let row = match self.check.call_target(call) {
                Some(CallTarget::Function(item, _)) => (self.row_of)(*item).unwrap_or_default(),
                // A call through a function value is observable (`indirect_call`), and writes
                // what it lends `rw`.
                Some(CallTarget::Indirect) => self.indirect_footprint(call),
                // A call through `dyn` may run any implementation: `dispatch`, and the join of
                // theirs.
                Some(CallTarget::Dynamic { member, .. }) => {
                    let mut row = Row::from([Arc::from("dispatch")]);
                    for method in crate::traits::member_implementations(self.db, *member) {
                        row.extend((self.row_of)(method).unwrap_or_default());
                    }
                    row
                }
                // `take` and `swap` change the places they name: their own footprint.
                Some(CallTarget::Builtin(builtin)) if builtin.on_places() => self.places_written(call),
                _ => Row::new(),
            };
            // Rule 1: writing or allocating calls stand alone.
            let writes: Vec<&str> = row.iter().filter_map(|e| e.strip_prefix("write:")).collect();
            if !writes.is_empty() || row.contains("alloc") {
                let name = self.callee_name(call);
                let written = self.written_callee(call).unwrap_or_else(|| name.clone());
                let what = if writes.is_empty() {
                    "allocates".to_string()
                } else {
                    format!("writes through {}", writes.join(", "))
                };
                self.found = Some(Diag::new(
                    "E-EFFECT-ORDER",
                    format!(
                        "{name} {what}, so an operand beside it could run before or after it: bind the call to its own statement first (`let v = {written}(…);`) and use v here."
                    ),
                    Anchor::Expr(call),
                ));
                return;
            }
            // Rule 2 (its closure clause): a closure lent to a nested call may not write a place
            // that another operand of the expression names.
            if let Some(written) = self.closure_writes_beside(call, tops) {
                let name = self.callee_name(call);
                self.found = Some(Diag::new(
                    "E-EFFECT-ORDER",
                    format!(
                        "The closure passed to {name} writes {written}, which another operand of this expression reads, so the result would depend on which runs first: bind the call to its own statement first and use its value here."
                    ),
                    Anchor::Expr(call),
                ));
                return;
            }
            // Rule 3: observable calls stand alone. What lies inside each node is computed only
            // here, for the rare observable call, so the common group costs one walk.
            if row.iter().any(|e| observable(e)) {
                let mine = self.inside(call);
                let beside_call = calls.iter().any(|&other| {
                    other != call
                        && !mine.contains(&other)
                        && !matches!(self.check.call_target(other), Some(CallTarget::Constructor))
                        && !self.inside(other).contains(&call)
                });
                let beside_guard = guarded
                    .iter()
                    .any(|&node| node != call && !mine.contains(&node) && !self.inside(node).contains(&call));
                if beside_call || beside_guard {
                    self.found = Some(Diag::new(
                        "E-EFFECT-ORDER",
                        "This call can be observed from outside, and an operand beside it could run, or abort, before or after it: bind the call to its own statement first.",
                        Anchor::Expr(call),
                    ));
                    return;
                }
            }
        }
        self.try_beside_owner(tops, root_call);
    }

    /// Rule 2's closure clause: a binding that a closure written as an argument of `call`
    /// assigns and that an operand of `tops` outside `call` names.
    fn closure_writes_beside(&self, call: ExprId, tops: &[ExprId]) -> Option<Arc<str>> {
        let Expr::Call { args, .. } = self.body.expr(call) else { return None };
        // What each closure written as an argument writes of what it captures (assigned, or
        // lent to be written), as the checker recorded it.
        let mut assigned: Vec<Arc<str>> = Vec::new();
        for &arg in args.iter() {
            let arg = self.body.unparen(arg);
            if matches!(self.body.expr(arg), Expr::Closure(_)) {
                for &captured in self.check.closure_writes_of(arg) {
                    assigned.push(match captured {
                        crate::scopes::LocalRef::Param(i) => {
                            self.body.params.get(i as usize).cloned().unwrap_or_default()
                        }
                        crate::scopes::LocalRef::Binder(b) => self.body.binder(b).clone(),
                    });
                }
            }
        }
        if assigned.is_empty() {
            return None;
        }
        let mine = self.inside(call);
        let mut all = Vec::new();
        for &top in tops {
            self.descendants(top, &mut all);
        }
        all.into_iter().filter(|n| *n != call && !mine.contains(n)).find_map(|n| match self.body.expr(n) {
            Expr::Name(name) if assigned.contains(name) => Some(name.clone()),
            _ => None,
        })
    }

    /// A call through a function value: `indirect_call`, and `write:` the root of each argument
    /// lent `rw`.
    fn indirect_footprint(&self, call: ExprId) -> Row {
        let mut row = Row::from([Arc::from("indirect_call")]);
        let Expr::Call { args, .. } = self.body.expr(call) else { return row };
        let lent_rw = args.iter().filter(|&&arg| {
            matches!(self.check.argument_type(arg), Some(crate::types::Ty::Borrow(crate::types::Mode::Rw, _)))
        });
        row.extend(lent_rw.filter_map(|&arg| self.written_root(arg)));
        row
    }

    /// The footprint of a builtin that works on places: `write:` each place's root.
    fn places_written(&self, call: ExprId) -> Row {
        let Expr::Call { args, .. } = self.body.expr(call) else { return Row::new() };
        args.iter().filter_map(|&arg| self.written_root(arg)).collect()
    }

    /// `write:` the root binding of a place an argument names (`b`, `r.buf`, `rows[i]`).
    fn written_root(&self, arg: ExprId) -> Option<Arc<str>> {
        let mut node = self.body.unparen(arg);
        loop {
            match self.body.expr(node) {
                Expr::Field { base, .. } | Expr::Index { base, .. } => node = self.body.unparen(*base),
                Expr::Name(name) => return Some(Arc::from(format!("write:{name}"))),
                _ => return None,
            }
        }
    }

    /// Rule 4: a nested `try` may not sit beside an operand that already holds an owner (a call
    /// or `try` producing a value that is not `copy`, or a name moved as a value), which leaving
    /// there would lose.
    fn try_beside_owner(&mut self, tops: &[ExprId], root_call: Option<ExprId>) {
        let mut all = Vec::new();
        for &top in tops {
            self.descendants(top, &mut all);
        }
        // The root chain (transparent wrappers down to the root call) is not nested.
        let mut chain = Vec::new();
        if let Some(root) = root_call {
            for &top in tops {
                let mut node = self.body.unparen(top);
                while node != root {
                    chain.push(node);
                    match self.body.expr(node) {
                        Expr::Try(inner) | Expr::Unary { operand: inner, .. } | Expr::Paren(inner) => {
                            node = self.body.unparen(*inner)
                        }
                        Expr::Call { args, .. } if args.len() == 1 => node = self.body.unparen(args[0]),
                        _ => break,
                    }
                }
            }
        }
        // Names passed by value (to a constructor, or a by-value parameter) are moved.
        let mut moved_names = Vec::new();
        for &node in &all {
            let Expr::Call { args, .. } = self.body.expr(node) else { continue };
            let by_value = |arg: ExprId| match self.check.call_target(node) {
                Some(CallTarget::Constructor) => true,
                Some(CallTarget::Function(..)) => !matches!(
                    self.check.argument_type(arg),
                    Some(crate::types::Ty::View(_) | crate::types::Ty::Borrow(..)) | None
                ),
                _ => false,
            };
            for &arg in args.iter() {
                let arg = self.body.unparen(arg);
                if matches!(self.body.expr(arg), Expr::Name(_)) && by_value(arg) {
                    moved_names.push(arg);
                }
            }
        }
        for &node in &all {
            if !matches!(self.body.expr(node), Expr::Try(_)) || chain.contains(&node) {
                continue;
            }
            let mine = self.inside(node);
            let owner = all.iter().find(|&&other| {
                other != node
                    && !mine.contains(&other)
                    && !self.inside(other).contains(&node)
                    && (matches!(self.body.expr(other), Expr::Call { .. } | Expr::Try(_))
                        || moved_names.contains(&other))
                    && self
                        .check
                        .expr_types
                        .get(other.0 as usize)
                        .is_some_and(|ty| crate::generics::kind_of(self.db, ty) != crate::types::Kind::Copy)
            });
            if owner.is_some() {
                self.found = Some(Diag::new(
                    "E-EFFECT-ORDER",
                    "This try could leave the function while an operand beside it already holds an owner, which would be lost: bind that operand, or the try, to its own statement first.",
                    Anchor::Expr(node),
                ));
                return;
            }
        }
    }

    /// The expressions strictly inside `e`.
    fn inside(&self, e: ExprId) -> Vec<ExprId> {
        let mut out = Vec::new();
        self.descendants(e, &mut out);
        out.remove(0);
        out
    }

    /// The callee as the call writes it (`vec.new[Bush]`, `b.push`), when it is a path of names
    /// with type arguments at most: what the fix can repeat.
    fn written_callee(&self, call: ExprId) -> Option<String> {
        fn path(body: &crate::body::Body, e: ExprId) -> Option<String> {
            match body.expr(body.unparen(e)) {
                Expr::Name(name) => Some(name.to_string()),
                Expr::Field { base, name } => Some(format!("{}.{name}", path(body, *base)?)),
                Expr::Index { base, indices } => {
                    let args: Option<Vec<String>> = indices.iter().map(|&i| path(body, i)).collect();
                    Some(format!("{}[{}]", path(body, *base)?, args?.join(", ")))
                }
                _ => None,
            }
        }
        match self.body.expr(call) {
            Expr::Call { callee, .. } => path(self.body, *callee),
            _ => None,
        }
    }

    fn callee_name(&self, call: ExprId) -> String {
        match self.check.call_target(call) {
            Some(CallTarget::Function(item, _)) => crate::scope::Resolver::new(self.db).full_name(*item).to_string(),
            Some(CallTarget::Builtin(builtin)) => builtin.name().to_string(),
            Some(CallTarget::Indirect) => "the call through a function value".to_string(),
            _ => "this call".to_string(),
        }
    }

    /// Collects every call and every guarded operation (arithmetic, negation, index, part) under `e`.
    fn collect(&self, e: ExprId, calls: &mut Vec<ExprId>, guarded: &mut Vec<ExprId>) {
        let body = self.body;
        match body.expr(e) {
            Expr::Call { args, callee } => {
                calls.push(e);
                for &arg in args.iter() {
                    self.collect(arg, calls, guarded);
                }
                // Method syntax: the receiver sits in the callee's field base.
                if let Expr::Field { base, .. } = body.expr(body.unparen(*callee)) {
                    self.collect(*base, calls, guarded);
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                if op.is_arithmetic() {
                    guarded.push(e);
                }
                self.collect(*lhs, calls, guarded);
                self.collect(*rhs, calls, guarded);
            }
            Expr::Unary { op, operand } => {
                if *op == UnaryOp::Neg {
                    guarded.push(e);
                }
                self.collect(*operand, calls, guarded);
            }
            Expr::Index { base, indices } => {
                guarded.push(e);
                self.collect(*base, calls, guarded);
                for &i in indices.iter() {
                    self.collect(i, calls, guarded);
                }
            }
            Expr::Part { base, lo, hi } => {
                guarded.push(e);
                for x in [*base, *lo, *hi] {
                    self.collect(x, calls, guarded);
                }
            }
            Expr::Paren(inner) | Expr::Try(inner) => self.collect(*inner, calls, guarded),
            Expr::Field { base, .. } => self.collect(*base, calls, guarded),
            _ => {}
        }
    }

    fn descendants(&self, e: ExprId, out: &mut Vec<ExprId>) {
        out.push(e);
        match self.body.expr(e) {
            Expr::Call { callee, args } => {
                self.descendants(*callee, out);
                for &a in args.iter() {
                    self.descendants(a, out);
                }
            }
            Expr::Binary { lhs, rhs, .. } => {
                self.descendants(*lhs, out);
                self.descendants(*rhs, out);
            }
            Expr::Unary { operand, .. } | Expr::Paren(operand) | Expr::Try(operand) => self.descendants(*operand, out),
            Expr::Index { base, indices } => {
                self.descendants(*base, out);
                for &i in indices.iter() {
                    self.descendants(i, out);
                }
            }
            Expr::Part { base, lo, hi } => {
                for x in [*base, *lo, *hi] {
                    self.descendants(x, out);
                }
            }
            Expr::Field { base, .. } => self.descendants(*base, out),
            _ => {}
        }
    }
}
