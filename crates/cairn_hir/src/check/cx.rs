//! The checker's working state ([`Cx`]) and its bookkeeping: the locals it has bound, the
//! effects, sites, calls and resolutions it has recorded, and the order of a body's rules
//! (`run`). The rules themselves are `impl Cx` blocks in the sibling files, one per kind of
//! construct; what the check answers is `result.rs`.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::body::{BinderId, Body, Expr, ExprId};
use crate::consts::ConstValue;
use crate::db::Db;
use crate::decl::{TypeCtx, is_tag_only, resolve_type};
use crate::diag::{Anchor, Detail, Diag, text};
use crate::input::Item;
use crate::scope::Resolver;
use crate::signature::Signature;
use crate::types::{Extent, Ty};

use super::result::{CallEdge, CallTarget, FnArgument, GuardKind, Region, Resolution};
use crate::scopes::LocalRef;

pub(crate) type R<T> = Result<T, Diag>;

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
    pub(super) fn borrowed_param(&self) -> bool {
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
    /// The captured bindings each closure writes ([`FnCheck::closure_writes`]).
    pub closure_writes: Vec<(ExprId, Arc<[crate::scopes::LocalRef]>)>,
    /// Every place lent to be written by something other than an assignment: an `rw` argument
    /// of a call, `take`, `swap`, `format`'s target, an atomic update, a transfer's destination.
    /// What a closure writes through a call is read from here (an assignment is seen in its
    /// text).
    pub rw_lends: Vec<ExprId>,
    /// Arguments lent to `dyn` parameters and their impls ([`FnCheck::dyn_lends`]).
    pub dyn_lends: Vec<(ExprId, Item, Arc<[crate::instance::InstanceArg]>)>,
    /// [`FnCheck::value_instances`].
    pub value_instances: Vec<(ExprId, Arc<[crate::instance::InstanceArg]>)>,
    pub types: Vec<Ty>,
    pub stack_bytes: u64,
    /// The lane being checked, inside a region or a collector's yields (language §24).
    pub lane: Option<Lane>,
    /// The closures checked and the calls each makes ([`FnCheck::closure_calls`]).
    pub closure_calls: Vec<(ExprId, Arc<[ExprId]>)>,
    /// For each expression the field access made on it (`t` → `t.a`), built once per body at
    /// the first closure lent to a call (what a capture touches, language §21).
    pub field_parents: Option<Arc<std::collections::HashMap<ExprId, ExprId>>>,
    /// The regions and collectors checked ([`FnCheck::regions`]).
    pub regions: Vec<Region>,
    /// [`FnCheck::fn_arguments`].
    pub fn_arguments: Vec<FnArgument>,
    /// The element places atomic updates were made to (`atomic.rs`), in order.
    pub atomic_targets: Vec<ExprId>,
    /// The `spawn` a `let` is binding (the only place one may stand).
    pub spawn_binding: Option<ExprId>,
    /// The ticket name `wait(t)` is checking (its one allowed use).
    pub pinned_use: Option<ExprId>,
    /// The queued device work checked (for the lease walk, `queued::leases`).
    pub queued: Vec<Queued>,
    /// True in the recovering pass (`query.rs`, only for a refused body): a block's statements
    /// all run past a refusal, so that every name is resolved and typed for the tools. The
    /// first refusal stays the body's, as the ordinary pass found it.
    pub recover: bool,
    /// How many probes are running (`generic.rs`): a probe's refusal is its own answer, never
    /// recovered from.
    pub probing: u32,
}

impl Cx<'_> {
    pub(super) fn run(&mut self) -> R<()> {
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
    pub(super) fn local_row(&self) -> BTreeSet<Arc<str>> {
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

    pub(super) fn bind(&mut self, binder: BinderId, local: Local) {
        if let Some(slot) = self.binder_types.get_mut(binder.0 as usize) {
            *slot = local.ty.clone();
        }
        if &*local.name != "_" {
            self.locals.insert(crate::scopes::LocalRef::Binder(binder), local);
        }
    }

    /// `E-SHADOW` when the binder's name already means a binding where it is introduced.
    pub(super) fn fresh(&self, binder: BinderId, message: impl FnOnce(&str) -> String) -> R<()> {
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
        let ty = crate::generics::substitute(&resolve_type(cx, written)?, self.generics, self.args);
        if let Some((code, fact)) = crate::traits::formed_bounds(self.db, &ty) {
            return Err(crate::decl::TypeError { code, message: format!("{fact}."), hint: None });
        }
        Ok(ty)
    }

    /// The result type a `return` or `try` answers to: the innermost closure's, else the
    /// function's.
    pub(crate) fn ret_ty(&self) -> Ty {
        self.closure_rets.last().cloned().unwrap_or_else(|| self.signature.ret.clone())
    }

    /// What `Self` means in the body: the impl's type for a method.
    pub(super) fn self_ty(&self) -> Option<Ty> {
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
    /// The value of an integer constant named through its module (`dims.CELLS`): a dotted path
    /// whose first segment is no local.
    pub(crate) fn qualified_constant(&self, e: ExprId) -> Option<u64> {
        let path = self.dotted_path(e)?;
        if path.len() < 2 || self.local(&path[0]).is_some() {
            return None;
        }
        crate::consts::integer_constant_at(self.db, &self.module, &path)
    }

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

pub(super) fn describe_kind(kind: cairn_syntax::SyntaxKind) -> &'static str {
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

/// The lane being checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lane {
    /// How many closures enclosed the region: `return` inside a closure written in the lane
    /// answers to the closure, not the function.
    pub closures: usize,
    /// The first index of `@device` memory in the lane (it makes the lanes device lanes).
    pub device: Option<Anchor>,
    /// The first call of a `kernel fn` in the lane (it makes the lanes device lanes too).
    pub kernel: Option<Anchor>,
    /// The first index of host memory, refused if the lanes are device lanes.
    pub host: Option<(Anchor, crate::types::Place)>,
    /// The first host-only construct, refused if the lanes are device lanes.
    pub host_only: Option<(Anchor, &'static str)>,
}

impl Lane {
    /// A lane inside `closures` enclosing closures, nothing seen yet.
    pub(crate) fn new(closures: usize) -> Lane {
        Lane { closures, device: None, kernel: None, host: None, host_only: None }
    }
}

/// One piece of queued work, as the lease walk needs it.
#[derive(Debug, Clone)]
pub(crate) struct Queued {
    /// The `spawn` expression.
    pub spawn: ExprId,
    /// The places the work touches: each root local, and whether it writes it.
    pub leases: Vec<(LocalRef, bool)>,
    /// The tickets it was queued after.
    pub after: Vec<LocalRef>,
}
