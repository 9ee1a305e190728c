//! Fusion of adjacent regions (language §26, a plan's `fuse K`): regions of one chain run as
//! one traversal, each index running every member's lane body in turn.
//!
//! The checker decides which regions may fuse (`cairn_hir::plans::fusion_chains`: adjacent, one
//! count spelled the same way, lanes touching arrays only at their own index, bodies that cannot
//! trap, loop or be observed) and the lowering marks their `Inst::Parallel` with the chain. This
//! pass, run on a build's MIR unless every guard is kept (`--keep-guards` never fuses), joins each
//! run of marked regions that stand in one block with nothing between them but the setting-up
//! of the later ones' environments and counts (copies and addresses, moved before the first):
//! one lane function `<symbol>$fused<n>(env, lo, hi)` calls each member's lane function for
//! index `i` alone, in order, for every `i` of its claim (LLVM inlines them into one loop). The
//! evaluator and the equivalence checker read unfused MIR: fusion changes no result. A zeroed
//! array only the chain touches lives in each lane as one value and is never allocated
//! (`slots.rs`).

mod slots;

use std::collections::HashMap;
use std::sync::Arc;

use crate::{
    BinOp, Block, Const, FnKind, Function, Inst, Local, LocalDecl, MTy, Operand, Place, Proj, Rvalue, Terminator,
};

/// Fuses every chain of marked regions in `functions`, adding the fused lane functions.
pub fn fuse_regions(functions: &mut Vec<Arc<Function>>) {
    let by_symbol: HashMap<Arc<str>, Arc<Function>> = functions.iter().map(|f| (f.symbol.clone(), f.clone())).collect();
    let mut made: Vec<Arc<Function>> = Vec::new();
    // Member lanes whose chain-local view (environment field) now stands for one slot.
    let mut slotted: Vec<(Arc<str>, u32)> = Vec::new();
    for function in functions.iter_mut() {
        if !function
            .blocks
            .iter()
            .any(|b| b.insts.iter().any(|i| matches!(i, Inst::Parallel { schedule, .. } if schedule.chain.is_some())))
        {
            continue;
        }
        let mut fused = (**function).clone();
        let mut counter = 0u32;
        for block in 0..fused.blocks.len() {
            let device = |lane: &str| by_symbol.get(lane).is_some_and(|f| f.device);
            while let Some((start, members, between)) = find_run(&fused.blocks[block], &device) {
                let lane: Arc<str> = Arc::from(format!("{}$fused{counter}", fused.symbol));
                counter += 1;
                let run = Run { block, start, members: &members, between: &between };
                slotted.extend(rewrite(&mut fused, &run, lane.clone(), &by_symbol, &mut made));
            }
        }
        *function = Arc::new(fused);
    }
    for function in functions.iter_mut() {
        let fields: Vec<u32> =
            slotted.iter().filter(|(symbol, _)| *symbol == function.symbol).map(|(_, f)| *f).collect();
        for field in fields {
            slots::rewrite_lane(Arc::make_mut(function), field);
        }
    }
    functions.extend(made);
}

/// A run of one chain's regions in a block.
struct Run<'a> {
    block: usize,
    /// The position of the first member, every member's, and the instructions between them.
    start: usize,
    members: &'a [usize],
    between: &'a [usize],
}

/// The first run of two or more regions of one chain in a block: the position of the first,
/// the positions of every member, and the positions of the instructions between them. Device
/// regions (`device` of their lane) never fuse: the fused lane's environment points at its
/// members' on the caller's stack, which a GPU cannot read.
fn find_run(block: &Block, device: &dyn Fn(&str) -> bool) -> Option<(usize, Vec<usize>, Vec<usize>)> {
    for (start, inst) in block.insts.iter().enumerate() {
        // The members count over one extent spelled the same way (the checker's rule); each
        // holds its own copy of the count.
        let Inst::Parallel { schedule, lane, .. } = inst else { continue };
        let Some(chain) = schedule.chain else { continue };
        if device(lane) {
            continue;
        }
        let mut members = vec![start];
        let mut between = Vec::new();
        let mut pending = Vec::new();
        for (at, next) in block.insts.iter().enumerate().skip(start + 1) {
            match next {
                Inst::Parallel { schedule: s, lane, .. } if s.chain == Some(chain) && !device(lane) => {
                    members.push(at);
                    between.append(&mut pending);
                }
                Inst::Assign(_, Rvalue::Use(_) | Rvalue::Ref(_) | Rvalue::Record(..)) => pending.push(at),
                _ => break,
            }
        }
        if members.len() >= 2 {
            return Some((start, members, between));
        }
    }
    None
}

/// Replaces the run with one region over the fused lane (added to `made`); returns the member
/// lanes (and fields) whose chain-local array became a slot.
fn rewrite(
    function: &mut Function,
    run: &Run<'_>,
    lane: Arc<str>,
    by_symbol: &HashMap<Arc<str>, Arc<Function>>,
    made: &mut Vec<Arc<Function>>,
) -> Vec<(Arc<str>, u32)> {
    let Run { block, start, members, between } = *run;
    let insts = &function.blocks[block].insts;
    let mut lanes: Vec<(Arc<str>, Operand)> = Vec::new();
    let (mut count, mut work, mut schedule) = (Operand::Const(Const::Int(0, crate::IntTy::Usize)), None, None);
    for &m in members {
        if let Inst::Parallel { lane, env, count: c, work: w, schedule: s } = &insts[m] {
            lanes.push((lane.clone(), env.clone()));
            if m == start {
                count = c.clone();
            }
            work.get_or_insert_with(|| w.clone());
            schedule.get_or_insert(*s);
        }
    }
    let found = slots::find(function, &lanes, by_symbol);
    let mut lens = Vec::new();
    for _ in &found {
        lens.push(Local(function.locals.len() as u32));
        function.locals.push(LocalDecl { name: None, ty: MTy::usize() });
    }
    let insts = &function.blocks[block].insts;
    let anchors = &function.blocks[block].anchors;
    let env_types: Vec<MTy> = lanes.iter().map(|(_, env)| operand_ty(function, env)).collect();
    // The fused environment: each member's, then each slot's length.
    let fields: Vec<MTy> = env_types.iter().cloned().chain(found.iter().map(|_| MTy::usize())).collect();
    let env_ty = MTy::Record { name: Arc::from(format!("env {lane}")), fields: Arc::from(fields) };
    let env_local = Local(function.locals.len() as u32);
    function.locals.push(LocalDecl { name: None, ty: env_ty.clone() });
    let ptr_local = Local(function.locals.len() as u32);
    function.locals.push(LocalDecl { name: None, ty: MTy::Ptr(Arc::new(env_ty.clone())) });
    let last = *members.last().unwrap_or(&start);
    let mut new_insts: Vec<Inst> = insts[..start].to_vec();
    let mut new_anchors = anchors[..start].to_vec();
    for &b in between {
        new_insts.push(insts[b].clone());
        new_anchors.push(anchors[b]);
    }
    let anchor = anchors[start];
    new_insts.push(Inst::Assign(
        Place::local(env_local),
        Rvalue::Record(
            env_ty.clone(),
            lanes
                .iter()
                .map(|(_, env)| env.clone())
                .chain(lens.iter().map(|l| Operand::Copy(Place::local(*l))))
                .collect(),
        ),
    ));
    new_insts.push(Inst::Assign(Place::local(ptr_local), Rvalue::Ref(Place::local(env_local))));
    let mut schedule = schedule.unwrap_or_default();
    schedule.chain = None;
    new_insts.push(Inst::Parallel {
        lane: lane.clone(),
        env: Operand::Copy(Place::local(ptr_local)),
        count,
        work: work.unwrap_or(Operand::Const(Const::Int(0, crate::IntTy::Usize))),
        schedule,
    });
    new_anchors.extend([anchor, anchor, anchor]);
    new_insts.extend(insts[last + 1..].iter().cloned());
    new_anchors.extend(anchors[last + 1..].iter().copied());
    function.blocks[block].insts = new_insts;
    function.blocks[block].anchors = new_anchors;
    made.push(Arc::new(fused_lane(lane, env_ty, &env_types, &lanes, &found)));
    for (slot, len) in found.iter().zip(&lens) {
        slots::unallocate(function, slot, *len);
    }
    found.iter().flat_map(|slot| slot.fields.iter().map(|&(m, field)| (lanes[m].0.clone(), field))).collect()
}

/// `lane(env, lo, hi)`: for each `i` of `lo..hi`, each member's lane function over `i..i+1`;
/// each chain-local array (`slots`) is one slot, zeroed before each index, which the members
/// see through a copy of their environment.
fn fused_lane(
    symbol: Arc<str>,
    env_ty: MTy,
    env_types: &[MTy],
    lanes: &[(Arc<str>, Operand)],
    slots: &[slots::Slot],
) -> Function {
    let usize_ty = MTy::Int(crate::IntTy::Usize);
    let mut locals = vec![
        LocalDecl { name: Some(Arc::from("env")), ty: MTy::Ptr(Arc::new(env_ty)) },
        LocalDecl { name: Some(Arc::from("lo")), ty: usize_ty.clone() },
        LocalDecl { name: Some(Arc::from("hi")), ty: usize_ty.clone() },
        LocalDecl { name: Some(Arc::from("i")), ty: usize_ty.clone() },
        LocalDecl { name: None, ty: usize_ty.clone() },
        LocalDecl { name: None, ty: MTy::Bool },
    ];
    let (env, lo, hi, i, next, more) = (Local(0), Local(1), Local(2), Local(3), Local(4), Local(5));
    let copy = |l: Local| Operand::Copy(Place::local(l));
    let mut new_local = |ty: MTy| {
        locals.push(LocalDecl { name: None, ty });
        Local(locals.len() as u32 - 1)
    };
    let mut entry = vec![Inst::Assign(Place::local(i), Rvalue::Use(copy(lo)))];
    let mut members = Vec::new();
    for (k, ty) in env_types.iter().enumerate() {
        let local = new_local(ty.clone());
        let field = Place::local(env).project(Proj::Deref).project(Proj::Field(k as u32));
        entry.push(Inst::Assign(Place::local(local), Rvalue::Use(Operand::Copy(field))));
        members.push(local);
    }
    // Each slot, its view (the array's length), and the members' environment copies holding it.
    let mut cells = Vec::new();
    let mut copies: Vec<Option<Local>> = vec![None; members.len()];
    for (s, slot) in slots.iter().enumerate() {
        let cell = new_local(MTy::Array(Arc::new(slot.elem.clone()), 1));
        let len = new_local(usize_ty.clone());
        let field = Place::local(env).project(Proj::Deref).project(Proj::Field((env_types.len() + s) as u32));
        entry.push(Inst::Assign(Place::local(len), Rvalue::Use(Operand::Copy(field))));
        let view = new_local(MTy::View(Arc::new(slot.elem.clone())));
        entry.push(Inst::Assign(Place::local(view), Rvalue::View(Place::local(cell), Some((lit(0), copy(len))))));
        for &(m, field) in &slot.fields {
            let record = match copies[m] {
                Some(record) => record,
                None => {
                    let MTy::Ptr(record_ty) = &env_types[m] else { continue };
                    let record = new_local((**record_ty).clone());
                    let whole = Place::local(members[m]).project(Proj::Deref);
                    entry.push(Inst::Assign(Place::local(record), Rvalue::Use(Operand::Copy(whole))));
                    copies[m] = Some(record);
                    record
                }
            };
            entry.push(Inst::Assign(Place::local(record).project(Proj::Field(field)), Rvalue::Use(copy(view))));
        }
        cells.push(cell);
    }
    for (m, record) in copies.iter().enumerate() {
        if let Some(record) = record {
            let pointer = new_local(env_types[m].clone());
            entry.push(Inst::Assign(Place::local(pointer), Rvalue::Ref(Place::local(*record))));
            members[m] = pointer;
        }
    }
    let mut body = vec![Inst::Assign(Place::local(next), Rvalue::Binary(BinOp::Add, copy(i), lit(1)))];
    body.extend(cells.iter().map(|cell| Inst::Assign(Place::local(*cell), Rvalue::Zeroed)));
    for ((lane, _), &member) in lanes.iter().zip(&members) {
        body.push(Inst::Call { dst: None, callee: lane.clone(), args: vec![copy(member), copy(i), copy(next)] });
    }
    body.push(Inst::Assign(Place::local(i), Rvalue::Use(copy(next))));
    let block =
        |insts: Vec<Inst>, term: Terminator| Block { anchors: vec![None; insts.len()], insts, term, term_anchor: None };
    let blocks = vec![
        block(entry, Terminator::Goto(crate::BlockId(1))),
        block(
            vec![Inst::Assign(Place::local(more), Rvalue::Binary(BinOp::Lt, copy(i), copy(hi)))],
            Terminator::Branch(copy(more), crate::BlockId(2), crate::BlockId(3)),
        ),
        block(body, Terminator::Goto(crate::BlockId(1))),
        block(Vec::new(), Terminator::Return(None)),
    ];
    Function {
        name: symbol.trim_start_matches("cairn.").into(),
        symbol,
        kind: FnKind::Function,
        params: 3,
        ret: MTy::Void,
        locals,
        blocks,
        extents: Vec::new(),
        device: false,
    }
}

fn lit(n: u64) -> Operand {
    Operand::Const(Const::Int(i128::from(n), crate::IntTy::Usize))
}

fn operand_ty(function: &Function, operand: &Operand) -> MTy {
    match operand {
        Operand::Copy(place) => function.place_ty(place).unwrap_or(MTy::Void),
        Operand::Const(_) => MTy::Void,
    }
}
