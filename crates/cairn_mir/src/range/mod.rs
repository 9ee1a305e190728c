//! Range analysis over MIR, and the guards it discharges (language §15, issue 22).
//!
//! A forward data-flow analysis over a function's blocks keeps, for every integer and boolean
//! local whose address is never taken, an interval of the values it may hold, difference bounds
//! `x <= y + k` between such locals, and the comparison a boolean holds. Facts come from
//! constants, the intervals of the types, loop bounds and branch conditions (the condition on
//! each edge of a `branch`), earlier guards (after `i < len` passed, it holds), `min`/`max`,
//! conversions, `len` of arrays and of view parameters whose extent the signature fixes. Loops
//! are closed by widening (an interval end that keeps moving goes to its type's end) and then
//! tightened by two descending rounds.
//!
//! A guard whose condition the state at it proves is marked `elided` and given the facts that
//! prove it (`Guard::facts`); `facts::audit` re-checks each such proof before code is emitted
//! (`verify`), and the evaluator checks every fact at run time. Nothing else changes: the
//! guard stays in the MIR, `--keep-guards` still emits it, and the receipt counts it under
//! `discharged_check_sites`.
//!
//! Layout: `mod.rs` (the pass, the solver, conditions), `transfer.rs` (what each instruction
//! does), `prove.rs` (a guard's proof), `facts.rs` (facts and their audit), `state.rs` (the
//! abstract state, joins and widening).
//!
//! Soundness rests on two rules: every write to a tracked local is an instruction of the
//! function (its address is never taken, so no call, lane or borrow writes it), and every fact
//! that reads a local is forgotten when that local is written (`State::kill`).

pub(crate) mod facts;
mod prove;
mod state;
mod transfer;

pub use facts::{Fact, audit};

pub(crate) use facts::constant;
use state::{Iv, State};

use crate::{
    BinOp, BlockId, Check, Const, Function, Inst, IntTy, Local, MTy, Operand, Place, Rvalue, Terminator, ViewExtent,
};

/// Past this many locals times blocks a function is left as it is (the analysis would cost
/// more than the guards it could save).
const SIZE_LIMIT: usize = 4_000_000;

/// The most elements a view or owner of byte-or-larger elements can hold: no object of a 64-bit
/// address space is larger than `isize::MAX` bytes (an allocation past it fails, and traps).
const OBJECT_LIMIT: i128 = (1i128 << 63) - 1;

/// Entry-state updates of a loop's header after which the locals the loop writes are widened.
const WIDEN_AFTER: u32 = 3;

/// Entry-state updates of any block after which all of its intervals are widened (a backstop:
/// a loop's header bounds every cycle of a structured body).
const WIDEN_ALL_AFTER: u32 = 24;

/// Discharges every guard of `function` that the range analysis proves cannot fail; returns how
/// many it discharged.
pub fn discharge(function: &mut Function) -> usize {
    if function.blocks.is_empty()
        || function.locals.len() * function.blocks.len() > SIZE_LIMIT
        || !function.guards().any(|g| !g.elided)
    {
        return 0;
    }
    let analysis = Analysis::new(function);
    let Some(entries) = analysis.solve() else { return 0 };
    let mut proofs: Vec<(usize, usize, Vec<Fact>)> = Vec::new();
    for (b, block) in function.blocks.iter().enumerate() {
        let mut state = entries[b].clone();
        if !state.reach {
            continue;
        }
        let mut pending = None;
        for (i, inst) in block.insts.iter().enumerate() {
            // A proof with no facts (constants alone) is left to LLVM: every range discharge
            // carries facts, so codegen and `verify` audit every one.
            if let Inst::Guard(guard) = inst
                && !guard.elided
                && let Some(facts) = analysis.prove(&state, &guard.check)
                && !facts.is_empty()
                && audit(&guard.check, &facts)
            {
                proofs.push((b, i, facts));
            }
            pending = analysis.step(&mut state, inst, pending);
            if !state.reach {
                break;
            }
        }
    }
    let count = proofs.len();
    for (b, i, facts) in proofs {
        if let Inst::Guard(guard) = &mut function.blocks[b].insts[i] {
            guard.elided = true;
            guard.facts = facts;
        }
    }
    count
}

/// One function's analysis: which locals it tracks and their types' intervals, the widening
/// steps, and its loops.
struct Analysis<'f> {
    function: &'f Function,
    /// Per local: its type's interval when it is tracked (an integer or `bool` whose address is
    /// never taken, and whose value can reach a guard or a branch).
    tops: Vec<Option<Iv>>,
    /// Per local: its index among the tracked ones (a state holds only those), `u32::MAX` else.
    dense: Vec<u32>,
    /// The tracked locals' type intervals, by that index.
    dense_tops: Vec<Option<Iv>>,
    /// View parameters never written whose length the signature fixes: a literal, or an extent
    /// parameter never written (`docs/decisions.md`, "a view parameter's extent": every maker of a
    /// view argument passes one of that length).
    lengths: Vec<(Local, Length)>,
    /// The widening steps: every integer constant of the function, one less and one more.
    steps: Vec<i128>,
    /// Per block: for a loop's header, which tracked locals (by index) the loop writes.
    loops: Vec<Option<Vec<bool>>>,
    /// Per block: for a loop's header, the pairs `(x, y)` whose difference bound its joins seed
    /// from intervals (`State::join_seeded`): `x` an integer the loop writes, `y` an integer
    /// the header's test reads.
    seeds: Vec<Vec<(Local, Local)>>,
}

/// What fixes a view parameter's length.
#[derive(Clone, Copy)]
enum Length {
    Literal(u64),
    Param(Local),
}

impl<'f> Analysis<'f> {
    fn new(function: &'f Function) -> Analysis<'f> {
        // Locals whose address is taken (borrowed, viewed, updated atomically): anything may
        // write them, so they are never followed.
        let taken = crate::visit::address_taken(function);
        let mut writes = vec![0u32; function.locals.len()];
        for inst in function.blocks.iter().flat_map(|b| &b.insts) {
            match inst {
                Inst::Assign(place, _) => {
                    if place.proj.is_empty() {
                        writes[place.local.0 as usize] += 1;
                    }
                }
                Inst::Call { dst: Some(place), .. }
                | Inst::CallIndirect { dst: Some(place), .. }
                | Inst::DeviceReduce { dest: place, .. }
                    if place.proj.is_empty() =>
                {
                    writes[place.local.0 as usize] += 1
                }
                Inst::Drop(place) => writes[place.local.0 as usize] += 1,
                _ => {}
            }
        }
        let scalar = |i: usize| !taken[i] && matches!(function.locals[i].ty, MTy::Int(_) | MTy::Bool);
        let fixed = |l: Local| (l.0 < function.params) && !taken[l.0 as usize] && writes[l.0 as usize] == 0;
        let lengths: Vec<(Local, Length)> = function
            .extents
            .iter()
            .filter(|(view, _)| fixed(*view))
            .filter_map(|(view, extent)| match extent {
                ViewExtent::Literal(n) => Some((*view, Length::Literal(*n))),
                ViewExtent::Param(p) if fixed(*p) && scalar(p.0 as usize) => Some((*view, Length::Param(*p))),
                ViewExtent::Param(_) => None,
            })
            .collect();
        let relevant = relevant(function, &lengths);
        let tops = function
            .locals
            .iter()
            .enumerate()
            .map(|(i, decl)| match decl.ty {
                _ if !scalar(i) || !relevant[i] => None,
                MTy::Int(t) => Some(Iv::new(t.range().0, t.range().1)),
                _ => Some(Iv::new(0, 1)),
            })
            .collect::<Vec<_>>();
        let mut dense = vec![u32::MAX; tops.len()];
        let mut dense_tops = Vec::new();
        for (i, top) in tops.iter().enumerate() {
            if let Some(top) = top {
                dense[i] = dense_tops.len() as u32;
                dense_tops.push(Some(*top));
            }
        }
        let mut steps: Vec<i128> = Vec::new();
        let mut note = |o: &Operand| {
            if let Operand::Const(Const::Int(v, ty)) = o {
                let v = constant(*v, *ty);
                steps.extend([v - 1, v, v + 1]);
            }
        };
        for block in &function.blocks {
            for inst in &block.insts {
                match inst {
                    Inst::Assign(_, Rvalue::Binary(_, a, b)) => {
                        note(a);
                        note(b);
                    }
                    Inst::Assign(_, Rvalue::Use(a) | Rvalue::Cast(_, a) | Rvalue::Unary(_, a)) => note(a),
                    Inst::Guard(guard) => match &guard.check {
                        Check::InBounds(a, b) | Check::NoOverflow(_, _, a, b) => {
                            note(a);
                            note(b);
                        }
                        _ => {}
                    },
                    _ => {}
                }
            }
            if let Terminator::Branch(o, ..) | Terminator::Switch(o, ..) = &block.term {
                note(o);
            }
        }
        for (_, extent) in &function.extents {
            if let ViewExtent::Literal(n) = extent {
                let n = i128::from(*n);
                steps.extend([n - 1, n, n + 1]);
            }
        }
        for decl in &function.locals {
            if let MTy::Array(_, n) = decl.ty {
                let n = i128::from(n);
                steps.extend([n - 1, n, n + 1]);
            }
        }
        steps.sort_unstable();
        steps.dedup();
        let written = loops(function);
        let seeds = written
            .iter()
            .enumerate()
            .map(|(h, mask)| {
                let Some(mask) = mask else { return Vec::new() };
                let int = |l: Local| tops[l.0 as usize].is_some() && matches!(function.local(l).ty, MTy::Int(_));
                // The locals the header's tests read (`cond = lt k, n`).
                let tested: Vec<Local> = function.blocks[h]
                    .insts
                    .iter()
                    .filter_map(|inst| match inst {
                        Inst::Assign(_, Rvalue::Binary(op, a, b)) if is_comparison(*op) => Some([a, b]),
                        _ => None,
                    })
                    .flatten()
                    .filter_map(|o| match o {
                        Operand::Copy(p) if p.proj.is_empty() && int(p.local) => Some(p.local),
                        _ => None,
                    })
                    .collect();
                let mut pairs = Vec::new();
                for x in (0..mask.len()).filter(|&i| mask[i]).map(|i| Local(i as u32)).filter(|&x| int(x)) {
                    pairs.extend(tested.iter().filter(|&&y| y != x).map(|&y| (x, y)));
                }
                pairs
            })
            .collect();
        let loops = written
            .into_iter()
            .map(|mask| {
                mask.map(|m| m.iter().enumerate().filter(|(i, _)| dense[*i] != u32::MAX).map(|(_, w)| *w).collect())
            })
            .collect();
        let lengths = lengths
            .into_iter()
            .filter(|(_, l)| !matches!(l, Length::Param(p) if tops[p.0 as usize].is_none()))
            .collect();
        Analysis { function, tops, dense, dense_tops, lengths, steps, loops, seeds }
    }

    /// Where a tracked local's interval lives in a state.
    fn slot(&self, local: Local) -> usize {
        self.dense[local.0 as usize] as usize
    }

    /// The state on entry: every tracked local anywhere in its type (the lowering writes a
    /// local before it reads it, so nothing is assumed of its starting value).
    fn entry(&self) -> State {
        let mut state = State::bottom(self.dense_tops.len());
        state.reach = true;
        state.vals.clone_from(&self.dense_tops);
        // An extent parameter is a view's length, and no object is larger than the address
        // space allows (`OBJECT_LIMIT`).
        for (view, length) in &self.lengths {
            if let Length::Param(p) = length
                && self.sized_elements(&Place::local(*view))
            {
                let slot = self.slot(*p);
                state.vals[slot] = state.vals[slot].and_then(|v| v.meet(Iv::new(0, OBJECT_LIMIT)));
            }
        }
        state
    }

    /// True when the place is a view or owner of elements that take at least a byte each (so
    /// its length is at most `OBJECT_LIMIT`).
    fn sized_elements(&self, place: &Place) -> bool {
        matches!(
            self.function.place_ty(place),
            Some(MTy::View(e) | MTy::Buf(e)) if matches!(*e, MTy::Int(_) | MTy::Float(_) | MTy::Bool)
        )
    }

    /// The entry state of every block, or `None` when the iteration did not settle.
    fn solve(&self) -> Option<Vec<State>> {
        let n = self.function.blocks.len();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, block) in self.function.blocks.iter().enumerate() {
            for s in block.term.successors() {
                preds[s.0 as usize].push(b);
            }
        }
        let mut entries: Vec<State> = vec![State::bottom(self.dense_tops.len()); n];
        entries[0] = self.entry();
        let mut updates = vec![0u32; n];
        let mut work: Vec<usize> = vec![0];
        let mut queued = vec![false; n];
        queued[0] = true;
        let mut steps = 0usize;
        let mut widened = false;
        while let Some(b) = work.pop() {
            queued[b] = false;
            steps += 1;
            if steps > n * 64 + 256 {
                return None;
            }
            for (s, out) in self.block_out(b, &entries[b]) {
                let s = s.0 as usize;
                let joined = self.join_at(s, &entries[s], &out);
                if joined == entries[s] {
                    continue;
                }
                updates[s] += 1;
                widened |= updates[s] > WIDEN_AFTER;
                let next = if updates[s] > WIDEN_ALL_AFTER {
                    entries[s].widen(&joined, &self.dense_tops, &self.steps, None)
                } else if let Some(writes) = &self.loops[s]
                    && updates[s] > WIDEN_AFTER
                {
                    entries[s].widen(&joined, &self.dense_tops, &self.steps, Some(writes))
                } else {
                    joined
                };
                // A widening that gives back the state it started from changes nothing (a header
                // whose join seeds again a bound the widening drops): nothing to propagate.
                if next == entries[s] {
                    continue;
                }
                entries[s] = next;
                if !queued[s] {
                    queued[s] = true;
                    work.push(s);
                }
            }
        }
        // Descending rounds: each block's entry recomputed from its predecessors' outs, which
        // stays above every execution because the state it starts from does. They recover what
        // widening gave away, so without a widening they are skipped (the states are already a
        // fixpoint, and sound as they are).
        for _ in 0..if widened { 2 } else { 0 } {
            let outs: Vec<Vec<(BlockId, State)>> = (0..n).map(|b| self.block_out(b, &entries[b])).collect();
            let mut next: Vec<State> = vec![State::bottom(self.dense_tops.len()); n];
            next[0] = self.entry();
            for edges in &outs {
                for (s, out) in edges {
                    let s = s.0 as usize;
                    next[s] = self.join_at(s, &next[s], out);
                }
            }
            entries = next;
        }
        Some(entries)
    }

    /// The join of two states entering block `s` (seeded at a loop's header).
    fn join_at(&self, s: usize, a: &State, b: &State) -> State {
        if self.seeds[s].is_empty() { a.join(b) } else { a.join_seeded(b, &self.seeds[s], |l| self.slot(l)) }
    }

    /// The state leaving block `b` along each edge, from its entry state.
    fn block_out(&self, b: usize, entry: &State) -> Vec<(BlockId, State)> {
        if !entry.reach {
            return Vec::new();
        }
        let block = &self.function.blocks[b];
        let mut state = entry.clone();
        let mut pending = None;
        for inst in &block.insts {
            pending = self.step(&mut state, inst, pending);
            if !state.reach {
                return Vec::new();
            }
        }
        self.leave(&block.term, state, 0)
    }

    /// The states along each edge of a terminator. An edge into a block that only branches (the
    /// join of a short-circuit `&&` or `||`) is followed through that branch with this edge's
    /// own state, so what the left operand decided is not lost in the join.
    fn leave(&self, term: &Terminator, state: State, depth: u32) -> Vec<(BlockId, State)> {
        let edges = match term {
            Terminator::Goto(t) => vec![(*t, state)],
            Terminator::Branch(cond, t, e) => {
                let mut yes = state.clone();
                self.assume_bool(&mut yes, cond, true);
                let mut no = state;
                self.assume_bool(&mut no, cond, false);
                let mut out = Vec::new();
                if yes.reach {
                    out.push((*t, yes));
                }
                if no.reach {
                    out.push((*e, no));
                }
                out
            }
            Terminator::Switch(value, cases, default) => {
                let mut out = Vec::new();
                for (k, target) in cases {
                    let mut s = state.clone();
                    self.refine(&mut s, value, Iv::point(i128::from(*k)));
                    if s.reach {
                        out.push((*target, s));
                    }
                }
                out.push((*default, state));
                out
            }
            Terminator::Return(_) | Terminator::Unreachable => Vec::new(),
        };
        if depth >= 4 {
            return edges;
        }
        let mut out = Vec::with_capacity(edges.len());
        for (target, state) in edges {
            let block = &self.function.blocks[target.0 as usize];
            if target.0 != 0 && block.insts.is_empty() && matches!(block.term, Terminator::Branch(..)) {
                out.extend(self.leave(&block.term, state, depth + 1));
            } else {
                out.push((target, state));
            }
        }
        out
    }

    // ----- values ------------------------------------------------------------------------

    /// The tracked local an operand reads whole, if any.
    fn tracked(&self, o: &Operand) -> Option<Local> {
        match o {
            Operand::Copy(Place { local, proj }) if proj.is_empty() && self.tops[local.0 as usize].is_some() => {
                Some(*local)
            }
            _ => None,
        }
    }

    /// What the state says an integer or boolean operand may be.
    fn interval(&self, state: &State, o: &Operand) -> Option<Iv> {
        match o {
            Operand::Const(Const::Int(v, ty)) => Some(Iv::point(constant(*v, *ty))),
            Operand::Const(Const::Bool(b)) => Some(Iv::point(i128::from(*b))),
            Operand::Const(_) => None,
            Operand::Copy(place) => {
                if let Some(local) = self.tracked(o) {
                    return state.vals[self.slot(local)];
                }
                match self.function.place_ty(place)? {
                    MTy::Int(t) => Some(Iv::new(t.range().0, t.range().1)),
                    MTy::Bool => Some(Iv::new(0, 1)),
                    _ => None,
                }
            }
        }
    }

    fn int_ty(&self, o: &Operand) -> Option<IntTy> {
        match o {
            Operand::Const(Const::Int(_, t)) => Some(*t),
            Operand::Const(_) => None,
            Operand::Copy(place) => match self.function.place_ty(place)? {
                MTy::Int(t) => Some(t),
                _ => None,
            },
        }
    }

    /// Narrows an operand's interval (nothing for an operand not tracked); a state where it can
    /// hold no value is unreachable.
    fn refine(&self, state: &mut State, o: &Operand, to: Iv) {
        match self.tracked(o) {
            Some(local) => match state.vals[self.slot(local)].and_then(|v| v.meet(to)) {
                Some(v) => state.vals[self.slot(local)] = Some(v),
                None => state.reach = false,
            },
            None => {
                if let Some(v) = self.interval(state, o)
                    && v.meet(to).is_none()
                {
                    state.reach = false;
                }
            }
        }
    }

    // ----- conditions ----------------------------------------------------------------------

    /// What holding `check` teaches (the code after a guard runs only where it held).
    fn holds(&self, state: &mut State, check: &Check) {
        match check {
            Check::InBounds(i, len) => {
                self.refine(state, i, Iv::new(0, i128::MAX));
                self.less(state, i, len, 1);
            }
            Check::PartInBounds(lo, hi, len) => {
                self.less(state, lo, hi, 0);
                self.less(state, hi, len, 0);
            }
            Check::Division(_, _, b) => {
                if let Some(v) = self.interval(state, b) {
                    let v = Iv::new(if v.lo == 0 { 1 } else { v.lo }, if v.hi == 0 { -1 } else { v.hi });
                    if v.lo <= v.hi {
                        self.refine(state, b, v);
                    } else {
                        state.reach = false;
                    }
                }
            }
            Check::Fits(MTy::Int(_), MTy::Int(to), v) => self.refine(state, v, Iv::new(to.range().0, to.range().1)),
            Check::ShiftCount(ty, n) => self.refine(state, n, Iv::new(0, i128::from(ty.bits()) - 1)),
            Check::NegNoOverflow(ty, a) if ty.signed() => self.refine(state, a, Iv::new(ty.range().0 + 1, i128::MAX)),
            Check::NegNoOverflow(_, a) => self.refine(state, a, Iv::point(0)),
            Check::Assert(c, _) => self.assume_bool(state, c, true),
            _ => {}
        }
    }

    /// The state where the boolean operand `c` is `value`.
    fn assume_bool(&self, state: &mut State, c: &Operand, value: bool) {
        self.refine(state, c, Iv::point(i128::from(value)));
        if !state.reach {
            return;
        }
        let Some(local) = self.tracked(c) else { return };
        let Some(cond) = state.conds.iter().find(|k| k.dst == local).cloned() else { return };
        let op = if value { cond.op } else { negate(cond.op) };
        match op {
            BinOp::Lt => self.less(state, &cond.a, &cond.b, 1),
            BinOp::Le => self.less(state, &cond.a, &cond.b, 0),
            BinOp::Gt => self.less(state, &cond.b, &cond.a, 1),
            BinOp::Ge => self.less(state, &cond.b, &cond.a, 0),
            BinOp::Eq => {
                if let (Some(va), Some(vb)) = (self.interval(state, &cond.a), self.interval(state, &cond.b)) {
                    match va.meet(vb) {
                        Some(v) => {
                            self.refine(state, &cond.a, v);
                            self.refine(state, &cond.b, v);
                        }
                        None => state.reach = false,
                    }
                }
                self.less(state, &cond.a, &cond.b, 0);
                self.less(state, &cond.b, &cond.a, 0);
            }
            BinOp::Ne => {
                // Only an end of an interval can be cut off by `!=`.
                for (this, other) in [(&cond.a, &cond.b), (&cond.b, &cond.a)] {
                    if let (Some(v), Some(k)) = (self.interval(state, this), self.interval(state, other))
                        && k.lo == k.hi
                    {
                        let v = Iv::new(
                            if v.lo == k.lo { v.lo + 1 } else { v.lo },
                            if v.hi == k.lo { v.hi - 1 } else { v.hi },
                        );
                        if v.lo > v.hi {
                            state.reach = false;
                            return;
                        }
                        self.refine(state, this, v);
                    }
                }
            }
            _ => {}
        }
    }

    /// The state where `a + gap <= b` (`gap` 1 for `<`, 0 for `<=`): both intervals narrowed,
    /// and the difference bound `a <= b - gap` with what it implies through the bounds known.
    fn less(&self, state: &mut State, a: &Operand, b: &Operand, gap: i128) {
        let (Some(va), Some(vb)) = (self.interval(state, a), self.interval(state, b)) else { return };
        self.refine(state, a, Iv::new(i128::MIN / 4, vb.hi - gap));
        if !state.reach {
            return;
        }
        self.refine(state, b, Iv::new(va.lo + gap, i128::MAX / 4));
        if !state.reach {
            return;
        }
        if let (Some(x), Some(y)) = (self.tracked(a), self.tracked(b))
            && x != y
        {
            let mut implied = vec![(x, y, -gap)];
            for &(l, r, k) in &state.rel {
                if l == y && r != x {
                    implied.push((x, r, k - gap));
                }
                if r == x && l != y {
                    implied.push((l, y, k - gap));
                }
            }
            for (l, r, k) in implied {
                state.relate(l, r, k);
                // The bound narrows both ends it joins: `l <= r.hi + k`, `r >= l.lo - k`.
                if let (Some(vl), Some(vr)) = (state.vals[self.slot(l)], state.vals[self.slot(r)]) {
                    match (
                        vl.meet(Iv::new(vl.lo, vr.hi.saturating_add(k))),
                        vr.meet(Iv::new(vl.lo.saturating_sub(k), vr.hi)),
                    ) {
                        (Some(nl), Some(nr)) => {
                            state.vals[self.slot(l)] = Some(nl);
                            state.vals[self.slot(r)] = Some(nr);
                        }
                        _ => state.reach = false,
                    }
                }
            }
        }
    }
}

/// Per local: whether its value can reach a guard in force or a branch (so intervals of it can
/// discharge a guard): the locals those read, and backwards through every assignment to one of
/// them, and the extent parameter of a view whose length one of them is.
fn relevant(function: &Function, lengths: &[(Local, Length)]) -> Vec<bool> {
    let mut relevant = vec![false; function.locals.len()];
    let mark = |o: &Operand, relevant: &mut Vec<bool>| -> bool {
        match o {
            Operand::Copy(place) if place.proj.is_empty() && !relevant[place.local.0 as usize] => {
                relevant[place.local.0 as usize] = true;
                true
            }
            _ => false,
        }
    };
    for block in &function.blocks {
        for inst in &block.insts {
            if let Inst::Guard(guard) = inst
                && !guard.elided
            {
                let mut guard = guard.clone();
                crate::visit::guard_places(&mut guard, &mut |place, _| {
                    if place.proj.is_empty() {
                        relevant[place.local.0 as usize] = true;
                    }
                });
            }
        }
        if let Terminator::Branch(o, ..) | Terminator::Switch(o, ..) = &block.term {
            mark(o, &mut relevant);
        }
    }
    loop {
        let mut grew = false;
        for inst in function.blocks.iter().flat_map(|b| &b.insts) {
            let Inst::Assign(place, rvalue) = inst else { continue };
            if !place.proj.is_empty() || !relevant[place.local.0 as usize] {
                continue;
            }
            match rvalue {
                Rvalue::Use(a) | Rvalue::Unary(_, a) | Rvalue::Cast(_, a) => grew |= mark(a, &mut relevant),
                Rvalue::Binary(_, a, b) => {
                    grew |= mark(a, &mut relevant);
                    grew |= mark(b, &mut relevant);
                }
                Rvalue::Select(c, a, b) => {
                    grew |= mark(c, &mut relevant);
                    grew |= mark(a, &mut relevant);
                    grew |= mark(b, &mut relevant);
                }
                Rvalue::Len(view) if view.proj.is_empty() => {
                    if let Some((_, Length::Param(p))) = lengths.iter().find(|(v, _)| *v == view.local) {
                        grew |= mark(&Operand::Copy(Place::local(*p)), &mut relevant);
                    }
                }
                _ => {}
            }
        }
        if !grew {
            return relevant;
        }
    }
}

/// Per block: for the header of a natural loop (`cfg::Loops`), the locals written anywhere in it.
fn loops(function: &Function) -> Vec<Option<Vec<bool>>> {
    crate::cfg::Loops::of(function)
        .bodies
        .into_iter()
        .map(|body| {
            let body = body?;
            let mut writes = vec![false; function.locals.len()];
            for (block, _) in function.blocks.iter().zip(&body).filter(|(_, inside)| **inside) {
                for local in block.insts.iter().filter_map(crate::visit::written) {
                    writes[local.0 as usize] = true;
                }
            }
            Some(writes)
        })
        .collect()
}

fn is_comparison(op: BinOp) -> bool {
    matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
}

/// The comparison that holds when `op` does not.
fn negate(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        BinOp::Eq => BinOp::Ne,
        BinOp::Ne => BinOp::Eq,
        other => other,
    }
}

/// The comparison's result when the intervals decide it.
fn compare(op: BinOp, a: Iv, b: Iv) -> Option<bool> {
    match op {
        BinOp::Lt if a.hi < b.lo => Some(true),
        BinOp::Lt if a.lo >= b.hi => Some(false),
        BinOp::Le if a.hi <= b.lo => Some(true),
        BinOp::Le if a.lo > b.hi => Some(false),
        BinOp::Gt => compare(BinOp::Lt, b, a),
        BinOp::Ge => compare(BinOp::Le, b, a),
        BinOp::Eq if a.lo == a.hi && b.lo == b.hi && a.lo == b.lo => Some(true),
        BinOp::Eq if a.meet(b).is_none() => Some(false),
        BinOp::Ne => compare(BinOp::Eq, a, b).map(|e| !e),
        _ => None,
    }
}

/// The interval of `f` over two intervals' corners (exact for `+`, `-`, `*`), `None` when a
/// corner leaves `i128`.
fn corners(a: Iv, b: Iv, f: fn(i128, i128) -> Option<i128>) -> Option<Iv> {
    let values = [f(a.lo, b.lo)?, f(a.lo, b.hi)?, f(a.hi, b.lo)?, f(a.hi, b.hi)?];
    Some(Iv::new(*values.iter().min()?, *values.iter().max()?))
}

/// The smallest `2^k - 1` at least `v` (for `v >= 0`).
fn ones(v: i128) -> i128 {
    if v <= 0 { 0 } else { (1i128 << (128 - v.leading_zeros()).min(126)) - 1 }
}
