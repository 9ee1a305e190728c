//! Lowering a checked body to MIR.
//!
//! The lowering trusts the checker: it runs only on bodies the checker accepted, reads the type
//! the checker gave every expression (`FnCheck::expr_types`) and what every call calls
//! (`call_targets`), and resolves names as the checker does (a local in scope, else a constant,
//! else a variant of the expression's type — the checker refuses the ambiguous cases).
//! Evaluation order is the language's: left to right, a call's arguments before the call, the
//! right side of an assignment before its place. Each guard is placed immediately before the
//! operation it protects, so a failing guard traps before anything it guards happens.
//!
//! Elision (language §15): a guard is marked `elided` where the lowering can see it cannot fail:
//! an index by the binder of `for i in 0..n` into a view whose extent is `n` (or `len` of that
//! view), element loops, a widening integer conversion, the subtraction `hi - lo` that a part's
//! extent implies (the part's own guard covers it), and the entry checks of parameters (a view or
//! tag a CAIRN caller passes is valid by construction).

use std::collections::HashMap;
use std::sync::Arc;

use cairn_hir::Db;
use cairn_hir::body::{
    Arm, BinaryOp, BinderId, Block as HirBlock, Body, Else, Expr, ExprId, Literal, Stmt, StmtId, UnaryOp, fn_body,
};
use cairn_hir::builtins::Builtin;
use cairn_hir::check::{CallTarget, FnCheck, Resolution, check_fn};
use cairn_hir::consts::{ConstValue, Value};
use cairn_hir::decl::{TypeCtx, fields_of, resolve_type, variants_of};
use cairn_hir::input::{Item, ItemKind, Program as ProgramInput};
use cairn_hir::scope::Resolver;
use cairn_hir::scopes::LocalRef;
use cairn_hir::signature::fn_signature;
use cairn_hir::types::{Extent, FloatTy, IntTy, Ty};

use crate::{
    Anchor, BinOp, Block, BlockId, Check, Const, FnKind, Function, Guard, GuardKind, Inst, Local, LocalDecl,
    LowerError, MTy, Operand, Place, PrintArg, Program, Proj, Rvalue, Stream, Terminator, UnOp, ViewExtent,
};

type R<T> = Result<T, LowerError>;

fn fail<T>(message: impl Into<String>) -> R<T> {
    Err(LowerError(message.into()))
}

/// The MIR of one function or test.
#[salsa::tracked(returns(ref))]
pub fn fn_mir(db: &dyn Db, item: Item) -> Result<Arc<Function>, LowerError> {
    lower_function(db, item).map(Arc::new)
}

/// The MIR of every function and test of the program (the library's included), in declaration
/// order. Call only on a program the checker accepted.
pub fn program_mir(db: &dyn Db) -> Program {
    let mut program = Program { functions: Vec::new(), errors: Vec::new() };
    for entry in ProgramInput::get(db).items(db).iter() {
        if !matches!(entry.key.kind, ItemKind::Fn | ItemKind::Test) {
            continue;
        }
        match fn_mir(db, entry.item) {
            Ok(function) => program.functions.push(function.clone()),
            Err(error) => program.errors.push((Resolver::new(db).full_name(entry.item), error.clone())),
        }
    }
    program
}

/// The symbol a function is emitted under: `cairn.<module>.<name>` (tests `cairn.test.…`).
pub fn symbol(db: &dyn Db, item: Item) -> Arc<str> {
    let full = Resolver::new(db).full_name(item);
    let kind = Resolver::new(db).info(item).map(|i| i.key.kind);
    if kind == Some(ItemKind::Test) {
        Arc::from(format!("cairn.test.{full}"))
    } else {
        Arc::from(format!("cairn.{full}"))
    }
}

/// A checker type as MIR sees it.
pub fn mty(db: &dyn Db, ty: &Ty) -> MTy {
    if let Ty::Borrow(_, inner) = ty {
        return MTy::Ptr(Arc::new(mty(db, inner)));
    }
    match ty {
        Ty::Bool => MTy::Bool,
        Ty::Int(i) => MTy::Int(*i),
        Ty::Float(f) => MTy::Float(*f),
        Ty::Void | Ty::Error | Ty::Param(_) => MTy::Void,
        Ty::Record(adt) => {
            MTy::Record { name: adt.name.clone(), fields: fields_of(db, adt).iter().map(|(_, t)| mty(db, t)).collect() }
        }
        Ty::Enum(adt) => {
            let variants = variants_of(db, adt);
            if cairn_hir::decl::enum_def(db, adt.item).tag_only {
                MTy::Enum { name: adt.name.clone(), variants: variants.len() as u32 }
            } else {
                MTy::Sum {
                    name: Arc::from(ty.value().to_string()),
                    variants: variants.iter().map(|(_, p)| p.as_ref().map(|t| mty(db, t))).collect(),
                }
            }
        }
        Ty::View(view) => MTy::View(Arc::new(mty(db, &view.elem))),
        Ty::Borrow(..) => unreachable!("handled above"),
    }
}

fn lower_function(db: &dyn Db, item: Item) -> R<Function> {
    let signature = fn_signature(db, item);
    if signature.error.is_some() {
        return fail("the signature was refused");
    }
    let check = check_fn(db, item);
    if check.error.is_some() {
        return fail("the body was refused");
    }
    let body = fn_body(db, item);
    let scope = Resolver::new(db);
    let info = scope.info(item).ok_or_else(|| LowerError("no such declaration".into()))?;
    let kind = match info.key.kind {
        ItemKind::Test => FnKind::Test,
        // The entry: a program function named `main`, in whichever module declares it.
        _ if !info.library && &*info.key.name == "main" => FnKind::Main,
        _ => FnKind::Function,
    };
    let ret = mty(db, &signature.ret);
    let mut lower = Lower {
        db,
        module: info.key.module.clone(),
        body,
        check,
        locals: Vec::new(),
        blocks: vec![Open::new()],
        anchor: None,
        current: BlockId(0),
        bindings: HashMap::new(),
        loops: Vec::new(),
        facts: Vec::new(),
        extents: Vec::new(),
        ret: ret.clone(),
        ret_ty: signature.ret.clone(),
    };
    // Every parameter is a local before anything else, in order (the ABI reads them so).
    let mut param_locals = Vec::with_capacity(signature.params.len());
    for (i, param) in signature.params.iter().enumerate() {
        let ty = mty(db, &param.ty);
        let local = lower.new_local(Some(param.name.clone()), ty);
        lower.bindings.insert(LocalRef::Param(i as u32), local);
        param_locals.push(local);
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
    if lower.open() {
        let term = if ret == MTy::Void { Terminator::Return(None) } else { Terminator::Unreachable };
        lower.terminate(term);
    }
    let blocks = lower
        .blocks
        .into_iter()
        .map(|b| Block {
            insts: b.insts,
            anchors: b.anchors,
            term: b.term.unwrap_or(Terminator::Unreachable),
            term_anchor: b.term_anchor,
        })
        .collect();
    let mut blocks: Vec<Block> = blocks;
    if_convert(&mut blocks, &mut lower.locals);
    let name = match kind {
        FnKind::Test => Arc::from(format!("test${}", scope.full_name(item))),
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
    Ok(Function { symbol: symbol(db, item), name, kind, params, ret, locals: lower.locals, blocks, extents })
}

/// If-conversion of `if c { p += k; }` (or `-=`, with a constant `k`, no `else`, `p` a local or a
/// field path): the block becomes `d = c ? k : 0; guard p + d; p = p + d`. It traps in exactly the
/// same cases (adding 0 never overflows), and leaves the loop around it without a branch, which
/// LLVM can then turn into straight-line code (a counting loop like a sieve's).
fn if_convert(blocks: &mut [Block], locals: &mut Vec<LocalDecl>) {
    for b in 0..blocks.len() {
        let Terminator::Branch(cond, then, other) = blocks[b].term.clone() else { continue };
        let (t, e) = (then.0 as usize, other.0 as usize);
        if t == b || e == b {
            continue;
        }
        let Terminator::Goto(join) = blocks[t].term else { continue };
        let empty_else = other == join || (blocks[e].insts.is_empty() && blocks[e].term == Terminator::Goto(join));
        if !empty_else {
            continue;
        }
        let [
            Inst::Guard(guard),
            Inst::Assign(tmp, Rvalue::Binary(op, Operand::Copy(read), k)),
            Inst::Assign(target, Rvalue::Use(Operand::Copy(result))),
        ] = &blocks[t].insts[..]
        else {
            continue;
        };
        let Check::NoOverflow(checked, ty, Operand::Copy(place), amount) = &guard.check else { continue };
        let simple = place.proj.iter().all(|p| matches!(p, Proj::Field(_)));
        if guard.elided
            || !matches!(op, BinOp::Add | BinOp::Sub)
            || checked != op
            || read != place
            || target != place
            || result != tmp
            || amount != k
            || !matches!(k, Operand::Const(Const::Int(..)))
            || !simple
        {
            continue;
        }
        let (op, ty, k, place, tmp, guard) = (*op, *ty, k.clone(), place.clone(), tmp.clone(), guard.clone());
        locals.push(LocalDecl { name: None, ty: MTy::Int(ty) });
        let d = Local(locals.len() as u32 - 1);
        let anchors = blocks[t].anchors.clone();
        let zero = Operand::Const(Const::Int(0, ty));
        let insts = [
            Inst::Assign(Place::local(d), Rvalue::Select(cond, k, zero)),
            Inst::Guard(Guard { check: Check::NoOverflow(op, ty, Operand::Copy(place.clone()), copy(d)), ..guard }),
            Inst::Assign(tmp.clone(), Rvalue::Binary(op, Operand::Copy(place.clone()), copy(d))),
            Inst::Assign(place, Rvalue::Use(Operand::Copy(tmp))),
        ];
        let block = &mut blocks[b];
        block.insts.extend(insts);
        block.anchors.push(anchors.first().copied().flatten());
        block.anchors.extend(anchors);
        block.term = Terminator::Goto(join);
    }
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

struct Lower<'db> {
    db: &'db dyn Db,
    module: Arc<str>,
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
    /// Facts for elision: `binder < bound` while the loop runs.
    facts: Vec<(Local, Bound)>,
    /// View parameters whose extent is a `usize` parameter: (view, extent).
    extents: Vec<(Local, Local)>,
    ret: MTy,
    ret_ty: Ty,
    /// The statement being lowered (what its instructions are attributed to).
    anchor: Option<Anchor>,
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
    // ----- construction ----------------------------------------------------------------------

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
        self.emit(Inst::Guard(Guard { kind, check, at, elided }));
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

    // ----- types -----------------------------------------------------------------------------

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

    // ----- statements ------------------------------------------------------------------------

    fn scoped_block(&mut self, block: &HirBlock) -> R<()> {
        let mark = self.facts.len();
        let result = self.block(block);
        self.facts.truncate(mark);
        result
    }

    fn block(&mut self, block: &HirBlock) -> R<()> {
        for &stmt in block.iter() {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn stmt(&mut self, id: StmtId) -> R<()> {
        let outer = self.anchor.replace(Anchor::Stmt(id));
        let result = self.stmt_inner(id);
        self.anchor = outer;
        result
    }

    fn stmt_inner(&mut self, id: StmtId) -> R<()> {
        let body = self.body.clone();
        match body.stmt(id) {
            Stmt::Missing | Stmt::Unsupported(_) => fail("a statement the lowering does not know"),
            Stmt::Let { binder, init, mutable, .. } => {
                let name = body.binder(*binder).clone();
                let ty = self.mty_of(*init);
                let value = self.expr(*init)?;
                if &*name == "_" {
                    return Ok(());
                }
                let local = self.new_local(Some(name.clone()), ty);
                self.assign(Place::local(local), Rvalue::Use(value));
                self.bind(*binder, local);
                let _ = mutable;
                Ok(())
            }
            Stmt::Assign { target, op, value } => self.assignment(*target, *op, *value),
            Stmt::Expr(e) => {
                self.expr_discard(*e)?;
                Ok(())
            }
            Stmt::If { cond, then, els } => self.if_stmt(*cond, then, els.as_ref()),
            Stmt::While { cond, body: block } => {
                let header = self.new_block();
                let inside = self.new_block();
                let exit = self.new_block();
                self.terminate(Terminator::Goto(header));
                self.switch_to(header);
                let c = self.expr(*cond)?;
                self.terminate(Terminator::Branch(c, inside, exit));
                self.switch_to(inside);
                self.loops.push((header, exit));
                self.scoped_block(block)?;
                self.loops.pop();
                self.terminate(Terminator::Goto(header));
                self.switch_to(exit);
                Ok(())
            }
            Stmt::ForRange { binder, lo, hi, body: block } => self.for_range(*binder, *lo, *hi, block),
            Stmt::ForEach { index, element, iterable, body: block } => {
                self.for_each(*index, *element, *iterable, block)
            }
            Stmt::Each { binder, count, body: block } => self.for_count(*binder, *count, block),
            Stmt::Match { subject, arms } => self.match_stmt(*subject, arms),
            Stmt::Return(value) => {
                let value = match value {
                    Some(e) => Some(self.expr(*e)?),
                    None => None,
                };
                self.terminate(Terminator::Return(value));
                Ok(())
            }
            Stmt::Break => {
                let (_, exit) = *self.loops.last().ok_or_else(|| LowerError("break outside a loop".into()))?;
                self.terminate(Terminator::Goto(exit));
                Ok(())
            }
            Stmt::Continue => {
                let (next, _) = *self.loops.last().ok_or_else(|| LowerError("continue outside a loop".into()))?;
                self.terminate(Terminator::Goto(next));
                Ok(())
            }
            Stmt::Block(block) => self.scoped_block(block),
            Stmt::Stack { binder, element, capacity, .. } => {
                let name = body.binder(*binder).clone();
                let cx = TypeCtx { db: self.db, scope: Resolver::new(self.db), module: &self.module, generics: &[] };
                let element = resolve_type(cx, element).map_err(|e| LowerError(e.message.to_string()))?;
                let count = self.static_count(*capacity)?;
                let ty = MTy::Array(Arc::new(mty(self.db, &element)), count);
                let local = self.new_local(Some(name.clone()), ty);
                self.assign(Place::local(local), Rvalue::Zeroed);
                self.bind(*binder, local);
                Ok(())
            }
        }
    }

    /// A `stack` capacity: a literal or a constant.
    fn static_count(&self, e: ExprId) -> R<u64> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Ok(*v as u64),
            Expr::Name(name) => match self.integer_constant(e) {
                Some(v) => Ok(v),
                None => fail(format!("{name} is not a constant capacity")),
            },
            _ => fail("a capacity that is not a literal or a constant"),
        }
    }

    fn if_stmt(&mut self, cond: ExprId, then: &HirBlock, els: Option<&Else>) -> R<()> {
        let c = self.expr(cond)?;
        let then_block = self.new_block();
        let else_block = self.new_block();
        let join = self.new_block();
        self.terminate(Terminator::Branch(c, then_block, else_block));
        self.switch_to(then_block);
        self.scoped_block(then)?;
        self.terminate(Terminator::Goto(join));
        self.switch_to(else_block);
        match els {
            Some(Else::Block(block)) => self.scoped_block(block)?,
            Some(Else::If(nested)) => self.stmt(*nested)?,
            None => {}
        }
        self.terminate(Terminator::Goto(join));
        self.switch_to(join);
        Ok(())
    }

    /// `each i in n`: `for i in 0..n`.
    fn for_count(&mut self, binder: cairn_hir::body::BinderId, count: ExprId, block: &HirBlock) -> R<()> {
        let hi_value = self.expr(count)?;
        let bound = self.bound_of(count);
        self.counted_loop(binder, lit_usize(0), hi_value, bound, block)
    }

    fn for_range(&mut self, binder: cairn_hir::body::BinderId, lo: ExprId, hi: ExprId, block: &HirBlock) -> R<()> {
        let lo_value = self.expr(lo)?;
        let hi_value = self.expr(hi)?;
        let bound = self.bound_of(hi);
        self.counted_loop(binder, lo_value, hi_value, bound, block)
    }

    fn counted_loop(
        &mut self,
        binder: cairn_hir::body::BinderId,
        lo_value: Operand,
        hi_value: Operand,
        bound: Option<Bound>,
        block: &HirBlock,
    ) -> R<()> {
        let hi_local = self.temp(MTy::usize());
        self.assign(Place::local(hi_local), Rvalue::Use(hi_value));
        let name = self.body.binder(binder).clone();
        let counter = self.new_local(Some(name.clone()), MTy::usize());
        self.assign(Place::local(counter), Rvalue::Use(lo_value));
        let header = self.new_block();
        let inside = self.new_block();
        let latch = self.new_block();
        let exit = self.new_block();
        self.terminate(Terminator::Goto(header));
        self.switch_to(header);
        let more = self.value(MTy::Bool, Rvalue::Binary(BinOp::Lt, copy(counter), copy(hi_local)));
        self.terminate(Terminator::Branch(more, inside, exit));
        self.switch_to(inside);
        let mark = self.facts.len();
        self.bind(binder, counter);
        if let Some(bound) = bound {
            self.facts.push((counter, bound));
        }
        self.counted_body(block, mark, counter, (header, latch, exit))
    }

    /// What a range's upper end names, for elision: an immutable name, `len(x)`, or a literal.
    fn bound_of(&self, hi: ExprId) -> Option<Bound> {
        match self.body.expr(self.body.unparen(hi)) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Some(Bound::Literal(*v as u64)),
            Expr::Name(_) => match self.check.resolution(self.body.unparen(hi)) {
                // Only immutable names: a parameter or a `let` (loop binders are immutable
                // too). A `let mut` can change, so it bounds nothing.
                Resolution::Local(r) => {
                    let local = self.local_of(hi)?;
                    (!self.is_mutable(r) && self.local_ty(local) == &MTy::usize()).then_some(Bound::Name(local))
                }
                _ => self.integer_constant(hi).map(Bound::Literal),
            },
            Expr::Call { args, .. }
                if args.len() == 1
                    && self.check.call_target(self.body.unparen(hi)) == Some(&CallTarget::Builtin(Builtin::Len)) =>
            {
                match self.body.expr(self.body.unparen(args[0])) {
                    Expr::Name(_) => self.local_of(args[0]).map(Bound::Len),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// True when `local` was bound by `let mut` (parameters and loop binders never are).
    fn is_mutable(&self, local: LocalRef) -> bool {
        let LocalRef::Binder(id) = local else { return false };
        self.body.stmts.iter().any(|s| matches!(s, Stmt::Let { binder, mutable: true, .. } if *binder == id))
    }

    /// The value of the integer constant a name expression means, when it is one and folded.
    fn integer_constant(&self, e: ExprId) -> Option<u64> {
        let Resolution::Const(item) = self.check.resolution(self.body.unparen(e)) else { return None };
        match cairn_hir::consts::constant_value(self.db, item)? {
            ConstValue::Folded { ty: Ty::Int(_), value: Value::Int(v) } => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    fn for_each(
        &mut self,
        index: Option<cairn_hir::body::BinderId>,
        element: cairn_hir::body::BinderId,
        iterable: ExprId,
        block: &HirBlock,
    ) -> R<()> {
        let place = self.place(iterable)?;
        let elem_ty = self.place_ty(&place)?.element().cloned().unwrap_or(MTy::Void);
        let len = self.temp(MTy::usize());
        let length = self.len_of(&place)?;
        self.assign(Place::local(len), Rvalue::Use(length));
        let counter = self.temp(MTy::usize());
        self.assign(Place::local(counter), Rvalue::Use(lit_usize(0)));
        let header = self.new_block();
        let inside = self.new_block();
        let latch = self.new_block();
        let exit = self.new_block();
        self.terminate(Terminator::Goto(header));
        self.switch_to(header);
        let more = self.value(MTy::Bool, Rvalue::Binary(BinOp::Lt, copy(counter), copy(len)));
        self.terminate(Terminator::Branch(more, inside, exit));
        self.switch_to(inside);
        let mark = self.facts.len();
        if let Some(index) = index {
            let name = self.body.binder(index).clone();
            let local = self.new_local(Some(name.clone()), MTy::usize());
            self.assign(Place::local(local), Rvalue::Use(copy(counter)));
            self.bind(index, local);
        }
        // The element read: its bounds guard is the loop's own site, and cannot fail.
        self.guard(GuardKind::Bounds, Check::InBounds(copy(counter), copy(len)), Some(iterable), true);
        let name = self.body.binder(element).clone();
        let local = self.new_local(Some(name.clone()), elem_ty);
        self.assign(Place::local(local), Rvalue::Use(Operand::Copy(place.project(Proj::Index(copy(counter))))));
        self.bind(element, local);
        self.counted_body(block, mark, counter, (header, latch, exit))
    }

    /// The body of a counted loop and its latch: the body with the loop's bindings in scope
    /// (dropped after it, back to `mark`), then `counter += 1` and the jump back to `header`;
    /// lowering continues at `exit`. The counter was below its bound on entry to the body, so
    /// the increment cannot overflow.
    fn counted_body(
        &mut self,
        block: &Arc<[StmtId]>,
        mark: usize,
        counter: Local,
        (header, latch, exit): (BlockId, BlockId, BlockId),
    ) -> R<()> {
        self.loops.push((latch, exit));
        let result = self.block(block);
        self.loops.pop();
        self.facts.truncate(mark);
        result?;
        self.terminate(Terminator::Goto(latch));
        self.switch_to(latch);
        self.assign(Place::local(counter), Rvalue::Binary(BinOp::Add, copy(counter), lit_usize(1)));
        self.terminate(Terminator::Goto(header));
        self.switch_to(exit);
        Ok(())
    }

    fn match_stmt(&mut self, subject: ExprId, arms: &Arc<[Arm]>) -> R<()> {
        let ty = self.mty_of(subject);
        let value = self.expr(subject)?;
        let held = self.temp(ty.clone());
        self.assign(Place::local(held), Rvalue::Use(value));
        let tag = self.value(MTy::Int(IntTy::U32), Rvalue::Tag(Place::local(held)));
        let adt = match self.ty(subject).value() {
            Ty::Enum(adt) => adt.clone(),
            other => return fail(format!("match on {other}")),
        };
        let variants = variants_of(self.db, &adt);
        let join = self.new_block();
        let default = self.new_block();
        let mut cases = Vec::new();
        let mut targets = Vec::new();
        for arm in arms.iter() {
            let name = arm.variant.last().cloned().unwrap_or_else(|| Arc::from(""));
            let index = variants
                .iter()
                .position(|(v, _)| *v == name)
                .ok_or_else(|| LowerError(format!("no variant {name}")))?;
            let block = self.new_block();
            cases.push((index as u64, block));
            targets.push((arm, index, block));
        }
        self.terminate(Terminator::Switch(tag, cases, default));
        for (arm, index, block) in targets {
            self.switch_to(block);
            if let Some(binder) = arm.binder {
                let name = self.body.binder(binder).clone();
                if &*name != "_"
                    && let Some(Some(payload)) = variants.get(index).map(|(_, p)| p.clone())
                {
                    let payload_ty = mty(self.db, &payload);
                    let local = self.new_local(Some(name.clone()), payload_ty);
                    let source = Place::local(held).project(Proj::Payload(index as u32));
                    self.assign(Place::local(local), Rvalue::Use(Operand::Copy(source)));
                    self.bind(binder, local);
                }
            }
            self.scoped_block(&arm.body)?;
            self.terminate(Terminator::Goto(join));
        }
        self.switch_to(default);
        self.guard(GuardKind::Tag, Check::Unreachable, Some(subject), false);
        self.terminate(Terminator::Unreachable);
        self.switch_to(join);
        Ok(())
    }

    fn assignment(&mut self, target: ExprId, op: Option<BinaryOp>, value: ExprId) -> R<()> {
        // The value first, then the place (the right side is sequenced before the left).
        let rhs = self.expr(value)?;
        let place = self.place(target)?;
        match op {
            None => self.assign(place, Rvalue::Use(rhs)),
            Some(op) => {
                let current = Operand::Copy(place.clone());
                let ty = self.place_ty(&place)?;
                let result = self.arith(op, ty, current, rhs, Some(target))?;
                self.assign(place, Rvalue::Use(result));
            }
        }
        Ok(())
    }

    // ----- places ----------------------------------------------------------------------------

    /// The place an expression names (a local, a field path, an element), with the guards its
    /// evaluation needs. A value that is not a place is stored in a temporary.
    fn place(&mut self, e: ExprId) -> R<Place> {
        let body = self.body.clone();
        let inner = body.unparen(e);
        match body.expr(inner) {
            Expr::Name(_) => match self.local_of(inner) {
                Some(local) => Ok(match self.local_ty(local) {
                    MTy::Ptr(_) => Place::local(local).project(Proj::Deref),
                    _ => Place::local(local),
                }),
                None => self.spill(inner),
            },
            Expr::Field { base, .. } if self.is_value_path(*base) => match self.check.resolution(inner) {
                Resolution::Field(index) => {
                    let base_place = self.place(*base)?;
                    Ok(base_place.project(Proj::Field(index)))
                }
                _ => self.spill(inner),
            },
            Expr::Index { base, indices } => {
                let base_place = self.place(*base)?;
                let [index] = &indices[..] else { return fail("an index with several subscripts") };
                let i = self.expr(*index)?;
                let elided = self.index_proved(&base_place, *index);
                let len = self.len_of(&base_place)?;
                self.guard(GuardKind::Bounds, Check::InBounds(i.clone(), len), Some(inner), elided);
                Ok(base_place.project(Proj::Index(i)))
            }
            _ => self.spill(inner),
        }
    }

    /// True when `e` is a path through values (a local, its fields), not a type or a constant.
    fn is_value_path(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(_) => self.local_of(e).is_some(),
            Expr::Field { base, .. } | Expr::Index { base, .. } => self.is_value_path(*base),
            _ => true,
        }
    }

    fn spill(&mut self, e: ExprId) -> R<Place> {
        let ty = self.mty_of(e);
        let value = self.expr(e)?;
        let t = self.temp(ty);
        self.assign(Place::local(t), Rvalue::Use(value));
        Ok(Place::local(t))
    }

    /// The length of a view or array place, as an operand.
    fn len_of(&mut self, place: &Place) -> R<Operand> {
        match self.place_ty(place)? {
            MTy::Array(_, n) => Ok(lit_usize(n)),
            _ => {
                // A view parameter's length is its extent parameter (callers pass them together,
                // held equal by the checker's extent identity and the part guards): reading the
                // parameter lets LLVM relate bounds checks to loops over `0..n`.
                if place.proj.is_empty()
                    && let Some(&(_, extent)) = self.extents.iter().find(|(v, _)| *v == place.local)
                {
                    return Ok(copy(extent));
                }
                Ok(self.value(MTy::usize(), Rvalue::Len(place.clone())))
            }
        }
    }

    /// True when `index` is a loop binder known to stay below the extent of `place`.
    fn index_proved(&self, place: &Place, index: ExprId) -> bool {
        let Expr::Name(_) = self.body.expr(self.body.unparen(index)) else { return false };
        let Some(binder) = self.local_of(index) else { return false };
        if !place.proj.is_empty() {
            return false;
        }
        let view = place.local;
        self.facts.iter().any(|(local, bound)| {
            *local == binder
                && match bound {
                    Bound::Len(of) => *of == view,
                    Bound::Name(n) => self.extents.iter().any(|(v, e)| *v == view && e == n),
                    Bound::Literal(k) => matches!(self.local_ty(view), MTy::Array(_, n) if k <= n),
                }
        })
    }

    // ----- expressions -----------------------------------------------------------------------

    /// Evaluates an expression whose value is not used (an expression statement).
    fn expr_discard(&mut self, e: ExprId) -> R<()> {
        let _ = self.expr(e)?;
        Ok(())
    }

    fn expr(&mut self, e: ExprId) -> R<Operand> {
        let body = self.body.clone();
        match body.expr(e) {
            Expr::Missing | Expr::Unsupported(_) => fail("an expression the lowering does not know"),
            Expr::Literal(literal) => self.literal(e, literal, false),
            Expr::Paren(inner) => self.expr(*inner),
            Expr::Name(name) => self.name(e, name),
            Expr::Unary { op: UnaryOp::Neg, operand }
                if matches!(body.expr(*operand), Expr::Literal(Literal::Int { .. })) =>
            {
                let Expr::Literal(literal) = body.expr(*operand) else { unreachable!("matched above") };
                match self.ty(e).value() {
                    Ty::Int(_) => self.literal(e, literal, true),
                    _ => {
                        let value = self.expr(*operand)?;
                        let ty = self.mty_of(e);
                        Ok(self.value(ty, Rvalue::Unary(UnOp::Neg, value)))
                    }
                }
            }
            Expr::Unary { op, operand } => {
                let value = self.expr(*operand)?;
                let ty = self.mty_of(e);
                match (op, &ty) {
                    (UnaryOp::Neg, MTy::Int(i)) => {
                        self.guard(GuardKind::Overflow, Check::NegNoOverflow(*i, value.clone()), Some(e), !i.signed());
                        Ok(self.value(ty, Rvalue::Unary(UnOp::Neg, value)))
                    }
                    (UnaryOp::Neg, _) => Ok(self.value(ty, Rvalue::Unary(UnOp::Neg, value))),
                    (UnaryOp::Not, _) => Ok(self.value(ty, Rvalue::Unary(UnOp::Not, value))),
                    (UnaryOp::BitNot, _) => Ok(self.value(ty, Rvalue::Unary(UnOp::BitNot, value))),
                }
            }
            Expr::Binary { op, lhs, rhs } => self.binary(e, *op, *lhs, *rhs),
            Expr::Field { base, name } => self.field(e, *base, name),
            Expr::Index { .. } => {
                let place = self.place(e)?;
                Ok(Operand::Copy(place))
            }
            Expr::Part { .. } => fail("a part outside a call"),
            Expr::Call { callee, args } => self.call(e, *callee, args),
            Expr::Try(operand) => self.try_expr(e, *operand),
        }
    }

    fn literal(&mut self, e: ExprId, literal: &Literal, negative: bool) -> R<Operand> {
        let ty = self.ty(e);
        Ok(Operand::Const(match (literal, ty.value()) {
            (Literal::Int { value, .. }, Ty::Int(i)) => {
                let v = value.unwrap_or(0) as i128;
                Const::Int(if negative { -v } else { v }, *i)
            }
            (Literal::Int { value, .. }, Ty::Float(f)) => float_const(value.unwrap_or(0) as f64, *f, negative),
            (Literal::Char(c), Ty::Int(i)) => Const::Int(i128::from(*c), *i),
            // A character literal adapts like an integer literal (language §3), floats included;
            // a minus before it is an ordinary negation, never part of the literal.
            (Literal::Char(c), Ty::Float(f)) => float_const(f64::from(*c), *f, false),
            (Literal::Float { text }, Ty::Float(f)) => {
                let v: f64 = text.replace('_', "").parse().map_err(|_| LowerError(format!("float literal {text}")))?;
                float_const(v, *f, negative)
            }
            (Literal::Bool(b), _) => Const::Bool(*b),
            (Literal::String(bytes), _) => Const::Str(bytes.clone()),
            (literal, ty) => return fail(format!("a literal {literal:?} of type {ty}")),
        }))
    }

    fn name(&mut self, e: ExprId, name: &Arc<str>) -> R<Operand> {
        match self.check.resolution(e) {
            Resolution::Local(_) => {
                let local = self.local_of(e).ok_or_else(|| LowerError(format!("{name} has no local yet")))?;
                let place = match self.local_ty(local) {
                    MTy::Ptr(_) => Place::local(local).project(Proj::Deref),
                    _ => Place::local(local),
                };
                Ok(Operand::Copy(place))
            }
            Resolution::Const(item) => {
                self.constant(item).ok_or_else(|| LowerError(format!("the constant {name} is not folded")))
            }
            Resolution::Variant { index, .. } => self.variant(e, index, None),
            _ => fail(format!("the checker recorded no meaning for {name}")),
        }
    }

    /// The folded value of a constant.
    fn constant(&self, item: Item) -> Option<Operand> {
        match cairn_hir::consts::constant_value(self.db, item)? {
            ConstValue::Folded { ty, value } => Some(Operand::Const(match (ty.value(), value) {
                (Ty::Int(i), Value::Int(v)) => Const::Int(*v, *i),
                (Ty::Float(f), Value::Float(v)) => float_const(*v, *f, false),
                (_, Value::Bool(b)) => Const::Bool(*b),
                _ => return None,
            })),
            _ => None,
        }
    }

    /// The variant `index` of the expression's type, with its payload.
    fn variant(&mut self, e: ExprId, index: u32, payload: Option<Operand>) -> R<Operand> {
        let ty = self.ty(e);
        let Ty::Enum(_) = ty.value() else { return fail("a variant of a type that is no enum") };
        let mty = mty(self.db, &ty);
        match mty {
            MTy::Enum { variants, .. } => Ok(Operand::Const(Const::Tag(index, variants))),
            _ => Ok(self.value(mty.clone(), Rvalue::Variant(mty, index, payload))),
        }
    }

    fn field(&mut self, e: ExprId, base: ExprId, name: &Arc<str>) -> R<Operand> {
        // `Type.Variant`, `module.CONST`, or a record field: as the checker resolved it.
        match self.check.resolution(e) {
            Resolution::Variant { index, .. } => self.variant(e, index, None),
            Resolution::Const(item) => {
                self.constant(item).ok_or_else(|| LowerError(format!("the constant {name} is not folded")))
            }
            Resolution::Field(index) => {
                let base_place = self.place(base)?;
                Ok(Operand::Copy(base_place.project(Proj::Field(index))))
            }
            _ => fail(format!("the checker recorded no meaning for the field {name}")),
        }
    }

    fn binary(&mut self, e: ExprId, op: BinaryOp, lhs: ExprId, rhs: ExprId) -> R<Operand> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return self.logical(op, lhs, rhs);
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        let operand_ty = self.mty_of(lhs);
        if op.is_arithmetic() {
            return self.arith(op, operand_ty, a, b, Some(e));
        }
        let raw = match op {
            BinaryOp::BitAnd => BinOp::And,
            BinaryOp::BitOr => BinOp::Or,
            BinaryOp::BitXor => BinOp::Xor,
            BinaryOp::Eq => BinOp::Eq,
            BinaryOp::Ne => BinOp::Ne,
            BinaryOp::Lt => BinOp::Lt,
            BinaryOp::Le => BinOp::Le,
            BinaryOp::Gt => BinOp::Gt,
            BinaryOp::Ge => BinOp::Ge,
            _ => unreachable!("arithmetic and logical operators are handled above"),
        };
        let ty = self.mty_of(e);
        Ok(self.value(ty, Rvalue::Binary(raw, a, b)))
    }

    /// Checked arithmetic: the guard, then the raw operation.
    fn arith(&mut self, op: BinaryOp, ty: MTy, a: Operand, b: Operand, at: Option<ExprId>) -> R<Operand> {
        let raw = match op {
            BinaryOp::Add => BinOp::Add,
            BinaryOp::Sub => BinOp::Sub,
            BinaryOp::Mul => BinOp::Mul,
            BinaryOp::Div => BinOp::Div,
            BinaryOp::Rem => BinOp::Rem,
            BinaryOp::BitAnd => BinOp::And,
            BinaryOp::BitOr => BinOp::Or,
            BinaryOp::BitXor => BinOp::Xor,
            other => return fail(format!("{} as an arithmetic operator", other.text())),
        };
        if let MTy::Int(i) = ty {
            match raw {
                BinOp::Add | BinOp::Sub | BinOp::Mul => {
                    // `i + 1` for a loop binder below a bound cannot pass the bound, so it
                    // cannot overflow a usize.
                    let proved = raw == BinOp::Add
                        && i == IntTy::Usize
                        && (self.bounded(&a) && is_one(&b) || self.bounded(&b) && is_one(&a));
                    self.guard(GuardKind::Overflow, Check::NoOverflow(raw, i, a.clone(), b.clone()), at, proved);
                }
                BinOp::Div | BinOp::Rem => {
                    // A constant divisor other than 0 (and -1 for a signed type) always divides.
                    let proved = matches!(&b, Operand::Const(Const::Int(v, _)) if *v != 0 && !(i.signed() && *v == -1));
                    self.guard(GuardKind::Division, Check::Division(i, a.clone(), b.clone()), at, proved);
                }
                _ => {}
            }
        }
        Ok(self.value(ty, Rvalue::Binary(raw, a, b)))
    }

    /// True when `operand` is a loop binder known to stay below some bound.
    fn bounded(&self, operand: &Operand) -> bool {
        match operand {
            Operand::Copy(Place { local, proj }) if proj.is_empty() => self.facts.iter().any(|(l, _)| l == local),
            _ => false,
        }
    }

    /// `a && b`, `a || b`: the right side runs only when it decides.
    fn logical(&mut self, op: BinaryOp, lhs: ExprId, rhs: ExprId) -> R<Operand> {
        let result = self.temp(MTy::Bool);
        let a = self.expr(lhs)?;
        self.assign(Place::local(result), Rvalue::Use(a.clone()));
        let right = self.new_block();
        let join = self.new_block();
        match op {
            BinaryOp::And => self.terminate(Terminator::Branch(a, right, join)),
            _ => self.terminate(Terminator::Branch(a, join, right)),
        }
        self.switch_to(right);
        let b = self.expr(rhs)?;
        self.assign(Place::local(result), Rvalue::Use(b));
        self.terminate(Terminator::Goto(join));
        self.switch_to(join);
        Ok(copy(result))
    }

    fn try_expr(&mut self, e: ExprId, operand: ExprId) -> R<Operand> {
        let ty = self.mty_of(operand);
        let value = self.expr(operand)?;
        let held = self.temp(ty.clone());
        self.assign(Place::local(held), Rvalue::Use(value));
        let Ty::Enum(adt) = self.ty(operand).value().clone() else { return fail("try on a non-sum") };
        let variants = variants_of(self.db, &adt);
        // By position (language §11.4): the first variant is success, the second failure.
        let (success, failure) = (0usize, 1usize);
        let tag = self.value(MTy::Int(IntTy::U32), Rvalue::Tag(Place::local(held)));
        let ok = self.new_block();
        let bad = self.new_block();
        self.terminate(Terminator::Switch(tag, vec![(success as u64, ok)], bad));
        // Failure: return the same failure in the function's own sum.
        self.switch_to(bad);
        let Ty::Enum(ret_adt) = self.ret_ty.value().clone() else {
            return fail("try in a function that returns no sum");
        };
        if variants_of(self.db, &ret_adt).len() < 2 {
            return fail("try in a function whose sum has no failure variant");
        }
        // The function's own failure variant: its second, by the same rule.
        let ret_index = failure as u32;
        let payload = variants[failure]
            .1
            .as_ref()
            .map(|_| Operand::Copy(Place::local(held).project(Proj::Payload(failure as u32))));
        let ret = self.ret.clone();
        let out = self.value(ret.clone(), Rvalue::Variant(ret, ret_index, payload));
        self.terminate(Terminator::Return(Some(out)));
        self.switch_to(ok);
        let result_ty = self.mty_of(e);
        let result = self.temp(result_ty);
        self.assign(
            Place::local(result),
            Rvalue::Use(Operand::Copy(Place::local(held).project(Proj::Payload(success as u32)))),
        );
        Ok(copy(result))
    }

    // ----- calls -----------------------------------------------------------------------------

    fn call(&mut self, e: ExprId, callee: ExprId, args: &Arc<[ExprId]>) -> R<Operand> {
        let target = self.check.call_target(e).cloned();
        let callee_inner = self.body.unparen(callee);
        // Method syntax: `x.f(a)` is `f(x, a)`.
        let (name, receiver) = match self.body.expr(callee_inner) {
            Expr::Name(name) => (name.clone(), None),
            Expr::Field { base, name } if self.is_value_path(*base) => (name.clone(), Some(*base)),
            Expr::Field { name, .. } => (name.clone(), None),
            _ => return fail("a callee that is not a name"),
        };
        let mut given: Vec<ExprId> = receiver.into_iter().collect();
        given.extend(args.iter().copied());
        match target {
            Some(CallTarget::Function(item)) => self.call_function(e, item, &given),
            Some(CallTarget::Builtin(builtin)) => self.builtin(e, builtin, &given),
            Some(CallTarget::Constructor) => match self.ty(e).value() {
                Ty::Record(_) => {
                    let mut fields = Vec::new();
                    for &arg in &given {
                        fields.push(self.expr(arg)?);
                    }
                    let ty = self.mty_of(e);
                    Ok(self.value(ty.clone(), Rvalue::Record(ty, fields)))
                }
                _ => {
                    let Resolution::Variant { index, .. } = self.check.resolution(e) else {
                        return fail(format!("the checker recorded no variant for the construction {name}"));
                    };
                    let payload = match given.first() {
                        Some(&arg) => Some(self.expr(arg)?),
                        None => None,
                    };
                    self.variant(e, index, payload)
                }
            },
            None => fail(format!("the checker recorded no target for the call of {name}")),
        }
    }

    fn call_function(&mut self, e: ExprId, item: Item, given: &[ExprId]) -> R<Operand> {
        let signature = fn_signature(self.db, item);
        let params = signature.params.clone();
        let extents = signature.extent_params.clone();
        let omitted = !extents.is_empty() && given.len() == params.len() - extents.len();
        // Which argument goes to which parameter.
        let mut filled: Vec<Option<ExprId>> = Vec::with_capacity(params.len());
        let mut values = given.iter();
        for i in 0..params.len() {
            if omitted && extents.contains(&i) {
                filled.push(None);
            } else {
                filled.push(values.next().copied());
            }
        }
        let mut lowered: Vec<Option<Operand>> = vec![None; params.len()];
        // Parts: their (lo, hi), for the extents they decide.
        let mut parts: Vec<Option<(Operand, Operand)>> = vec![None; params.len()];
        for (i, param) in params.iter().enumerate() {
            let Some(arg) = filled[i] else { continue };
            let ty = mty(self.db, &param.ty);
            let value = match &param.ty {
                Ty::View(_) => {
                    let (view, part) = self.view_argument(arg, &ty)?;
                    parts[i] = part;
                    view
                }
                Ty::Borrow(..) => {
                    let place = self.place(arg)?;
                    self.value(ty, Rvalue::Ref(place))
                }
                _ => self.expr(arg)?,
            };
            lowered[i] = Some(value);
        }
        // Left-out extents: `len` of the first view bound to each, or `hi - lo` of a part.
        for &extent in extents.iter() {
            if lowered[extent].is_some() {
                continue;
            }
            let name = &params[extent].name;
            let first = params
                .iter()
                .position(|p| matches!(&p.ty, Ty::View(v) if v.extent == Extent::Name(name.clone())))
                .ok_or_else(|| LowerError(format!("no view is bound to the extent {name}")))?;
            let value = match parts[first].clone() {
                Some((lo, hi)) => {
                    self.guard(
                        GuardKind::Overflow,
                        Check::NoOverflow(BinOp::Sub, IntTy::Usize, hi.clone(), lo.clone()),
                        Some(e),
                        true,
                    );
                    self.value(MTy::usize(), Rvalue::Binary(BinOp::Sub, hi, lo))
                }
                None => {
                    let view = lowered[first].clone().ok_or_else(|| LowerError("an unfilled view".into()))?;
                    let place = self.operand_place(view, &mty(self.db, &params[first].ty));
                    self.value(MTy::usize(), Rvalue::Len(place))
                }
            };
            lowered[extent] = Some(value);
        }
        // Each part must be as long as its parameter's extent (a part that decided a left-out
        // extent is, by definition).
        for (i, param) in params.iter().enumerate() {
            let (Some((lo, hi)), Ty::View(view)) = (parts[i].clone(), &param.ty) else { continue };
            let expected = match &view.extent {
                Extent::Literal(n) => Some(lit_usize(*n)),
                Extent::Name(name) => {
                    let extent = params.iter().position(|p| p.name == *name);
                    let decided = omitted
                        && extent.is_some_and(|x| extents.contains(&x))
                        && params
                            .iter()
                            .position(|p| matches!(&p.ty, Ty::View(v) if v.extent == Extent::Name(name.clone())))
                            == Some(i);
                    if decided { None } else { extent.and_then(|x| lowered[x].clone()) }
                }
                _ => None,
            };
            if let Some(expected) = expected {
                let at = filled[i].map(|a| self.body.unparen(a));
                self.guard(GuardKind::Bounds, Check::PartLength(lo, hi, expected), at, false);
            }
        }
        let args: Vec<Operand> = lowered.into_iter().map(|v| v.unwrap_or(lit_usize(0))).collect();
        let ret = mty(self.db, &signature.ret);
        let callee = symbol(self.db, item);
        if ret == MTy::Void {
            self.emit(Inst::Call { dst: None, callee, args });
            return Ok(Operand::Const(Const::Bool(false)));
        }
        let t = self.temp(ret);
        self.emit(Inst::Call { dst: Some(Place::local(t)), callee, args });
        Ok(copy(t))
    }

    /// An operand as a place (a temporary when it is a constant).
    fn operand_place(&mut self, value: Operand, ty: &MTy) -> Place {
        match value {
            Operand::Copy(place) => place,
            constant => {
                let t = self.temp(ty.clone());
                self.assign(Place::local(t), Rvalue::Use(constant));
                Place::local(t)
            }
        }
    }

    /// A view argument: a view or array by name, a part (with its guard), or a string.
    fn view_argument(&mut self, arg: ExprId, ty: &MTy) -> R<(Operand, Option<(Operand, Operand)>)> {
        let inner = self.body.unparen(arg);
        match self.body.expr(inner).clone() {
            Expr::Part { base, lo, hi } => {
                let (base_view, _) = self.view_argument(base, ty)?;
                let base_place = self.operand_place(base_view, ty);
                let lo = self.expr(lo)?;
                let hi = self.expr(hi)?;
                let len = self.len_of(&base_place)?;
                self.guard(GuardKind::Bounds, Check::PartInBounds(lo.clone(), hi.clone(), len), Some(inner), false);
                let view = self.value(ty.clone(), Rvalue::View(base_place, Some((lo.clone(), hi.clone()))));
                Ok((view, Some((lo, hi))))
            }
            Expr::Literal(Literal::String(bytes)) => Ok((Operand::Const(Const::Str(bytes)), None)),
            _ => {
                let place = self.place(inner)?;
                match self.place_ty(&place)? {
                    MTy::View(_) => Ok((Operand::Copy(place), None)),
                    _ => Ok((self.value(ty.clone(), Rvalue::View(place, None)), None)),
                }
            }
        }
    }

    fn builtin(&mut self, e: ExprId, builtin: Builtin, args: &[ExprId]) -> R<Operand> {
        use Builtin as B;
        let ty = self.mty_of(e);
        if let Some(target) = builtin.conversion() {
            let from = self.mty_of(args[0]);
            let value = self.expr(args[0])?;
            let to = mty(self.db, &target);
            if let MTy::Int(to_int) = to {
                let elided = match from {
                    MTy::Int(from_int) => widens(from_int, to_int),
                    _ => false,
                };
                self.guard(GuardKind::Conversion, Check::Fits(from, to.clone(), value.clone()), Some(e), elided);
            }
            return Ok(self.value(to.clone(), Rvalue::Cast(to, value)));
        }
        match builtin {
            B::AddWrap | B::SubWrap | B::MulWrap | B::Min | B::Max => {
                let a = self.expr(args[0])?;
                let b = self.expr(args[1])?;
                let op = match builtin {
                    B::AddWrap => BinOp::Add,
                    B::SubWrap => BinOp::Sub,
                    B::MulWrap => BinOp::Mul,
                    B::Min => BinOp::Min,
                    _ => BinOp::Max,
                };
                Ok(self.value(ty, Rvalue::Binary(op, a, b)))
            }
            B::ShlWrap | B::Shr => {
                let a = self.expr(args[0])?;
                let k = self.expr(args[1])?;
                let int = self.int_of(e)?;
                self.guard(GuardKind::Shift, Check::ShiftCount(int, k.clone()), Some(e), false);
                let op = if builtin == B::ShlWrap { BinOp::Shl } else { BinOp::Shr };
                Ok(self.value(ty, Rvalue::Binary(op, a, k)))
            }
            B::Abs | B::Sqrt | B::Floor | B::Ceil | B::Trunc | B::ToBits => {
                let a = self.expr(args[0])?;
                let op = match builtin {
                    B::Abs => UnOp::Abs,
                    B::Sqrt => UnOp::Sqrt,
                    B::Floor => UnOp::Floor,
                    B::Ceil => UnOp::Ceil,
                    B::Trunc => UnOp::Trunc,
                    _ => UnOp::ToBits,
                };
                if let (UnOp::Abs, MTy::Int(i)) = (op, &ty) {
                    self.guard(GuardKind::Overflow, Check::NegNoOverflow(*i, a.clone()), Some(e), false);
                }
                Ok(self.value(ty, Rvalue::Unary(op, a)))
            }
            B::Len => {
                let arg = self.body.unparen(args[0]);
                if let Expr::Literal(Literal::String(bytes)) = self.body.expr(arg) {
                    return Ok(lit_usize(bytes.len() as u64));
                }
                let place = self.place(arg)?;
                self.len_of(&place)
            }
            B::Print | B::Println | B::Eprint | B::Eprintln => {
                let mut printed = Vec::new();
                for &arg in args {
                    let arg_ty = self.mty_of(arg);
                    let char = matches!(self.body.expr(self.body.unparen(arg)), Expr::Literal(Literal::Char(_)));
                    // Bytes: a string, a u8 view, a part of one, or a u8 `stack` array.
                    let (ty, value) = match arg_ty {
                        MTy::View(_) | MTy::Array(..) => {
                            let view_ty = MTy::View(Arc::new(MTy::Int(IntTy::U8)));
                            let (value, _) = self.view_argument(arg, &view_ty)?;
                            (view_ty, value)
                        }
                        other => (other, self.expr(arg)?),
                    };
                    printed.push(PrintArg { ty, char, value });
                }
                let stream = if matches!(builtin, B::Eprint | B::Eprintln) { Stream::Stderr } else { Stream::Stdout };
                let newline = matches!(builtin, B::Println | B::Eprintln);
                self.emit(Inst::Print { stream, newline, args: printed });
                Ok(Operand::Const(Const::Bool(false)))
            }
            B::Assert => {
                let c = self.expr(args[0])?;
                let message = args.get(1).and_then(|m| self.string_literal(*m));
                self.guard(GuardKind::Assert, Check::Assert(c, message), Some(e), false);
                Ok(Operand::Const(Const::Bool(false)))
            }
            B::AssertEq => {
                let operand_ty = self.mty_of(args[0]);
                let a = self.expr(args[0])?;
                let b = self.expr(args[1])?;
                let message = args.get(2).and_then(|m| self.string_literal(*m));
                self.guard(GuardKind::Assert, Check::AssertEq(operand_ty, a, b, message), Some(e), false);
                Ok(Operand::Const(Const::Bool(false)))
            }
            other => fail(format!("the builtin {}", other.name())),
        }
    }

    fn string_literal(&self, e: ExprId) -> Option<Arc<[u8]>> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Literal(Literal::String(bytes)) => Some(bytes.clone()),
            _ => None,
        }
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
