//! What lanes call, judged against the callees' rows (language §24, `E-PARALLEL-CALL`).
//!
//! A body's check refuses what is never lane-safe on its own (printing, a foreign call, a stored
//! function value called in a lane); what a lane reaches through a declared function is known
//! only once every row is, so it is judged here, beside the operand-order audit: each callee a
//! region's lanes may call (every implementation a `dyn` call may reach included) must have a
//! row within the lane-safe set, and so must whatever a caller passes for a `fn` parameter that
//! the callee's lanes call (`lane:p` in its row) — a declared function by its row, a closure by
//! what it calls and by never writing what it captures, a stored `fn` value as every
//! address-taken function of its type. A caller's own `fn` parameter handed on is carried up as
//! `lane:q` by the rows and judged at its callers.

use std::sync::Arc;

use crate::body::{Expr, fn_body};
use crate::check::{CallTarget, FnCheck, Resolution};
use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::effects::Row;
use crate::input::{Item, Program};
use crate::signature::fn_signature;

/// True for an effect of the `pure` set (language §14) or a read or write, which the race rule
/// judges where it is lent: what every lane may do.
fn pure_or_footprint(effect: &str) -> bool {
    matches!(
        effect,
        "local_read" | "local_write" | "zero_init" | "stack_storage" | "trap" | "diverge" | "ffi_precondition"
    ) || ["read:", "write:", "bound:"].iter().any(|p| effect.starts_with(p))
}

/// The first effect of `row` outside the host lane-safe set: the `pure` set, reads and writes,
/// `alloc`, `free`, `atomic`, `lock`, `dispatch`, `indirect_call` and `lane:*`.
pub fn lane_unsafe(row: &Row) -> Option<&Arc<str>> {
    row.iter().find(|effect| {
        let e: &str = effect;
        !(pure_or_footprint(e)
            || matches!(e, "alloc" | "free" | "atomic" | "lock" | "dispatch" | "indirect_call")
            || e.starts_with("lane:"))
    })
}

/// The first effect of `row` outside the device lane-safe set (language §36): the `pure` set,
/// reads and writes, `asm:ptx`, `fence` and `atomic`.
pub fn device_unsafe(row: &Row) -> Option<&Arc<str>> {
    row.iter().find(|effect| {
        let e: &str = effect;
        !(pure_or_footprint(e) || matches!(e, "atomic" | "fence" | "asm:ptx"))
    })
}

/// What an effect outside the lane-safe set means, for a refusal.
fn meaning(effect: &str) -> String {
    match effect {
        "io" => "does input or output (io)".to_string(),
        "par:host" | "par:device" => format!("starts a parallel region ({effect}), and regions do not nest"),
        "alloc" | "free" | "gpu_alloc" | "gpu_free" => format!("takes or releases storage ({effect})"),
        "indirect_call" | "dispatch" => format!("calls through a function value or a `dyn` table ({effect})"),
        "lock" => "enters a mutex (lock)".to_string(),
        "spawn" | "join" => format!("starts or awaits a task ({effect})"),
        _ if effect.starts_with("ffi:") => format!("calls foreign code ({effect})"),
        _ => format!("has the effect {effect}"),
    }
}

/// The first `E-PARALLEL-CALL` of a body, judged with the callees' rows `row_of` gives.
pub(crate) fn lane_refusal(
    db: &dyn Db,
    row_of: &dyn Fn(Item) -> Option<Row>,
    item: Item,
    check: &FnCheck,
) -> Option<Diag> {
    let kernel = fn_signature(db, item).kernel;
    if check.regions.is_empty() && check.fn_arguments.is_empty() && !kernel {
        return None;
    }
    let scope = crate::scope::Resolver::new(db);
    // What a kernel calls is device code.
    if kernel {
        for edge in check.calls.iter() {
            if let Some(diag) = device_callee(db, &scope, row_of, edge.callee, Anchor::Item, "This kernel") {
                return Some(diag);
            }
        }
    }
    // What the regions' lanes call.
    for region in check.regions.iter() {
        for &callee in region.callees.iter() {
            let anchor = || {
                region
                    .calls
                    .iter()
                    .find(|&&call| match check.call_target(call) {
                        Some(CallTarget::Function(f, _)) => *f == callee,
                        Some(CallTarget::Dynamic { .. }) => true,
                        _ => false,
                    })
                    .map_or(Anchor::Stmt(region.stmt), |&call| Anchor::Expr(call))
            };
            if region.device {
                if let Some(diag) = device_callee(db, &scope, row_of, callee, anchor(), "A device lane") {
                    return Some(diag);
                }
                continue;
            }
            let Some(row) = row_of(callee) else { continue };
            let Some(effect) = lane_unsafe(&row) else { continue };
            let anchor = anchor();
            let name = scope.full_name(callee);
            return Some(Diag::new(
                "E-PARALLEL-CALL",
                format!(
                    "A lane calls {name}, which {}: lanes may compute, read, write their own elements and allocate, nothing observable. Call it after the region, from what the lanes stored.",
                    meaning(effect)
                ),
                anchor,
            ));
        }
    }
    // What is passed for a `fn` parameter the callee's lanes call.
    let body = fn_body(db, item);
    for argument in check.fn_arguments.iter() {
        let Some(CallTarget::Function(callee, _)) = check.call_target(argument.call) else { continue };
        let Some(row) = row_of(*callee) else { continue };
        let signature = fn_signature(db, *callee);
        let Some(param) = signature.params.get(argument.param as usize) else { continue };
        if !row.contains(format!("lane:{}", param.name).as_str()) {
            continue;
        }
        let callee_name = scope.full_name(*callee);
        let arg = body.unparen(argument.arg);
        let refuse = |why: String| {
            Some(Diag::new(
                "E-PARALLEL-CALL",
                format!("{callee_name} calls its parameter {} in parallel lanes, and {why}", param.name),
                Anchor::Expr(arg),
            ))
        };
        match body.expr(arg) {
            Expr::Closure(_) => {
                // A closure may read what it captures, never write it — by assignment or by
                // lending it to be written (`shrink(b)`, `take(b)`, `format(v, …)`), as the
                // checker recorded.
                if let Some(&captured) = check.closure_writes_of(arg).first() {
                    let name: Arc<str> = match captured {
                        crate::scopes::LocalRef::Param(i) => body.params.get(i as usize).cloned().unwrap_or_default(),
                        crate::scopes::LocalRef::Binder(b) => body.binder(b).clone(),
                    };
                    return refuse(format!(
                        "this closure writes {name}, which it captures, so the lanes would write it at once: compute into the lane's own element instead."
                    ));
                }
                // And what it calls stays lane-safe.
                for &call in check.closure_calls_of(arg) {
                    match check.call_target(call) {
                        Some(CallTarget::Function(g, _)) => {
                            if let Some(row) = row_of(*g)
                                && let Some(effect) = lane_unsafe(&row)
                            {
                                return refuse(format!(
                                    "this closure calls {}, which {}.",
                                    scope.full_name(*g),
                                    meaning(effect)
                                ));
                            }
                        }
                        Some(CallTarget::Builtin(b)) if b.prints() => {
                            return refuse("this closure prints, which no lane may do.".to_string());
                        }
                        Some(CallTarget::Indirect) => {
                            // Through a `fn` value it captured: any address-taken function of its
                            // type may be in it.
                            let callee_ty = match body.expr(call) {
                                Expr::Call { callee, .. } => match check.resolution(body.unparen(*callee)) {
                                    Resolution::Local(crate::scopes::LocalRef::Binder(b)) => {
                                        check.binder_types.get(b.0 as usize).cloned()
                                    }
                                    _ => None,
                                },
                                _ => None,
                            };
                            if let Some((g, effect)) = stored_value_unsafe(db, row_of, callee_ty.as_ref()) {
                                return refuse(format!(
                                    "this closure calls a function value that may hold {} (its address is taken), which {}.",
                                    scope.full_name(g),
                                    meaning(&effect)
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Expr::Name(_) => match check.resolution(arg) {
                Resolution::Function(g) => {
                    if let Some(row) = row_of(g)
                        && let Some(effect) = lane_unsafe(&row)
                    {
                        return refuse(format!("{} {}.", scope.full_name(g), meaning(effect)));
                    }
                }
                Resolution::Local(crate::scopes::LocalRef::Param(_)) => {}
                _ => {
                    // A stored `fn` value: any address-taken function of its type may be in it.
                    let ty = check.expr_types.get(arg.0 as usize).cloned();
                    if let Some((g, effect)) = stored_value_unsafe(db, row_of, ty.as_ref()) {
                        return refuse(format!(
                            "this function value may hold {} (its address is taken), which {}.",
                            scope.full_name(g),
                            meaning(&effect)
                        ));
                    }
                }
            },
            _ => {}
        }
    }
    None
}

/// The refusal of `callee` as device code called by `who` (language §36): `std.math` is host
/// code, and a callee's row stays within the device lane-safe set.
fn device_callee(
    db: &dyn Db,
    scope: &crate::scope::Resolver<'_>,
    row_of: &dyn Fn(Item) -> Option<Row>,
    callee: Item,
    anchor: Anchor,
    who: &str,
) -> Option<Diag> {
    let _ = db;
    let name = scope.full_name(callee);
    if &*scope.module_of(callee) == "std.math" {
        return Some(Diag::new(
            "E-PARALLEL-CALL",
            format!(
                "{who} calls {name}, and std.math is host code, not callable from device lanes: compute it before the region."
            ),
            anchor,
        ));
    }
    let row = row_of(callee)?;
    let effect = device_unsafe(&row)?;
    Some(Diag::new(
        "E-PARALLEL-CALL",
        format!(
            "{who} calls {name}, which {}: device code may compute, read and write its own elements, nothing the host would have to do. Call it on the host, before or after the region.",
            meaning(effect)
        ),
        anchor,
    ))
}

/// The first address-taken function of the `fn` type `ty` whose row leaves the lane-safe set,
/// with the effect: what a stored value of that type may hold.
fn stored_value_unsafe(
    db: &dyn Db,
    row_of: &dyn Fn(Item) -> Option<Row>,
    ty: Option<&crate::types::Ty>,
) -> Option<(Item, Arc<str>)> {
    let ty = ty?;
    for g in address_taken(db) {
        let sig = fn_signature(db, g);
        let fun =
            crate::types::FnTy { params: sig.params.iter().map(|p| p.ty.clone()).collect(), ret: sig.ret.clone() };
        // A template is taken as one of its instances (`twice[u64]`): any of its instances
        // with this many parameters may be in the value.
        let may_hold = match ty.value() {
            crate::types::Ty::Fn(held) if !crate::generics::fn_generics(db, g).is_empty() => {
                held.params.len() == fun.params.len()
            }
            held => crate::types::Ty::Fn(Arc::new(fun)) == *held,
        };
        if may_hold
            && let Some(row) = row_of(g)
            && let Some(effect) = lane_unsafe(&row)
        {
            return Some((g, effect.clone()));
        }
    }
    None
}

/// The functions whose addresses the program takes.
fn address_taken(db: &dyn Db) -> Vec<Item> {
    let program = Program::get(db);
    let mut out: Vec<Item> = Vec::new();
    for entry in program.items(db).iter() {
        if crate::effects::is_function(entry.key.kind) {
            for &taken in crate::effects::fn_summary(db, entry.item).address_taken.iter() {
                if !out.contains(&taken) {
                    out.push(taken);
                }
            }
        }
    }
    out
}
