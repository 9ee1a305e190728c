//! Carried stores (issue 22): in a counted loop that stores `v[i]` and reads `v[i - 1]` — a prefix
//! sum, a recurrence, a dynamic-programming row — the value read is the one the iteration before
//! stored. LLVM forwards it in a register only in a loop with one exit (its loop-load
//! elimination, like its vectorizer, needs a single exiting block), and every guard still in force
//! is a second exit, a branch to a trap: so `v[i] = v[i] + v[i - 1]` with a checked `+` reloads
//! what it just stored, a store-to-load round trip on the loop's carried chain (clang does the
//! same to C with `__builtin_add_overflow` and a trap). Here the loop keeps the stored value in a
//! local instead.
//!
//! The loop: a counted one (`counted`) whose body is one block between the header and the latch
//! (the latch holding only the increment); the body's one store through a place with a projection
//! is `v[i] = value` (`i` the counter), and nothing else in the loop writes memory — no call, no
//! region, no drop, no atomic, no `format` — so nothing else can change `v`'s elements; `v` a view
//! or array of scalars whose address is never taken and which the loop does not write whole; and
//! every read `v[t]` it rewrites has `t = i - 1` computed earlier in the body (written once in the
//! loop, its address never taken).
//!
//! The rewrite: the store becomes `carry = value; v[i] = carry`; every read of `v[t]` in the body
//! (guards included) reads `carry`. Before the loop, where the counter holds its first value `lo`,
//! `carry` is zeroed and then loaded from `v[lo - 1]` when `lo >= 1` and `lo - 1 < len v` (tested
//! with plain comparisons, nothing that can trap). Every guard stays where it was: the first
//! iteration reaches its read of `v[lo - 1]` only past that read's guards, which then held, so
//! `carry` holds what the read would have read; each later iteration reads what the one before
//! stored at `v[i - 1]`, which nothing has written since. The same values, the same traps in the
//! same order.

use std::collections::HashSet;
use std::sync::Arc;

use crate::counted::{Counted, counted, innermost};
use crate::visit::{Role, inst_places};
use crate::{
    BinOp, Block, BlockId, Const, Function, Inst, IntTy, Local, LocalDecl, MTy, Operand, Place, Proj, Rvalue,
    Terminator,
};

/// Rewrites every qualifying loop of every host function (module comment). A build does this only
/// when guards may be left out; the evaluator and `--keep-guards` see the loops as lowered.
pub(crate) fn carry_program(functions: &mut [Arc<Function>]) {
    for function in functions.iter_mut() {
        if function.device {
            continue;
        }
        let mut seen: HashSet<usize> = HashSet::new();
        while let Some(plan) = next_plan(function, &mut seen) {
            apply(Arc::make_mut(function), &plan);
        }
    }
}

/// A loop to rewrite.
struct Plan {
    shape: Counted,
    /// The body block, and the position of the store in it.
    body: usize,
    store: usize,
    /// The array or view, its element type, and the local holding `i - 1`.
    view: Local,
    element: MTy,
    previous: Local,
}

fn next_plan(function: &Function, seen: &mut HashSet<usize>) -> Option<Plan> {
    let taken = crate::visit::address_taken(function);
    for (h, body) in innermost(function) {
        if seen.insert(h)
            && let Some(plan) = plan(function, h, &body, &taken)
        {
            return Some(plan);
        }
    }
    None
}

/// The place `v[t]`.
fn element(view: Local, index: Local) -> Place {
    Place { local: view, proj: vec![Proj::Index(Operand::Copy(Place::local(index)))] }
}

fn plan(function: &Function, h: usize, body: &[bool], taken: &[bool]) -> Option<Plan> {
    let shape = counted(function, h, body, taken)?;
    let b = shape.into;
    if shape.ty != IntTy::Usize
        || shape.blocks.len() != 3
        || b == shape.latch
        || shape.at != 0
        || function.blocks[b].term != Terminator::Goto(BlockId(shape.latch as u32))
    {
        return None;
    }
    let insts = &function.blocks[b].insts;
    // Nothing in the loop writes memory but the one store.
    let mut store = None;
    for (i, inst) in insts.iter().enumerate() {
        match inst {
            Inst::Assign(place, value) => {
                if matches!(value, Rvalue::AtomicRmw(..) | Rvalue::AtomicCas(..) | Rvalue::Ref(_) | Rvalue::View(..)) {
                    return None;
                }
                if !place.proj.is_empty() && store.replace(i).is_some() {
                    return None;
                }
            }
            Inst::Guard(_) | Inst::Print { .. } | Inst::Assume(_) => {}
            Inst::Call { .. }
            | Inst::CallIndirect { .. }
            | Inst::Format { .. }
            | Inst::Drop(_)
            | Inst::Parallel { .. }
            | Inst::DeviceReduce { .. }
            | Inst::Transfer { .. } => return None,
        }
    }
    let store = store?;
    let Inst::Assign(target, _) = &insts[store] else { return None };
    let view = target.local;
    if *target != element(view, shape.counter) || taken[view.0 as usize] {
        return None;
    }
    // `v` itself is written only by the store (as its element).
    if shape.writes.get(&view).map(Vec::as_slice) != Some(&[(b, store)][..]) {
        return None;
    }
    let element_ty = function.local(view).ty.element()?.clone();
    if !matches!(element_ty, MTy::Int(_) | MTy::Float(_) | MTy::Bool) {
        return None;
    }
    // The local holding `i - 1`: written once, in the body, as `sub i, 1`.
    let one = Operand::Const(Const::Int(1, shape.ty));
    let (defined, previous) = insts.iter().enumerate().find_map(|(i, inst)| match inst {
        Inst::Assign(place, Rvalue::Binary(BinOp::Sub, Operand::Copy(c), k))
            if place.proj.is_empty()
                && *c == Place::local(shape.counter)
                && *k == one
                && !taken[place.local.0 as usize]
                && shape.writes.get(&place.local).map(Vec::as_slice) == Some(&[(b, i)][..])
                && i < store =>
        {
            Some((i, place.local))
        }
        _ => None,
    })?;
    // It is read as `v[i - 1]`, and only after it is computed and no later than the store (where
    // `carry` holds what the iteration before stored).
    let read = element(view, previous);
    let mut reads = 0usize;
    for (j, inst) in insts.iter().enumerate() {
        let mut here = 0usize;
        inst_places(&mut inst.clone(), &mut |place, role| here += usize::from(role == Role::Use && *place == read));
        if here > 0 && !(defined < j && j <= store) {
            return None;
        }
        reads += here;
    }
    if reads == 0 {
        return None;
    }
    Some(Plan { shape, body: b, store, view, element: element_ty, previous })
}

fn local(locals: &mut Vec<LocalDecl>, ty: MTy) -> Local {
    locals.push(LocalDecl { name: None, ty });
    Local(locals.len() as u32 - 1)
}

fn copy(local: Local) -> Operand {
    Operand::Copy(Place::local(local))
}

fn apply(function: &mut Function, plan: &Plan) {
    let shape = &plan.shape;
    let carry = local(&mut function.locals, plan.element.clone());
    // The body: reads of `v[i - 1]` read `carry`; the store goes through it.
    let read = element(plan.view, plan.previous);
    let block = &mut function.blocks[plan.body];
    for inst in block.insts.iter_mut() {
        inst_places(inst, &mut |place, role| {
            if role == Role::Use && *place == read {
                *place = Place::local(carry);
            }
        });
    }
    let Inst::Assign(target, value) = block.insts[plan.store].clone() else { unreachable!("the plan's store") };
    let anchor = block.anchors[plan.store];
    block.insts[plan.store] = Inst::Assign(Place::local(carry), value);
    block.insts.insert(plan.store + 1, Inst::Assign(target, Rvalue::Use(copy(carry))));
    block.anchors.insert(plan.store + 1, anchor);

    // Before the loop: `carry = 0`, then `carry = v[lo - 1]` when that element exists.
    let usize_ty = MTy::Int(shape.ty);
    let ok_first = local(&mut function.locals, MTy::Bool);
    let before = local(&mut function.locals, usize_ty.clone());
    let len = local(&mut function.locals, MTy::usize());
    let ok_index = local(&mut function.locals, MTy::Bool);
    let ok = local(&mut function.locals, MTy::Bool);
    let one = Operand::Const(Const::Int(1, shape.ty));
    let counter = copy(shape.counter);
    let anchor = function.blocks[shape.header].term_anchor;
    let test = vec![
        Inst::Assign(Place::local(carry), Rvalue::Zeroed),
        Inst::Assign(Place::local(ok_first), Rvalue::Binary(BinOp::Ge, counter.clone(), one.clone())),
        Inst::Assign(Place::local(before), Rvalue::Binary(BinOp::Sub, counter, one)),
        Inst::Assign(Place::local(len), Rvalue::Len(Place::local(plan.view))),
        Inst::Assign(Place::local(ok_index), Rvalue::Binary(BinOp::Lt, copy(before), copy(len))),
        Inst::Assign(Place::local(ok), Rvalue::Binary(BinOp::And, copy(ok_first), copy(ok_index))),
    ];
    let base = function.blocks.len() as u32;
    let (test_id, load_id, join_id) = (BlockId(base), BlockId(base + 1), BlockId(base + 2));
    let load = vec![Inst::Assign(Place::local(carry), Rvalue::Use(Operand::Copy(element(plan.view, before))))];
    let header = BlockId(shape.header as u32);
    function.blocks.push(Block {
        anchors: vec![anchor; test.len()],
        insts: test,
        term: Terminator::Branch(copy(ok), load_id, join_id),
        term_anchor: anchor,
    });
    function.blocks.push(Block {
        anchors: vec![anchor],
        insts: load,
        term: Terminator::Goto(join_id),
        term_anchor: anchor,
    });
    function.blocks.push(Block {
        anchors: Vec::new(),
        insts: Vec::new(),
        term: Terminator::Goto(header),
        term_anchor: anchor,
    });
    // The entry's edge into the header now enters the test.
    function.blocks[shape.entry].term.retarget(|t| {
        if *t == header {
            *t = test_id;
        }
    });
}
