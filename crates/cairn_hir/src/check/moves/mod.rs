//! The ownership walk of one typed body (language §22.2): which uses move an owner, which
//! names are dead after a move, and where an owner still held is released.
//!
//! It runs once the body check has typed every expression (it reads the check's types,
//! resolutions, call targets and argument pairings; it resolves nothing). A value whose kind is
//! `affine` or `linear` is an owner. Used *as a value* — bound, passed by value, returned, stored
//! in a field, payload or element, matched — it moves; used as a *place* — indexed, measured,
//! lent to a view or borrow parameter, printed, taken or swapped — it stays. The walk tracks, per
//! owner local, whether it is held, moved, or moved on some paths only (after a branch), and
//! refuses `E-MOVED`, `E-MOVE-BORROW`, `E-PARTIAL-MOVE` and `E-MOVE-IN-LOOP` at the use.
//!
//! Release: an owner still held (or held on some paths) where its block or arm ends, at a
//! `return`, `break` or `continue` that leaves its scope, when a value is assigned over it, a
//! by-value parameter nobody took, and a temporary owner nobody keeps: each adds `free` to the
//! row. MIR releases at exactly these points (it zeroes what a move leaves, so releasing a
//! moved-from place is a no-op); the walk is what decides the row.
//!
//! Linear values (language §22.4) are never released: where an affine owner would be, a linear
//! one still held is `E-LINEAR-LEAK`, and one held on some paths only `E-LINEAR-BRANCH`. A
//! `defer`'s call consumes what it moves when the walk meets it (moving such a local afterwards
//! is `E-MOVED`, "scheduled for cleanup"; lending it stays allowed, since it holds its value
//! until the call runs), and *leases* every other local it names until its block ends: moving a
//! leased local is `E-LEASED`.
//!
//! Rooms: this file holds the walk's state and its statements (scopes, branches, loops, releases);
//! `uses.rs` its expressions (what a use moves, and the refusals at a use); `leak.rs` what it says
//! of a linear value left unconsumed.

use std::collections::HashMap;

use std::sync::Arc;

use crate::body::{Arm, BinderId, Block, Else, Expr, ExprId, Stmt, StmtId};
use crate::diag::{Anchor, Diag};
use crate::types::Ty;

use super::cx::{Cx, R};
use super::result::{CallTarget, Resolution};
use crate::builtins::Builtin;
use crate::scopes::LocalRef;
use crate::types::Kind;

mod leak;
mod uses;

/// Whether an owner local holds its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Held,
    Moved,
    /// Consumed by a `defer` written before here (its call runs when the block ends).
    Deferred,
    /// Moved on some paths that reach here, held on others.
    Maybe,
}

impl Held {
    /// True when the local holds nothing here on any path (moved, or scheduled for cleanup).
    fn consumed(self) -> bool {
        matches!(self, Held::Moved | Held::Deferred)
    }
}

struct Walk<'a, 'db> {
    cx: &'a Cx<'db>,
    /// The owner locals in scope and what they hold.
    state: HashMap<LocalRef, Held>,
    /// Where each local last moved (or was consumed by a `defer`), for the refusal's second label.
    moved_at: HashMap<LocalRef, ExprId>,
    /// Where a `defer` names each local it leases.
    leased_at: HashMap<LocalRef, ExprId>,
    /// The loop-or-closure depth each owner local was declared at.
    depth_of: HashMap<LocalRef, u32>,
    /// The current loop-or-closure depth.
    depth: u32,
    /// The owner locals each open scope declared, innermost last.
    frames: Vec<Vec<LocalRef>>,
    /// Per open scope, the locals its `defer`s lease until it ends.
    leases: Vec<Vec<LocalRef>>,
    /// True while the walk is inside a `defer`'s call.
    deferring: bool,
    /// The scope whose `defer` is being walked: a closure inside its call names locals on the
    /// defer's behalf, so they are leased to that scope, not to the closure's own block.
    defer_scope: usize,
    /// The frame depth at which each enclosing loop's body starts.
    loops: Vec<usize>,
    /// True once a release was met (`free` enters the row).
    frees: bool,
    kinds: HashMap<Ty, Kind>,
}

/// Walks the body `cx` checked: the first ownership refusal, and whether the body releases an
/// owner (`free`).
pub(crate) fn walk(cx: &Cx<'_>) -> Result<bool, Diag> {
    let mut walk = Walk {
        cx,
        state: HashMap::new(),
        moved_at: HashMap::new(),
        leased_at: HashMap::new(),
        depth_of: HashMap::new(),
        depth: 0,
        frames: vec![Vec::new()],
        leases: vec![Vec::new()],
        deferring: false,
        defer_scope: 0,
        loops: Vec::new(),
        frees: false,
        kinds: HashMap::new(),
    };
    for (index, param) in cx.signature.params.iter().enumerate() {
        if !param.borrowed() && walk.owner(&param.ty) {
            walk.declare(LocalRef::Param(index as u32));
        }
    }
    let body = cx.body.clone();
    if !body.present {
        return Ok(false);
    }
    // Every refusal and every release concerns a value of an owner's kind: a body whose
    // parameters, expressions and binders hold none (most bodies) has nothing to walk. Each
    // distinct type is judged once.
    let mut seen: std::collections::HashSet<&Ty> = std::collections::HashSet::new();
    let types = cx.signature.params.iter().map(|p| &p.ty).chain(cx.types.iter()).chain(cx.binder_types.iter());
    let mut owners = false;
    for ty in types {
        if seen.insert(ty) && walk.owner(ty) {
            owners = true;
            break;
        }
    }
    // A `stack` array of owners is released with its frame, though no value of its own is one.
    owners =
        owners || body.stmts.iter().any(|s| matches!(s, Stmt::Stack { binder, .. } if walk.stack_of_owners(*binder)));
    if !owners {
        return Ok(false);
    }
    let ends = walk.block(&body.root)?;
    if !ends {
        walk.leave_frames(0, None)?;
    }
    Ok(walk.frees)
}

impl Walk<'_, '_> {
    fn owner(&mut self, ty: &Ty) -> bool {
        if let Some(kind) = self.kinds.get(ty) {
            return *kind != Kind::Copy;
        }
        let kind = crate::generics::kind_of(self.cx.db, ty);
        self.kinds.insert(ty.clone(), kind);
        kind != Kind::Copy
    }

    /// A `match` on a borrowed owner: the move the match makes is refused like any move of a
    /// borrow, with what the match itself asks for (language §11.3: matching an owner consumes it).
    fn borrowed_subject(&self, subject: ExprId, diag: Diag) -> Diag {
        if diag.code != "E-MOVE-BORROW" {
            return diag;
        }
        let name = self.cx.dotted_path(subject).map(|p| p.join(".")).unwrap_or_else(|| "the subject".into());
        Diag::new(
            "E-MOVE-BORROW",
            format!(
                "Matching {name} takes it apart (a `match` on a value that owns storage consumes it), and {name} is borrowed, so it is not this function's to consume."
            ),
            diag.anchor,
        )
        .with_hint(format!(
            "Take {name} by value (the caller hands it over), or keep what the arms read in a record, whose fields a borrow can read."
        ))
    }

    /// True when the `stack` bound to `binder` holds elements that own storage.
    fn stack_of_owners(&mut self, binder: BinderId) -> bool {
        match self.cx.binder_types.get(binder.0 as usize).cloned() {
            Some(Ty::View(view)) => self.owner(&view.elem),
            _ => false,
        }
    }

    fn ty(&self, e: ExprId) -> Ty {
        self.cx.types.get(e.0 as usize).cloned().unwrap_or(Ty::Error)
    }

    fn owner_expr(&mut self, e: ExprId) -> bool {
        let ty = self.ty(e);
        self.owner(&ty)
    }

    fn local_of(&self, e: ExprId) -> Option<LocalRef> {
        match self.cx.resolutions.get(e.0 as usize) {
            Some(Resolution::Local(local)) => Some(*local),
            _ => None,
        }
    }

    fn name_of(&self, local: LocalRef) -> Arc<str> {
        match local {
            LocalRef::Param(i) => self.cx.signature.params.get(i as usize).map(|p| p.name.clone()).unwrap_or_default(),
            LocalRef::Binder(b) => self.cx.body.binder(b).clone(),
        }
    }

    fn declare(&mut self, local: LocalRef) {
        self.state.insert(local, Held::Held);
        self.depth_of.insert(local, self.depth);
        if let Some(frame) = self.frames.last_mut() {
            frame.push(local);
        }
    }

    fn linear(&self, local: LocalRef) -> bool {
        let ty = match local {
            LocalRef::Param(i) => self.cx.signature.params.get(i as usize).map(|p| p.ty.clone()),
            LocalRef::Binder(b) => self.cx.binder_types.get(b.0 as usize).cloned(),
        };
        ty.is_some_and(|t| crate::generics::kind_of(self.cx.db, &t) == Kind::Linear)
    }

    /// Leaves the frames from `from` on: what they still hold is released (`free`), except a
    /// linear value, which is refused — at `exit` (a `return`, `break`, `continue` or `try`), or
    /// at its declaration where its block simply ends.
    fn leave_frames(&mut self, from: usize, exit: Option<Anchor>) -> R<()> {
        let locals: Vec<LocalRef> = self.frames[from..].iter().flatten().copied().collect();
        for local in locals {
            let held = self.state.get(&local).copied().unwrap_or(Held::Moved);
            if held.consumed() {
                continue;
            }
            if self.linear(local) {
                return Err(self.leak(local, held, exit.clone()));
            }
            self.frees = true;
        }
        Ok(())
    }

    // ----- statements ----------------------------------------------------------------------

    fn block(&mut self, block: &Block) -> R<bool> {
        self.open();
        let mut ends = false;
        for &stmt in block.iter() {
            ends = self.stmt(stmt)?;
        }
        if !ends {
            self.leave_frames(self.frames.len() - 1, None)?;
        }
        self.close();
        Ok(ends)
    }

    fn open(&mut self) {
        self.frames.push(Vec::new());
        self.leases.push(Vec::new());
    }

    /// Closes the innermost scope: its locals and its leases end.
    fn close(&mut self) {
        let frame = self.frames.pop().unwrap_or_default();
        self.leases.pop();
        for local in frame {
            self.state.remove(&local);
        }
    }

    fn stmt(&mut self, id: StmtId) -> R<bool> {
        let body = self.cx.body.clone();
        match body.stmt(id) {
            Stmt::Missing | Stmt::Unsupported(_) => Ok(false),
            Stmt::Let { binder, init, .. } => {
                self.value(*init)?;
                let ty = self.cx.binder_types.get(binder.0 as usize).cloned().unwrap_or(Ty::Error);
                if &**body.binder(*binder) == "_" {
                    // `let _ = v;` keeps nothing: the owner is released at once.
                    let ty = self.ty(*init);
                    self.discarded(&ty, Anchor::Stmt(id))?;
                } else if self.owner(&ty) {
                    self.declare(LocalRef::Binder(*binder));
                }
                Ok(false)
            }
            Stmt::Unpack { binders, value, .. } => {
                self.value(*value)?;
                for &binder in binders.iter() {
                    let ty = self.cx.binder_types.get(binder.0 as usize).cloned().unwrap_or(Ty::Error);
                    if &**body.binder(binder) == "_" {
                        self.discarded(&ty, Anchor::Binder(binder))?;
                    } else if self.owner(&ty) {
                        self.declare(LocalRef::Binder(binder));
                    }
                }
                Ok(false)
            }
            Stmt::Buffer { capacity, .. } => {
                // The storage is the block's own, released where it ends (MIR); the row says
                // `free` already.
                self.value(*capacity)?;
                Ok(false)
            }
            Stmt::Defer(inner) => {
                self.deferring = true;
                self.defer_scope = self.leases.len() - 1;
                let result = self.stmt(*inner);
                self.deferring = false;
                result?;
                // What the call moved is consumed, not leased.
                let consumed: Vec<LocalRef> =
                    self.state.iter().filter(|(_, h)| **h == Held::Deferred).map(|(l, _)| *l).collect();
                if let Some(leases) = self.leases.last_mut() {
                    leases.retain(|l| !consumed.contains(l));
                }
                Ok(false)
            }
            Stmt::Assign { target, op, value } => {
                self.into_itself(*target, *value)?;
                self.value(*value)?;
                self.assigned(*target, op.is_some())?;
                Ok(false)
            }
            Stmt::Expr(e) => {
                self.value(*e)?;
                let ty = self.ty(*e);
                self.discarded(&ty, Anchor::Expr(*e))?;
                Ok(false)
            }
            Stmt::If { cond, then, els } => {
                self.value(*cond)?;
                let before = self.state.clone();
                let then_ends = self.block(then)?;
                let after_then = std::mem::replace(&mut self.state, before);
                let else_ends = match els {
                    None => false,
                    Some(Else::Block(block)) => self.block(block)?,
                    Some(Else::If(nested)) => self.stmt(*nested)?,
                };
                let after_else = std::mem::take(&mut self.state);
                self.state = merge(vec![(after_then, then_ends), (after_else, else_ends)]);
                Ok(then_ends && else_ends)
            }
            Stmt::While { cond, body: block } => {
                self.in_loop(|walk| {
                    walk.value(*cond)?;
                    walk.block(block)
                })?;
                Ok(false)
            }
            Stmt::ForRange { lo, hi, body: block, .. } => {
                self.value(*lo)?;
                self.value(*hi)?;
                self.in_loop(|walk| walk.block(block))?;
                Ok(false)
            }
            Stmt::Each { count, body: block, .. } | Stmt::Parallel { count, body: block, .. } => {
                self.value(*count)?;
                self.in_loop(|walk| walk.block(block))?;
                Ok(false)
            }
            Stmt::Collect(c) => {
                if let Some(target) = c.target {
                    self.place(target)?;
                }
                self.value(c.count)?;
                let exprs: Vec<ExprId> = c.pred.iter().copied().chain([c.value]).collect();
                self.in_loop(|walk| {
                    for e in exprs {
                        walk.value(e)?;
                    }
                    Ok(false)
                })?;
                Ok(false)
            }
            Stmt::ForEach { element, iterable, body: block, .. } => {
                self.place(*iterable)?;
                let elem = self.cx.binder_types.get(element.0 as usize).cloned().unwrap_or(Ty::Error);
                if self.owner(&elem) {
                    // §8: an element loop copies each element, so they must be of a `copy` kind.
                    return Err(Diag::new(
                        "E-ELEMENT-LOOP",
                        format!(
                            "The elements are owners ({elem}), and an element loop would copy each one out of its place: index them instead (`for i in 0..len(xs) {{ … xs[i] … }}`)."
                        ),
                        Anchor::Expr(*iterable),
                    ));
                }
                self.in_loop(|walk| walk.block(block))?;
                Ok(false)
            }
            Stmt::Match { subject, arms } => self.match_stmt(*subject, arms),
            Stmt::Return(value) => {
                if let Some(value) = value {
                    self.value(*value)?;
                }
                self.leave_frames(0, Some(Anchor::Stmt(id)))?;
                Ok(true)
            }
            Stmt::Break | Stmt::Continue => {
                if let Some(&from) = self.loops.last() {
                    self.leave_frames(from, Some(Anchor::Stmt(id)))?;
                }
                Ok(true)
            }
            Stmt::Block(block) | Stmt::Unsafe(block) => self.block(block),
            Stmt::Stack { binder, capacity, .. } => {
                self.value(*capacity)?;
                // Elements that own storage are released with the frame, as a `buffer`'s are.
                if self.stack_of_owners(*binder) {
                    self.frees = true;
                }
                Ok(false)
            }
        }
    }

    fn in_loop(&mut self, inside: impl FnOnce(&mut Self) -> R<bool>) -> R<()> {
        let before = self.state.clone();
        self.depth += 1;
        self.loops.push(self.frames.len());
        let result = inside(self);
        self.loops.pop();
        self.depth -= 1;
        result?;
        // The body may run no time at all.
        let after = std::mem::take(&mut self.state);
        self.state = merge(vec![(before, false), (after, false)]);
        Ok(())
    }

    fn match_stmt(&mut self, subject: ExprId, arms: &Arc<[Arm]>) -> R<bool> {
        let owned = self.owner_expr(subject);
        if owned {
            // The arms take the subject apart: what an arm does not bind is released there.
            self.value(subject).map_err(|diag| self.borrowed_subject(subject, diag))?;
            self.frees = true;
        } else {
            self.place(subject)?;
        }
        // A payload of a linear type dropped by `Variant(_)` is lost.
        for arm in arms.iter() {
            if let Some(binder) = arm.binder
                && &**self.cx.body.binder(binder) == "_"
            {
                let ty = self.cx.binder_types.get(binder.0 as usize).cloned().unwrap_or(Ty::Error);
                if crate::generics::kind_of(self.cx.db, &ty) == Kind::Linear {
                    self.discarded(&ty, Anchor::Binder(binder))?;
                }
            }
        }
        let before = self.state.clone();
        let mut outcomes = Vec::new();
        let mut all_end = true;
        for arm in arms.iter() {
            self.state = before.clone();
            self.open();
            if let Some(binder) = arm.binder {
                let ty = self.cx.binder_types.get(binder.0 as usize).cloned().unwrap_or(Ty::Error);
                if &**self.cx.body.binder(binder) != "_" && self.owner(&ty) {
                    self.declare(LocalRef::Binder(binder));
                }
            }
            let ends = self.block(&arm.body)?;
            if !ends {
                self.leave_frames(self.frames.len() - 1, None)?;
            }
            self.close();
            all_end &= ends;
            outcomes.push((std::mem::take(&mut self.state), ends));
        }
        self.state = if outcomes.is_empty() { before } else { merge(outcomes) };
        Ok(all_end && !arms.is_empty())
    }

    /// The target of an assignment, after its value: a whole owner local assigned is held
    /// again, and what it or an owner place held before is released.
    fn assigned(&mut self, target: ExprId, compound: bool) -> R<()> {
        let target = self.cx.body.unparen(target);
        if compound {
            return self.place(target);
        }
        match self.cx.body.expr(target) {
            Expr::Name(_) => {
                // A closure in a `defer`'s call that assigns a local names it as surely as one
                // that reads it: the local is held until the block ends (§22.4).
                if self.deferring
                    && let Some(local) = self.local_of(target)
                    && let Some(leases) = self.leases.get_mut(self.defer_scope)
                    && !leases.contains(&local)
                {
                    leases.push(local);
                    self.leased_at.insert(local, target);
                }
                if let Some(local) = self.local_of(target)
                    && self.owner_expr(target)
                {
                    let held = self.state.get(&local).copied();
                    if !held.is_some_and(Held::consumed) {
                        // Held (or a borrowed parameter written through): the old value goes.
                        if self.linear(local) {
                            let held = held.unwrap_or(Held::Held);
                            return Err(self.leak(local, held, Some(Anchor::Expr(target))));
                        }
                        self.frees = true;
                    }
                    if self.state.contains_key(&local) {
                        self.state.insert(local, Held::Held);
                    }
                }
                Ok(())
            }
            _ => {
                self.place(target)?;
                let ty = self.ty(target);
                self.discarded(&ty, Anchor::Expr(target))
            }
        }
    }
}

/// The state after paths join: a local is held or moved where every path that reaches the join
/// agrees, else moved on some paths only. Paths that left (`return`, `break`) do not reach it.
fn merge(paths: Vec<(HashMap<LocalRef, Held>, bool)>) -> HashMap<LocalRef, Held> {
    let reaching: Vec<&HashMap<LocalRef, Held>> = paths.iter().filter(|(_, ends)| !ends).map(|(s, _)| s).collect();
    let Some(first) = reaching.first() else {
        return paths.into_iter().next().map(|(s, _)| s).unwrap_or_default();
    };
    let mut out = HashMap::new();
    for (local, held) in first.iter() {
        let all: Vec<Held> = reaching.iter().filter_map(|s| s.get(local).copied()).collect();
        let merged = if all.iter().all(|h| h == held) {
            *held
        } else if all.iter().all(|h| h.consumed()) {
            Held::Moved
        } else {
            Held::Maybe
        };
        out.insert(*local, merged);
    }
    out
}
