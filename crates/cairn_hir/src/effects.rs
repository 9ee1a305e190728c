//! Effect rows (language §14) and ceilings. The operand-order audit (§16), which reads the rows,
//! is `order.rs`.
//!
//! [`effect_rows`] builds the call graph from every body's call edges, splits it into strongly
//! connected components (Tarjan), and computes rows component by component, callees first: the
//! least fixed point inside a component of the members' local rows and their callees' rows
//! renamed through each call's argument mapping; a component on a cycle adds `diverge` to every
//! member. A function whose body or signature was refused has no row, and neither has anything
//! that reaches it (its row is unknown, never empty). Components are keyed by their members, not
//! by Tarjan's visiting order, so the answer does not depend on declaration order.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::check::{Mapped, check_fn};
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
        let requested = crate::requested::instances_of(db, item);
        let scope = crate::scope::Resolver::new(db);
        if requested.is_empty() && !scope.is_library_module(&scope.module_of(item)) {
            // A template of the program that nothing instantiates has the row of its witnesses
            // (tools.md §3.7), unknown when none can be made — never the empty row of no
            // instances. The cost is accepted on purpose: its witness checks (at most 128) run
            // in the rows of every whole check, memoized until the template or what it reads
            // changes; only other un-instantiated templates can call it.
            return match crate::certify::witness_instances(db, item) {
                Ok(witnesses) => joined_summary(db, item, &witnesses),
                Err(_) => Summary { refused: true, ..Summary::default() },
            };
        }
        return joined_summary(db, item, &requested);
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
