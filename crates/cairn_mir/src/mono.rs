//! Monomorphization: the instances a set of roots reaches — what a build compiles.
//!
//! [`collect`] starts from the roots (an executable's `main` and its tests, or every function of
//! a library build) and follows every call the checker recorded (`FnCheck::calls`), each callee
//! as an instance, until nothing new is reached. In tier 0 every call names a declaration
//! without arguments, so every instance is monomorphic; tier 1 (issue 13) records the instance a
//! call reaches (`f[u64]`) and the same walk interns it on demand.
//!
//! Invariant: the order is deterministic — the roots in the order given, then each newly reached
//! instance in the order of the first call that reaches it (breadth first) — so the emitted
//! module is the same for the same program.

use std::collections::HashSet;

use cairn_hir::Db;
use cairn_hir::check::instance_check;
use cairn_hir::instance::Instance;

/// The instances `roots` reach, each once (see the module comment).
pub fn collect<'db>(db: &'db dyn Db, roots: &[Instance<'db>]) -> Vec<Instance<'db>> {
    let mut seen: HashSet<Instance<'db>> = HashSet::new();
    let mut out: Vec<Instance<'db>> = Vec::new();
    for &root in roots {
        if seen.insert(root) {
            out.push(root);
        }
    }
    let mut next = 0;
    while next < out.len() {
        let instance = out[next];
        next += 1;
        let check = instance_check(db, instance);
        // A reference reaches the implementation a plan selects (language §27).
        if instance.is_monomorphic(db)
            && let Some(chosen) = cairn_hir::implementations::selected(db, instance.item(db))
            && seen.insert(chosen)
        {
            out.push(chosen);
        }
        for edge in check.calls.iter() {
            // A template named bare (a `dyn` call's possible generic implementation, there for
            // the rows) is reached through the instances its tables request.
            if edge.args.is_empty() && !cairn_hir::generics::fn_generics(db, edge.callee).is_empty() {
                continue;
            }
            let reached = Instance::new(db, edge.callee, edge.args.clone());
            if seen.insert(reached) {
                out.push(reached);
            }
        }
        // The methods of an impl lent as a `dyn` reference fill its table.
        for (method, args) in cairn_hir::requested::table_entries(db, check) {
            let reached = Instance::new(db, method, args);
            if seen.insert(reached) {
                out.push(reached);
            }
        }
        // An instance of a template used as a value (`twice[u64]`) may be called through it.
        for (e, args) in check.value_instances.iter() {
            if let cairn_hir::check::Resolution::Function(item) = check.resolution(*e) {
                let reached = Instance::new(db, item, args.clone());
                if seen.insert(reached) {
                    out.push(reached);
                }
            }
        }
        // A function used as a value may be called through it (a template only as one of its
        // instances, above).
        for &item in check.address_taken.iter() {
            if !cairn_hir::generics::fn_generics(db, item).is_empty() {
                continue;
            }
            let reached = Instance::monomorphic(db, item);
            if seen.insert(reached) {
                out.push(reached);
            }
        }
    }
    out
}
