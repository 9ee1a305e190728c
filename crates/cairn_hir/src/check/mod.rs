//! The check of one function body (language §3–§16, tier 0).
//!
//! [`check_fn`] reads the body (`fn_body`, position-free), the function's signature, the scope,
//! the folded constants and the signatures of what it calls — never another body — and returns a
//! [`FnCheck`]: the first refusal of the body (a body reports one, as the original's does), or the
//! body's local effect row, its call edges with their argument mapping, its guard sites, and the
//! facts the operand-order audit needs. Rules run left to right, depth first, in the order the
//! original applies them, so the first refusal is the one it reports.
//!
//! Layout: `mod.rs` holds the state and bookkeeping; `stmt.rs` statements; `assign.rs`
//! assignments; `expr.rs` expressions; `call.rs` calls, records and variants; `builtin.rs` the
//! builtins.

mod alias;
mod assign;
mod atomic;
mod builtin;
pub(crate) mod call;
pub(crate) mod closure;
mod collect;
pub(crate) mod device;
mod dispatch;
mod dynamic;
mod expr;
mod extents;
mod generic;
mod implements;
mod linear;
mod moves;
mod owner;
mod parallel;
mod queued;
pub use parallel::{FnArgument, Region};
mod stmt;
mod value;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::body::{Arm, BinderId, Block, Body, Else, Expr, ExprId, Stmt, StmtId, fn_body};
use crate::consts::ConstValue;
use crate::db::Db;
use crate::decl::{TypeCtx, is_tag_only, resolve_type, variants_of};
use crate::diag::{Anchor, Detail, Diag, list, text};
use crate::input::Item;
use crate::scope::Resolver;
use crate::signature::{Signature, fn_signature};
use crate::types::{Extent, Ty};

/// The kinds of guard sites (language §15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GuardKind {
    ViewEntry,
    EnumEntry,
    Bounds,
    Overflow,
    Division,
    Conversion,
    Shift,
    Tag,
    Assert,
    /// A call through a function value: the value is not the zero value (language §21).
    Callable,
    /// Heap storage made (`Buf(n)`, `buffer`, `Dyn(v)`): the machine had room (language §15,
    /// §22.1).
    Allocation,
    /// A `Dyn` lent or called through holds a value (not moved-from or zeroed; language §20).
    DynLent,
}

impl GuardKind {
    pub fn name(self) -> &'static str {
        match self {
            GuardKind::ViewEntry => "view_entry",
            GuardKind::EnumEntry => "enum_entry",
            GuardKind::Bounds => "bounds",
            GuardKind::Overflow => "overflow",
            GuardKind::Division => "division",
            GuardKind::Conversion => "conversion",
            GuardKind::Shift => "shift",
            GuardKind::Tag => "tag",
            GuardKind::Assert => "assert",
            GuardKind::Callable => "callable",
            GuardKind::Allocation => "allocation",
            GuardKind::DynLent => "dyn",
        }
    }
}

/// How a callee's borrowed parameter maps to the caller, for renaming footprints.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Mapped {
    /// A borrowed parameter of the caller: `read:p` becomes `read:<name>`.
    Borrow(Arc<str>),
    /// The caller's own storage (a local, or a by-value parameter): `local_read`/`local_write`.
    Local,
    /// A temporary, literal or constant: the footprint is dropped.
    Dropped,
}

/// One call of a declared function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallEdge {
    pub callee: Item,
    /// The instance's arguments when the callee is a template (empty otherwise).
    pub args: Arc<[crate::instance::InstanceArg]>,
    /// Per callee parameter (after extents were filled in).
    pub mapping: Arc<[Mapped]>,
}

/// What a call expression calls (read by the operand-order audit).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CallTarget {
    /// A declared function, with the instance's arguments when it is a template.
    Function(Item, Arc<[crate::instance::InstanceArg]>),
    /// A builtin (its row is empty for the audit).
    Builtin(crate::builtins::Builtin),
    /// A record or variant constructor (never "beside" for the audit).
    Constructor,
    /// A call through a function value or a borrowed callable (`indirect_call`).
    Indirect,
    /// A call of a trait's member through a `dyn` reference: the member, and its position in
    /// the trait's table.
    Dynamic { member: Item, index: u32 },
}

/// What an expression names, as the body check resolved it. The checker is the only resolver
/// (issue 12): MIR lowering, expression sites, the edit host and the language server read these
/// (with `call_targets` for what a call calls) and never look a name up again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Not a name, or not reached by the check.
    Unresolved,
    /// A parameter or a binder of the body (`crate::scopes`).
    Local(crate::scopes::LocalRef),
    /// A constant.
    Const(Item),
    /// A variant of a sum or tag-only enum: a bare or qualified variant, or (on a call) the
    /// variant a call constructs.
    Variant { adt: Item, index: u32 },
    /// A field of a record (the record's declaration), by position.
    Field { adt: Item, index: u32 },
    /// A natural parameter of the instance checked, with its value (a `usize` constant).
    Natural(u64),
    /// A declared function used as a value (its address taken).
    Function(Item),
}

/// The result of checking one body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FnCheck {
    /// The body's first refusal.
    pub error: Option<Diag>,
    /// Effects the body performs itself (footprints of locals already made `local_*`).
    pub local_row: BTreeSet<Arc<str>>,
    pub calls: Arc<[CallEdge]>,
    /// Guard sites by kind, in order of first occurrence.
    pub sites: Arc<[(GuardKind, u32)]>,
    /// What each call expression calls, sorted by expression.
    pub call_targets: Arc<[(ExprId, CallTarget)]>,
    /// The type of every expression that was checked (`Ty::Error` for the rest).
    pub expr_types: Arc<[Ty]>,
    /// What every name, field and variant expression means (`Unresolved` for the rest).
    pub resolutions: Arc<[Resolution]>,
    /// The type of every binder the check bound (`Ty::Error` for the rest), by `BinderId`.
    pub binder_types: Arc<[Ty]>,
    /// Each argument of a call of a declared function (the receiver of a method call included)
    /// with the type of the parameter it was paired with, after omitted extents were filled in;
    /// sorted by expression.
    pub arguments: Arc<[(ExprId, Ty)]>,
    /// View arguments whose length the check could not compare with the extent their parameter
    /// declares (a record's lent part, an owner without a field extent): the lowering compares
    /// it at run time, a `bounds` site each; sorted.
    pub length_checks: Arc<[ExprId]>,
    /// The variant (its index in the subject's type) each match arm names, once the match
    /// passed its coverage rules; sorted by arm.
    pub arm_variants: Arc<[(crate::body::ArmId, u32)]>,
    /// The declared functions this body uses as values (their addresses taken), each once.
    pub address_taken: Arc<[Item]>,
    /// Each closure of the body with the outer bindings it captures, in first-use order;
    /// sorted by closure.
    pub captures: Arc<[(ExprId, Arc<[crate::scopes::LocalRef]>)]>,
    /// Each argument lent to a `dyn` parameter (or boxed in a `Dyn`) with the impl its table is
    /// made of and, for a generic impl, the impl's arguments; sorted.
    pub dyn_lends: Arc<[(ExprId, Item, Arc<[crate::instance::InstanceArg]>)]>,
    /// The instances of templates used as values (`twice[u64]`), by expression, sorted: their
    /// expressions resolve to the template (`Resolution::Function`), and these are the
    /// instance's arguments (language §21).
    pub value_instances: Arc<[(ExprId, Arc<[crate::instance::InstanceArg]>)]>,
    /// Each closure with the call expressions its body makes (what a lane calling it reaches);
    /// sorted by closure.
    pub closure_calls: Arc<[(ExprId, Arc<[ExprId]>)]>,
    /// Each parallel region and collector, in statement order (language §24, §25).
    pub regions: Arc<[parallel::Region]>,
    /// Each `fn`-typed argument of a call of a declared function (judged where written when the
    /// callee's lanes call it).
    pub fn_arguments: Arc<[parallel::FnArgument]>,
}

impl FnCheck {
    /// What expression `id` names.
    pub fn resolution(&self, id: ExprId) -> Resolution {
        self.resolutions.get(id.0 as usize).copied().unwrap_or(Resolution::Unresolved)
    }

    /// The parameter type argument `id` was paired with, when it is an argument of a call of a
    /// declared function.
    pub fn argument_type(&self, id: ExprId) -> Option<&Ty> {
        let at = self.arguments.binary_search_by_key(&id, |(e, _)| *e).ok()?;
        Some(&self.arguments[at].1)
    }

    /// The variant index match arm `arm` names.
    pub fn arm_variant(&self, arm: crate::body::ArmId) -> Option<u32> {
        let at = self.arm_variants.binary_search_by_key(&arm, |(a, _)| *a).ok()?;
        Some(self.arm_variants[at].1)
    }

    /// The impl whose table argument `id` is lent to a `dyn` parameter with, and its arguments
    /// (empty for an impl that is no template).
    pub fn dyn_lend(&self, id: ExprId) -> Option<(Item, &Arc<[crate::instance::InstanceArg]>)> {
        let at = self.dyn_lends.binary_search_by_key(&id, |(e, _, _)| *e).ok()?;
        Some((self.dyn_lends[at].1, &self.dyn_lends[at].2))
    }

    /// The arguments of the template instance expression `id` takes as a value (`twice[u64]`).
    pub fn value_instance(&self, id: ExprId) -> Option<&Arc<[crate::instance::InstanceArg]>> {
        let at = self.value_instances.binary_search_by_key(&id, |(e, _)| *e).ok()?;
        Some(&self.value_instances[at].1)
    }

    /// The region (or collector) of statement `stmt`.
    pub fn region(&self, stmt: StmtId) -> Option<&parallel::Region> {
        self.regions.iter().find(|r| r.stmt == stmt)
    }

    /// The call expressions closure `id`'s body makes.
    pub fn closure_calls_of(&self, id: ExprId) -> &[ExprId] {
        match self.closure_calls.binary_search_by_key(&id, |(e, _)| *e) {
            Ok(at) => &self.closure_calls[at].1,
            Err(_) => &[],
        }
    }

    /// The outer bindings closure `id` captures.
    pub fn captures_of(&self, id: ExprId) -> &[crate::scopes::LocalRef] {
        match self.captures.binary_search_by_key(&id, |(e, _)| *e) {
            Ok(at) => &self.captures[at].1,
            Err(_) => &[],
        }
    }

    pub fn call_target(&self, id: ExprId) -> Option<&CallTarget> {
        let at = self.call_targets.binary_search_by_key(&id, |(e, _)| *e).ok()?;
        Some(&self.call_targets[at].1)
    }

    /// The declared functions this body calls, in first-call order, each once.
    pub fn callees(&self) -> Vec<Item> {
        let mut out: Vec<Item> = Vec::new();
        for edge in self.calls.iter() {
            if !out.contains(&edge.callee) {
                out.push(edge.callee);
            }
        }
        out
    }
}

/// True for the name of a builtin function (hard or soft).
pub fn is_builtin(name: &str) -> bool {
    crate::builtins::Builtin::from_name(name).is_some_and(crate::builtins::Builtin::callable)
}

/// The builtins and `names` closest to `name` (at most two, similarity ≥ 0.6): what a host's
/// `E-CALLEE` hint suggests, the names being the functions its session disclosed (protocol §5.3).
pub fn close_callables(name: &str, names: &[Arc<str>]) -> Vec<String> {
    let mut candidates: Vec<Arc<str>> = crate::builtins::Builtin::callable_names().map(Arc::from).collect();
    candidates.extend(names.iter().cloned());
    expr::close_matches(name, &candidates)
}

/// The check of a function's body. A template (a function with generic parameters) is checked
/// per instance ([`instance_check`]); its own check is empty.
#[salsa::tracked(returns(ref))]
pub fn check_fn(db: &dyn Db, item: Item) -> FnCheck {
    if !crate::generics::fn_generics(db, item).is_empty() {
        return FnCheck::default();
    }
    if crate::foreign::is_extern(db, item) {
        return crate::foreign::extern_check(db, item, fn_signature(db, item));
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

/// The check that tools show for a function's body: its own, or for a template the check of its
/// first requested instance (hover, definition, sites and types read a body through it; a
/// template nothing instantiates has an empty one).
pub fn representative_check(db: &dyn Db, item: Item) -> &FnCheck {
    if crate::generics::fn_generics(db, item).is_empty() {
        return check_fn(db, item);
    }
    match crate::instance::instances_of(db, item).first() {
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
    instances_refusal(db, &crate::instance::instances_of(db, item))
}

/// The first refusal among a template's `instances`, said with the instance it was met in.
pub(crate) fn instances_refusal(db: &dyn Db, instances: &[crate::instance::Instance<'_>]) -> Option<Diag> {
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
    if generics.is_empty() || !crate::instance::instances_of(db, item).is_empty() {
        return None;
    }
    let scope = Resolver::new(db);
    if !generics.iter().all(crate::generics::Generic::is_nat)
        || !scope.module_of(item).is_empty()
        || scope.info(item).is_none_or(|info| info.library)
        || crate::generics::in_family(db, item)
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
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let mut cx = Cx {
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
        dyn_lends: Vec::new(),
        value_instances: Vec::new(),
        stack_bytes: 0,
        lane: None,
        closure_calls: Vec::new(),
        regions: Vec::new(),
        fn_arguments: Vec::new(),
        spawn_binding: None,
        atomic_targets: Vec::new(),
        pinned_use: None,
        queued: Vec::new(),
    };
    let mut result = cx.run();
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
    // Moves and releases, once every expression is typed and resolved.
    if result.is_ok() {
        match moves::walk(&cx).and_then(|frees| queued::leases(&cx).map(|()| frees)) {
            Ok(true) => cx.effect("free"),
            Ok(false) => {}
            Err(diag) => result = Err(diag),
        }
    }
    let local_row = cx.local_row();
    FnCheck {
        error: result.err(),
        local_row,
        calls: Arc::from(cx.calls),
        sites: Arc::from(cx.sites),
        call_targets: Arc::from(cx.call_targets),
        expr_types: Arc::from(cx.types),
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
    }
}

type R<T> = Result<T, Diag>;

/// What kind of binding a local is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocalKind {
    /// A parameter (borrowed or by value: see the type).
    Param,
    Let,
    LoopBinder,
    MatchBinder,
    /// A `stack` array: an `rw` view whose name is not assignable.
    Stack,
}

#[derive(Debug, Clone)]
pub(crate) struct Local {
    pub name: Arc<str>,
    pub ty: Ty,
    pub mutable: bool,
    pub kind: LocalKind,
    /// For `let n = <integer literal>` without a type: the literal (for `literal_binding`).
    pub literal: Option<Arc<str>>,
}

impl Local {
    fn borrowed_param(&self) -> bool {
        self.kind == LocalKind::Param && matches!(self.ty, Ty::View(_) | Ty::Borrow(..))
    }
}

pub(crate) struct Cx<'db> {
    pub db: &'db dyn Db,
    pub scope: Resolver<'db>,
    /// The body's scopes: which local a bare name means.
    pub scopes: &'db crate::scopes::BodyScopes,
    pub resolutions: Vec<Resolution>,
    pub binder_types: Vec<Ty>,
    pub item: Item,
    pub module: Arc<str>,
    /// The template's generic parameters and the instance's arguments (both empty for an
    /// ordinary function).
    pub generics: &'db [crate::generics::Generic],
    pub args: &'db [crate::instance::InstanceArg],
    pub body: Arc<Body>,
    pub signature: &'db Signature,
    /// What the check knows of each local binding it has bound (by the body's scopes'
    /// `LocalRef`); which binding a name means is the scopes' to say.
    pub locals: HashMap<crate::scopes::LocalRef, Local>,
    /// The scope of the statement or expression being checked.
    pub at: crate::scopes::ScopeId,
    pub loops: u32,
    /// How many `unsafe` blocks enclose the statement being checked (language §45).
    pub unsafe_depth: u32,
    /// Raw effects: `read:X`/`write:X` name roots; made `local_*` at the end.
    pub effects: BTreeSet<String>,
    pub sites: Vec<(GuardKind, u32)>,
    pub calls: Vec<CallEdge>,
    pub call_targets: Vec<(ExprId, CallTarget)>,
    /// Each argument of a declared function's call with its parameter's type ([`FnCheck::arguments`]).
    pub arguments: Vec<(ExprId, Ty)>,
    /// View arguments compared with their extent at run time ([`FnCheck::length_checks`]).
    pub length_checks: Vec<ExprId>,
    /// The variant each match arm names ([`FnCheck::arm_variants`]).
    pub arm_variants: Vec<(crate::body::ArmId, u32)>,
    /// The declared functions used as values ([`FnCheck::address_taken`]).
    pub address_taken: Vec<Item>,
    /// The result types of the closures being checked, innermost last (`return` leaves the
    /// innermost one).
    pub closure_rets: Vec<Ty>,
    /// The closures checked and what each captures ([`FnCheck::captures`]).
    pub captures: Vec<(ExprId, Arc<[crate::scopes::LocalRef]>)>,
    /// Arguments lent to `dyn` parameters and their impls ([`FnCheck::dyn_lends`]).
    pub dyn_lends: Vec<(ExprId, Item, Arc<[crate::instance::InstanceArg]>)>,
    /// [`FnCheck::value_instances`].
    pub value_instances: Vec<(ExprId, Arc<[crate::instance::InstanceArg]>)>,
    pub types: Vec<Ty>,
    pub stack_bytes: u64,
    /// The lane being checked, inside a region or a collector's yields (language §24).
    pub lane: Option<parallel::Lane>,
    /// The closures checked and the calls each makes ([`FnCheck::closure_calls`]).
    pub closure_calls: Vec<(ExprId, Arc<[ExprId]>)>,
    /// The regions and collectors checked ([`FnCheck::regions`]).
    pub regions: Vec<parallel::Region>,
    /// [`FnCheck::fn_arguments`].
    pub fn_arguments: Vec<parallel::FnArgument>,
    /// The element places atomic updates were made to (`atomic.rs`), in order.
    pub atomic_targets: Vec<ExprId>,
    /// The `spawn` a `let` is binding (the only place one may stand).
    pub spawn_binding: Option<ExprId>,
    /// The ticket name `wait(t)` is checking (its one allowed use).
    pub pinned_use: Option<ExprId>,
    /// The queued device work checked (for the lease walk, `queued::leases`).
    pub queued: Vec<queued::Queued>,
}

impl Cx<'_> {
    fn run(&mut self) -> R<()> {
        let params = self.signature.params.clone();
        for (index, param) in params.iter().enumerate() {
            match &param.ty {
                Ty::View(_) => {
                    self.effects.insert("ffi_precondition".to_string());
                    self.site(GuardKind::ViewEntry);
                }
                ty if is_tag_only(self.db, ty) => self.site(GuardKind::EnumEntry),
                _ => {}
            }
            self.locals.insert(
                crate::scopes::LocalRef::Param(index as u32),
                Local {
                    name: param.name.clone(),
                    ty: param.ty.clone(),
                    mutable: false,
                    kind: LocalKind::Param,
                    literal: None,
                },
            );
        }
        let body = self.body.clone();
        if !body.present {
            return Ok(());
        }
        if let Some(when) = body.when {
            self.when_condition(when)?;
        }
        let ends = self.block(&body.root)?;
        if !ends && self.signature.ret != Ty::Void && !self.signature.ret.is_error() {
            let name = self.scope.full_name(self.item);
            return Err(Diag::new(
                "E-RETURN",
                format!("Not all paths of {name} return: end every path with `return` of a {}.", self.signature.ret),
                Anchor::Item,
            ));
        }
        Ok(())
    }

    /// The local row: footprints of anything but a borrowed parameter become `local_*`.
    fn local_row(&self) -> BTreeSet<Arc<str>> {
        let borrowed: Vec<&str> = self.signature.params.iter().filter(|p| p.borrowed()).map(|p| &*p.name).collect();
        self.effects
            .iter()
            .map(|effect| {
                for (prefix, local) in [("read:", "local_read"), ("write:", "local_write")] {
                    if let Some(root) = effect.strip_prefix(prefix)
                        && !borrowed.contains(&root)
                    {
                        return Arc::from(local);
                    }
                }
                Arc::from(effect.as_str())
            })
            .collect()
    }

    pub(crate) fn site(&mut self, kind: GuardKind) {
        self.effects.insert("trap".to_string());
        match self.sites.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => *count += 1,
            None => self.sites.push((kind, 1)),
        }
    }

    /// Records what expression `e` names.
    pub(crate) fn resolved(&mut self, e: ExprId, resolution: Resolution) {
        if let Some(slot) = self.resolutions.get_mut(e.0 as usize) {
            *slot = resolution;
        }
    }

    pub(crate) fn effect(&mut self, effect: impl Into<String>) {
        self.effects.insert(effect.into());
    }

    // ----- locals --------------------------------------------------------------------------

    /// The local binding `name` means where the check stands: the body's scopes say which
    /// binding is visible, the check what it knows of it (nothing before it is bound).
    pub(crate) fn local(&self, name: &str) -> Option<&Local> {
        self.scopes.lookup(self.at, name).and_then(|local| self.locals.get(&local))
    }

    /// How to compare values of a type the operators do not compare: a sum is matched, a
    /// record derives `Eq` (or compares its fields).
    pub(crate) fn compare_hint(&self, ty: &Ty) -> String {
        match ty.value() {
            Ty::Enum(adt) => format!(
                "Use `match` to tell the variants of the sum {} apart (a variant's payload is compared inside its arm).",
                adt.name
            ),
            Ty::Record(adt) => format!(
                "Compare the fields, or write `derive eq for {};` and call `same(a, b)` (with `import std.core (Eq);`).",
                adt.name.rsplit('.').next().unwrap_or(&adt.name)
            ),
            other => format!("{other} has no operators: compare what it holds."),
        }
    }

    /// The names of the local bindings visible where the check stands (for hints).
    pub(crate) fn visible_names(&self) -> Vec<Arc<str>> {
        let mut names: Vec<Arc<str>> = self
            .scopes
            .visible(self.at)
            .into_iter()
            .filter(|(_, local)| self.locals.contains_key(local))
            .map(|(name, _)| name)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    fn bind(&mut self, binder: BinderId, local: Local) {
        if let Some(slot) = self.binder_types.get_mut(binder.0 as usize) {
            *slot = local.ty.clone();
        }
        if &*local.name != "_" {
            self.locals.insert(crate::scopes::LocalRef::Binder(binder), local);
        }
    }

    /// `E-SHADOW` when the binder's name already means a binding where it is introduced.
    fn fresh(&self, binder: BinderId, message: impl FnOnce(&str) -> String) -> R<()> {
        let name = self.body.binder(binder).clone();
        let shadows = self.scopes.binder_parent(binder).and_then(|scope| self.scopes.lookup(scope, &name));
        if &*name != "_"
            && let Some(earlier) = shadows
        {
            let diag = Diag::new("E-SHADOW", message(&name), Anchor::Binder(binder));
            return Err(match earlier {
                crate::scopes::LocalRef::Binder(first) => diag.with_related(Anchor::Binder(first), "first bound here"),
                crate::scopes::LocalRef::Param(_) => diag,
            });
        }
        Ok(())
    }

    /// Resolves a type written in the body: a template's parameters mean the instance's
    /// arguments.
    pub(crate) fn resolve_written(&self, written: &crate::body::TypeRef) -> Result<Ty, crate::decl::TypeError> {
        let names = crate::generics::generic_names(self.generics);
        let naturals = crate::generics::natural_names(self.generics);
        let self_ty = self.self_ty();
        let cx = TypeCtx {
            db: self.db,
            scope: self.scope,
            module: &self.module,
            generics: &names,
            naturals: &naturals,
            self_ty: self_ty.as_ref(),
        };
        let ty = resolve_type(cx, written)?;
        Ok(crate::generics::substitute(&ty, self.generics, self.args))
    }

    /// The result type a `return` or `try` answers to: the innermost closure's, else the
    /// function's.
    pub(crate) fn ret_ty(&self) -> Ty {
        self.closure_rets.last().cloned().unwrap_or_else(|| self.signature.ret.clone())
    }

    /// What `Self` means in the body: the impl's type for a method.
    fn self_ty(&self) -> Option<Ty> {
        let parent = self.scope.info(self.item).and_then(|info| info.parent)?;
        Some(crate::traits::impl_def(self.db, parent).self_ty.clone())
    }

    /// The value of a natural parameter of the instance being checked, if `name` is one.
    pub(crate) fn natural(&self, name: &str) -> Option<u64> {
        crate::generics::natural(name, self.generics, self.args)
    }

    /// The type a type parameter of the instance being checked stands for, if `name` is one.
    pub(crate) fn type_param(&self, name: &str) -> Option<Ty> {
        let index = self.generics.iter().position(|g| !g.is_nat() && &*g.name == name)?;
        match self.args.get(index) {
            Some(crate::instance::InstanceArg::Type(ty)) => Some(ty.clone()),
            _ => None,
        }
    }

    // ----- shared helpers ------------------------------------------------------------------

    /// `E-TYPE-MISMATCH` for a value of `got` where `want` is expected.
    pub(crate) fn mismatch(&self, at: ExprId, want: &Ty, got: &Ty) -> Diag {
        let mut details = vec![("expected_type", text(want)), ("actual_type", text(got))];
        let mut literal_binding = None;
        if let Expr::Name(name) = self.body.expr(self.body.unparen(at))
            && let Some(local) = self.local(name)
            && let Some(literal) = &local.literal
        {
            details.push(("literal_binding", Detail::Text(Arc::from(format!("{name} = {literal}")))));
            literal_binding = Some((name.clone(), literal.clone()));
        }
        let mut diag = Diag::new("E-TYPE-MISMATCH", format!("Expected {want}, got {got}."), Anchor::Expr(at))
            .with_details(details);
        if let Some((name, literal)) = literal_binding
            && want.is_numeric()
        {
            // A literal took its default type where it was bound: the fix is the binding's type.
            diag = diag.with_hint(format!(
                "{name} took {got}, a literal's default, where it was bound: give the binding its type, `let {name}:{want} = {literal};`."
            ));
        } else if want.is_numeric() && got.is_numeric() {
            // A conversion to a float rounds; to an integer it traps on a value it cannot hold.
            let how = if want.is_float() { "it rounds to nearest" } else { "it traps when the value does not fit" };
            diag = diag.with_hint(format!("Convert explicitly with {want}(...) ({how}), or compute in {want}."));
        } else if *want == Ty::Bool && got.is_numeric() {
            diag = diag.with_hint("Compare to get a bool, for example `x != 0`.");
        } else if let (Ty::View(w), Ty::View(g)) = (want.value(), got.value())
            && w.elem == g.elem
            && w.extent != g.extent
            && !matches!(w.extent, Extent::Unknown)
            && matches!(g.extent, Extent::Len(_) | Extent::Name(_))
        {
            // Two views of one element type whose lengths the checker cannot tie together: a
            // part of the expected length is checked when it is made.
            let name = match self.body.expr(self.body.unparen(at)) {
                Expr::Name(name) => name.to_string(),
                _ => "v".to_string(),
            };
            diag = diag.with_hint(format!(
                "Its length is not known to be {}: pass the part `{name}[0..{}]` (checked when it is made), or give each view its own extent parameter.",
                w.extent, w.extent
            ));
        }
        diag
    }

    /// The value of a named constant visible from here, if `name` is one.
    pub(crate) fn constant(&self, path: &[Arc<str>]) -> Option<(Item, Option<Ty>)> {
        match self.scope.resolve_path(&self.module, path, |k| k == crate::input::ItemKind::Const) {
            crate::scope::Lookup::Found(decl) => {
                let ty = match crate::consts::constant_value(self.db, decl.item) {
                    Some(ConstValue::Folded { ty, .. }) => Some(ty.clone()),
                    _ => crate::consts::const_type(self.db, decl.item).ok(),
                };
                Some((decl.item, ty))
            }
            crate::scope::Lookup::None => None,
        }
    }
}

fn describe_kind(kind: cairn_syntax::SyntaxKind) -> &'static str {
    use cairn_syntax::SyntaxKind::*;
    match kind {
        UNPACK_STMT => "Unpacking a record (`let R(a, b) = r;`)",
        // Host collectors are checked (`collect.rs`); what is left is a warp reduction.
        COLLECT_STMT => "A warp `reduce` (of a cooperative region)",
        BUFFER_STMT => "A heap `buffer`",
        SHARED_STMT | PIPELINE_STMT | BARRIER_STMT | COOP_STMT => "A cooperative region",
        DEFER_STMT => "`defer`",
        UNSAFE_STMT | ASM_STMT => "`unsafe` code",
        // Host regions are checked (`parallel.rs`); what is left waits on queued work.
        PARALLEL_STMT => "A `parallel` region with `after` (queued device work)",
        INTO_CLAUSE => "Submitting a task to a group",
        REQUIRE => "`require`",
        CLOSURE_EXPR => "A closure",
        SPAWN_EXPR => "`spawn`",
        FOLD_EXPR | EACH_EXPR => "A recipe expression",
        _ => "This construct",
    }
}
