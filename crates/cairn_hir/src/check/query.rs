//! The check queries: [`check_fn`] for a declaration, [`instance_check`] for an instance of a
//! template (its body checked with the instance's arguments in place of its parameters). Each
//! runs the body's rules (`cx.rs`), then the ownership walk (`moves.rs`) and the lease walk
//! (`queued.rs`) once every expression is typed and resolved, and packs the answer (`result.rs`).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::body::{ExprId, fn_body};
use crate::db::Db;
use crate::input::Item;
use crate::scope::Resolver;
use crate::signature::{Signature, fn_signature};
use crate::types::Ty;

use super::cx::Cx;
use super::result::{FnCheck, Resolution, TypeTable};

/// The check of a function's body. A template (a function with generic parameters) is checked
/// per instance ([`instance_check`]); its own check is empty.
#[salsa::tracked(returns(ref))]
pub fn check_fn(db: &dyn Db, item: Item) -> FnCheck {
    if !crate::generics::fn_generics(db, item).is_empty() {
        return FnCheck::default();
    }
    if crate::foreign::is_extern(db, item) {
        return super::foreign::extern_check(db, item, fn_signature(db, item));
    }
    run_check(db, item, fn_signature(db, item), &[])
}

/// The check of one instance: a template's body checked as ordinary code with the instance's
/// arguments in place of its parameters (language §19). A monomorphic instance is its
/// declaration's [`check_fn`].
pub fn instance_check<'db>(db: &'db dyn Db, instance: crate::instance::Instance<'db>) -> &'db FnCheck {
    if instance.is_monomorphic(db) {
        return check_fn(db, instance.item(db));
    }
    check_generic_instance(db, instance)
}

#[salsa::tracked(returns(ref))]
fn check_generic_instance<'db>(db: &'db dyn Db, instance: crate::instance::Instance<'db>) -> FnCheck {
    let item = instance.item(db);
    run_check(db, item, crate::signature::instance_signature(db, instance), instance.args(db))
}

fn run_check<'db>(
    db: &'db dyn Db,
    item: Item,
    signature: &'db Signature,
    args: &'db [crate::instance::InstanceArg],
) -> FnCheck {
    let body = fn_body(db, item).clone();
    if signature.error.is_some() {
        return FnCheck::default();
    }
    let mut cx = new_cx(db, item, signature, args, body.clone(), false);
    // The types the signature forms keep their records' promises (language §19.1).
    let formed = signature.params.iter().map(|p| &p.ty).chain(std::iter::once(&signature.ret)).find_map(|ty| {
        crate::traits::formed_bounds(db, ty)
            .map(|(code, fact)| crate::diag::Diag::new(code, format!("{fact}."), crate::diag::Anchor::Item))
    });
    let mut result = match formed {
        Some(diag) => Err(diag),
        None => cx.run(),
    };
    settle(&mut cx);
    // Moves and releases, once every expression is typed and resolved.
    if result.is_ok() {
        match super::moves::walk(&cx).and_then(|frees| super::queued::leases(&cx).map(|()| frees)) {
            Ok(true) => cx.effect("free"),
            Ok(false) => {}
            Err(diag) => result = Err(diag),
        }
    }
    let local_row = cx.local_row();
    let mut check = FnCheck {
        error: result.err(),
        local_row,
        calls: Arc::from(cx.calls),
        sites: Arc::from(cx.sites),
        call_targets: Arc::from(cx.call_targets),
        expr_types: TypeTable::from(cx.types),
        resolutions: Arc::from(cx.resolutions),
        binder_types: Arc::from(cx.binder_types),
        arguments: Arc::from(cx.arguments),
        length_checks: {
            let mut checks = cx.length_checks;
            checks.sort();
            checks.dedup();
            Arc::from(checks)
        },
        arm_variants: Arc::from(cx.arm_variants),
        address_taken: Arc::from(cx.address_taken),
        dyn_lends: {
            let mut lends = cx.dyn_lends;
            lends.sort_by_key(|(e, _, _)| *e);
            lends.dedup_by_key(|(e, _, _)| *e);
            Arc::from(lends)
        },
        captures: {
            let mut captures = cx.captures;
            captures.sort_by_key(|(e, _)| *e);
            captures.dedup_by_key(|(e, _)| *e);
            Arc::from(captures)
        },
        closure_writes: {
            let mut writes = cx.closure_writes;
            writes.sort_by_key(|(e, _)| *e);
            writes.dedup_by_key(|(e, _)| *e);
            Arc::from(writes)
        },
        closure_calls: {
            let mut calls = cx.closure_calls;
            calls.sort_by_key(|(e, _)| *e);
            calls.dedup_by_key(|(e, _)| *e);
            Arc::from(calls)
        },
        regions: Arc::from(cx.regions),
        fn_arguments: Arc::from(cx.fn_arguments),
        value_instances: {
            let mut instances = cx.value_instances;
            instances.sort_by_key(|(e, _)| *e);
            instances.dedup_by_key(|(e, _)| *e);
            Arc::from(instances)
        },
    };
    if check.error.is_some() {
        recovered(db, item, signature, args, body, &mut check);
    }
    check
}

/// A refused body's names and types past its first refusal, for the tools (hover, definition,
/// references, packets): the body is checked once more with every block's statements run past
/// a refusal (`Cx::recover`), and what that pass resolved and typed replaces the ordinary pass's
/// (which stopped at the refusal). Everything else — the refusal itself, the calls, sites and
/// rows — stays the ordinary pass's, so what a refused body means to the program is unchanged.
fn recovered<'db>(
    db: &'db dyn Db,
    item: Item,
    signature: &'db Signature,
    args: &'db [crate::instance::InstanceArg],
    body: Arc<crate::body::Body>,
    check: &mut FnCheck,
) {
    let mut cx = new_cx(db, item, signature, args, body, true);
    // Its refusal is the ordinary pass's first one (the passes agree up to it); only the names
    // and types are read.
    let _ = cx.run();
    settle(&mut cx);
    check.resolutions = Arc::from(std::mem::take(&mut cx.resolutions));
    check.expr_types = TypeTable::from(std::mem::take(&mut cx.types));
    check.binder_types = Arc::from(std::mem::take(&mut cx.binder_types));
    check.call_targets = Arc::from(std::mem::take(&mut cx.call_targets));
    check.arm_variants = Arc::from(std::mem::take(&mut cx.arm_variants));
}

/// The checker's state at the start of `item`'s body.
fn new_cx<'db>(
    db: &'db dyn Db,
    item: Item,
    signature: &'db Signature,
    args: &'db [crate::instance::InstanceArg],
    body: Arc<crate::body::Body>,
    recover: bool,
) -> Cx<'db> {
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    Cx {
        db,
        scope,
        scopes: crate::scopes::body_scopes(db, item),
        resolutions: vec![Resolution::Unresolved; body.exprs.len()],
        binder_types: vec![Ty::Error; body.binders.len()],
        item,
        module,
        generics: crate::generics::fn_generics(db, item),
        args,
        types: vec![Ty::Error; body.exprs.len()],
        body,
        signature,
        locals: HashMap::new(),
        at: crate::scopes::ScopeId(0),
        loops: 0,
        unsafe_depth: 0,
        effects: BTreeSet::new(),
        sites: Vec::new(),
        calls: Vec::new(),
        call_targets: Vec::new(),
        arguments: Vec::new(),
        length_checks: Vec::new(),
        arm_variants: Vec::new(),
        address_taken: Vec::new(),
        closure_rets: Vec::new(),
        captures: Vec::new(),
        closure_writes: Vec::new(),
        rw_lends: Vec::new(),
        dyn_lends: Vec::new(),
        value_instances: Vec::new(),
        stack_bytes: 0,
        lane: None,
        closure_calls: Vec::new(),
        field_parents: None,
        regions: Vec::new(),
        fn_arguments: Vec::new(),
        spawn_binding: None,
        atomic_targets: Vec::new(),
        pinned_use: None,
        queued: Vec::new(),
        recover,
        probing: 0,
    }
}

/// Names the check left to the body's scopes, and the records kept for binary search sorted.
fn settle(cx: &mut Cx<'_>) {
    // A bare name that a local binding answers means that binding (the body's scopes say
    // which); the check resolved every other name where it met it.
    for (i, resolution) in cx.resolutions.iter_mut().enumerate() {
        if *resolution == Resolution::Unresolved
            && let Some(local) = cx.scopes.resolve(ExprId(i as u32))
        {
            *resolution = Resolution::Local(local);
        }
    }
    // Sorted by key for binary search (the ownership walk below searches them too); a key recorded twice keeps its first record, as a
    // search in recording order would (the sorts are stable).
    cx.call_targets.sort_by_key(|(e, _)| *e);
    cx.call_targets.dedup_by_key(|(e, _)| *e);
    cx.arguments.sort_by_key(|(e, _)| *e);
    cx.arguments.dedup_by_key(|(e, _)| *e);
    cx.arm_variants.sort_by_key(|(a, _)| *a);
    cx.arm_variants.dedup_by_key(|(a, _)| *a);
}
