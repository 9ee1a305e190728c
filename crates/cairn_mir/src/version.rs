//! Loop versioning (issue 22): guards in an innermost `for` loop that depend on the loop's counter
//! only through sums and products are checked once, before the loop, for every value the counter
//! will take. When each such check passes, a copy of the loop without those guards runs; when any
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
//! Soundness: in the copy, a left-out guard's condition holds for every value of the counter the
//! loop reaches, because the values it reads are those computed before it in its block from the
//! counter (in `lo..bound`, as the header tested) and from values fixed before the loop, and the
//! check showed the condition for the whole range. Off the copy nothing changed. The native
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

/// Versions every qualifying innermost loop of every host function (module comment). A build
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
    /// The loop's counter.
    Counter,
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
            Node::Counter => true,
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
    ty: IntTy,
    bound: Operand,
    /// The guards the copy leaves out, by block and instruction.
    decided: HashSet<(usize, usize)>,
    needs: Vec<Need>,
}

/// The next innermost loop not yet looked at that can be versioned, if any.
fn next_plan(function: &Function, seen: &mut HashSet<usize>) -> Option<Plan> {
    for (h, body) in crate::counted::innermost(function) {
        if seen.insert(h)
            && let Some(plan) = plan(function, h, &body)
        {
            return Some(plan);
        }
    }
    None
}

fn plan(function: &Function, h: usize, body: &[bool]) -> Option<Plan> {
    let shape = crate::counted::counted(function, h, body)?;
    if shape.blocks.iter().map(|b| function.blocks[*b].insts.len()).sum::<usize>() > LOOP_SIZE
        || function.blocks[shape.entry].term != Terminator::Goto(BlockId(h as u32))
    {
        return None;
    }
    let crate::counted::Counted { blocks, entry, counter, ty, bound, latch, at, writes, taken, .. } = shape;
    let fixed = |local: Local| !taken[local.0 as usize] && !writes.contains_key(&local);
    let follow = Follow { function, counter, latch, at, writes: &writes, taken: &taken, fixed: &fixed };
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
    Some(Plan { header: h, blocks, entry, counter, ty, bound, decided, needs })
}

/// Following a guard's operands back to the counter and fixed values.
struct Follow<'a, F: Fn(Local) -> bool> {
    function: &'a Function,
    counter: Local,
    /// The latch and the position of the counter's increment in it.
    latch: usize,
    at: usize,
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
        if local == self.counter {
            // The counter holds this iteration's value until the latch's increment.
            return (b != self.latch || i <= self.at).then_some(Node::Counter);
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
    let mut check = CheckBlock { locals: &mut function.locals, insts: Vec::new(), ty: plan.ty };
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

/// The end of the counter's range an expression is evaluated at.
#[derive(Clone, Copy)]
enum End {
    First,
    Last,
}

/// The check block being built.
struct CheckBlock<'a> {
    locals: &'a mut Vec<LocalDecl>,
    insts: Vec<Inst>,
    /// The counter's type.
    ty: IntTy,
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
        let counter_ty = MTy::Int(self.ty);
        let first = Operand::Copy(Place::local(plan.counter));
        let last =
            self.binary(counter_ty.clone(), BinOp::Sub, plan.bound.clone(), Operand::Const(Const::Int(1, self.ty)));
        let mut go = self.test(BinOp::Ge, first.clone(), plan.bound.clone());
        let mut all: Option<Operand> = None;
        for need in &plan.needs {
            let holds = match need {
                Need::Exact(Node::Op(op, ty, a, b)) => {
                    let end = if *op == BinOp::Sub { End::First } else { End::Last };
                    let (x, y) = (self.value(a, end, &first, &last), self.value(b, end, &first, &last));
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
                    let (i, n) =
                        (self.value(index, End::Last, &first, &last), self.value(len, End::Last, &first, &last));
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
    fn value(&mut self, node: &Node, end: End, first: &Operand, last: &Operand) -> Operand {
        match node {
            Node::Counter => match end {
                End::First => first.clone(),
                End::Last => last.clone(),
            },
            Node::Fixed(Rvalue::Use(operand)) => operand.clone(),
            Node::Fixed(value) => self.compute(MTy::usize(), value.clone()),
            Node::Op(op, ty, a, b) => {
                let (x, y) = (self.value(a, end, first, last), self.value(b, end, first, last));
                self.binary(MTy::Int(*ty), *op, x, y)
            }
        }
    }
}
