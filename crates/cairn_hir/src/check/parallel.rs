//! Parallel regions (language §24): `parallel i in n { … }` checked as a loop whose body runs
//! once per lane, then judged by the lane rules that make lanes race-free by construction.
//!
//! While a region's body is typed, the check knows it is in a lane (`Cx::lane`) and refuses on
//! the spot what no lane may do: `return`/`try` out of the function (`E-PARALLEL-CONTROL`), a
//! nested region or collector (`E-PARALLEL-NEST`), printing, a foreign call, or a call through a
//! function value that is not a parameter (`E-PARALLEL-CALL`). A `fn` parameter called (or handed
//! on) in a lane adds `lane:f` to the row. Once the body is typed, [`RaceWalk`] places every
//! access to storage declared outside the region: an assignment to an outer name or field is
//! `E-PARALLEL-WRITE`; an array some lane writes may be touched only at `[i]` or inside the
//! lane's own block `[i * S + j]` with `j` provably below one constant stride `S`
//! (`E-PARALLEL-RACE`). What the lanes call is judged against the callees' rows later, with the
//! whole program (`crate::lanes`). Collectors (`collect.rs`) run their yields under the same walk.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::cx::{Cx, Lane, Local, LocalKind, R};
use super::result::{CallTarget, Region};
use crate::body::{BinaryOp, BinderId, Block, Else, Expr, ExprId, Literal, Stmt, StmtId};
use crate::diag::{Anchor, Diag};
use crate::scopes::LocalRef;
use crate::types::{Mode, Ty};

impl Cx<'_> {
    /// `E-PARALLEL-NEST` when a lane is being checked.
    pub(crate) fn not_in_lane(&self, id: StmtId, what: &str) -> R<()> {
        if self.lane.is_some() {
            return Err(Diag::new(
                "E-PARALLEL-NEST",
                format!(
                    "{what} cannot start inside a lane: lanes already run on every core. Move it before or after the region, or do this lane's share sequentially with `for`."
                ),
                Anchor::Stmt(id),
            ));
        }
        Ok(())
    }

    /// A `spawn` (tasks are tier 2): where it stands decides the code. In a lane or a closure it
    /// is `E-SPAWN` (§24: a lane may not spawn; §32: no task starts inside a closure), a rule
    /// that needs no task runtime; anywhere else the construct itself is not built yet.
    pub(crate) fn spawn_placement(&self, e: ExprId) -> R<Ty> {
        let place = if self.lane.is_some() {
            Some("inside a lane: lanes already run on every core, and a task would outlive its lane")
        } else if !self.closure_rets.is_empty() {
            Some("inside a closure: no task starts from a closure")
        } else {
            None
        };
        Err(match place {
            Some(place) => Diag::new(
                "E-SPAWN",
                format!(
                    "A task cannot be spawned {place}. Bind the spawn with `let t = spawn f(…);` in the function body, before or after the region or closure."
                ),
                Anchor::Expr(e),
            ),
            None => Diag::new(
                "E-UNSUPPORTED",
                format!(
                    "{} is a construct of a later tier, which this checker does not check yet.",
                    super::cx::describe_kind(cairn_syntax::SyntaxKind::SPAWN_EXPR)
                ),
                Anchor::Expr(e),
            ),
        })
    }

    /// `E-PARALLEL-CONTROL` for `return`/`try` out of a lane.
    pub(crate) fn lane_control(&self, anchor: Anchor, word: &str) -> R<()> {
        if let Some(lane) = self.lane
            && self.closure_rets.len() == lane.closures
        {
            return Err(Diag::new(
                "E-PARALLEL-CONTROL",
                format!(
                    "`{word}` cannot leave the function from inside a lane: every lane runs to its end. Record what the lane found in its own element (`out[i] = …`) and decide after the region."
                ),
                anchor,
            ));
        }
        Ok(())
    }

    /// `E-PARALLEL-CALL` for a call that is never lane-safe.
    pub(crate) fn lane_call(&self, e: ExprId, what: &str) -> R<()> {
        if self.lane.is_some() {
            return Err(Diag::new(
                "E-PARALLEL-CALL",
                format!(
                    "{what} in a lane: lanes may compute, read, write their own elements and allocate, nothing observable. Do it after the region, from what the lanes stored."
                ),
                Anchor::Expr(e),
            ));
        }
        Ok(())
    }

    /// A call through the function value held by `local` (named `name`): in a lane only a `fn`
    /// parameter may be called, adding `lane:name`.
    pub(crate) fn lane_indirect(&mut self, e: ExprId, name: &str, local: &Local) -> R<()> {
        if self.lane.is_none() {
            return Ok(());
        }
        if local.kind == LocalKind::Param {
            self.effect(format!("lane:{name}"));
            return Ok(());
        }
        Err(Diag::new(
            "E-PARALLEL-CALL",
            format!(
                "{name} is a function value held in a local, and a lane may call only a `fn` parameter of its function (judged where the caller passes it): take {name} as a parameter instead."
            ),
            Anchor::Expr(e),
        ))
    }

    /// A `fn` parameter handed to a callee inside a lane: the lanes may call it (`lane:f`).
    pub(crate) fn lane_hands_on(&mut self, arg: ExprId) {
        if self.lane.is_none() {
            return;
        }
        if let Expr::Name(name) = self.body.expr(self.body.unparen(arg))
            && let Some(local) = self.local(name)
            && local.kind == LocalKind::Param
            && matches!(local.ty.value(), Ty::Fn(_))
        {
            let effect = format!("lane:{name}");
            self.effect(effect);
        }
    }

    /// The parameter type argument `arg` was paired with, at a call checked so far.
    pub(crate) fn argument_type(&self, arg: ExprId) -> Option<&Ty> {
        self.arguments.iter().rev().find(|(e, _)| *e == arg).map(|(_, t)| t)
    }

    /// `parallel i in n { body }`.
    pub(crate) fn parallel(&mut self, id: StmtId, binder: BinderId, count: ExprId, block: &Block) -> R<()> {
        self.not_in_lane(id, "A `parallel` region")?;
        self.check(count, Some(&Ty::usize()))?;
        self.fresh(binder, |name| format!("The lane binder {name} is already bound; pick a fresh name."))?;
        let name = self.body.binder(binder).clone();
        self.bind(binder, Local { name, ty: Ty::usize(), mutable: false, kind: LocalKind::LoopBinder, literal: None });
        let first_call = (self.call_targets.len(), self.calls.len());
        let first_atomic = self.atomic_targets.len();
        let loops = std::mem::replace(&mut self.loops, 0);
        self.lane = Some(Lane::new(self.closure_rets.len()));
        let result = self.block(block);
        let lane = self.lane.take();
        self.loops = loops;
        result?;
        let device = match &lane {
            Some(lane) => self.lane_verdict(lane)?,
            None => false,
        };
        self.effect(if device { "par:device" } else { "par:host" });
        let mut walk = RaceWalk::new(self, binder, block, &[]);
        walk.block(block)?;
        walk.judge()?;
        self.atomic_mixed(&walk, first_atomic)?;
        let captures = walk.captures();
        let stride = walk.stride();
        let blocks = walk.blocks();
        let arrays = if device { self.array_accesses(&walk) } else { Vec::new() };
        self.record_region(id, captures, first_call, stride);
        if let Some(region) = self.regions.last_mut() {
            region.device = device;
            region.arrays = Arc::from(arrays);
            region.blocks = Arc::from(blocks.0);
            region.block_indices = Arc::from(blocks.1);
        }
        Ok(())
    }

    /// Records a region checked since `call_targets` held `first_call` entries.
    pub(crate) fn record_region(
        &mut self,
        stmt: StmtId,
        captures: Vec<LocalRef>,
        first_call: (usize, usize),
        stride: u64,
    ) {
        let calls: Vec<ExprId> = self.call_targets[first_call.0..].iter().map(|(e, _)| *e).collect();
        let mut callees: Vec<crate::input::Item> = Vec::new();
        for edge in &self.calls[first_call.1..] {
            if !callees.contains(&edge.callee) {
                callees.push(edge.callee);
            }
        }
        self.regions.push(Region {
            stmt,
            captures: Arc::from(captures),
            calls: Arc::from(calls),
            callees: Arc::from(callees),
            stride,
            blocks: Arc::from(Vec::new()),
            block_indices: Arc::from(Vec::new()),
            device: false,
            arrays: Arc::from(Vec::new()),
        });
    }
}

/// How an access reaches the elements of an outer array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Inside the lane's own block of this stride (`[i]` is stride 1).
    Block(u64),
    /// Somewhere the checker cannot place (a whole lend, an index not in the lane's block).
    Unplaced,
}

#[derive(Debug, Clone)]
struct Access {
    key: LocalRef,
    name: Arc<str>,
    at: ExprId,
    /// The index expression of an element access.
    index: Option<ExprId>,
    write: bool,
    shape: Shape,
}

/// The walk that places a region's accesses (language §24's race rule).
pub(crate) struct RaceWalk<'a, 'db> {
    cx: &'a Cx<'db>,
    lane: BinderId,
    /// Binders declared inside the region (the lane's own storage).
    inside: HashSet<BinderId>,
    /// The upper bound of each `for j in lo..hi` inside the region, by binder.
    ranges: HashMap<BinderId, ExprId>,
    /// The initializer of each immutable `let` inside the region, by binder.
    lets: HashMap<BinderId, ExprId>,
    accesses: Vec<Access>,
    names: Vec<ExprId>,
}

impl<'a, 'db> RaceWalk<'a, 'db> {
    /// A walk over `block` and `exprs`, whose lane binder is `lane`.
    pub(crate) fn new(cx: &'a Cx<'db>, lane: BinderId, block: &Block, exprs: &[ExprId]) -> Self {
        let mut binders = vec![lane];
        let mut names = Vec::new();
        let mut assigned = Vec::new();
        super::closure::contents(&cx.body, block, &mut binders, &mut names, &mut assigned);
        for &e in exprs {
            super::closure::expr(&cx.body, e, &mut binders, &mut names, &mut assigned);
        }
        RaceWalk {
            cx,
            lane,
            inside: binders.into_iter().collect(),
            ranges: HashMap::new(),
            lets: HashMap::new(),
            accesses: Vec::new(),
            names,
        }
    }

    /// The outer bindings the region names, in first-use order.
    /// Every access the walk placed: the outer binding, its name, the index expression of an
    /// element access, and whether it writes.
    pub(crate) fn accesses(&self) -> impl Iterator<Item = (LocalRef, &Arc<str>, Option<ExprId>, bool)> + '_ {
        self.accesses.iter().map(|a| (a.key, &a.name, a.index, a.write))
    }

    /// The region's lane binder.
    pub(crate) fn lane(&self) -> BinderId {
        self.lane
    }

    pub(crate) fn captures(&self) -> Vec<LocalRef> {
        let mut out: Vec<LocalRef> = Vec::new();
        for &name in &self.names {
            if let Some(local) = self.outer(name)
                && !out.contains(&local)
            {
                out.push(local);
            }
        }
        out
    }

    /// The outer binding a name expression means (`None` for the lane's own, or not a local).
    fn outer(&self, e: ExprId) -> Option<LocalRef> {
        let local = self.cx.scopes.resolve(e)?;
        match local {
            LocalRef::Binder(b) if self.inside.contains(&b) => None,
            _ => Some(local),
        }
    }

    /// The root name expression of a place (`a` in `a.b[i].c`).
    fn root(&self, mut e: ExprId) -> Option<ExprId> {
        loop {
            e = self.cx.body.unparen(e);
            match self.cx.body.expr(e) {
                Expr::Name(_) => return Some(e),
                Expr::Field { base, .. } | Expr::Index { base, .. } | Expr::Part { base, .. } => e = *base,
                _ => return None,
            }
        }
    }

    /// The index nearest the root along a place (`i` in `a.b[i].c`), if any.
    fn first_index(&self, mut e: ExprId) -> Option<ExprId> {
        let mut found = None;
        loop {
            e = self.cx.body.unparen(e);
            match self.cx.body.expr(e) {
                Expr::Index { base, indices } => {
                    found = indices.first().copied();
                    e = *base;
                }
                Expr::Field { base, .. } | Expr::Part { base, .. } => e = *base,
                _ => return found,
            }
        }
    }

    fn name_of(&self, e: ExprId) -> Arc<str> {
        match self.cx.body.expr(e) {
            Expr::Name(n) => n.clone(),
            _ => Arc::from("?"),
        }
    }

    pub(crate) fn block(&mut self, block: &Block) -> R<()> {
        for &stmt in block.iter() {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn stmt(&mut self, id: StmtId) -> R<()> {
        let body = self.cx.body.clone();
        match body.stmt(id) {
            Stmt::Let { binder, init, mutable, .. } => {
                if !mutable {
                    self.lets.insert(*binder, *init);
                }
                self.expr(*init)
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(*value)?;
                self.written(*target, Anchor::Stmt(id))
            }
            Stmt::Expr(e) | Stmt::Return(Some(e)) => self.expr(*e),
            Stmt::If { cond, then, els } => {
                self.expr(*cond)?;
                self.block(then)?;
                match els {
                    Some(Else::Block(b)) => self.block(b),
                    Some(Else::If(nested)) => self.stmt(*nested),
                    None => Ok(()),
                }
            }
            Stmt::While { cond, body: b } => {
                self.expr(*cond)?;
                self.block(b)
            }
            Stmt::ForRange { binder, lo, hi, body: b } => {
                self.expr(*lo)?;
                self.expr(*hi)?;
                self.ranges.insert(*binder, *hi);
                self.block(b)
            }
            Stmt::ForEach { iterable, body: b, .. } => {
                self.whole(*iterable, false)?;
                self.block(b)
            }
            Stmt::Each { count, body: b, .. } | Stmt::Parallel { count, body: b, .. } => {
                self.expr(*count)?;
                self.block(b)
            }
            Stmt::Match { subject, arms } => {
                self.expr(*subject)?;
                for arm in arms.iter() {
                    self.block(&arm.body)?;
                }
                Ok(())
            }
            Stmt::Block(b) | Stmt::Unsafe(b) => self.block(b),
            Stmt::Stack { capacity, .. } | Stmt::Buffer { capacity, .. } => self.expr(*capacity),
            Stmt::Unpack { value, .. } => self.expr(*value),
            Stmt::Defer(inner) => self.stmt(*inner),
            Stmt::Collect(c) => {
                for e in c.target.iter().chain([&c.count]).chain(c.pred.iter()).chain([&c.value]) {
                    self.expr(*e)?;
                }
                Ok(())
            }
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Missing | Stmt::Unsupported(_) => Ok(()),
        }
    }

    /// A place the lane writes: an outer name or field is `E-PARALLEL-WRITE`; an element of an
    /// outer array is placed by the race rule.
    fn written(&mut self, target: ExprId, anchor: Anchor) -> R<()> {
        self.indices_read(target)?;
        let Some(root) = self.root(target) else { return Ok(()) };
        let Some(key) = self.outer(root) else { return Ok(()) };
        let name = self.name_of(root);
        match self.first_index(target) {
            Some(index) => {
                let shape = self.shape(index);
                self.accesses.push(Access { key, name, at: index, index: Some(index), write: true, shape });
                Ok(())
            }
            None => Err(Diag::new(
                "E-PARALLEL-WRITE",
                format!(
                    "A lane assigns {name}, which is declared outside the region, so every lane would write it at once. Give each lane its own element (`out[i] = …`), or combine the lanes' values with `reduce`."
                ),
                anchor,
            )),
        }
    }

    /// Reads of the elements each index along a place names (`a[i]` reads `a` at `i`).
    fn indices_read(&mut self, place: ExprId) -> R<()> {
        let mut e = self.cx.body.unparen(place);
        loop {
            match self.cx.body.expr(e).clone() {
                Expr::Index { base, indices } => {
                    for index in indices.iter() {
                        self.expr(*index)?;
                    }
                    e = self.cx.body.unparen(base);
                }
                Expr::Part { base, lo, hi } => {
                    self.expr(lo)?;
                    self.expr(hi)?;
                    e = self.cx.body.unparen(base);
                }
                Expr::Field { base, .. } => e = self.cx.body.unparen(base),
                _ => return Ok(()),
            }
        }
    }

    /// An argument lending a place whole or as a part (`write` for an `rw` lend).
    fn whole(&mut self, arg: ExprId, write: bool) -> R<()> {
        self.indices_read(arg)?;
        let Some(root) = self.root(arg) else { return self.expr(arg) };
        let Some(key) = self.outer(root) else { return Ok(()) };
        let name = self.name_of(root);
        let inner = self.cx.body.unparen(arg);
        let shape = match self.cx.body.expr(inner) {
            Expr::Part { lo, hi, .. } => self.part_shape(*lo, *hi),
            _ => match self.first_index(arg) {
                Some(index) => self.shape(index),
                None => Shape::Unplaced,
            },
        };
        if write && shape == Shape::Unplaced && self.first_index(arg).is_none() && !self.is_array(key) {
            return Err(Diag::new(
                "E-PARALLEL-WRITE",
                format!(
                    "A lane lends {name} to be written, and {name} is declared outside the region, so every lane would write it at once. Give each lane its own element, or combine the lanes' values with `reduce`."
                ),
                Anchor::Expr(arg),
            ));
        }
        let index = match self.cx.body.expr(inner) {
            Expr::Part { .. } => None,
            _ => self.first_index(arg),
        };
        self.accesses.push(Access { key, name, at: arg, index, write, shape });
        Ok(())
    }

    /// True when the binding holds elements (a view, `Buf`, `Array`, `stack` or `buffer`).
    fn is_array(&self, key: LocalRef) -> bool {
        self.cx.locals.get(&key).is_some_and(|l| matches!(l.ty.value(), Ty::View(_) | Ty::Buf(_) | Ty::Array(..)))
    }

    fn expr(&mut self, e: ExprId) -> R<()> {
        let body = self.cx.body.clone();
        match body.expr(e) {
            // A lane may not spawn (the check refused it).
            Expr::Missing
            | Expr::Literal(_)
            | Expr::Name(_)
            | Expr::Spawn { .. }
            | Expr::TypeArg(_)
            | Expr::Unsupported(_) => Ok(()),
            Expr::Paren(inner) | Expr::Try(inner) | Expr::Unary { operand: inner, .. } => self.expr(*inner),
            Expr::Binary { lhs, rhs, .. } => {
                self.expr(*lhs)?;
                self.expr(*rhs)
            }
            Expr::Field { base, .. } => self.expr(*base),
            Expr::Index { base, indices } => {
                for index in indices.iter() {
                    self.expr(*index)?;
                }
                self.expr(*base)?;
                // Placed by the index applied to the root (`bufs[i][3]` is in lane i's element,
                // as its write is), not by the innermost one.
                if let Some(root) = self.root(e)
                    && let Some(key) = self.outer(root)
                    && let Some(index) = self.first_index(e)
                {
                    let name = self.name_of(root);
                    let shape = self.shape(index);
                    self.accesses.push(Access { key, name, at: e, index: Some(index), write: false, shape });
                }
                Ok(())
            }
            Expr::Part { base, lo, hi } => {
                self.expr(*base)?;
                self.expr(*lo)?;
                self.expr(*hi)
            }
            Expr::Closure(closure) => self.block(&closure.body),
            Expr::Call { callee, args } => {
                let mut given: Vec<ExprId> = Vec::new();
                if let Expr::Field { base, .. } = body.expr(body.unparen(*callee))
                    && self.cx.argument_type(*base).is_some()
                {
                    given.push(*base);
                } else {
                    self.expr(*callee)?;
                }
                given.extend(args.iter().copied());
                let places = matches!(
                    self.cx.call_targets.iter().rev().find(|(c, _)| *c == e).map(|(_, t)| t),
                    Some(CallTarget::Builtin(b)) if b.on_places()
                );
                for arg in given {
                    if places {
                        self.written(arg, Anchor::Expr(arg))?;
                        continue;
                    }
                    match self.cx.argument_type(arg).cloned() {
                        Some(Ty::View(view)) => self.whole(arg, view.mode == Mode::Rw)?,
                        Some(Ty::Borrow(Mode::Rw, inner)) if !matches!(&*inner, Ty::Fn(_)) => {
                            self.written(arg, Anchor::Expr(arg))?
                        }
                        _ => self.expr(arg)?,
                    }
                }
                Ok(())
            }
        }
    }

    /// Where an index puts an access: the lane's block `i * S + j`, or nowhere placeable.
    fn shape(&self, index: ExprId) -> Shape {
        match self.linear(index) {
            Some((stride, Offset::Below(bound))) if bound <= stride => Shape::Block(stride),
            Some((stride, Offset::Exact(c))) if c < stride => Shape::Block(stride),
            _ => Shape::Unplaced,
        }
    }

    /// A part `lo..hi` inside the lane's block: `i*S + a .. i*S + b` with `a <= b <= S`.
    fn part_shape(&self, lo: ExprId, hi: ExprId) -> Shape {
        match (self.linear(lo), self.linear(hi)) {
            (Some((s1, lo)), Some((s2, hi))) if s1 == s2 => match (lo, hi) {
                (Offset::Exact(a), Offset::Exact(b)) if a <= b && b <= s1 => Shape::Block(s1),
                _ => Shape::Unplaced,
            },
            _ => Shape::Unplaced,
        }
    }

    /// `e` as `i * S + offset`, with `S` a constant (through immutable `let`s of the region).
    fn linear(&self, e: ExprId) -> Option<(u64, Offset)> {
        let body = &self.cx.body;
        let e = body.unparen(e);
        if self.is_lane(e) {
            return Some((1, Offset::Exact(0)));
        }
        match body.expr(e) {
            // An immutable `let` of the region names its value (`let row = b * 256;`).
            Expr::Name(_) => {
                let LocalRef::Binder(binder) = self.cx.scopes.resolve(e)? else { return None };
                self.linear(*self.lets.get(&binder)?)
            }
            Expr::Binary { op: BinaryOp::Mul, lhs, rhs } => {
                // `i * S`, `S * i`, `(i + 1) * S`
                let (var, stride) =
                    if let Some(s) = self.constant(*rhs) { (*lhs, s) } else { (*rhs, self.constant(*lhs)?) };
                let var = body.unparen(var);
                if self.is_lane(var) {
                    return Some((stride, Offset::Exact(0)));
                }
                if let Expr::Binary { op: BinaryOp::Add, lhs, rhs } = body.expr(var) {
                    let (l, r) = (body.unparen(*lhs), body.unparen(*rhs));
                    let one =
                        if self.is_lane(l) { self.constant(r) } else { self.is_lane(r).then(|| self.constant(l))? };
                    if one == Some(1) {
                        return Some((stride, Offset::Exact(stride)));
                    }
                }
                None
            }
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } => {
                let (base, offset) = match self.linear(*lhs) {
                    Some(found) => (found, *rhs),
                    None => (self.linear(*rhs)?, *lhs),
                };
                let (stride, Offset::Exact(0)) = base else { return None };
                if let Some(c) = self.constant(offset) {
                    return Some((stride, Offset::Exact(c)));
                }
                self.below(offset).map(|bound| (stride, Offset::Below(bound)))
            }
            _ => None,
        }
    }

    /// An upper bound (exclusive) the value of `e` provably stays below: a `for` binder of the
    /// region over a constant range end, `x % c`, `x & m` (below `m + 1`), a constant, an
    /// immutable `let` of the region bound to one of these, or a conversion of one to `usize`.
    fn below(&self, e: ExprId) -> Option<u64> {
        let body = &self.cx.body;
        let e = body.unparen(e);
        if let Some(c) = self.constant(e) {
            return c.checked_add(1);
        }
        match body.expr(e) {
            Expr::Name(_) => {
                let LocalRef::Binder(binder) = self.cx.scopes.resolve(e)? else { return None };
                match self.ranges.get(&binder) {
                    Some(&hi) => self.constant(hi),
                    None => self.below(*self.lets.get(&binder)?),
                }
            }
            Expr::Binary { op: BinaryOp::Rem, rhs, .. } => self.constant(*rhs),
            Expr::Binary { op: BinaryOp::BitAnd, lhs, rhs } => {
                let mask = self.constant(*rhs).or_else(|| self.constant(*lhs))?;
                mask.checked_add(1)
            }
            Expr::Call { args, .. } if args.len() == 1 => match self.cx.call_target_of(e) {
                Some(CallTarget::Builtin(crate::builtins::Builtin::Usize)) => self.below(args[0]),
                _ => None,
            },
            _ => None,
        }
    }

    fn is_lane(&self, e: ExprId) -> bool {
        matches!(self.cx.body.expr(e), Expr::Name(_)) && self.cx.scopes.resolve(e) == Some(LocalRef::Binder(self.lane))
    }

    /// The value of an integer literal or constant (a natural of the instance included).
    fn constant(&self, e: ExprId) -> Option<u64> {
        let e = self.cx.body.unparen(e);
        match self.cx.body.expr(e) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => u64::try_from(*v).ok(),
            Expr::Name(name) if self.cx.scopes.resolve(e).is_none() => {
                self.cx.natural(name).or_else(|| crate::consts::integer_constant(self.cx.db, &self.cx.module, name))
            }
            Expr::Field { .. } => self.cx.qualified_constant(e),
            _ => None,
        }
    }

    /// The race rule over every access placed: an array a lane writes is touched only inside
    /// each lane's block, of one stride.
    pub(crate) fn judge(&self) -> R<()> {
        let written: Vec<LocalRef> = self.accesses.iter().filter(|a| a.write).map(|a| a.key).collect();
        let mut strides: HashMap<LocalRef, (u64, ExprId)> = HashMap::new();
        for access in self.accesses.iter().filter(|a| written.contains(&a.key)) {
            let name = &access.name;
            match access.shape {
                Shape::Unplaced => {
                    let what = if access.write { "writes" } else { "reads" };
                    return Err(Diag::new(
                        "E-PARALLEL-RACE",
                        format!(
                            "Lanes write {name}, so lane i may touch it only at [i] or inside its own block [i * S + j] (j provably below one constant S); this access {what} {name} where the checker cannot place it inside the lane's own part. Index it at the lane's own element, or collect the result with `reduce`, `compact` or `scan`."
                        ),
                        Anchor::Expr(access.at),
                    ));
                }
                Shape::Block(stride) => {
                    if let Some(&(first, _)) = strides.get(&access.key)
                        && first != stride
                    {
                        return Err(Diag::new(
                            "E-PARALLEL-RACE",
                            format!(
                                "Lanes touch {name} in blocks of {first} elements and here of {stride}: the lanes' blocks would overlap. Use one stride for every access to {name}."
                            ),
                            Anchor::Expr(access.at),
                        ));
                    }
                    strides.entry(access.key).or_insert((stride, access.at));
                }
            }
        }
        Ok(())
    }

    /// The largest block a lane writes (`1` when it writes by element or not at all).
    pub(crate) fn stride(&self) -> u64 {
        self.accesses
            .iter()
            .filter(|a| a.write)
            .filter_map(|a| match a.shape {
                Shape::Block(s) => Some(s),
                Shape::Unplaced => None,
            })
            .max()
            .unwrap_or(1)
    }

    /// The arrays the lanes write, with the stride of their blocks, and the index expressions of
    /// the element accesses to them (all placed in the lane's block by the race rule).
    pub(crate) fn blocks(&self) -> (Vec<(LocalRef, u64)>, Vec<ExprId>) {
        let mut arrays: Vec<(LocalRef, u64)> = Vec::new();
        let mut indices = Vec::new();
        let written: Vec<LocalRef> = self.accesses.iter().filter(|a| a.write).map(|a| a.key).collect();
        for access in self.accesses.iter().filter(|a| written.contains(&a.key)) {
            let Shape::Block(stride) = access.shape else { continue };
            if !arrays.iter().any(|(k, _)| *k == access.key) {
                arrays.push((access.key, stride));
            }
            if let Some(index) = access.index
                && !indices.contains(&index)
            {
                indices.push(index);
            }
        }
        (arrays, indices)
    }

    /// The yield or predicate expressions of a collector, walked as lane code.
    pub(crate) fn exprs(&mut self, exprs: &[ExprId]) -> R<()> {
        for &e in exprs {
            self.expr(e)?;
        }
        Ok(())
    }
}

/// What follows the lane's multiple in a linear index.
#[derive(Debug, Clone, Copy)]
enum Offset {
    Exact(u64),
    /// Some value provably below this bound.
    Below(u64),
}
