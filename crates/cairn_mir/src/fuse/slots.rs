//! Chain-local arrays (language §26): a zeroed heap array that only the regions of one fused
//! chain touch lives in each lane as one value and is never allocated.
//!
//! Fusion already guarantees that a chain's lanes touch arrays only at their own index, so each
//! index of a chain-local array is read and written by that index's run of the chain alone. The
//! fused lane keeps one slot per such array, zeroed before each index (the array was zeroed),
//! and hands each member a copy of its environment whose view of the array is the slot (its
//! length the array's, so a guard on the index fails exactly as it did); the members' element
//! accesses are rewritten to the slot's one element. The caller no longer allocates: its buffer
//! stays the zero owner (dropping it frees nothing) and its allocation guard becomes the copy of
//! the length the fused lane reads.
//!
//! Every condition is checked on MIR and any doubt keeps the array: an array qualifies only when
//! its owner is a `buffer … = zeroed` of elements that own nothing, used by nothing but its view,
//! its guard and its drops; its view only by the chain's environments; and each member lane
//! loads it once and uses it only by element and by length.

use std::collections::HashMap;
use std::sync::Arc;

use crate::visit::{Role, inst_places, terminator_places};
use crate::{Check, Const, Function, Inst, IntTy, Local, MTy, Operand, Place, Proj, Rvalue};

/// One chain-local array of a run.
pub(super) struct Slot {
    /// The caller's owner and where it was allocated (block, instruction; its guard follows).
    pub(super) owner: Local,
    pub(super) at: (usize, usize),
    /// The length the allocation asked for.
    pub(super) len: Operand,
    pub(super) elem: MTy,
    /// The environment fields holding its view: (member, field).
    pub(super) fields: Vec<(usize, u32)>,
}

/// The chain-local arrays of the run whose members' (lane, environment) are `lanes`.
pub(super) fn find(
    function: &Function,
    lanes: &[(Arc<str>, Operand)],
    by_symbol: &HashMap<Arc<str>, Arc<Function>>,
) -> Vec<Slot> {
    // Each member's environment record: the fields that are a whole local.
    let mut candidates: Vec<(Local, Vec<(usize, u32)>)> = Vec::new();
    for (m, (_, env)) in lanes.iter().enumerate() {
        let Some(Rvalue::Ref(record)) = env_ref(function, env) else { continue };
        if !record.proj.is_empty() {
            continue;
        }
        let Some(Rvalue::Record(_, fields)) = single_def(function, record.local) else { continue };
        for (j, field) in fields.iter().enumerate() {
            if let Operand::Copy(Place { local, proj }) = field
                && proj.is_empty()
                && matches!(function.local(*local).ty, MTy::View(_))
            {
                match candidates.iter_mut().find(|(l, _)| l == local) {
                    Some((_, at)) => at.push((m, j as u32)),
                    None => candidates.push((*local, vec![(m, j as u32)])),
                }
            }
        }
    }
    candidates
        .into_iter()
        .filter_map(|(view, fields)| {
            let slot = owner_of(function, view, fields)?;
            slot.fields
                .iter()
                .all(|&(m, j)| by_symbol.get(&lanes[m].0).is_some_and(|lane| lane_uses(lane, j).is_some()))
                .then_some(slot)
        })
        .collect()
}

/// The value `env` (a `Copy` of a local) was assigned, when it was assigned once.
fn env_ref<'f>(function: &'f Function, env: &Operand) -> Option<&'f Rvalue> {
    let Operand::Copy(Place { local, proj }) = env else { return None };
    if !proj.is_empty() {
        return None;
    }
    single_def(function, *local)
}

/// The one assignment to the whole of `local` in `function`, when there is exactly one and no
/// other instruction writes into it.
fn single_def(function: &Function, local: Local) -> Option<&Rvalue> {
    let mut found = None;
    let mut writes = 0;
    for block in &function.blocks {
        for inst in &block.insts {
            match inst {
                Inst::Assign(Place { local: l, proj }, value) if *l == local => {
                    writes += 1;
                    if proj.is_empty() {
                        found = Some(value);
                    }
                }
                Inst::Call { dst: Some(Place { local: l, .. }), .. }
                | Inst::CallIndirect { dst: Some(Place { local: l, .. }), .. }
                | Inst::DeviceReduce { dest: Place { local: l, .. }, .. }
                    if *l == local =>
                {
                    writes += 1
                }
                _ => {}
            }
        }
    }
    if writes == 1 { found } else { None }
}

/// Every mention of `local` in `function`: (block, instruction or `None` for the terminator,
/// role, whether the place projects).
fn mentions(function: &Function, local: Local) -> Vec<(usize, Option<usize>, Role, Vec<Proj>)> {
    let mut out = Vec::new();
    for (b, block) in function.blocks.iter().enumerate() {
        for (k, inst) in block.insts.iter().enumerate() {
            let mut inst = inst.clone();
            inst_places(&mut inst, &mut |p, role| {
                if p.local == local {
                    out.push((b, Some(k), role, p.proj.clone()));
                }
            });
        }
        let mut term = block.term.clone();
        terminator_places(&mut term, &mut |p, role| {
            if p.local == local {
                out.push((b, None, role, p.proj.clone()));
            }
        });
    }
    out
}

/// The slot of `view` when it is the view of a zeroed buffer used by nothing but the chain's
/// environments (`fields`).
fn owner_of(function: &Function, view: Local, fields: Vec<(usize, u32)>) -> Option<Slot> {
    let Some(Rvalue::View(Place { local: owner, proj }, None)) = single_def(function, view) else { return None };
    if !proj.is_empty() {
        return None;
    }
    let MTy::Buf(elem) = &function.local(*owner).ty else { return None };
    if elem.needs_drop() || !matches!(**elem, MTy::Bool | MTy::Int(_) | MTy::Float(_) | MTy::Enum { .. }) {
        return None;
    }
    // The view: its definition and one whole use per environment field.
    let uses = mentions(function, view);
    let defs = uses.iter().filter(|u| u.2 == Role::Def).count();
    let whole = uses.iter().filter(|u| u.2 == Role::Use && u.3.is_empty()).count();
    if defs != 1 || whole != fields.len() || uses.len() != fields.len() + 1 {
        return None;
    }
    // The owner: allocated once, its guard next, then only viewed (once) and dropped.
    let mut at = None;
    let mut len = None;
    let mut views = 0;
    for (b, k, role, proj) in mentions(function, *owner) {
        let inst = k.map(|k| &function.blocks[b].insts[k]);
        match (inst, role) {
            (Some(Inst::Assign(_, Rvalue::Alloc(_, n, _))), Role::Def) if proj.is_empty() && at.is_none() => {
                at = Some((b, k?));
                len = Some(n.clone());
            }
            (Some(Inst::Guard(g)), Role::Use) if matches!(g.check, Check::Allocated(_)) => {
                if at.map(|(ab, ak)| (ab, ak + 1)) != Some((b, k?)) {
                    return None;
                }
            }
            (Some(Inst::Drop(_)), Role::Use) if proj.is_empty() => {}
            (Some(Inst::Assign(dst, Rvalue::View(..))), Role::Use) if proj.is_empty() && *dst == Place::local(view) => {
                views += 1;
            }
            _ => return None,
        }
    }
    let (at, len) = (at?, len?);
    if views != 1 {
        return None;
    }
    // The guard must stand right after the allocation.
    let guarded = matches!(
        function.blocks[at.0].insts.get(at.1 + 1),
        Some(Inst::Guard(g)) if matches!(&g.check, Check::Allocated(Operand::Copy(p)) if p.local == *owner)
    );
    guarded.then(|| Slot { owner: *owner, at, len, elem: (**elem).clone(), fields })
}

/// The local a member lane loads environment field `field` into, when it loads it once and uses
/// it only by element and by length.
fn lane_uses(lane: &Function, field: u32) -> Option<Local> {
    let env_field = |p: &Place| {
        p.local == Local(0) && p.proj.len() >= 2 && p.proj[0] == Proj::Deref && p.proj[1] == Proj::Field(field)
    };
    let mut loaded = None;
    for block in &lane.blocks {
        for inst in &block.insts {
            if let Inst::Assign(dst, Rvalue::Use(Operand::Copy(src))) = inst
                && env_field(src)
            {
                if loaded.is_some() || !dst.proj.is_empty() || src.proj.len() != 2 {
                    return None;
                }
                loaded = Some(dst.local);
            }
        }
    }
    let loaded = loaded?;
    // No other mention of the field, and the local only by element or length.
    let mut env_mentions = 0;
    for block in &lane.blocks {
        for inst in &block.insts {
            let mut inst = inst.clone();
            inst_places(&mut inst, &mut |p, _| env_mentions += usize::from(env_field(p)));
        }
    }
    let uses = mentions(lane, loaded);
    let whole_defs = uses.iter().filter(|u| u.2 == Role::Def && u.3.is_empty()).count();
    let fine = uses.iter().all(|(_, _, role, proj)| match role {
        Role::Len => proj.is_empty(),
        Role::Def => proj.is_empty() || matches!(proj.first(), Some(Proj::Index(_))),
        Role::Use => matches!(proj.first(), Some(Proj::Index(_))),
    });
    (env_mentions == 1 && whole_defs == 1 && fine).then_some(loaded)
}

/// Rewrites member lane `lane` so that the view it loads from field `field` is used at element
/// 0 only (the fused lane hands it a one-element slot).
pub(super) fn rewrite_lane(lane: &mut Function, field: u32) {
    let Some(loaded) = lane_uses(lane, field) else { return };
    let zero = Operand::Const(Const::Int(0, IntTy::Usize));
    for block in &mut lane.blocks {
        for inst in &mut block.insts {
            inst_places(inst, &mut |p, _| {
                if p.local == loaded
                    && let Some(Proj::Index(index)) = p.proj.first_mut()
                {
                    *index = zero.clone();
                }
            });
        }
    }
}

/// The caller no longer allocates `slot`'s array: the owner is assigned the zero owner and the
/// guard's place holds the length, copied into `len_local` for the fused lane's environment.
pub(super) fn unallocate(function: &mut Function, slot: &Slot, len_local: Local) {
    let (b, k) = slot.at;
    let insts = &mut function.blocks[b].insts;
    insts[k] = Inst::Assign(Place::local(len_local), Rvalue::Use(slot.len.clone()));
    insts[k + 1] = Inst::Assign(Place::local(slot.owner), Rvalue::Zeroed);
}
