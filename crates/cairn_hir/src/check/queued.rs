//! Queued device work (language §37): `let t = spawn transfer(dst, src) [after …];` and
//! `let t = spawn parallel i in n [after a, b] { … };` enqueue device work and return a ticket,
//! `wait(t)` ends it.
//!
//! A ticket (`Ticket[void]@device`) is linear — the ownership walk (`moves.rs`) refuses one not
//! waited on every path (`E-LINEAR-LEAK`, `E-LINEAR-BRANCH`) — and pinned: its only uses are
//! `wait(t)` and `after t` (`E-PINNED`). Only device work is queued: a host region or a
//! host-to-host transfer is `E-SPAWN`, and so is a spawn not bound by `let`, one in a lane or a
//! closure, or `after` naming anything but a live ticket; a task (`spawn f(args)`) is tier 2
//! and not built yet.
//!
//! **Leases.** Until `wait(t)`, the work holds every place it touches: nobody may write what it
//! reads, or touch what it writes (`E-LEASED`, "x is lent to t until wait(t)"); `len(x)` stays
//! readable. Work queued `after t` (and after what `t` was queued after) may touch what `t`
//! holds. [`leases`] checks this once the body is typed, walking the statements in order: a
//! branch's tickets are still live after it unless every path waited on them.

use std::sync::Arc;

use crate::body::{Block, Expr, ExprId, Stmt, StmtId};
use crate::diag::{Anchor, Diag};
use crate::types::Ty;

use super::cx::{Cx, Queued, R};
use super::result::CallTarget;
use crate::body::SpawnWork;
use crate::builtins::Builtin;
use crate::scopes::LocalRef;

impl Cx<'_> {
    /// `spawn …` at `e`: queued device work, or a refusal.
    pub(crate) fn spawn(&mut self, e: ExprId, work: SpawnWork, after: &Arc<[ExprId]>) -> R<Ty> {
        if self.lane.is_some() || !self.closure_rets.is_empty() {
            return self.spawn_placement(e);
        }
        if self.spawn_binding != Some(e) {
            return Err(Diag::new(
                "E-SPAWN",
                "Queued work returns a ticket that must be named: write `let t = spawn …;` in the function body, and `wait(t)` later.",
                Anchor::Expr(e),
            ));
        }
        self.spawn_binding = None;
        // The tickets it is queued after.
        let mut behind: Vec<LocalRef> = Vec::new();
        for &ticket in after.iter() {
            let local = self.scopes.resolve(ticket);
            let is_ticket = local.and_then(|l| self.locals.get(&l)).is_some_and(|l| l.ty == Ty::Ticket);
            let Some(local) = local.filter(|_| is_ticket) else {
                let name = match self.body.expr(ticket) {
                    Expr::Name(name) => name.clone(),
                    _ => Arc::from("this"),
                };
                return Err(Diag::new(
                    "E-SPAWN",
                    format!(
                        "`after` orders queued work behind live tickets of queued device work, and {name} is not one: name a ticket made by `let t = spawn …;`."
                    ),
                    Anchor::Expr(ticket),
                ));
            };
            if let Some(slot) = self.types.get_mut(ticket.0 as usize) {
                *slot = Ty::Ticket;
            }
            behind.push(local);
        }
        let leases = match work {
            SpawnWork::Call(call) => self.queued_call(e, call)?,
            SpawnWork::Region(region) => self.queued_region(e, region)?,
        };
        self.effect("spawn");
        self.queued.push(Queued { spawn: e, leases, after: behind });
        Ok(Ty::Ticket)
    }

    /// `spawn transfer(dst, src)`: the transfer's rules, then what it holds (`dst` written,
    /// `src` read). A host-to-host transfer is host work (`E-SPAWN`); a task is not built yet.
    fn queued_call(&mut self, e: ExprId, call: ExprId) -> R<Vec<(LocalRef, bool)>> {
        let Expr::Call { args, .. } = self.body.expr(self.body.unparen(call)).clone() else {
            return Err(Diag::new(
                "E-SPAWN",
                "`spawn` starts a call (`spawn transfer(dst, src)`) or a region (`spawn parallel i in n { … }`).",
                Anchor::Expr(e),
            ));
        };
        self.check(call, None)?;
        match self.call_target_of(call) {
            Some(CallTarget::Builtin(Builtin::Transfer)) => {}
            Some(CallTarget::Function(..)) => {
                return Err(Diag::new(
                    "E-UNSUPPORTED",
                    "A task (`spawn f(args)` of a declared function, language §32) is tier 2, which this compiler does not build yet; only device work (`spawn transfer`, `spawn parallel` over @device views) is queued.",
                    Anchor::Expr(e),
                ));
            }
            _ => {
                return Err(Diag::new(
                    "E-SPAWN",
                    "Only device work is queued: `spawn transfer(dst, src)` or `spawn parallel i in n { … }` over @device views.",
                    Anchor::Expr(e),
                ));
            }
        }
        let host = |ty: Option<&Ty>| matches!(ty, Some(Ty::View(v)) if v.place != crate::types::Place::Device);
        if args.len() == 2 && host(self.types.get(args[0].0 as usize)) && host(self.types.get(args[1].0 as usize)) {
            return Err(Diag::new(
                "E-SPAWN",
                "Both sides of this transfer are host memory, and only device work is queued: write `transfer(dst, src);` to copy on the host now.",
                Anchor::Expr(e),
            ));
        }
        let mut leases = Vec::new();
        for (i, &arg) in args.iter().enumerate() {
            if let Some(root) = self.root_local(arg) {
                leases.push((root, i == 0));
            }
        }
        Ok(leases)
    }

    /// `spawn parallel i in n { … }`: the region's rules; its lanes must be device lanes. What
    /// it holds: the arrays its lanes write (written) and everything else they name (read).
    fn queued_region(&mut self, e: ExprId, region: StmtId) -> R<Vec<(LocalRef, bool)>> {
        let Stmt::Parallel { binder, count, body } = self.body.stmt(region).clone() else {
            return Err(Diag::new("E-SPAWN", "`spawn parallel` queues a region.", Anchor::Expr(e)));
        };
        self.parallel(region, binder, count, &body)?;
        let Some(checked) = self.regions.iter().rev().find(|r| r.stmt == region).cloned() else {
            return Ok(Vec::new());
        };
        if !checked.device {
            return Err(Diag::new(
                "E-SPAWN",
                "Only device work is queued, and this region's lanes run on host threads (they index no @device memory): drop `spawn … ;` and write the region as a statement.",
                Anchor::Expr(e),
            ));
        }
        let mut leases: Vec<(LocalRef, bool)> = Vec::new();
        for &local in checked.captures.iter() {
            let written = checked.arrays.iter().any(|a| a.local == local && a.written);
            leases.push((local, written));
        }
        if let Some(root) = self.root_local(count) {
            leases.push((root, false));
        }
        Ok(leases)
    }

    /// `wait(t)`: consumes the ticket of queued work (`join`).
    pub(crate) fn wait(&mut self, e: ExprId, args: &[ExprId]) -> R<Ty> {
        let [ticket] = args else {
            return Err(Diag::new("E-ARITY", "`wait` takes one ticket: `wait(t)`.", Anchor::Expr(e)));
        };
        let local = self.scopes.resolve(self.body.unparen(*ticket)).and_then(|l| self.locals.get(&l));
        if local.is_none_or(|l| l.ty != Ty::Ticket) {
            return Err(Diag::new(
                "E-TYPE-MISMATCH",
                "`wait` takes the ticket of queued device work, named as `let t = spawn …;` made it (tasks and groups are tier 2, not built yet).",
                Anchor::Expr(*ticket),
            ));
        }
        self.pinned_use = Some(self.body.unparen(*ticket));
        self.check(*ticket, None)?;
        self.effect("join");
        Ok(Ty::Void)
    }

    /// `E-PINNED`: a ticket named anywhere but `wait(t)` and `after t`.
    pub(crate) fn pinned(&mut self, e: ExprId, name: &str) -> R<()> {
        if self.pinned_use == Some(e) {
            self.pinned_use = None;
            return Ok(());
        }
        Err(Diag::new(
            "E-PINNED",
            format!(
                "{name} is the ticket of queued work: it stays where it was made, and its only uses are `wait({name})` and `after {name}` — never stored, passed, returned or copied."
            ),
            Anchor::Expr(e),
        ))
    }

    /// The local a place is rooted in (`x` of `x[i]`, `x.f`, `x[a..b]`).
    fn root_local(&self, e: ExprId) -> Option<LocalRef> {
        let mut e = self.body.unparen(e);
        loop {
            match self.body.expr(e) {
                Expr::Name(_) => return self.scopes.resolve(e),
                Expr::Field { base, .. } | Expr::Index { base, .. } | Expr::Part { base, .. } => {
                    e = self.body.unparen(*base)
                }
                _ => return None,
            }
        }
    }
}

/// A ticket live at a point of the walk.
#[derive(Debug, Clone)]
struct Live {
    ticket: LocalRef,
    leases: Vec<(LocalRef, bool)>,
}

/// `E-LEASED` for the first access that touches what live queued work holds.
pub(crate) fn leases(cx: &Cx<'_>) -> R<()> {
    if cx.queued.is_empty() {
        return Ok(());
    }
    let mut walk = LeaseWalk { cx, live: Vec::new(), behind: std::collections::HashMap::new() };
    let root = cx.body.root.clone();
    walk.block(&root)
}

struct LeaseWalk<'a, 'db> {
    cx: &'a Cx<'db>,
    live: Vec<Live>,
    /// What each ticket was queued after, transitively.
    behind: std::collections::HashMap<LocalRef, Vec<LocalRef>>,
}

impl LeaseWalk<'_, '_> {
    fn block(&mut self, block: &Block) -> R<()> {
        for &stmt in block.iter() {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    /// Walks `block` from the live tickets now, and returns the tickets live at its end.
    fn branch(&mut self, block: &Block) -> R<Vec<Live>> {
        let before = self.live.clone();
        self.block(block)?;
        Ok(std::mem::replace(&mut self.live, before))
    }

    /// The live tickets after branches: those any path still holds.
    fn join(&mut self, paths: Vec<Vec<Live>>) {
        let mut out: Vec<Live> = Vec::new();
        for path in paths {
            for live in path {
                if !out.iter().any(|l| l.ticket == live.ticket) {
                    out.push(live);
                }
            }
        }
        self.live = out;
    }

    fn stmt(&mut self, id: StmtId) -> R<()> {
        let body = self.cx.body.clone();
        match body.stmt(id) {
            Stmt::Let { binder, init, .. } if matches!(body.expr(body.unparen(*init)), Expr::Spawn { .. }) => {
                self.spawned(LocalRef::Binder(*binder), body.unparen(*init))
            }
            Stmt::Expr(e) if self.waited(*e).is_some() => {
                if let Some(ticket) = self.waited(*e) {
                    self.live.retain(|l| l.ticket != ticket);
                }
                Ok(())
            }
            Stmt::If { cond, then, els } => {
                self.touch_expr(*cond, false)?;
                let mut paths = vec![self.branch(then)?];
                match els {
                    Some(crate::body::Else::Block(b)) => paths.push(self.branch(b)?),
                    Some(crate::body::Else::If(nested)) => {
                        let before = self.live.clone();
                        self.stmt(*nested)?;
                        paths.push(std::mem::replace(&mut self.live, before));
                    }
                    None => paths.push(self.live.clone()),
                }
                self.join(paths);
                Ok(())
            }
            Stmt::While { cond, body: b } => {
                self.touch_expr(*cond, false)?;
                let after = self.branch(b)?;
                let now = self.live.clone();
                self.join(vec![now, after]);
                Ok(())
            }
            Stmt::ForRange { lo, hi, body: b, .. } => {
                self.touch_expr(*lo, false)?;
                self.touch_expr(*hi, false)?;
                let after = self.branch(b)?;
                let now = self.live.clone();
                self.join(vec![now, after]);
                Ok(())
            }
            Stmt::ForEach { iterable, body: b, .. } => {
                self.touch_expr(*iterable, false)?;
                let after = self.branch(b)?;
                let now = self.live.clone();
                self.join(vec![now, after]);
                Ok(())
            }
            Stmt::Match { subject, arms } => {
                self.touch_expr(*subject, false)?;
                let mut paths = Vec::new();
                for arm in arms.iter() {
                    paths.push(self.branch(&arm.body)?);
                }
                self.join(paths);
                Ok(())
            }
            Stmt::Block(b) | Stmt::Unsafe(b) => self.block(b),
            _ => {
                let mut touched = Vec::new();
                stmt_touches(self.cx, id, &mut touched);
                self.judge(&touched, &[])
            }
        }
    }

    /// `let t = spawn …;`: the work may touch what live tickets hold only when queued after
    /// them; then `t` holds what it touches.
    fn spawned(&mut self, ticket: LocalRef, spawn: ExprId) -> R<()> {
        let Some(queued) = self.cx.queued.iter().find(|q| q.spawn == spawn) else { return Ok(()) };
        let mut behind: Vec<LocalRef> = queued.after.clone();
        for t in &queued.after {
            behind.extend(self.behind.get(t).cloned().unwrap_or_default());
        }
        let touched: Vec<(LocalRef, ExprId, bool)> =
            queued.leases.iter().map(|&(local, write)| (local, spawn, write)).collect();
        self.judge(&touched, &behind)?;
        self.behind.insert(ticket, behind);
        self.live.push(Live { ticket, leases: queued.leases.clone() });
        Ok(())
    }

    /// The ticket a `wait(t);` statement consumes.
    fn waited(&self, e: ExprId) -> Option<LocalRef> {
        let e = self.cx.body.unparen(e);
        let Expr::Call { args, .. } = self.cx.body.expr(e) else { return None };
        match self.cx.call_target_of(e) {
            Some(CallTarget::Builtin(Builtin::Wait)) => args.first().and_then(|a| self.cx.scopes.resolve(*a)),
            _ => None,
        }
    }

    fn touch_expr(&self, e: ExprId, write: bool) -> R<()> {
        let mut touched = Vec::new();
        expr_touches(self.cx, e, write, &mut touched);
        self.judge(&touched, &[])
    }

    /// `E-LEASED` for the first of `touched` that conflicts with a live ticket not in `allowed`.
    fn judge(&self, touched: &[(LocalRef, ExprId, bool)], allowed: &[LocalRef]) -> R<()> {
        for &(local, at, write) in touched {
            for live in self.live.iter().filter(|l| !allowed.contains(&l.ticket)) {
                let Some(&(_, held_write)) = live.leases.iter().find(|(l, _)| *l == local) else { continue };
                if !(write || held_write) {
                    continue;
                }
                let name = name_of(self.cx, local);
                let ticket = name_of(self.cx, live.ticket);
                let how = if held_write { "the queued work writes it" } else { "the queued work reads it" };
                return Err(Diag::new(
                    "E-LEASED",
                    format!(
                        "{name} is lent to {ticket} until wait({ticket}): {how}, so nothing may {} it before then. Move this after `wait({ticket});`, or queue it `after {ticket}`.",
                        if held_write { "touch" } else { "write" }
                    ),
                    Anchor::Expr(at),
                ));
            }
        }
        Ok(())
    }
}

fn name_of(cx: &Cx<'_>, local: LocalRef) -> Arc<str> {
    match local {
        LocalRef::Param(i) => cx.body.params.get(i as usize).cloned().unwrap_or_default(),
        LocalRef::Binder(b) => cx.body.binder(b).clone(),
    }
}

/// What statement `id` touches: each local it names, where, and whether it writes it.
fn stmt_touches(cx: &Cx<'_>, id: StmtId, out: &mut Vec<(LocalRef, ExprId, bool)>) {
    let body = cx.body.clone();
    let block = |b: &Block, out: &mut Vec<(LocalRef, ExprId, bool)>| {
        for &s in b.iter() {
            stmt_touches(cx, s, out);
        }
    };
    match body.stmt(id) {
        Stmt::Let { init, .. } => expr_touches(cx, *init, false, out),
        Stmt::Assign { target, value, .. } => {
            expr_touches(cx, *target, true, out);
            expr_touches(cx, *value, false, out);
        }
        Stmt::Expr(e) | Stmt::Return(Some(e)) => expr_touches(cx, *e, false, out),
        Stmt::If { cond, then, els } => {
            expr_touches(cx, *cond, false, out);
            block(then, out);
            match els {
                Some(crate::body::Else::Block(b)) => block(b, out),
                Some(crate::body::Else::If(s)) => stmt_touches(cx, *s, out),
                None => {}
            }
        }
        Stmt::While { cond, body: b } => {
            expr_touches(cx, *cond, false, out);
            block(b, out);
        }
        Stmt::ForRange { lo, hi, body: b, .. } => {
            expr_touches(cx, *lo, false, out);
            expr_touches(cx, *hi, false, out);
            block(b, out);
        }
        Stmt::ForEach { iterable, body: b, .. } => {
            expr_touches(cx, *iterable, false, out);
            block(b, out);
        }
        Stmt::Each { count, body: b, .. } | Stmt::Parallel { count, body: b, .. } => {
            expr_touches(cx, *count, false, out);
            block(b, out);
        }
        Stmt::Match { subject, arms } => {
            expr_touches(cx, *subject, false, out);
            for arm in arms.iter() {
                block(&arm.body, out);
            }
        }
        Stmt::Block(b) | Stmt::Unsafe(b) => block(b, out),
        Stmt::Stack { capacity, .. } | Stmt::Buffer { capacity, .. } => expr_touches(cx, *capacity, false, out),
        Stmt::Unpack { value, .. } => expr_touches(cx, *value, false, out),
        Stmt::Defer(inner) => stmt_touches(cx, *inner, out),
        Stmt::Collect(c) => {
            if let Some(target) = c.target {
                expr_touches(cx, target, true, out);
            }
            for e in [Some(c.count), c.pred, Some(c.value)].into_iter().flatten() {
                expr_touches(cx, e, false, out);
            }
        }
        Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Missing | Stmt::Unsupported(_) => {}
    }
}

/// What expression `e` touches, `write` when it is the place of an assignment or an `rw` lend.
fn expr_touches(cx: &Cx<'_>, e: ExprId, write: bool, out: &mut Vec<(LocalRef, ExprId, bool)>) {
    let body = cx.body.clone();
    match body.expr(e) {
        Expr::Name(_) => {
            if let Some(local) = cx.scopes.resolve(e)
                && cx.locals.get(&local).is_none_or(|l| l.ty != Ty::Ticket)
            {
                out.push((local, e, write));
            }
        }
        Expr::Index { base, indices } => {
            expr_touches(cx, *base, write, out);
            for &i in indices.iter() {
                expr_touches(cx, i, false, out);
            }
        }
        Expr::Field { base, .. } => expr_touches(cx, *base, write, out),
        Expr::Part { base, lo, hi } => {
            expr_touches(cx, *base, write, out);
            expr_touches(cx, *lo, false, out);
            expr_touches(cx, *hi, false, out);
        }
        Expr::Paren(inner) => expr_touches(cx, *inner, write, out),
        Expr::Try(inner) | Expr::Unary { operand: inner, .. } => expr_touches(cx, *inner, false, out),
        Expr::Binary { lhs, rhs, .. } => {
            expr_touches(cx, *lhs, false, out);
            expr_touches(cx, *rhs, false, out);
        }
        Expr::Call { callee, args } => {
            let mut all: Vec<ExprId> = Vec::new();
            if let Expr::Field { base, .. } = body.expr(body.unparen(*callee)) {
                all.push(*base);
            }
            all.extend(args.iter().copied());
            match cx.call_target_of(e) {
                // `len` stays readable while the elements are lent; `wait` names its ticket.
                Some(CallTarget::Builtin(Builtin::Len | Builtin::Wait)) => {}
                Some(CallTarget::Builtin(Builtin::Transfer)) => {
                    for (i, arg) in all.into_iter().enumerate() {
                        expr_touches(cx, arg, i == 0, out);
                    }
                }
                Some(CallTarget::Builtin(Builtin::Take | Builtin::Swap)) => {
                    for arg in all {
                        expr_touches(cx, arg, true, out);
                    }
                }
                _ => {
                    for arg in all {
                        let lends_rw =
                            matches!(
                                cx.argument_type(arg),
                                Some(Ty::View(v)) if v.mode == crate::types::Mode::Rw
                            ) || matches!(cx.argument_type(arg), Some(Ty::Borrow(crate::types::Mode::Rw, _)));
                        expr_touches(cx, arg, lends_rw, out);
                    }
                }
            }
        }
        Expr::Closure(closure) => {
            let b = &closure.body;
            for &s in b.iter() {
                stmt_touches(cx, s, out);
            }
        }
        Expr::Spawn { .. } | Expr::Missing | Expr::Literal(_) | Expr::TypeArg(_) | Expr::Unsupported(_) => {}
    }
}
