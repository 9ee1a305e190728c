//! Effect rows (language §14), ceilings, and the operand-order audit (§16).
//!
//! [`effect_rows`] builds the call graph from every body's call edges, splits it into strongly
//! connected components (Tarjan), and computes rows component by component, callees first: the
//! least fixed point inside a component of the members' local rows and their callees' rows
//! renamed through each call's argument mapping; a component on a cycle adds `diverge` to every
//! member. A function whose body or signature was refused has no row, and neither has anything
//! that reaches it (its row is unknown, never empty). Components are keyed by their members, not
//! by Tarjan's visiting order, so the answer does not depend on declaration order.
//!
//! The audit (`order_refusal`) walks a body's statements after the rows exist: a nested call that
//! writes through a borrow (or allocates) must stand alone, and an observable call (I/O, foreign
//! calls, …) may not sit beside another call or a guarded operand.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::body::{BinaryOp, Body, Else, Expr, ExprId, Stmt, StmtId, UnaryOp, fn_body};
use crate::check::{CallTarget, FnCheck, Mapped, check_fn};
use crate::db::Db;
use crate::diag::{Anchor, Diag, list};
use crate::input::{Item, ItemKind, Program};
use crate::signature::fn_signature;

/// A row: sorted effect names.
pub type Row = BTreeSet<Arc<str>>;

/// Every function's row (`None`: unknown, because the function or something it reaches was
/// refused).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    pub rows: HashMap<Item, Option<Row>>,
    /// Functions (and tests) in declaration order.
    pub functions: Vec<Item>,
    /// Each function's index in `functions`.
    pub index: HashMap<Item, u32>,
    /// The call graph the rows were computed over: for each function (by index), the
    /// functions it calls, and the functions that call it (indices, ascending, once each).
    pub callees: Vec<Vec<u32>>,
    pub callers: Vec<Vec<u32>>,
}

impl Rows {
    pub fn row(&self, item: Item) -> Option<&Row> {
        self.rows.get(&item).and_then(Option::as_ref)
    }

    /// The functions (and tests) that call `item`, in declaration order.
    pub fn callers_of(&self, item: Item) -> Vec<Item> {
        self.neighbours(&self.callers, item)
    }

    /// The functions `item` calls, in declaration order.
    pub fn callees_of(&self, item: Item) -> Vec<Item> {
        self.neighbours(&self.callees, item)
    }

    fn neighbours(&self, graph: &[Vec<u32>], item: Item) -> Vec<Item> {
        let Some(&at) = self.index.get(&item) else { return Vec::new() };
        graph.get(at as usize).map(|c| c.iter().map(|&i| self.functions[i as usize]).collect()).unwrap_or_default()
    }
}

/// The rows of the program in the database.
pub fn rows(db: &dyn Db) -> &Arc<Rows> {
    effect_rows(db, Program::get(db))
}

/// What the rows read of one function: whether it was refused, the effects its body performs
/// itself, and its call edges. A projection of [`check_fn`] that compares equal across body
/// edits that change neither (a literal, a local's name, an added pure statement), so that the
/// rows are not recomputed after them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub refused: bool,
    pub local_row: Row,
    pub calls: Arc<[crate::check::CallEdge]>,
    /// The declared functions the body uses as values.
    pub address_taken: Arc<[Item]>,
}

#[salsa::tracked(returns(ref))]
pub fn fn_summary(db: &dyn Db, item: Item) -> Summary {
    // A template is one node of the call graph: its row is the join of its instances' rows
    // (sound for every instance; see docs/decisions.md, "A template's row").
    if !crate::generics::fn_generics(db, item).is_empty() {
        return joined_summary(db, item, &crate::instance::instances_of(db, item));
    }
    let check = check_fn(db, item);
    Summary {
        refused: fn_signature(db, item).error.is_some() || check.error.is_some(),
        local_row: check.local_row.clone(),
        calls: check.calls.clone(),
        address_taken: check.address_taken.clone(),
    }
}

/// A template's summary: the join of its `instances`' checks.
pub fn joined_summary(db: &dyn Db, item: Item, instances: &[crate::instance::Instance<'_>]) -> Summary {
    let mut summary = Summary { refused: fn_signature(db, item).error.is_some(), ..Summary::default() };
    let mut calls: Vec<crate::check::CallEdge> = Vec::new();
    let mut taken: Vec<Item> = Vec::new();
    for &instance in instances {
        let check = crate::check::instance_check(db, instance);
        summary.refused |= check.error.is_some();
        summary.local_row.extend(check.local_row.iter().cloned());
        calls.extend(check.calls.iter().cloned());
        taken.extend(check.address_taken.iter().filter(|t| !taken.contains(t)).copied().collect::<Vec<_>>());
    }
    summary.calls = Arc::from(calls);
    summary.address_taken = Arc::from(taken);
    summary
}

/// True for a function whose body was checked (functions and tests).
pub fn is_function(kind: ItemKind) -> bool {
    matches!(kind, ItemKind::Fn | ItemKind::Test | ItemKind::Method)
}

#[salsa::tracked(returns(ref))]
pub fn effect_rows(db: &dyn Db, program: Program) -> Arc<Rows> {
    let functions: Vec<Item> = program.items(db).iter().filter(|e| is_function(e.key.kind)).map(|e| e.item).collect();
    let index: HashMap<Item, usize> = functions.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    let checks: Vec<&Summary> = functions.iter().map(|f| fn_summary(db, *f)).collect();
    let real = |c: &Summary| -> Vec<usize> {
        let mut out: Vec<usize> = c.calls.iter().filter_map(|edge| index.get(&edge.callee).copied()).collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let real_edges: Vec<Vec<usize>> = checks.iter().map(|c| real(c)).collect();
    let mut callers: Vec<Vec<u32>> = vec![Vec::new(); functions.len()];
    for (caller, callees) in real_edges.iter().enumerate() {
        for &callee in callees {
            callers[callee].push(caller as u32);
        }
    }
    let callees: Vec<Vec<u32>> = real_edges.iter().map(|e| e.iter().map(|&i| i as u32).collect()).collect();
    // An indirect call may reach any function whose address is taken anywhere: for the rows,
    // it calls each of them with every footprint dropped (language §21).
    let mut taken: Vec<Item> = Vec::new();
    for check in &checks {
        for item in check.address_taken.iter() {
            if !taken.contains(item) {
                taken.push(*item);
            }
        }
    }
    // A reference's row is the join of its own and its implementations' (language §27): for
    // the rows, it calls each implementation with its own parameters.
    let implementations = crate::implementations::implementations(db, program);
    let effective: Vec<Arc<[crate::check::CallEdge]>> = checks
        .iter()
        .zip(&functions)
        .map(|(c, &function)| {
            let joined: Vec<crate::check::CallEdge> = implementations
                .iter()
                .filter(|(_, reference)| *reference == function)
                .map(|&(implementation, _)| crate::check::CallEdge {
                    callee: implementation,
                    args: Arc::from(Vec::new()),
                    mapping: fn_signature(db, function)
                        .params
                        .iter()
                        .map(|p| if p.borrowed() { Mapped::Borrow(p.name.clone()) } else { Mapped::Dropped })
                        .collect(),
                })
                .collect();
            if joined.is_empty() && (taken.is_empty() || !c.local_row.contains("indirect_call")) {
                return c.calls.clone();
            }
            let mut calls = c.calls.to_vec();
            calls.extend(joined);
            if taken.is_empty() || !c.local_row.contains("indirect_call") {
                return Arc::from(calls);
            }
            for &target in &taken {
                let params = fn_signature(db, target).params.len();
                calls.push(crate::check::CallEdge {
                    callee: target,
                    args: Arc::from(Vec::new()),
                    mapping: Arc::from(vec![Mapped::Dropped; params]),
                });
            }
            Arc::from(calls)
        })
        .collect();
    let edges: Vec<Vec<usize>> = effective
        .iter()
        .map(|calls| {
            let mut out: Vec<usize> = calls.iter().filter_map(|edge| index.get(&edge.callee).copied()).collect();
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    let components = tarjan(&edges);
    let mut rows: Vec<Option<Row>> = vec![None; functions.len()];
    // Tarjan yields components callees-first.
    for component in &components {
        let on_cycle = component.len() > 1 || edges[component[0]].contains(&component[0]);
        let unknown = component.iter().any(|&m| checks[m].refused)
            || component
                .iter()
                .any(|&m| edges[m].iter().any(|&callee| !component.contains(&callee) && rows[callee].is_none()));
        if unknown {
            continue;
        }
        let mut current: Vec<Row> = component.iter().map(|&m| checks[m].local_row.clone()).collect();
        if on_cycle {
            for row in &mut current {
                row.insert(Arc::from("diverge"));
            }
        }
        loop {
            let mut changed = false;
            for (slot, &member) in component.iter().enumerate() {
                for edge in effective[member].iter() {
                    let Some(&callee) = index.get(&edge.callee) else { continue };
                    let callee_row = match component.iter().position(|&c| c == callee) {
                        Some(position) => current[position].clone(),
                        None => rows[callee].clone().unwrap_or_default(),
                    };
                    let signature = fn_signature(db, edge.callee);
                    for effect in rename(&callee_row, signature, &edge.mapping) {
                        changed |= current[slot].insert(effect);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for (slot, &member) in component.iter().enumerate() {
            rows[member] = Some(current[slot].clone());
        }
    }
    let index = index.into_iter().map(|(item, i)| (item, i as u32)).collect();
    Arc::new(Rows { rows: functions.iter().copied().zip(rows).collect(), functions, index, callees, callers })
}

/// One function's row, as a projection of the program's rows: it compares equal when this row
/// did not move, so the per-function judgements below re-run only where a row they read moved.
#[salsa::tracked(returns(ref))]
pub fn effect_row(db: &dyn Db, item: Item) -> Option<Row> {
    rows(db).row(item).cloned()
}

/// The ceiling judgement of one function, against its row.
#[salsa::tracked(returns(ref))]
pub fn fn_ceiling(db: &dyn Db, item: Item) -> Option<Diag> {
    let row = effect_row(db, item).as_ref()?;
    ceiling_refusal(db, row, item)
}

/// The operand-order audit of one function, against its callees' rows.
#[salsa::tracked(returns(ref))]
pub fn fn_order(db: &dyn Db, item: Item) -> Option<Diag> {
    order_refusal(db, &|callee| effect_row(db, callee).clone(), item)
}

/// A callee's row as seen by the caller: footprints renamed through the argument mapping.
pub(crate) fn rename(row: &Row, signature: &crate::signature::Signature, mapping: &[Mapped]) -> Vec<Arc<str>> {
    let mut out = Vec::with_capacity(row.len());
    for effect in row {
        // `lane:p`: the callee's lanes call its `fn` parameter `p`; a caller's own `fn`
        // parameter handed on carries it up, anything else is judged where it is written.
        if let Some(param) = effect.strip_prefix("lane:") {
            if let Some(Mapped::Borrow(name)) = signature.param_index(param).and_then(|i| mapping.get(i)) {
                out.push(Arc::from(format!("lane:{name}")));
            }
            continue;
        }
        let footprint = [("read:", "local_read"), ("write:", "local_write")]
            .into_iter()
            .find_map(|(prefix, local)| effect.strip_prefix(prefix).map(|p| (prefix, local, p)));
        match footprint {
            Some((prefix, local, param)) => {
                let mapped = signature.param_index(param).and_then(|i| mapping.get(i));
                match mapped {
                    Some(Mapped::Borrow(name)) => out.push(Arc::from(format!("{prefix}{name}"))),
                    Some(Mapped::Local) => out.push(Arc::from(local)),
                    Some(Mapped::Dropped) | None => {}
                }
            }
            None => out.push(effect.clone()),
        }
    }
    out
}

/// Strongly connected components, each listed once, callees before callers.
fn tarjan(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    let n = edges.len();
    let mut state = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    // Iterative depth-first search: no recursion on deep call chains.
    for root in 0..n {
        if state.index[root].is_some() {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        state.index[root] = Some(state.next);
        state.low[root] = state.next;
        state.next += 1;
        state.stack.push(root);
        state.on_stack[root] = true;
        while let Some(&mut (node, ref mut child)) = work.last_mut() {
            if *child < state.edges[node].len() {
                let next = state.edges[node][*child];
                *child += 1;
                match state.index[next] {
                    None => {
                        state.index[next] = Some(state.next);
                        state.low[next] = state.next;
                        state.next += 1;
                        state.stack.push(next);
                        state.on_stack[next] = true;
                        work.push((next, 0));
                    }
                    Some(index) if state.on_stack[next] => {
                        state.low[node] = state.low[node].min(index);
                    }
                    Some(_) => {}
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    state.low[parent] = state.low[parent].min(state.low[node]);
                }
                if Some(state.low[node]) == state.index[node] {
                    let mut component = Vec::new();
                    while let Some(member) = state.stack.pop() {
                        state.on_stack[member] = false;
                        component.push(member);
                        if member == node {
                            break;
                        }
                    }
                    component.sort_unstable();
                    state.out.push(component);
                }
            }
        }
    }
    state.out
}

/// `E-EFFECT-CEILING` for `item`, when its row exceeds its declared ceiling.
pub fn ceiling_refusal(db: &dyn Db, row: &Row, item: Item) -> Option<Diag> {
    let signature = fn_signature(db, item);
    let ceiling = signature.ceiling.as_ref()?;
    let excess: Vec<&Arc<str>> = row.iter().filter(|e| !ceiling.admits(e)).collect();
    if excess.is_empty() {
        return None;
    }
    let name = crate::scope::Resolver::new(db).full_name(item);
    let shown: Vec<&str> = excess.iter().map(|e| &***e).collect();
    Some(
        Diag::new(
            "E-EFFECT-CEILING",
            format!("{name} exceeds its declared effects: its row also holds {}.", shown.join(", ")),
            Anchor::Item,
        )
        .with_details(vec![("added_effects", list(&shown))]),
    )
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
        return instances_order_refusal(db, row_of, item, &crate::instance::instances_of(db, item));
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
            let distinct: std::collections::HashSet<&crate::types::Ty> = check.expr_types.iter().collect();
            distinct.into_iter().any(|t| crate::generics::kind_of(db, t) != crate::generics::Kind::Copy)
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
            if let Expr::Closure { body, .. } = self.body.expr(node) {
                let body = body.clone();
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
                // A call through a function value is observable (`indirect_call`).
                Some(CallTarget::Indirect) => Row::from([Arc::from("indirect_call")]),
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

    /// The footprint of a builtin that works on places: `write:` each place's root.
    fn places_written(&self, call: ExprId) -> Row {
        let Expr::Call { args, .. } = self.body.expr(call) else { return Row::new() };
        let mut row = Row::new();
        for &arg in args.iter() {
            let mut node = self.body.unparen(arg);
            loop {
                match self.body.expr(node) {
                    Expr::Field { base, .. } | Expr::Index { base, .. } => node = self.body.unparen(*base),
                    Expr::Name(name) => {
                        row.insert(Arc::from(format!("write:{name}")));
                        break;
                    }
                    _ => break,
                }
            }
        }
        row
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
                        .is_some_and(|ty| crate::generics::kind_of(self.db, ty) != crate::generics::Kind::Copy)
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
