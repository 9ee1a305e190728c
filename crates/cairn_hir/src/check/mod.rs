//! The check of one function body (language §3–§16, tier 0).
//!
//! [`check_fn`] reads the body (`fn_body`, position-free), the function's signature, the scope,
//! the folded constants and the signatures of what it calls — never another body — and returns a
//! [`FnCheck`]: the first refusal of the body (a body reports one, as the original's does), or the
//! body's local effect row, its call edges with their argument mapping, its guard sites, and the
//! facts the operand-order audit needs. Rules run left to right, depth first, in the order the
//! original applies them, so the first refusal is the one it reports.
//!
//! Layout: `mod.rs` holds the state, statements and bookkeeping; `expr.rs` expressions;
//! `call.rs` calls, builtins, records and variants.

pub(crate) mod call;
mod expr;

use std::collections::BTreeSet;
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
    /// Per callee parameter (after extents were filled in).
    pub mapping: Arc<[Mapped]>,
}

/// What a call expression calls (read by the operand-order audit).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CallTarget {
    Function(Item),
    /// A builtin (its row is empty for the audit).
    Builtin(crate::builtins::Builtin),
    /// A record or variant constructor (never "beside" for the audit).
    Constructor,
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
    /// A field of a record, by position.
    Field(u32),
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
    /// What each call expression calls.
    pub call_targets: Arc<[(ExprId, CallTarget)]>,
    /// The type of every expression that was checked (`Ty::Error` for the rest).
    pub expr_types: Arc<[Ty]>,
    /// What every name, field and variant expression means (`Unresolved` for the rest).
    pub resolutions: Arc<[Resolution]>,
    /// The type of every binder the check bound (`Ty::Error` for the rest), by `BinderId`.
    pub binder_types: Arc<[Ty]>,
}

impl FnCheck {
    /// What expression `id` names.
    pub fn resolution(&self, id: ExprId) -> Resolution {
        self.resolutions.get(id.0 as usize).copied().unwrap_or(Resolution::Unresolved)
    }

    pub fn call_target(&self, id: ExprId) -> Option<&CallTarget> {
        self.call_targets.iter().find(|(e, _)| *e == id).map(|(_, t)| t)
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

#[salsa::tracked(returns(ref))]
pub fn check_fn(db: &dyn Db, item: Item) -> FnCheck {
    let signature = fn_signature(db, item);
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
        types: vec![Ty::Error; body.exprs.len()],
        body,
        signature,
        locals: Vec::new(),
        loops: 0,
        effects: BTreeSet::new(),
        sites: Vec::new(),
        calls: Vec::new(),
        call_targets: Vec::new(),
        stack_bytes: 0,
    };
    let result = cx.run();
    // A bare name that a local binding answers means that binding (the body's scopes say
    // which); the check resolved every other name where it met it.
    for (i, resolution) in cx.resolutions.iter_mut().enumerate() {
        if *resolution == Resolution::Unresolved
            && let Some(local) = cx.scopes.resolve(ExprId(i as u32))
        {
            *resolution = Resolution::Local(local);
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
    pub body: Arc<Body>,
    pub signature: &'db Signature,
    pub locals: Vec<Local>,
    pub loops: u32,
    /// Raw effects: `read:X`/`write:X` name roots; made `local_*` at the end.
    pub effects: BTreeSet<String>,
    pub sites: Vec<(GuardKind, u32)>,
    pub calls: Vec<CallEdge>,
    pub call_targets: Vec<(ExprId, CallTarget)>,
    pub types: Vec<Ty>,
    pub stack_bytes: u64,
}

impl Cx<'_> {
    fn run(&mut self) -> R<()> {
        let params = self.signature.params.clone();
        for param in params.iter() {
            match &param.ty {
                Ty::View(_) => {
                    self.effects.insert("ffi_precondition".to_string());
                    self.site(GuardKind::ViewEntry);
                }
                ty if is_tag_only(self.db, ty) => self.site(GuardKind::EnumEntry),
                _ => {}
            }
            self.locals.push(Local {
                name: param.name.clone(),
                ty: param.ty.clone(),
                mutable: false,
                kind: LocalKind::Param,
                literal: None,
            });
        }
        let body = self.body.clone();
        if !body.present {
            return Ok(());
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

    pub(crate) fn local(&self, name: &str) -> Option<&Local> {
        self.locals.iter().rev().find(|l| &*l.name == name)
    }

    fn bind(&mut self, binder: BinderId, local: Local) {
        if let Some(slot) = self.binder_types.get_mut(binder.0 as usize) {
            *slot = local.ty.clone();
        }
        if &*local.name != "_" {
            self.locals.push(local);
        }
    }

    /// `E-SHADOW` when `name` is already bound.
    fn fresh(&self, binder: BinderId, message: impl FnOnce(&str) -> String) -> R<()> {
        let name = self.body.binder(binder).clone();
        if &*name != "_" && self.local(&name).is_some() {
            return Err(Diag::new("E-SHADOW", message(&name), Anchor::Binder(binder)));
        }
        Ok(())
    }

    pub(crate) fn type_ctx(&self) -> TypeCtx<'_> {
        TypeCtx { db: self.db, scope: self.scope, module: &self.module, generics: &[] }
    }

    // ----- blocks and statements -----------------------------------------------------------

    /// Checks a block in its own scope; returns whether it always leaves.
    fn block(&mut self, block: &Block) -> R<bool> {
        let mark = self.locals.len();
        let result = self.statements(block);
        self.locals.truncate(mark);
        result
    }

    fn statements(&mut self, block: &Block) -> R<bool> {
        let mut ends = false;
        for &stmt in block.iter() {
            if ends {
                return Err(Diag::new(
                    "E-UNREACHABLE",
                    "This statement can never run: it follows an unconditional return, break or continue in the same block.",
                    Anchor::Stmt(stmt),
                ));
            }
            ends = self.stmt(stmt)?;
        }
        Ok(ends)
    }

    fn stmt(&mut self, id: StmtId) -> R<bool> {
        let body = self.body.clone();
        match body.stmt(id) {
            Stmt::Missing => Ok(false),
            Stmt::Let { binder, mutable, ty, init } => {
                self.let_stmt(id, *binder, *mutable, ty.as_ref(), *init)?;
                Ok(false)
            }
            Stmt::Assign { target, op, value } => {
                self.assign(*target, *op, *value)?;
                Ok(false)
            }
            Stmt::Expr(e) => {
                self.expr_stmt(id, *e)?;
                Ok(false)
            }
            Stmt::If { cond, then, els } => {
                self.check(*cond, Some(&Ty::Bool))?;
                let then_ends = self.block(then)?;
                match els {
                    None => Ok(false),
                    Some(Else::Block(block)) => Ok(self.block(block)? && then_ends),
                    Some(Else::If(nested)) => {
                        let mark = self.locals.len();
                        let nested_ends = self.stmt(*nested);
                        self.locals.truncate(mark);
                        Ok(nested_ends? && then_ends)
                    }
                }
            }
            Stmt::While { cond, body: block } => {
                self.check(*cond, Some(&Ty::Bool))?;
                self.effect("diverge");
                self.loops += 1;
                let result = self.block(block);
                self.loops -= 1;
                result?;
                Ok(false)
            }
            Stmt::ForRange { binder, lo, hi, body: block } => {
                self.check(*lo, Some(&Ty::usize()))?;
                self.check(*hi, Some(&Ty::usize()))?;
                self.loop_with_binders(&[(*binder, Ty::usize())], block, |name| {
                    format!("The loop binder {name} is already bound; pick a fresh name.")
                })?;
                Ok(false)
            }
            Stmt::Each { binder, count, body: block } => {
                self.check(*count, Some(&Ty::usize()))?;
                self.loop_with_binders(&[(*binder, Ty::usize())], block, |name| {
                    format!("The loop binder {name} is already bound; pick a fresh name.")
                })?;
                Ok(false)
            }
            Stmt::ForEach { index, element, iterable, body: block } => {
                self.for_each(*index, *element, *iterable, block)?;
                Ok(false)
            }
            Stmt::Match { subject, arms } => self.match_stmt(id, *subject, arms),
            Stmt::Return(value) => {
                self.return_stmt(id, *value)?;
                Ok(true)
            }
            Stmt::Break | Stmt::Continue => {
                if self.loops == 0 {
                    let word = if matches!(body.stmt(id), Stmt::Break) { "break" } else { "continue" };
                    return Err(Diag::new(
                        "E-LOOP-CONTROL",
                        format!("`{word}` needs an enclosing `for` or `while` loop."),
                        Anchor::Stmt(id),
                    ));
                }
                Ok(true)
            }
            Stmt::Block(block) => self.block(block),
            Stmt::Stack { binder, element, capacity, placed } => {
                self.stack(*binder, element, *capacity, *placed)?;
                Ok(false)
            }
            Stmt::Unsupported(kind) => Err(Diag::new(
                "E-UNSUPPORTED",
                format!(
                    "{} is a construct of a later tier, which this checker does not check yet.",
                    describe_kind(*kind)
                ),
                Anchor::Stmt(id),
            )),
        }
    }

    fn loop_with_binders(
        &mut self,
        binders: &[(BinderId, Ty)],
        block: &Block,
        message: impl Fn(&str) -> String,
    ) -> R<()> {
        let mark = self.locals.len();
        for (binder, ty) in binders {
            if let Err(e) = self.fresh(*binder, &message) {
                self.locals.truncate(mark);
                return Err(e);
            }
            let name = self.body.binder(*binder).clone();
            self.bind(
                *binder,
                Local { name, ty: ty.clone(), mutable: false, kind: LocalKind::LoopBinder, literal: None },
            );
        }
        self.loops += 1;
        let result = self.block(block);
        self.loops -= 1;
        self.locals.truncate(mark);
        result.map(|_| ())
    }

    fn let_stmt(
        &mut self,
        id: StmtId,
        binder: BinderId,
        mutable: bool,
        ty: Option<&crate::body::TypeRef>,
        init: ExprId,
    ) -> R<()> {
        let name = self.body.binder(binder).clone();
        let declared = match ty {
            Some(written) => match resolve_type(self.type_ctx(), written) {
                Ok(t) => Some(t),
                Err(e) => return Err(Diag::new(e.code, e.message, Anchor::Stmt(id))),
            },
            None => None,
        };
        if &*name == "_" {
            self.check(init, declared.as_ref())?;
            return Ok(());
        }
        self.fresh(binder, |n| format!("{n} is already bound; CAIRN has no shadowing, so pick a fresh name."))
            .map_err(|mut e| {
                e.anchor = Anchor::Stmt(id);
                e
            })?;
        let ty = self.check(init, declared.as_ref())?;
        let is_string =
            matches!(self.body.expr(self.body.unparen(init)), Expr::Literal(crate::body::Literal::String(_)));
        if ty == Ty::Void || (matches!(ty, Ty::View(_) | Ty::Borrow(..)) && !is_string) {
            return Err(Diag::new(
                "E-VIEW-ALIAS",
                "A local cannot hold a borrow or a void value: pass the view to calls directly, and use `let` only for values.",
                Anchor::Stmt(id),
            ));
        }
        let literal = match (declared.is_none(), self.body.expr(self.body.unparen(init))) {
            (true, Expr::Literal(crate::body::Literal::Int { text, .. })) => Some(text.clone()),
            _ => None,
        };
        self.bind(binder, Local { name, ty, mutable, kind: LocalKind::Let, literal });
        Ok(())
    }

    fn return_stmt(&mut self, id: StmtId, value: Option<ExprId>) -> R<()> {
        let ret = self.signature.ret.clone();
        match value {
            Some(value) => {
                if ret == Ty::Void {
                    let what = if self.signature.test { "A test" } else { "A function without a result type" };
                    return Err(Diag::new(
                        "E-RETURN",
                        format!("{what} cannot return a value: write `return;`, or declare the result type."),
                        Anchor::Stmt(id),
                    ));
                }
                self.check(value, Some(&ret))?;
            }
            None => {
                if ret != Ty::Void && !ret.is_error() {
                    return Err(Diag::new(
                        "E-RETURN",
                        format!("This function returns a {ret}: write `return value;`."),
                        Anchor::Stmt(id),
                    ));
                }
            }
        }
        Ok(())
    }

    fn expr_stmt(&mut self, id: StmtId, e: ExprId) -> R<()> {
        let inner = self.body.unparen(e);
        if !matches!(self.body.expr(inner), Expr::Call { .. } | Expr::Try(_)) {
            if matches!(self.body.expr(inner), Expr::Unsupported(_)) {
                self.check(inner, None)?;
            }
            return Err(Diag::new(
                "E-DISCARD",
                "Only a call (or `try` of one) can stand as a statement; this value would be thrown away.",
                Anchor::Stmt(id),
            ));
        }
        let ty = self.check(e, None)?;
        if let Some(builtin) = self.computing_builtin(inner) {
            return Err(Diag::new(
                "E-DISCARD",
                format!("{builtin}(...) only computes a value: use the result, or leave the call out."),
                Anchor::Stmt(id),
            ));
        }
        if self.is_two_variant_sum(&ty) {
            return Err(Diag::new(
                "E-DISCARD",
                format!(
                    "This call returns {ty}, an outcome to handle: use `try` or `match`, or drop it on purpose with `let _ = …;`."
                ),
                Anchor::Stmt(id),
            ));
        }
        Ok(())
    }

    /// The name of a builtin that only computes, when `e` calls one.
    fn computing_builtin(&self, e: ExprId) -> Option<Arc<str>> {
        match self.call_target_of(e)? {
            CallTarget::Builtin(builtin) if builtin.computing() || builtin.conversion().is_some() => {
                Some(Arc::from(builtin.name()))
            }
            _ => None,
        }
    }

    pub(crate) fn call_target_of(&self, e: ExprId) -> Option<&CallTarget> {
        self.call_targets.iter().rev().find(|(id, _)| *id == e).map(|(_, t)| t)
    }

    /// True for a sum of exactly two variants (not a tag-only enum).
    pub(crate) fn is_two_variant_sum(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Enum(adt) => {
                let def = crate::decl::enum_def(self.db, adt.item);
                !def.tag_only && def.variants.len() == 2
            }
            _ => false,
        }
    }

    fn for_each(&mut self, index: Option<BinderId>, element: BinderId, iterable: ExprId, block: &Block) -> R<()> {
        if !self.is_name_or_field_path(iterable) {
            return Err(Diag::new(
                "E-ELEMENT-LOOP",
                "An element loop walks a named view or array (or a field path to one): bind the value to a name first, or use an index loop `for i in lo..hi`.",
                Anchor::Expr(iterable),
            ));
        }
        let ty = self.check(iterable, None)?;
        let element_ty = match &ty {
            Ty::View(view) if view.place == crate::types::Place::Device => {
                return Err(Diag::new(
                    "E-PLACEMENT",
                    "Host code cannot read @device memory: an element loop here would index it from the host.",
                    Anchor::Expr(iterable),
                ));
            }
            Ty::View(view) => (*view.elem).clone(),
            Ty::Error => Ty::Error,
            other => {
                let tail = if *other == Ty::usize() { "; a count is a range, `for i in 0..n`" } else { "" };
                return Err(Diag::new(
                    "E-ELEMENT-LOOP",
                    format!("An element loop walks a view or an array, not a {other}{tail}."),
                    Anchor::Expr(iterable),
                ));
            }
        };
        // `for x in xs` is `for i in 0..len(xs) { let x = xs[i]; … }`: one bounds site and a read.
        self.site(GuardKind::Bounds);
        if let Some(root) = self.root_name(iterable) {
            self.effect(format!("read:{root}"));
        }
        let mut binders = Vec::new();
        if let Some(index) = index {
            binders.push((index, Ty::usize()));
        }
        binders.push((element, element_ty));
        let mark = self.locals.len();
        for (i, (binder, ty)) in binders.iter().enumerate() {
            let is_index = index.is_some() && i == 0;
            let message = |name: &str| {
                if is_index {
                    format!("The loop binder {name} is already bound; pick a fresh name.")
                } else {
                    format!("{name} is already bound; CAIRN has no shadowing, so pick a fresh name.")
                }
            };
            if let Err(e) = self.fresh(*binder, message) {
                self.locals.truncate(mark);
                return Err(e);
            }
            let name = self.body.binder(*binder).clone();
            self.bind(
                *binder,
                Local { name, ty: ty.clone(), mutable: false, kind: LocalKind::LoopBinder, literal: None },
            );
        }
        self.loops += 1;
        let result = self.block(block);
        self.loops -= 1;
        self.locals.truncate(mark);
        result.map(|_| ())
    }

    pub(crate) fn is_name_or_field_path(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(_) => true,
            Expr::Field { base, .. } => self.is_name_or_field_path(*base),
            _ => false,
        }
    }

    /// The root variable of a place (`a` in `a.b[i].c`, `a[lo..hi]`), if it is a local.
    pub(crate) fn root_name(&self, e: ExprId) -> Option<Arc<str>> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(name) => self.local(name).map(|l| l.name.clone()),
            Expr::Field { base, .. } | Expr::Index { base, .. } | Expr::Part { base, .. } => self.root_name(*base),
            _ => None,
        }
    }

    fn match_stmt(&mut self, id: StmtId, subject: ExprId, arms: &Arc<[Arm]>) -> R<bool> {
        let ty = self.check(subject, None)?;
        if let Some(builtin) = self.computing_builtin(self.body.unparen(subject)) {
            return Err(Diag::new(
                "E-DISCARD",
                format!("{builtin}(...) only computes a value; `match` needs an enum or sum to inspect."),
                Anchor::Stmt(id),
            ));
        }
        let adt = match &ty {
            Ty::Enum(adt) => adt.clone(),
            Ty::Error => return self.match_unknown(arms),
            _ => {
                return Err(Diag::new(
                    "E-MATCH-TYPE",
                    format!("`match` inspects a declared enum or sum, not a {ty}; compare with `if` instead."),
                    Anchor::Stmt(id),
                ));
            }
        };
        let variants = variants_of(self.db, &adt);
        let short = adt.name.rsplit('.').next().unwrap_or(&adt.name).to_string();
        if !self.scope.visible_from(adt.item, &self.module) && arms.iter().any(|a| a.variant.len() == 1) {
            let owner = self.scope.module_of(adt.item);
            return Err(Diag::new(
                "E-PRIVATE",
                format!("{} is private to module {owner}, and so are its variants.", adt.name),
                Anchor::Stmt(id),
            ));
        }
        // Normalise `T.V` written with the subject's own type to `V`.
        let mut names: Vec<Arc<str>> = Vec::new();
        for arm in arms.iter() {
            let name = match arm.variant.len() {
                0 => Arc::from(""),
                1 => arm.variant[0].clone(),
                _ => {
                    let (type_path, variant) = arm.variant.split_at(arm.variant.len() - 1);
                    match self.scope.resolve_path(&self.module, type_path, |k| k == crate::input::ItemKind::Enum) {
                        crate::scope::Lookup::Found(decl) if decl.item == adt.item => variant[0].clone(),
                        crate::scope::Lookup::Found(_) => {
                            Arc::from(arm.variant.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join("."))
                        }
                        crate::scope::Lookup::None => {
                            let written = type_path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
                            return Err(Diag::new(
                                "E-UNBOUND",
                                format!(
                                    "{written} is not a type this module can name; import it, or write {short}.{}.",
                                    variant[0]
                                ),
                                Anchor::Arm(arm.id),
                            ));
                        }
                    }
                }
            };
            names.push(name);
        }
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(Diag::new(
                    "E-MATCH-DUPLICATE",
                    format!("The variant {name} has two arms; a variant may appear only once."),
                    Anchor::Stmt(id),
                ));
            }
        }
        let missing: Vec<String> =
            variants.iter().filter(|(v, _)| !names.contains(v)).map(|(v, _)| format!("{}.{v}", adt.name)).collect();
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !variants.iter().any(|(v, _)| v == *n))
            .map(|n| if n.contains('.') { n.to_string() } else { format!("{}.{n}", adt.name) })
            .collect();
        if !missing.is_empty() || !unknown.is_empty() {
            let mut message = String::from("Every variant must have exactly one arm (there is no wildcard)");
            if !missing.is_empty() {
                message.push_str(&format!("; missing {}", missing.join(", ")));
            }
            if !unknown.is_empty() {
                message.push_str(&format!("; {} names no variant of {}", unknown.join(", "), adt.name));
            }
            message.push('.');
            let mut missing_sorted = missing.clone();
            missing_sorted.sort();
            return Err(Diag::new("E-MATCH-COVERAGE", message, Anchor::Stmt(id)).with_details(vec![
                ("missing_variants", list(&missing_sorted)),
                ("unknown_variants", list(&unknown)),
            ]));
        }
        let mut all_end = true;
        for (arm, name) in arms.iter().zip(&names) {
            let payload = variants.iter().find(|(v, _)| v == name).and_then(|(_, p)| p.clone());
            if payload.is_some() != arm.binder.is_some() {
                return Err(Diag::new(
                    "E-MATCH-BINDING",
                    if payload.is_some() {
                        format!("The arm {name} carries a payload: bind it with {name}(x), or drop it with {name}(_).")
                    } else {
                        format!("The arm {name} has no payload, so it binds nothing: write {name} without parentheses.")
                    },
                    Anchor::Arm(arm.id),
                ));
            }
            let mark = self.locals.len();
            if let (Some(binder), Some(payload)) = (arm.binder, payload) {
                if let Err(e) =
                    self.fresh(binder, |n| format!("The payload binder {n} is already bound; a binder must be fresh."))
                {
                    self.locals.truncate(mark);
                    return Err(e);
                }
                let name = self.body.binder(binder).clone();
                self.bind(
                    binder,
                    Local { name, ty: payload, mutable: false, kind: LocalKind::MatchBinder, literal: None },
                );
            }
            let result = self.block(&arm.body);
            self.locals.truncate(mark);
            all_end &= result?;
        }
        self.site(GuardKind::Tag);
        Ok(all_end)
    }

    /// A match on a subject of unknown type: check the arms' bodies with unknown binders.
    fn match_unknown(&mut self, arms: &Arc<[Arm]>) -> R<bool> {
        let mut all_end = true;
        for arm in arms.iter() {
            let mark = self.locals.len();
            if let Some(binder) = arm.binder {
                let name = self.body.binder(binder).clone();
                self.bind(
                    binder,
                    Local { name, ty: Ty::Error, mutable: false, kind: LocalKind::MatchBinder, literal: None },
                );
            }
            let result = self.block(&arm.body);
            self.locals.truncate(mark);
            all_end &= result?;
        }
        Ok(all_end)
    }

    fn stack(&mut self, binder: BinderId, element: &crate::body::TypeRef, capacity: ExprId, placed: bool) -> R<()> {
        self.fresh(binder, |n| format!("The storage name {n} is already bound; pick a fresh name."))?;
        let element_ty =
            resolve_type(self.type_ctx(), element).map_err(|e| Diag::new(e.code, e.message, Anchor::Binder(binder)))?;
        if element_ty == Ty::Void {
            return Err(Diag::new(
                "E-OWNER-ELEMENT",
                "Stack storage holds values; void has none.",
                Anchor::Binder(binder),
            ));
        }
        if matches!(element_ty, Ty::View(_) | Ty::Borrow(..)) {
            return Err(Diag::new(
                "E-OWNER-ELEMENT",
                "Stack storage holds values, never borrows.",
                Anchor::Binder(binder),
            ));
        }
        self.check(capacity, Some(&Ty::usize()))?;
        let cap = self.body.unparen(capacity);
        let extent = match self.body.expr(cap) {
            Expr::Literal(crate::body::Literal::Int { value, .. }) => match value {
                Some(v) if *v < (1u128 << 63) => *v as u64,
                _ => {
                    return Err(Diag::new(
                        "E-OWNER-EXTENT",
                        "This capacity exceeds the 2^63-1 limit on one object.",
                        Anchor::Expr(capacity),
                    ));
                }
            },
            Expr::Name(name) => {
                if let Some(local) = self.local(name).cloned() {
                    if local.mutable {
                        return Err(Diag::new(
                            "E-OWNER-EXTENT",
                            format!(
                                "A capacity must not change: {name} is mutable. Use a literal or a usize constant."
                            ),
                            Anchor::Expr(capacity),
                        ));
                    }
                    return Err(Diag::new(
                        "E-STACK-EXTENT",
                        format!("Stack storage needs a literal or constant capacity, not the value of {name}."),
                        Anchor::Expr(capacity),
                    ));
                }
                match crate::consts::integer_constant(self.db, &self.module, name) {
                    Some(v) => v,
                    None => return Ok(()),
                }
            }
            _ => {
                return Err(Diag::new(
                    "E-OWNER-EXTENT",
                    "A capacity is a literal or a constant: bind a computed capacity to a constant first.",
                    Anchor::Expr(capacity),
                ));
            }
        };
        let bytes = extent.saturating_mul(self.size_of(&element_ty));
        self.stack_bytes = self.stack_bytes.saturating_add(bytes);
        if self.stack_bytes > 65_536 {
            return Err(Diag::new(
                "E-STACK-LIMIT",
                format!("This function's stack storage totals {} bytes, over the 65,536-byte limit.", self.stack_bytes),
                Anchor::Binder(binder),
            ));
        }
        self.effect("zero_init");
        self.effect("stack_storage");
        let name = self.body.binder(binder).clone();
        let view = Ty::View(crate::types::ViewTy {
            mode: crate::types::Mode::Rw,
            elem: Arc::new(element_ty),
            extent: Extent::Literal(extent),
            place: crate::types::Place::Host,
        });
        self.bind(binder, Local { name, ty: view, mutable: false, kind: LocalKind::Stack, literal: None });
        if placed {
            return Err(Diag::new(
                "E-PLACE",
                "Stack storage lives where its code runs; it takes no placement.",
                Anchor::Binder(binder),
            ));
        }
        Ok(())
    }

    /// The conservative size of a value of `ty` for the stack budget (language §12).
    fn size_of(&self, ty: &Ty) -> u64 {
        let round = |n: u64| n.div_ceil(8) * 8;
        let at_least = |n: u64| if n == 0 { 16 } else { n };
        match ty {
            Ty::Bool => 1,
            Ty::Int(i) => u64::from(i.bits() / 8),
            Ty::Float(f) => match f {
                crate::types::FloatTy::F32 => 4,
                crate::types::FloatTy::F64 => 8,
            },
            Ty::Record(adt) => {
                at_least(crate::decl::fields_of(self.db, adt).iter().map(|(_, t)| round(self.size_of(t))).sum())
            }
            Ty::Enum(adt) => {
                let payloads: u64 = variants_of(self.db, adt)
                    .iter()
                    .filter_map(|(_, p)| p.as_ref())
                    .map(|p| round(self.size_of(p)))
                    .sum();
                at_least(8 + payloads)
            }
            _ => 8,
        }
    }

    // ----- assignment ----------------------------------------------------------------------

    fn assign(&mut self, target: ExprId, op: Option<crate::body::BinaryOp>, value: ExprId) -> R<()> {
        let place_ty = self.place(target)?;
        match op {
            None => {
                self.check(value, Some(&place_ty))?;
            }
            Some(op) => {
                // `p op= v` is `p = p op v`: the place read again, then the operator's rules.
                let place_value = self.place_read(target)?;
                self.binary_with(op, target, value, place_value, None)?;
            }
        }
        Ok(())
    }

    /// Checks an assignment target and returns its type.
    fn place(&mut self, target: ExprId) -> R<Ty> {
        let body = self.body.clone();
        let target = body.unparen(target);
        match body.expr(target) {
            Expr::Name(name) => {
                let Some(local) = self.local(name).cloned() else {
                    return Err(Diag::new(
                        "E-IMMUTABLE",
                        format!(
                            "{name} is not a mutable local: only a `let mut` local or an rw borrow can be assigned."
                        ),
                        Anchor::Expr(target),
                    ));
                };
                let writable = local.mutable || matches!(local.ty, Ty::Borrow(crate::types::Mode::Rw, _));
                if !writable || matches!(local.ty, Ty::View(_)) {
                    return Err(Diag::new(
                        "E-IMMUTABLE",
                        format!("{name} is not a mutable local: copy it into a `let mut` local to change it."),
                        Anchor::Expr(target),
                    ));
                }
                if let Ty::Borrow(_, inner) = &local.ty {
                    self.effect(format!("write:{name}"));
                    self.effect(format!("read:{name}"));
                    self.types[target.0 as usize] = (**inner).clone();
                    return Ok((**inner).clone());
                }
                self.types[target.0 as usize] = local.ty.clone();
                Ok(local.ty)
            }
            Expr::Index { base, indices } => {
                let root = self.root_name(*base);
                let writable = match root.as_deref().and_then(|r| self.local(r)) {
                    Some(local) => match &local.ty {
                        Ty::View(view) => view.mode == crate::types::Mode::Rw,
                        Ty::Borrow(mode, _) => *mode == crate::types::Mode::Rw,
                        _ => local.mutable,
                    },
                    None => false,
                };
                if !writable {
                    if root.is_none() && self.root_is_unbound(*base) {
                        // An element of a name that does not exist: the original says the write
                        // needs an rw view before anything else.
                    }
                    return Err(Diag::new(
                        "E-WRITE-LEASE",
                        "An element can be written only through an rw view (a `stack` array, or an rw view parameter).",
                        Anchor::Expr(target),
                    ));
                }
                let ty = self.index(target, *base, indices, true)?;
                Ok(ty)
            }
            Expr::Field { base, name } => {
                let base_ty = self.place(*base)?;
                let field = self.field_of(target, &base_ty, name)?;
                if let Some(root) = self.root_name(*base)
                    && self.local(&root).is_some_and(|l| matches!(l.ty, Ty::Borrow(..)))
                {
                    self.effect(format!("read:{root}"));
                }
                self.types[target.0 as usize] = field.clone();
                Ok(field)
            }
            _ => Err(Diag::new(
                "E-LVALUE",
                "Only a mutable local, a field of one, or an element of an rw view can be assigned.",
                Anchor::Expr(target),
            )),
        }
    }

    fn root_is_unbound(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(name) => self.local(name).is_none(),
            Expr::Field { base, .. } | Expr::Index { base, .. } => self.root_is_unbound(*base),
            _ => false,
        }
    }

    /// The value of an assignment target read again (for compound assignment).
    fn place_read(&mut self, target: ExprId) -> R<Ty> {
        let body = self.body.clone();
        let target = body.unparen(target);
        match body.expr(target) {
            Expr::Index { base, indices } => self.index(target, *base, indices, false),
            _ => Ok(self.types[target.0 as usize].clone()),
        }
    }

    // ----- shared helpers ------------------------------------------------------------------

    /// `E-TYPE-MISMATCH` for a value of `got` where `want` is expected.
    pub(crate) fn mismatch(&self, at: ExprId, want: &Ty, got: &Ty) -> Diag {
        let mut details = vec![("expected_type", text(want)), ("actual_type", text(got))];
        if let Expr::Name(name) = self.body.expr(self.body.unparen(at))
            && let Some(local) = self.local(name)
            && let Some(literal) = &local.literal
        {
            details.push(("literal_binding", Detail::Text(Arc::from(format!("{name} = {literal}")))));
        }
        let mut diag = Diag::new("E-TYPE-MISMATCH", format!("Expected {want}, got {got}."), Anchor::Expr(at))
            .with_details(details);
        if want.is_numeric() && got.is_numeric() {
            diag = diag.with_hint(format!(
                "Convert explicitly with {want}(...) (it traps when the value does not fit), or compute in {want}."
            ));
        } else if *want == Ty::Bool && got.is_numeric() {
            diag = diag.with_hint("Compare to get a bool, for example `x != 0`.");
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
        COLLECT_STMT => "A collector (`reduce`, `compact`, `scan`)",
        BUFFER_STMT => "A heap `buffer`",
        SHARED_STMT | PIPELINE_STMT | BARRIER_STMT | COOP_STMT => "A cooperative region",
        DEFER_STMT => "`defer`",
        UNSAFE_STMT | ASM_STMT => "`unsafe` code",
        PARALLEL_STMT => "A `parallel` region",
        INTO_CLAUSE => "Submitting a task to a group",
        REQUIRE => "`require`",
        CLOSURE_EXPR => "A closure",
        SPAWN_EXPR => "`spawn`",
        FOLD_EXPR | EACH_EXPR => "A recipe expression",
        _ => "This construct",
    }
}
