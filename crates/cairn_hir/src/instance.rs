//! Instances: a template declaration together with its type and natural arguments, interned, so
//! that every query about compiled code (`cairn_mir::instance_mir`, codegen, the solver) is keyed
//! by what is compiled rather than by what is written.
//!
//! Tier 0 has no generics, so every instance is *monomorphic*: a declaration with no arguments,
//! named as the declaration is. Tier 1 (issue 13) interns `f[u64]` and `scale[4]` the same way,
//! on demand, as the checker meets them; the records name an instance by [`Instance::display`].
//!
//! Invariant: an instance's identity is its declaration and arguments only, never a position or
//! the caller that first asked for it, so the same instance asked twice is one id.

use std::sync::Arc;

use std::collections::{HashMap, HashSet};

use crate::db::Db;
use crate::input::{Item, ItemKind, Program};
use crate::types::Ty;

/// One argument of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InstanceArg {
    Type(Ty),
    Nat(u64),
}

/// A declaration with its arguments.
#[salsa::interned(debug)]
pub struct Instance<'db> {
    #[returns(copy)]
    pub item: Item,
    #[returns(ref)]
    pub args: Arc<[InstanceArg]>,
}

impl<'db> Instance<'db> {
    /// The instance of a declaration without arguments (every tier-0 function).
    pub fn monomorphic(db: &'db dyn Db, item: Item) -> Instance<'db> {
        Instance::new(db, item, Arc::from(Vec::new()))
    }

    /// True when the instance has no arguments.
    pub fn is_monomorphic(self, db: &'db dyn Db) -> bool {
        self.args(db).is_empty()
    }

    /// How records name it: the declaration's full name, then its arguments in brackets
    /// (`lib.scale[4]`, `max_of[u64]`).
    pub fn display(self, db: &'db dyn Db) -> String {
        let mut out = crate::scope::Resolver::new(db).full_name(self.item(db)).to_string();
        let args = self.args(db);
        if !args.is_empty() {
            let shown: Vec<String> = args
                .iter()
                .map(|arg| match arg {
                    InstanceArg::Type(ty) => ty.to_string(),
                    InstanceArg::Nat(n) => n.to_string(),
                })
                .collect();
            out.push('[');
            out.push_str(&shown.join(", "));
            out.push(']');
        }
        out
    }
}

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
    /// True when requests went past [`crate::FUNCTION_LIMIT`] (the walk stopped there).
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
    let limit = crate::report::FUNCTION_LIMIT;
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
        let check = crate::check::check_fn(db, entry.item);
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
        let check = crate::check::instance_check(db, instance);
        for edge in check.calls.iter().chain(value_edges(db, check).iter()) {
            push(&mut out, edge);
        }
    }
    out
}

/// The instances a body takes as function values (`twice[u64]`), as the edges of calls: each
/// may be called through the value, so each is requested.
fn value_edges(db: &dyn Db, check: &crate::check::FnCheck) -> Vec<crate::check::CallEdge> {
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
pub fn table_entries(db: &dyn Db, check: &crate::check::FnCheck) -> Vec<(Item, Arc<[InstanceArg]>)> {
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
