//! Lowering a checked body to MIR.
//!
//! The lowering trusts the checker: it runs only on bodies the checker accepted, reads the type
//! the checker gave every expression (`FnCheck::expr_types`), what every call calls
//! (`call_targets`) and what every name, field and variant means (`resolutions`): it resolves
//! nothing itself.
//! Evaluation order is the language's: left to right, a call's arguments before the call, the
//! right side of an assignment before its place. Each guard is placed immediately before the
//! operation it protects, so a failing guard traps before anything it guards happens.
//!
//! Elision (language §15): a guard is marked `elided` where the lowering can see it cannot fail:
//! an index by the binder of `for i in 0..n` into a view whose extent is `n` (or `len` of that
//! view), element loops, a widening integer conversion, the subtraction `hi - lo` that a part's
//! extent implies (the part's own guard covers it), and the entry checks of parameters (a view or
//! tag a CAIRN caller passes is valid by construction).
//!
//! Layout, mirroring `cairn_hir::check`: `mod.rs` (queries, the function's frame, construction),
//! `stmt.rs`, `expr.rs` (expressions and places), `call.rs` (calls and builtins), `elide.rs` (the
//! facts that elide guards), `cfg.rs` (if-conversion).

use std::collections::HashMap;
use std::sync::Arc;

use cairn_hir::Db;
use cairn_hir::Resolver;
use cairn_hir::body::{
    Arm, BinaryOp, BinderId, Block as HirBlock, Body, Else, Expr, ExprId, Literal, Stmt, StmtId, UnaryOp, fn_body,
};
use cairn_hir::builtins::Builtin;
use cairn_hir::check::{CallTarget, FnCheck, Resolution};
use cairn_hir::instance::Instance;
use cairn_hir::scopes::LocalRef;
use cairn_hir::types::{Extent, FloatTy, IntTy, Ty};
use cairn_hir::{ConstValue, Value};
use cairn_hir::{Item, ItemKind, Program as ProgramInput};
use cairn_hir::{fields_of, variants_of};

mod atomic;
mod call;
mod cfg;
mod closure;
mod device;
mod dispatch;
mod elide;
mod expr;
mod owner;
mod parallel;
mod split;
mod stmt;

use crate::{
    Anchor, BinOp, Block, BlockId, Check, Const, FnKind, Function, Guard, GuardKind, Inst, Local, LocalDecl,
    LowerError, MTy, Memory, Operand, Place, PrintArg, Program, Proj, Rvalue, Stream, Terminator, UnOp, ViewExtent,
};

type R<T> = Result<T, LowerError>;

fn fail<T>(message: impl Into<String>) -> R<T> {
    Err(LowerError(message.into()))
}

/// The MIR of one instance: what codegen and the solver compile. Every tier-0 instance is a
/// declaration without arguments; instances with arguments are tier 1 and refused here until the
/// checker produces them (issue 13).
#[salsa::tracked(returns(ref))]
pub fn instance_mir<'db>(db: &'db dyn Db, instance: Instance<'db>) -> Result<Arc<Function>, LowerError> {
    instance_lowered(db, instance).clone().map(|(function, _)| function)
}

/// The functions lowering an instance made besides it: its closures and the adapters that lend
/// declared functions and `fn` values as borrowed callables.
pub fn instance_extra_mir<'db>(db: &'db dyn Db, instance: Instance<'db>) -> Arc<[Arc<Function>]> {
    match instance_lowered(db, instance) {
        Ok((_, extra)) => extra.clone(),
        Err(_) => Arc::from(Vec::new()),
    }
}

#[salsa::tracked(returns(ref))]
fn instance_lowered<'db>(
    db: &'db dyn Db,
    instance: Instance<'db>,
) -> Result<(Arc<Function>, Arc<[Arc<Function>]>), LowerError> {
    lower_function(db, instance).map(|(mut function, extra)| {
        // The guards the range analysis proves are discharged here, once per lowering, so every
        // reader of MIR (codegen, the evaluator, the receipt, `explain`) sees the same guards.
        crate::range::discharge(&mut function);
        let extra = extra
            .into_iter()
            .map(|mut f| {
                crate::range::discharge(&mut f);
                Arc::new(f)
            })
            .collect();
        (Arc::new(function), extra)
    })
}

/// The MIR of one function or test (its monomorphic instance).
pub fn fn_mir(db: &dyn Db, item: Item) -> &Result<Arc<Function>, LowerError> {
    instance_mir(db, Instance::monomorphic(db, item))
}

/// The MIR of every instance a library build of the program reaches — every function and test is
/// a root (the library's included), in declaration order, then what they reach
/// ([`crate::mono::collect`]). Call only on a program the checker accepted.
pub fn program_mir(db: &dyn Db) -> Program {
    let mut program = Program { functions: Vec::new(), errors: Vec::new() };
    let roots: Vec<Instance<'_>> = ProgramInput::get(db)
        .items(db)
        .iter()
        .filter(|entry| matches!(entry.key.kind, ItemKind::Fn | ItemKind::Test | ItemKind::Method))
        // A template is compiled only as the instances that are reached.
        .filter(|entry| cairn_hir::generics::fn_generics(db, entry.item).is_empty())
        .map(|entry| Instance::monomorphic(db, entry.item))
        .collect();
    let mut made: std::collections::HashSet<Arc<str>> = std::collections::HashSet::new();
    let mut extras: Vec<Arc<Function>> = Vec::new();
    for instance in crate::mono::collect(db, &roots) {
        match instance_mir(db, instance) {
            Ok(function) => program.functions.push(function.clone()),
            Err(error) => program.errors.push((Arc::from(instance.display(db)), error.clone())),
        }
        // Closures and adapters, each once (two functions may lend the same one).
        for extra in instance_extra_mir(db, instance).iter() {
            if made.insert(extra.symbol.clone()) {
                extras.push(extra.clone());
            }
        }
    }
    program.functions.extend(extras);
    program
}

/// The symbol an instance is emitted under: its declaration's, then the instance's arguments
/// as records name them (`cairn.lib.scale[4]`).
pub fn instance_symbol(db: &dyn Db, instance: Instance<'_>) -> Arc<str> {
    if instance.is_monomorphic(db) {
        return symbol(db, instance.item(db));
    }
    Arc::from(format!("cairn.{}", instance.display(db)))
}

/// The symbol a function is emitted under: `cairn.<module>.<name>` (tests `cairn.test.…`).
pub fn symbol(db: &dyn Db, item: Item) -> Arc<str> {
    if let Some(c) =
        cairn_hir::foreign::is_extern(db, item).then(|| cairn_hir::foreign::extern_symbol(db, item)).flatten()
    {
        return c;
    }
    let full = Resolver::new(db).full_name(item);
    let kind = Resolver::new(db).info(item).map(|i| i.key.kind);
    if kind == Some(ItemKind::Test) {
        Arc::from(format!("cairn.test.{full}"))
    } else {
        Arc::from(format!("cairn.{full}"))
    }
}

/// A checker type as MIR sees it.
/// A `dyn` reference of trait `tr`: the object's address, then one code pointer per member of
/// the trait's table, each taking the object's address first.
fn dyn_reference_ty(db: &dyn Db, tr: cairn_hir::Item, name: &str) -> MTy {
    let byte = MTy::Ptr(Arc::new(MTy::Int(IntTy::U8)));
    let mut fields = vec![byte.clone()];
    for member in cairn_hir::table_members(db, tr) {
        let signature = cairn_hir::fn_signature(db, member);
        // The receiver, wherever it stands, is the object's address.
        let at = cairn_hir::receiver_index(db, member).unwrap_or(0);
        let params: Vec<MTy> = signature
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| if i == at { byte.clone() } else { mty(db, &p.ty) })
            .collect();
        fields.push(MTy::Fn { params: Arc::from(params), ret: Arc::new(mty(db, &signature.ret)) });
    }
    MTy::Record { name: Arc::from(format!("dyn {name}")), fields: Arc::from(fields) }
}

/// A `Dyn[Trait]`: the `dyn` reference it lends (the object's address, the table), then the
/// drop entry of the object's type (the zero function when the object owns nothing).
fn dyn_owner_ty(db: &dyn Db, tr: cairn_hir::Item, name: &str) -> MTy {
    let MTy::Record { fields, .. } = dyn_reference_ty(db, tr, name) else {
        unreachable!("a dyn reference is a record")
    };
    let mut fields = fields.to_vec();
    let byte = MTy::Ptr(Arc::new(MTy::Int(IntTy::U8)));
    fields.push(MTy::Fn { params: Arc::from(vec![byte]), ret: Arc::new(MTy::Void) });
    MTy::Record { name: Arc::from(format!("Dyn {name}")), fields: Arc::from(fields) }
}

pub fn mty(db: &dyn Db, ty: &Ty) -> MTy {
    // A borrowed callable travels as its code and environment (`closure.rs`).
    if let Ty::Borrow(_, inner) = ty
        && let Ty::Fn(fun) = &**inner
    {
        return closure::callable_ty(db, fun);
    }
    // A `dyn` reference travels as the object's address and its impl's table.
    if let Ty::Borrow(_, inner) = ty
        && let Ty::Dyn(tr, name) = &**inner
    {
        return dyn_reference_ty(db, *tr, name);
    }
    if let Ty::Borrow(_, inner) = ty {
        return MTy::Ptr(Arc::new(mty(db, inner)));
    }
    match ty {
        Ty::Bool => MTy::Bool,
        Ty::Int(i) => MTy::Int(*i),
        Ty::Float(f) => MTy::Float(*f),
        // An opaque witness lives only in the checks of `--generics`; no code is made for it.
        // A template's types (a parameter, an array of a natural's length) are substituted in
        // every instance before lowering.
        Ty::Void
        | Ty::Error
        | Ty::Param(_)
        | Ty::ArrayNat(..)
        | Ty::Nat(_)
        | Ty::NatParam(_)
        | Ty::Dyn(..)
        | Ty::Opaque(_) => MTy::Void,
        // Under emulation queued work runs to completion at its spawn: a ticket holds nothing.
        Ty::Ticket => MTy::Bool,
        Ty::Record(adt) => {
            // An instance of a generic record is named with its arguments (`Pair[u64]`), so two
            // instances are two types.
            let name = if adt.args.is_empty() { adt.name.clone() } else { Arc::from(ty.value().to_string()) };
            recursive(ty, name.clone(), || MTy::Record {
                name,
                fields: fields_of(db, adt).iter().map(|(_, t)| mty(db, t)).collect(),
            })
        }
        Ty::Enum(adt) => {
            let variants = variants_of(db, adt);
            if cairn_hir::enum_def(db, adt.item).tag_only {
                MTy::Enum { name: adt.name.clone(), variants: variants.len() as u32 }
            } else {
                let name: Arc<str> = Arc::from(ty.value().to_string());
                recursive(ty, name.clone(), || MTy::Sum {
                    name,
                    variants: variants.iter().map(|(_, p)| p.as_ref().map(|t| mty(db, t))).collect(),
                })
            }
        }
        Ty::View(view) => MTy::View(Arc::new(mty(db, &view.elem))),
        Ty::Fn(fun) => {
            MTy::Fn { params: fun.params.iter().map(|p| mty(db, p)).collect(), ret: Arc::new(mty(db, &fun.ret)) }
        }
        Ty::Buf(elem) => MTy::Buf(Arc::new(mty(db, elem))),
        Ty::Array(elem, n) => MTy::Array(Arc::new(mty(db, elem)), *n),
        Ty::DynBox(tr, name) => MTy::DynBox(Arc::new(dyn_owner_ty(db, *tr, name))),
        Ty::Borrow(..) => unreachable!("handled above"),
    }
}

thread_local! {
    /// The records and sums whose types are being lowered on this thread, innermost last.
    static LOWERING: std::cell::RefCell<Vec<(Ty, crate::NamedTy)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Lowers the record or sum `ty` with `build`, unless it is already being lowered further out —
/// then it is met again through a heap owner (the checker refuses a type that holds itself by
/// value), and stands as [`MTy::Named`], defined once the outer lowering finishes.
fn recursive(ty: &Ty, name: Arc<str>, build: impl FnOnce() -> MTy) -> MTy {
    let open = LOWERING.with(|stack| stack.borrow().iter().find(|(t, _)| t == ty).map(|(_, n)| n.clone()));
    if let Some(named) = open {
        return MTy::Named(named);
    }
    let named = crate::NamedTy::new(name);
    LOWERING.with(|stack| stack.borrow_mut().push((ty.clone(), named.clone())));
    /// Pops the entry however `build` ends: a query unwinding (a cancelled salsa query) must not
    /// leave a stale open type for the thread's next lowering.
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            LOWERING.with(|stack| stack.borrow_mut().pop());
        }
    }
    let pop = Pop;
    let built = build();
    drop(pop);
    if named.is_referenced() {
        named.define(built.clone());
    }
    built
}

fn lower_function<'db>(db: &'db dyn Db, instance: Instance<'db>) -> R<(Function, Vec<Function>)> {
    let item = instance.item(db);
    let signature = cairn_hir::instance_signature(db, instance);
    if signature.error.is_some() {
        return fail("the signature was refused");
    }
    let check = cairn_hir::check::instance_check(db, instance);
    if check.error.is_some() {
        return fail("the body was refused");
    }
    let scope = Resolver::new(db);
    if cairn_hir::foreign::is_extern(db, item) {
        let Some(symbol) = cairn_hir::foreign::extern_symbol(db, item) else {
            return fail("a foreign function without a name");
        };
        let locals =
            signature.params.iter().map(|p| LocalDecl { name: Some(p.name.clone()), ty: mty(db, &p.ty) }).collect();
        let function = Function {
            symbol,
            name: scope.full_name(item),
            kind: FnKind::Foreign,
            params: signature.params.len() as u32,
            ret: mty(db, &signature.ret),
            locals,
            blocks: Vec::new(),
            extents: Vec::new(),
            device: false,
        };
        return Ok((function, Vec::new()));
    }
    let body = fn_body(db, item);
    let info = scope.info(item).ok_or_else(|| LowerError("no such declaration".into()))?;
    let kind = match info.key.kind {
        ItemKind::Test => FnKind::Test,
        // The entry: a program function named `main`, in whichever module declares it.
        _ if !info.library && &*info.key.name == "main" => FnKind::Main,
        _ => FnKind::Function,
    };
    let ret = mty(db, &signature.ret);
    let mut lower = Lower::new(db, body, check, ret.clone(), signature.ret.clone(), instance_symbol(db, instance));
    // The plan of its regions (language §26): how they are split, never what they compute.
    lower.schedule = *cairn_hir::plans::fn_schedule(db, item);
    lower.chains = cairn_hir::plans::fusion_chains(db, item).clone();
    // Every parameter is a local before anything else, in order (the ABI reads them so).
    let mut param_locals = Vec::with_capacity(signature.params.len());
    for (i, param) in signature.params.iter().enumerate() {
        let ty = mty(db, &param.ty);
        let local = lower.new_local(Some(param.name.clone()), ty);
        lower.bindings.insert(LocalRef::Param(i as u32), local);
        param_locals.push(local);
    }
    // A selected implementation runs first where its condition holds (language §27).
    if instance.is_monomorphic(db)
        && let Some(chosen) = cairn_hir::implementations::selected(db, item)
    {
        lower.dispatch(chosen, &param_locals);
    }
    // By-value owner parameters are the function's to release.
    lower.open_frame();
    for (param, &local) in signature.params.iter().zip(&param_locals) {
        if !param.borrowed() {
            lower.own(local);
        }
    }
    for (param, &local) in signature.params.iter().zip(&param_locals) {
        let ty = lower.local_ty(local).clone();
        match &param.ty {
            Ty::View(view) => {
                if let Extent::Name(extent) = &view.extent
                    && let Some(i) = signature.params.iter().position(|p| &p.name == extent)
                {
                    lower.extents.push((local, param_locals[i]));
                }
                lower.guard(GuardKind::ViewEntry, Check::InBounds(lit_usize(0), lit_usize(1)), None, true);
            }
            Ty::Enum(_) => {
                if let MTy::Enum { variants, .. } = ty {
                    let tag = lower.temp(MTy::Int(IntTy::U32));
                    lower.assign(Place::local(tag), Rvalue::Tag(Place::local(local)));
                    lower.guard(
                        GuardKind::EnumEntry,
                        Check::InBounds(copy(tag), Operand::Const(Const::Int(i128::from(variants), IntTy::U32))),
                        None,
                        true,
                    );
                }
            }
            _ => {}
        }
    }
    let params = signature.params.len() as u32;
    let root = lower.body.root.clone();
    if lower.body.expression_body {
        lower.block(&root)?;
    } else {
        lower.scoped_block(&root)?;
    }
    lower.close_frame()?;
    if lower.open() {
        let term = if ret == MTy::Void { Terminator::Return(None) } else { Terminator::Unreachable };
        lower.terminate(term);
    }
    let blocks = lower.finish_blocks();
    let name = match kind {
        FnKind::Test => Arc::from(format!("test${}", scope.full_name(item))),
        _ if !instance.is_monomorphic(db) => Arc::from(instance.display(db)),
        _ => scope.full_name(item),
    };
    let mut extents = Vec::new();
    for (param, &local) in signature.params.iter().zip(&param_locals) {
        if let Ty::View(view) = &param.ty {
            match &view.extent {
                Extent::Literal(n) => extents.push((local, ViewExtent::Literal(*n))),
                Extent::Name(name) => {
                    if let Some(i) = signature.params.iter().position(|p| &p.name == name) {
                        extents.push((local, ViewExtent::Param(param_locals[i])));
                    }
                }
                Extent::Len(_) | Extent::Unknown => {}
            }
        }
    }
    let function = Function {
        symbol: instance_symbol(db, instance),
        name,
        kind,
        params,
        ret,
        locals: lower.locals,
        blocks,
        extents,
        device: false,
    };
    let mut extra = lower.extra;
    if fn_body(db, item).when.is_some() {
        extra.push(dispatch::when_function(db, instance, fn_body(db, item), check, signature)?);
    }
    Ok((function, extra))
}

/// A block under construction.
struct Open {
    insts: Vec<Inst>,
    anchors: Vec<Option<Anchor>>,
    term: Option<Terminator>,
    term_anchor: Option<Anchor>,
}

impl Open {
    fn new() -> Open {
        Open { insts: Vec::new(), anchors: Vec::new(), term: None, term_anchor: None }
    }
}

impl<'db> Lower<'db> {
    /// A lowering of one function of `body` (the function itself, or one of its closures).
    fn new(
        db: &'db dyn Db,
        body: &'db Arc<Body>,
        check: &'db FnCheck,
        ret: MTy,
        ret_ty: Ty,
        symbol: Arc<str>,
    ) -> Lower<'db> {
        Lower {
            db,
            body,
            check,
            locals: Vec::new(),
            blocks: vec![Open::new()],
            anchor: None,
            current: BlockId(0),
            bindings: HashMap::new(),
            loops: Vec::new(),
            loop_frames: Vec::new(),
            frames: Vec::new(),
            temporaries: Vec::new(),
            facts: Vec::new(),
            extents: Vec::new(),
            ret,
            ret_ty,
            symbol,
            extra: Vec::new(),
            schedule: cairn_hir::plans::Schedule::default(),
            chains: Arc::from(Vec::new()),
            block_views: Vec::new(),
            block_indices: Vec::new(),
        }
    }
}

struct Lower<'db> {
    db: &'db dyn Db,
    body: &'db Arc<Body>,
    check: &'db FnCheck,
    locals: Vec<LocalDecl>,
    blocks: Vec<Open>,
    current: BlockId,
    /// The MIR local of each parameter and binder (the body's scopes say which one a name
    /// means, through the check's resolutions).
    bindings: HashMap<LocalRef, Local>,
    /// Enclosing loops: (continue target, break target).
    loops: Vec<(BlockId, BlockId)>,
    /// Per enclosing loop, the index of its body's frame (what `break` and `continue` leave).
    loop_frames: Vec<usize>,
    /// What each open block must do wherever it is left — release an owner local, run a deferred
    /// call — in the order written, innermost block last (`owner.rs`).
    frames: Vec<Vec<owner::Release>>,
    /// Temporaries owning storage that the statement being lowered made (released at its end).
    temporaries: Vec<Local>,
    /// Facts for elision: `binder < bound` while the loop runs.
    facts: Vec<(Local, Bound)>,
    /// View parameters whose extent is a `usize` parameter: (view, extent).
    extents: Vec<(Local, Local)>,
    ret: MTy,
    ret_ty: Ty,
    /// The statement being lowered (what its instructions are attributed to).
    anchor: Option<Anchor>,
    /// The symbol of the function being lowered (closures are named after it).
    symbol: Arc<str>,
    /// Functions made while lowering this one: its closures and the callable adapters it lends.
    extra: Vec<Function>,
    /// How the function's plan splits its regions, and the runs of regions its `fuse` joins.
    schedule: cairn_hir::plans::Schedule,
    chains: Arc<[Arc<[StmtId]>]>,
    /// In a lane whose block is known to lie inside these views, the index expressions the race
    /// rule placed in the block (their bounds guards are proved).
    block_views: Vec<Local>,
    block_indices: Vec<ExprId>,
}

/// What a loop binder stays below.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bound {
    /// An immutable `usize` local (a parameter or `let`).
    Name(Local),
    /// `len` of a view or array local.
    Len(Local),
    /// A literal.
    Literal(u64),
}

fn lit_usize(n: u64) -> Operand {
    Operand::Const(Const::Int(i128::from(n), IntTy::Usize))
}

fn copy(local: Local) -> Operand {
    Operand::Copy(Place::local(local))
}
impl Lower<'_> {
    /// The blocks built, closed and if-converted (the function is complete).
    fn finish_blocks(&mut self) -> Vec<Block> {
        let mut blocks: Vec<Block> = std::mem::take(&mut self.blocks)
            .into_iter()
            .map(|b| Block {
                insts: b.insts,
                anchors: b.anchors,
                term: b.term.unwrap_or(Terminator::Unreachable),
                term_anchor: b.term_anchor,
            })
            .collect();
        cfg::if_convert(&mut blocks, &mut self.locals);
        crate::clear_unreachable(&mut blocks);
        blocks
    }

    fn new_local(&mut self, name: Option<Arc<str>>, ty: MTy) -> Local {
        self.locals.push(LocalDecl { name, ty });
        Local(self.locals.len() as u32 - 1)
    }

    fn temp(&mut self, ty: MTy) -> Local {
        self.new_local(None, ty)
    }

    fn new_block(&mut self) -> BlockId {
        self.blocks.push(Open::new());
        BlockId(self.blocks.len() as u32 - 1)
    }

    fn open(&self) -> bool {
        self.blocks[self.current.0 as usize].term.is_none()
    }

    fn emit(&mut self, inst: Inst) {
        if !self.open() {
            // Code after a `return`, `break` or `continue`: unreachable, kept in its own block.
            let dead = self.new_block();
            self.current = dead;
        }
        let anchor = match &inst {
            Inst::Guard(Guard { at: Some(at), .. }) => Some(Anchor::Expr(*at)),
            _ => self.anchor,
        };
        let block = &mut self.blocks[self.current.0 as usize];
        block.insts.push(inst);
        block.anchors.push(anchor);
    }

    fn terminate(&mut self, term: Terminator) {
        if self.open() {
            let anchor = self.anchor;
            let block = &mut self.blocks[self.current.0 as usize];
            block.term = Some(term);
            block.term_anchor = anchor;
        }
    }

    fn switch_to(&mut self, block: BlockId) {
        self.current = block;
    }

    fn assign(&mut self, place: Place, value: Rvalue) {
        self.emit(Inst::Assign(place, value));
    }

    fn guard(&mut self, kind: GuardKind, check: Check, at: Option<ExprId>, elided: bool) {
        self.emit(Inst::Guard(Guard { kind, check, at, elided, hoisted: false, facts: Vec::new(), only_if: None }));
    }

    /// Computes an rvalue into a fresh temporary.
    fn value(&mut self, ty: MTy, value: Rvalue) -> Operand {
        if let Rvalue::Use(op) = value {
            return op;
        }
        let t = self.temp(ty);
        self.assign(Place::local(t), value);
        copy(t)
    }

    fn ty(&self, e: ExprId) -> Ty {
        self.check.expr_types.get(e.0 as usize).cloned().unwrap_or(Ty::Error)
    }

    fn mty_of(&self, e: ExprId) -> MTy {
        mty(self.db, &self.ty(e))
    }

    fn int_of(&self, e: ExprId) -> R<IntTy> {
        match self.ty(e).value() {
            Ty::Int(i) => Ok(*i),
            other => fail(format!("expected an integer, the checker says {other}")),
        }
    }

    fn local_ty(&self, local: Local) -> &MTy {
        &self.locals[local.0 as usize].ty
    }

    /// The type of a place built so far (`Function::place_ty` over the locals declared yet).
    fn place_ty(&self, place: &Place) -> R<MTy> {
        match crate::place_ty(&self.locals, place) {
            Some(ty) => Ok(ty),
            None => fail(format!("the place {place} does not fit its local's type")),
        }
    }

    /// The local a name expression means, as the checker resolved it.
    fn local_of(&self, e: ExprId) -> Option<Local> {
        match self.check.resolution(self.body.unparen(e)) {
            Resolution::Local(local) => self.bindings.get(&local).copied(),
            _ => None,
        }
    }

    fn bind(&mut self, binder: BinderId, local: Local) {
        self.bindings.insert(LocalRef::Binder(binder), local);
    }
}

fn is_one(operand: &Operand) -> bool {
    matches!(operand, Operand::Const(Const::Int(1, _)))
}

/// A float constant of a type, rounded to `f32` when the type is.
fn float_const(value: f64, ty: FloatTy, negative: bool) -> Const {
    let value = if negative { -value } else { value };
    match ty {
        FloatTy::F32 => Const::Float(u64::from((value as f32).to_bits()), ty),
        FloatTy::F64 => Const::Float(value.to_bits(), ty),
    }
}

/// True when every value of `from` is a value of `to`.
fn widens(from: IntTy, to: IntTy) -> bool {
    let (a, b) = from.range();
    let (c, d) = to.range();
    c <= a && b <= d
}

#[cfg(test)]
mod recursive_tests {
    use super::*;

    /// A lowering that unwinds (a cancelled query) leaves no open type behind for the thread's
    /// next lowering, which would otherwise take the type for one met again.
    #[test]
    fn an_unwinding_lowering_leaves_no_open_type() {
        let unwound = std::panic::catch_unwind(|| recursive(&Ty::Bool, Arc::from("X"), || panic!("cancelled")));
        assert!(unwound.is_err());
        LOWERING.with(|stack| assert!(stack.borrow().is_empty(), "a stale open type"));
        let built = recursive(&Ty::Bool, Arc::from("X"), || MTy::Bool);
        assert_eq!(built, MTy::Bool);
    }
}
