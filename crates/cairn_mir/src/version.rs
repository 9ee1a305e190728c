//! Loop versioning (issue 22): guards in a `for` loop (and in the counted loops nested in it) that
//! depend on the counters only through sums and products are checked once, before the loop, for
//! every value the counters will take (nested loops: `Range`, taken outermost first). When each such check passes, a copy of the loop without those guards runs; when any
//! fails, the loop as lowered runs, and traps where, when and with the message it always did.
//!
//! `for j in 0..n { c[i * n + j] += a * b[k * n + j]; }` keeps four guards per iteration (two
//! additions that may overflow, two indices that may be out of bounds), each a branch to a trap
//! that stops LLVM from vectorizing the loop. Here the two indices are `A + j` and `B + j` with `A`
//! and `B` unchanged by the loop, so over `j in lo..hi` they are largest at `j = hi - 1`: one check
//! `A <= MAX - (hi - 1) && A + (hi - 1) < len` before the loop stands for all of them.
//!
//! What is followed. The loop is a counted one as the lowering makes it: a header that only tests
//! `iv < bound` and branches into the body or out; one latch that ends with `iv = iv + 1` and
//! jumps back; one block outside the loop entering the header; `iv` an unsigned integer whose
//! address is never taken and that nothing else in the loop writes; `bound` a constant or a local
//! the loop does not write. A guard's operand is followed back, within its block, through the
//! assignments before it (`Use`, unsigned `+`, `*`, and `-` of a value the loop does not change)
//! to the counter, constants, locals the loop does not write (and whose address is never taken)
//! and lengths of such views. Every such expression grows with the counter, so each operation in
//! it is exact over the whole range when it is exact at the range's end where it is largest (a
//! sum or product at `hi - 1`) or smallest (a difference at the first value of the counter).
//!
//! What is decided: an unsigned `+`, `*` or `-` overflow guard, and an index guard `i < len` with
//! `len` unchanged by the loop. The check before the loop computes each followed expression at
//! the range's two ends with wrapping arithmetic, exactly as the loop computes it, and asks that
//! every operation in it is exact there and every index below its length; a loop that will not
//! run at all (`iv >= bound` on entry) takes the copy too, since nothing in it runs. The guards
//! the copy leaves out are marked `elided` and `hoisted` (the receipt counts them as
//! `hoisted_check_sites`); any other guard stays in both copies.
//!
//! Nests: loops are taken outermost first. A counted loop nested in the one being versioned whose
//! counter is written there only by its increment and by one assignment, in the block entering it,
//! of a constant or a fixed value, and whose bound is fixed the same way, lends its counter as a
//! second range (`Range`): inside that loop, before its increment, the counter holds a value of
//! `first..bound`. Every expression grows with each counter, so all counters at their last values
//! bound it from above, all at their first values from below. A nested counter is read as one only
//! inside its own loop; a guard outside it that reads it is not decided.
//!
//! Soundness: in the copy, a left-out guard's condition holds for every value of the counters the
//! loop reaches, because the values it reads are those computed before it in its block from the
//! counters (each in its range, as its header tested) and from values fixed before the loop, and
//! the check showed the condition for the whole ranges. Off the copy nothing changed. The native
//! differential (`crates/cairn_cli/tests/differential_guards.rs`) runs random programs with such
//! loops, traps included, against the evaluator, which runs the MIR as lowered.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::{
    BinOp, Block, BlockId, Check, Const, Function, Inst, IntTy, Local, LocalDecl, MTy, Operand, Place, Rvalue,
    Terminator,
};

/// The most instructions a loop may hold to be copied.
const LOOP_SIZE: usize = 400;

/// How far back an operand is followed through the assignments before it.
const DEPTH: usize = 12;

/// Versions every qualifying loop of every host function, outermost first (module comment). A build
/// does this only when guards may be left out; `--keep-guards` and the evaluator see the loops
/// as lowered.
pub(crate) fn version_program(functions: &mut [Arc<Function>]) {
    for function in functions.iter_mut() {
        if function.device || !function.guards().any(|g| !g.elided) {
            continue;
        }
        // Headers already looked at (each copy's too), so no loop is versioned twice.
        let mut seen: HashSet<usize> = HashSet::new();
        while let Some(plan) = next_plan(function, &mut seen) {
            let fast = apply(Arc::make_mut(function), &plan);
            seen.insert(fast);
        }
    }
}

/// A value an index computation is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    /// A counter: the loop's own, or that of a counted loop nested in it (`Range`).
    Counter(Local),
    /// A value the loop does not change, as read before it (`Use` of a constant or a fixed
    /// local, or `Len` of a fixed view).
    Fixed(Rvalue),
    /// An unsigned operation whose value grows (or stays) as the counter grows: `+` and `*` of
    /// such values, `-` of a fixed value.
    Op(BinOp, IntTy, Box<Node>, Box<Node>),
}

impl Node {
    fn counts(&self) -> bool {
        match self {
            Node::Counter(_) => true,
            Node::Fixed(_) => false,
            Node::Op(_, _, a, b) => a.counts() || b.counts(),
        }
    }

    /// Every operation in the expression, innermost first.
    fn operations<'n>(&'n self, out: &mut Vec<&'n Node>) {
        if let Node::Op(_, _, a, b) = self {
            a.operations(out);
            b.operations(out);
            out.push(self);
        }
    }
}

/// What the check before the loop must show.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    /// The operation is exact (does not wrap) over the whole range.
    Exact(Node),
    /// The first value is below the second (an index and its length) over the whole range.
    Below(Node, Node),
}

/// A loop to version.
struct Plan {
    header: usize,
    /// The loop's blocks, in block order.
    blocks: Vec<usize>,
    /// The one block outside the loop that enters it.
    entry: usize,
    counter: Local,
    bound: Operand,
    /// The counters the needs range over: the loop's own first, then its nested loops'.
    ranges: Vec<Range>,
    /// The guards the copy leaves out, by block and instruction.
    decided: HashSet<(usize, usize)>,
    needs: Vec<Need>,
}

/// A counter the check ranges over: the versioned loop's own, or that of a counted loop nested in
/// it whose first value and bound the outer loop does not change (`for j in 0..n` inside it). In
/// the blocks of its loop, before its increment, it holds a value in `first..bound`.
struct Range {
    counter: Local,
    /// Per block of the function: inside its loop.
    inside: Vec<bool>,
    latch: usize,
    at: usize,
    /// Its first value and its bound, as the block before the versioned loop reads them.
    first: Operand,
    bound: Operand,
}

/// The next loop not yet looked at that can be versioned, if any: outer loops first, so a nest
/// is checked once before its outermost loop it can be.
fn next_plan(function: &Function, seen: &mut HashSet<usize>) -> Option<Plan> {
    let loops = crate::cfg::Loops::of(function);
    let mut headers: Vec<(usize, &Vec<bool>)> =
        loops.bodies.iter().enumerate().filter_map(|(h, body)| Some((h, body.as_ref()?))).collect();
    headers.sort_by_key(|(h, body)| (std::cmp::Reverse(body.iter().filter(|x| **x).count()), *h));
    let taken = crate::visit::address_taken(function);
    for &(h, body) in &headers {
        if seen.insert(h)
            && let Some(plan) = plan(function, h, body, &loops, &taken)
        {
            return Some(plan);
        }
    }
    None
}

fn plan(function: &Function, h: usize, body: &[bool], loops: &crate::cfg::Loops, taken: &[bool]) -> Option<Plan> {
    let shape = crate::counted::counted(function, h, body, taken)?;
    if shape.blocks.iter().map(|b| function.blocks[*b].insts.len()).sum::<usize>() > LOOP_SIZE
        || function.blocks[shape.entry].term != Terminator::Goto(BlockId(h as u32))
    {
        return None;
    }
    let crate::counted::Counted { blocks, entry, counter, bound, latch, at, writes, .. } = shape;
    let fixed = |local: Local| !taken[local.0 as usize] && !writes.contains_key(&local);
    let mut ranges = vec![Range {
        counter,
        inside: body.to_vec(),
        latch,
        at,
        first: Operand::Copy(Place::local(counter)),
        bound: bound.clone(),
    }];
    // The counted loops nested in this one whose first value and bound it does not change.
    for (h2, body2) in loops.bodies.iter().enumerate() {
        let Some(body2) = body2 else { continue };
        if h2 == h || !body[h2] {
            continue;
        }
        if let Some(range) = nested(function, h2, body2, taken, &writes, &fixed) {
            ranges.push(range);
        }
    }
    let follow = Follow { function, ranges: &ranges, writes: &writes, taken, fixed: &fixed };
    let mut decided = HashSet::new();
    let mut needs: Vec<Need> = Vec::new();
    for &b in &blocks {
        for (i, inst) in function.blocks[b].insts.iter().enumerate() {
            let Inst::Guard(guard) = inst else { continue };
            if guard.elided {
                continue;
            }
            let Some(wanted) = follow.needs(b, i, &guard.check) else { continue };
            decided.insert((b, i));
            for need in wanted {
                if !needs.contains(&need) {
                    needs.push(need);
                }
            }
        }
    }
    if decided.is_empty() {
        return None;
    }
    Some(Plan { header: h, blocks, entry, counter, bound, ranges, decided, needs })
}

/// The range of a counted loop (headed by `h`) nested in the loop being versioned, when its
/// counter is written there only by its increment and by one assignment, in the block entering
/// it, of a constant or a value the outer loop does not change, and its bound is such a value
/// too (directly, or assigned once in that block). `writes` are the outer loop's writes.
fn nested(
    function: &Function,
    h: usize,
    body: &[bool],
    taken: &[bool],
    writes: &HashMap<Local, Vec<(usize, usize)>>,
    fixed: &impl Fn(Local) -> bool,
) -> Option<Range> {
    let inner = crate::counted::counted(function, h, body, taken)?;
    let entry = &function.blocks[inner.entry];
    // A value assigned once in the outer loop, in the entering block, from a constant or a fixed
    // local; or a fixed local or constant itself.
    let value_entering = |operand: &Operand| -> Option<Operand> {
        match operand {
            Operand::Const(Const::Int(..)) => Some(operand.clone()),
            Operand::Copy(place) if place.proj.is_empty() && fixed(place.local) => Some(operand.clone()),
            Operand::Copy(place) if place.proj.is_empty() => {
                let [(b, i)] = writes.get(&place.local)?[..] else { return None };
                if b != inner.entry {
                    return None;
                }
                match &entry.insts[i] {
                    Inst::Assign(target, Rvalue::Use(value)) if target.proj.is_empty() => match value {
                        Operand::Const(Const::Int(..)) => Some(value.clone()),
                        Operand::Copy(p) if p.proj.is_empty() && fixed(p.local) => Some(value.clone()),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    };
    // The counter: its increment and one assignment in the entering block.
    let counter_writes = writes.get(&inner.counter)?;
    let init = counter_writes.iter().find(|(b, _)| *b == inner.entry)?;
    if counter_writes.len() != 2 || !counter_writes.contains(&(inner.latch, inner.at)) {
        return None;
    }
    let Inst::Assign(target, Rvalue::Use(first)) = &entry.insts[init.1] else { return None };
    if !target.proj.is_empty() {
        return None;
    }
    let first = match first {
        Operand::Const(Const::Int(..)) => first.clone(),
        Operand::Copy(p) if p.proj.is_empty() && fixed(p.local) => first.clone(),
        _ => return None,
    };
    let bound = value_entering(&inner.bound)?;
    Some(Range { counter: inner.counter, inside: body.to_vec(), latch: inner.latch, at: inner.at, first, bound })
}

/// Following a guard's operands back to the counter and fixed values.
struct Follow<'a, F: Fn(Local) -> bool> {
    function: &'a Function,
    /// The counters the check ranges over.
    ranges: &'a [Range],
    writes: &'a HashMap<Local, Vec<(usize, usize)>>,
    /// Per local: its address is taken (a call or closure may write it unseen).
    taken: &'a [bool],
    fixed: &'a F,
}

impl<F: Fn(Local) -> bool> Follow<'_, F> {
    /// What the check must show for the guard at instruction `i` of block `b` to be left out.
    fn needs(&self, b: usize, i: usize, check: &Check) -> Option<Vec<Need>> {
        let mut out = Vec::new();
        let exact = |node: &Node, out: &mut Vec<Need>| {
            let mut ops = Vec::new();
            node.operations(&mut ops);
            out.extend(ops.into_iter().map(|op| Need::Exact(op.clone())));
        };
        match check {
            Check::NoOverflow(op @ (BinOp::Add | BinOp::Mul | BinOp::Sub), ty, x, y) if !ty.signed() => {
                let (x, y) = (self.node(b, i, x, DEPTH)?, self.node(b, i, y, DEPTH)?);
                if *op == BinOp::Sub && y.counts() {
                    return None;
                }
                exact(&Node::Op(*op, *ty, Box::new(x), Box::new(y)), &mut out);
            }
            Check::InBounds(index, len) => {
                let (index, len) = (self.node(b, i, index, DEPTH)?, self.node(b, i, len, DEPTH)?);
                if len.counts() {
                    return None;
                }
                exact(&index, &mut out);
                exact(&len, &mut out);
                out.push(Need::Below(index, len));
            }
            _ => return None,
        }
        Some(out)
    }

    /// The expression `operand` holds at instruction `i` of block `b`, when it is one the check
    /// can compute before the loop.
    fn node(&self, b: usize, i: usize, operand: &Operand, depth: usize) -> Option<Node> {
        let place = match operand {
            Operand::Const(Const::Int(..)) => return Some(Node::Fixed(Rvalue::Use(operand.clone()))),
            Operand::Copy(place) if place.proj.is_empty() => place,
            _ => return None,
        };
        let local = place.local;
        if let Some(range) = self.ranges.iter().find(|r| r.counter == local) {
            // A counter holds a value of its range inside its loop, until its latch's increment.
            return (range.inside[b] && (b != range.latch || i <= range.at)).then_some(Node::Counter(local));
        }
        if (self.fixed)(local) {
            return Some(Node::Fixed(Rvalue::Use(operand.clone())));
        }
        // Its one write in the loop, earlier in this block (and no other: a local whose address
        // is taken may be written through a borrow by a call between the two).
        if self.taken[local.0 as usize] {
            return None;
        }
        let [(db, di)] = self.writes.get(&local)?[..] else { return None };
        if db != b || di >= i || depth == 0 {
            return None;
        }
        let Inst::Assign(target, value) = &self.function.blocks[b].insts[di] else { return None };
        if !target.proj.is_empty() {
            return None;
        }
        match value {
            Rvalue::Use(x) => self.node(b, di, x, depth - 1),
            Rvalue::Len(view) if view.proj.is_empty() && (self.fixed)(view.local) => {
                Some(Node::Fixed(Rvalue::Len(view.clone())))
            }
            Rvalue::Binary(op @ (BinOp::Add | BinOp::Mul | BinOp::Sub), x, y) => {
                let MTy::Int(ty) = self.function.local(local).ty else { return None };
                if ty.signed() {
                    return None;
                }
                let (x, y) = (self.node(b, di, x, depth - 1)?, self.node(b, di, y, depth - 1)?);
                if *op == BinOp::Sub && y.counts() {
                    return None;
                }
                Some(Node::Op(*op, ty, Box::new(x), Box::new(y)))
            }
            _ => None,
        }
    }
}

/// Versions the loop: the copy without the decided guards, the check before both, the entry
/// redirected to the check. Returns the copy's header.
fn apply(function: &mut Function, plan: &Plan) -> usize {
    let base = function.blocks.len();
    let map: HashMap<usize, usize> = plan.blocks.iter().enumerate().map(|(k, b)| (*b, base + k)).collect();
    let remap = |t: &mut BlockId| {
        if let Some(to) = map.get(&(t.0 as usize)) {
            *t = BlockId(*to as u32);
        }
    };
    for &b in &plan.blocks {
        let mut block = function.blocks[b].clone();
        for (i, inst) in block.insts.iter_mut().enumerate() {
            if let Inst::Guard(guard) = inst
                && plan.decided.contains(&(b, i))
            {
                guard.elided = true;
                guard.hoisted = true;
            }
        }
        block.term.retarget(remap);
        function.blocks.push(block);
    }
    let fast = map[&plan.header];
    let anchor = function.blocks[plan.header].term_anchor;
    let mut check = CheckBlock { locals: &mut function.locals, insts: Vec::new() };
    let go = check.condition(plan);
    let check_block = Block {
        anchors: vec![anchor; check.insts.len()],
        insts: check.insts,
        term: Terminator::Branch(go, BlockId(fast as u32), BlockId(plan.header as u32)),
        term_anchor: anchor,
    };
    function.blocks.push(check_block);
    function.blocks[plan.entry].term = Terminator::Goto(BlockId(function.blocks.len() as u32 - 1));
    fast
}

/// Each counter's first and last value, as the check block holds them.
type Ends = HashMap<Local, (Operand, Operand)>;

/// The end of the counters' ranges an expression is evaluated at.
#[derive(Clone, Copy)]
enum End {
    First,
    Last,
}

/// The check block being built.
struct CheckBlock<'a> {
    locals: &'a mut Vec<LocalDecl>,
    insts: Vec<Inst>,
}

impl CheckBlock<'_> {
    /// A fresh local holding `value`.
    fn compute(&mut self, ty: MTy, value: Rvalue) -> Operand {
        if let Rvalue::Use(operand) = value {
            return operand;
        }
        self.locals.push(LocalDecl { name: None, ty });
        let local = Local(self.locals.len() as u32 - 1);
        self.insts.push(Inst::Assign(Place::local(local), value));
        Operand::Copy(Place::local(local))
    }

    fn binary(&mut self, ty: MTy, op: BinOp, a: Operand, b: Operand) -> Operand {
        self.compute(ty, Rvalue::Binary(op, a, b))
    }

    fn test(&mut self, op: BinOp, a: Operand, b: Operand) -> Operand {
        self.binary(MTy::Bool, op, a, b)
    }

    /// `go`: the loop runs no iteration, or every need holds over its range.
    fn condition(&mut self, plan: &Plan) -> Operand {
        // Each counter's first and last value (`bound - 1`, wrapping when the loop would not run:
        // a nested loop that never runs then fails the check, which is only conservative).
        let mut ends: Ends = HashMap::new();
        for range in &plan.ranges {
            let MTy::Int(ty) = self.locals[range.counter.0 as usize].ty else { continue };
            let last = self.binary(MTy::Int(ty), BinOp::Sub, range.bound.clone(), Operand::Const(Const::Int(1, ty)));
            ends.insert(range.counter, (range.first.clone(), last));
        }
        let first = Operand::Copy(Place::local(plan.counter));
        let mut go = self.test(BinOp::Ge, first, plan.bound.clone());
        let mut all: Option<Operand> = None;
        for need in &plan.needs {
            let holds = match need {
                Need::Exact(Node::Op(op, ty, a, b)) => {
                    let end = if *op == BinOp::Sub { End::First } else { End::Last };
                    let (x, y) = (self.value(a, end, &ends), self.value(b, end, &ends));
                    let int = MTy::Int(*ty);
                    let max = Operand::Const(Const::Int((1i128 << ty.bits()) - 1, *ty));
                    match op {
                        // `x + y` is exact when `x <= MAX - y`.
                        BinOp::Add => {
                            let room = self.binary(int, BinOp::Sub, max, y);
                            self.test(BinOp::Le, x, room)
                        }
                        // `x * y` is exact when `x <= MAX / max(y, 1)` (a product with 0 is 0).
                        BinOp::Mul => {
                            let divisor = self.binary(int.clone(), BinOp::Max, y, Operand::Const(Const::Int(1, *ty)));
                            let room = self.binary(int, BinOp::Div, max, divisor);
                            self.test(BinOp::Le, x, room)
                        }
                        _ => self.test(BinOp::Ge, x, y),
                    }
                }
                Need::Exact(_) => continue,
                Need::Below(index, len) => {
                    let (i, n) = (self.value(index, End::Last, &ends), self.value(len, End::Last, &ends));
                    self.test(BinOp::Lt, i, n)
                }
            };
            all = Some(match all {
                None => holds,
                Some(so_far) => self.binary(MTy::Bool, BinOp::And, so_far, holds),
            });
        }
        if let Some(all) = all {
            go = self.binary(MTy::Bool, BinOp::Or, go, all);
        }
        go
    }

    /// The node's value with the counter at `end`, computed as the loop computes it (wrapping).
    fn value(&mut self, node: &Node, end: End, ends: &Ends) -> Operand {
        match node {
            Node::Counter(counter) => {
                let (first, last) = &ends[counter];
                match end {
                    End::First => first.clone(),
                    End::Last => last.clone(),
                }
            }
            Node::Fixed(Rvalue::Use(operand)) => operand.clone(),
            Node::Fixed(value) => self.compute(MTy::usize(), value.clone()),
            Node::Op(op, ty, a, b) => {
                let (x, y) = (self.value(a, end, ends), self.value(b, end, ends));
                self.binary(MTy::Int(*ty), *op, x, y)
            }
        }
    }
}
