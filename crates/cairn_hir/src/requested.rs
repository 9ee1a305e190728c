//! The instances a program requests (language §19): found on demand from the bodies — every
//! call of a template in an ordinary function, test or impl method, every instance a body takes
//! as a function value or puts in a `dyn` table, a family's copies and a tuned implementation's
//! listed instances — then every request those instances' bodies make, until nothing new is
//! requested or the program's function limit is reached (`requested_instances`).
//!
//! What depends on that walk lives here too, above the checker: the check a tool shows for a
//! template ([`representative_check`], its first instance's), a template's first refusal
//! (`body_refusal`) and `E-UNINSTANTIATED`. The instance key itself is `instance.rs`, below
//! everything that names one.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::check::{FnCheck, check_fn, instance_check};
use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::input::{Item, ItemKind, Program};
use crate::instance::{Instance, InstanceArg};
use crate::scope::Resolver;
use crate::types::Ty;

/// The most functions a program may have, instances included (language §1, `E-EXPANSION-LIMIT`).
pub const FUNCTION_LIMIT: usize = 32_768;

/// The instances of templates a program requests, found on demand from the bodies: every call
/// of a template in an ordinary function or test, then every call in those instances, until
/// nothing new is requested or the program's function limit is reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requested {
    /// Each instance once, in order of first request (declaration order of the requesting
    /// function, then call order, breadth first).
    pub order: Vec<(Item, Arc<[InstanceArg]>)>,
    /// Per template, the positions in `order` of its instances.
    pub of: HashMap<Item, Vec<u32>>,
    /// True when requests went past [`FUNCTION_LIMIT`] (the walk stopped there).
    pub over_limit: bool,
}

#[salsa::tracked(returns(ref))]
pub(crate) fn requested_instances(db: &dyn Db, program: Program) -> Requested {
    let mut out = Requested::default();
    let mut seen: HashSet<(Item, Arc<[InstanceArg]>)> = HashSet::new();
    // Functions, tests and the methods of impls (a method's body may call a template or lend a
    // value of a generic impl as `dyn`; a generic impl's methods check to nothing here).
    let ordinary =
        program.items(db).iter().filter(|e| matches!(e.key.kind, ItemKind::Fn | ItemKind::Test | ItemKind::Method));
    let mut push = |out: &mut Requested, edge: &crate::check::CallEdge| {
        if edge.args.is_empty() || !seen.insert((edge.callee, edge.args.clone())) {
            return;
        }
        out.of.entry(edge.callee).or_default().push(out.order.len() as u32);
        out.order.push((edge.callee, edge.args.clone()));
    };
    let limit = FUNCTION_LIMIT;
    // A family's copies are declarations: instantiated whether or not anything calls them.
    for (_, family) in crate::family::families(db) {
        for k in family.naturals() {
            let Some(template) = family.template else { break };
            let edge = crate::check::CallEdge {
                callee: template,
                args: Arc::from(vec![InstanceArg::Nat(k)]),
                mapping: Arc::from(Vec::new()),
            };
            push(&mut out, &edge);
        }
    }
    // A tuned implementation's listed instances are made whether or not selected (language §27).
    for entry in program.items(db).iter().filter(|e| e.key.kind == ItemKind::Fn && !e.library) {
        for args in crate::implementations::tuned_instances(db, entry.item) {
            let edge = crate::check::CallEdge { callee: entry.item, args, mapping: Arc::from(Vec::new()) };
            push(&mut out, &edge);
        }
    }
    for entry in ordinary {
        let check = check_fn(db, entry.item);
        for edge in check.calls.iter().chain(value_edges(db, check).iter()) {
            push(&mut out, edge);
        }
    }
    let mut next = 0;
    while next < out.order.len() {
        if out.order.len() > limit {
            out.over_limit = true;
            break;
        }
        let (item, args) = out.order[next].clone();
        next += 1;
        // A template that instantiates itself at ever deeper types (`f[T]` calling
        // `f[Box[T]]`) would reach the limit only after quadratic work: stop at a depth.
        if args.iter().any(|a| matches!(a, InstanceArg::Type(t) if depth(t) > MAX_TYPE_DEPTH)) {
            out.over_limit = true;
            out.order.truncate(next);
            break;
        }
        let instance = Instance::new(db, item, args);
        let check = instance_check(db, instance);
        for edge in check.calls.iter().chain(value_edges(db, check).iter()) {
            push(&mut out, edge);
        }
    }
    out
}

/// The instances a body takes as function values (`twice[u64]`), as the edges of calls: each
/// may be called through the value, so each is requested.
fn value_edges(db: &dyn Db, check: &FnCheck) -> Vec<crate::check::CallEdge> {
    let values = check.value_instances.iter().filter_map(|(e, args)| match check.resolution(*e) {
        crate::check::Resolution::Function(item) => {
            Some(crate::check::CallEdge { callee: item, args: args.clone(), mapping: Arc::from(Vec::new()) })
        }
        _ => None,
    });
    // A generic impl lent as `dyn` (or boxed in a `Dyn`): its table holds its methods' instances.
    let tables = table_entries(db, check)
        .into_iter()
        .filter(|(_, args)| !args.is_empty())
        .map(|(method, args)| crate::check::CallEdge { callee: method, args, mapping: Arc::from(Vec::new()) });
    values.chain(tables).collect()
}

/// What the `dyn` tables a body makes hold (`FnCheck::dyn_lends`): each impl's methods in the
/// trait's order, with the impl's arguments (empty for an impl that is no template). The instance
/// walk requests them and a build compiles them.
pub fn table_entries(db: &dyn Db, check: &FnCheck) -> Vec<(Item, Arc<[InstanceArg]>)> {
    let mut out = Vec::new();
    for (_, imp, args) in check.dyn_lends.iter() {
        out.extend(crate::traits::table_methods(db, *imp).into_iter().map(|method| (method, args.clone())));
    }
    out
}

/// How deeply an instance's type arguments may nest before the walk is stopped as runaway.
pub(crate) const MAX_TYPE_DEPTH: usize = 64;

fn depth(ty: &Ty) -> usize {
    match ty {
        Ty::Record(adt) | Ty::Enum(adt) => 1 + adt.args.iter().map(depth).max().unwrap_or(0),
        Ty::Borrow(_, inner) => 1 + depth(inner),
        Ty::View(view) => 1 + depth(&view.elem),
        _ => 1,
    }
}

/// The instances of `template` the program requests, in order of first request.
pub(crate) fn instances_of(db: &dyn Db, template: Item) -> Vec<Instance<'_>> {
    let requested = requested_instances(db, Program::get(db));
    requested
        .of
        .get(&template)
        .map(|at| {
            at.iter()
                .map(|&i| {
                    let (item, args) = &requested.order[i as usize];
                    Instance::new(db, *item, args.clone())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The check that tools show for a function's body: its own, or for a template the check of its
/// first requested instance (hover, definition, sites and types read a body through it; a
/// template nothing instantiates has an empty one).
pub fn representative_check(db: &dyn Db, item: Item) -> &FnCheck {
    if crate::generics::fn_generics(db, item).is_empty() {
        return check_fn(db, item);
    }
    match instances_of(db, item).first() {
        Some(&instance) => instance_check(db, instance),
        None => check_fn(db, item),
    }
}

/// The first refusal of a function's body: for a template, the first refusal among its
/// instances in order of request, said with the instance it was met in.
pub(crate) fn body_refusal(db: &dyn Db, item: Item) -> Option<Diag> {
    if crate::generics::fn_generics(db, item).is_empty() {
        return check_fn(db, item).error.clone();
    }
    instances_refusal(db, &instances_of(db, item))
}

/// The first refusal among a template's `instances`, said with the instance it was met in.
pub(crate) fn instances_refusal(db: &dyn Db, instances: &[Instance<'_>]) -> Option<Diag> {
    instances.iter().find_map(|&instance| {
        let mut diag = instance_check(db, instance).error.clone()?;
        diag.message = Arc::from(format!("{} (In the instance {}.)", diag.message, instance.display(db)));
        Some(diag)
    })
}

/// `E-UNINSTANTIATED` (language §19): a root-namespace template whose parameters are all
/// naturals, never instantiated and not part of a family. Every other uninstantiated template is
/// accepted (and listed as such in the receipt). Judged once every body is accepted: a refused
/// call would otherwise leave its template uninstantiated as a knock-on.
pub(crate) fn uninstantiated_refusal(db: &dyn Db, item: Item) -> Option<Diag> {
    let generics = crate::generics::fn_generics(db, item);
    if generics.is_empty() || !instances_of(db, item).is_empty() {
        return None;
    }
    let scope = Resolver::new(db);
    if !generics.iter().all(crate::generics::Generic::is_nat)
        || !scope.module_of(item).is_empty()
        || scope.info(item).is_none_or(|info| info.library)
        || crate::family::in_family(db, item)
        || crate::implementations::is_implementation(db, item)
    {
        return None;
    }
    let name = scope.full_name(item);
    let params: Vec<String> = generics.iter().map(crate::generics::Generic::text).collect();
    Some(Diag::new(
        "E-UNINSTANTIATED",
        format!(
            "{name}[{}] is never instantiated: call it with its naturals (`{name}[4](...)`), make a family of it, or remove it.",
            params.join(", ")
        ),
        Anchor::Item,
    ))
}
