//! Borrowed callables and closures (language §21).
//!
//! A `ro<fn(A) -> R>` travels as a record of two words: code that takes an environment pointer
//! first, then `A`, and the environment. What is lent decides both:
//! - a closure: its body lowered as a function of its own (`<symbol>$closure<expr>`), whose
//!   environment is a record on the lender's stack holding, per captured binding, a pointer to
//!   it (a view or a borrow is copied: it is already a handle);
//! - a declared function: an adapter `<symbol>$callable` that ignores the environment;
//! - a `fn` value: one adapter per signature whose environment points at the value, which it
//!   calls after its `callable` guard;
//! - a borrowed callable received as a parameter: passed on as it is.
//! No closure allocates; nothing outlives the call it is lent to (the checker's rules).

use super::*;

fn byte_ptr() -> MTy {
    MTy::Ptr(Arc::new(MTy::Int(IntTy::U8)))
}

/// The record a borrowed callable of this function type travels as.
pub(super) fn callable_ty(db: &dyn Db, fun: &cairn_hir::types::FnTy) -> MTy {
    let mut params = vec![byte_ptr()];
    params.extend(fun.params.iter().map(|p| mty(db, p)));
    let code = MTy::Fn { params: Arc::from(params), ret: Arc::new(mty(db, &fun.ret)) };
    MTy::Record {
        name: Arc::from(format!("callable {}", Ty::Fn(Arc::new(fun.clone())))),
        fields: Arc::from(vec![code, byte_ptr()]),
    }
}

/// True for the MIR type of a borrowed callable.
pub(super) fn is_callable(ty: &MTy) -> bool {
    matches!(ty, MTy::Record { name, .. } if name.starts_with("callable "))
}

impl Lower<'_> {
    /// The value lent to a `ro<fn(...)>` parameter of type `ty`.
    pub(super) fn callable_argument(&mut self, arg: ExprId, fun: &cairn_hir::types::FnTy, ty: &MTy) -> R<Operand> {
        let arg = self.body.unparen(arg);
        match self.body.expr(arg).clone() {
            Expr::Closure(closure) => {
                let (code, env) = self.closure(arg, &closure.params, &closure.body, fun)?;
                Ok(self.value(ty.clone(), Rvalue::Record(ty.clone(), vec![code, env])))
            }
            Expr::Name(_)
                if matches!(self.check.resolution(arg), Resolution::Function(_))
                    && self.check.value_instance(arg).is_none() =>
            {
                let Resolution::Function(item) = self.check.resolution(arg) else { unreachable!("matched above") };
                let code = self.function_adapter(item, fun);
                let dummy = self.temp(MTy::Int(IntTy::U8));
                self.assign(Place::local(dummy), Rvalue::Zeroed);
                let env = self.value(byte_ptr(), Rvalue::Ref(Place::local(dummy)));
                Ok(self.value(ty.clone(), Rvalue::Record(ty.clone(), vec![code, env])))
            }
            // An instance taken as a value (`twice[u64]`, or a family's copy `sc_3`): held in a
            // temporary, called through it.
            Expr::Index { .. } | Expr::Name(_) if matches!(self.check.resolution(arg), Resolution::Function(_)) => {
                let value_ty = self.mty_of(arg);
                let value = self.expr(arg)?;
                let place = self.operand_place(value, &value_ty);
                let code = self.value_adapter(fun);
                let env = self.value(byte_ptr(), Rvalue::Ref(place));
                Ok(self.value(ty.clone(), Rvalue::Record(ty.clone(), vec![code, env])))
            }
            _ => {
                let place = self.place(arg)?;
                let held = self.place_ty(&place)?;
                if is_callable(&held) {
                    return Ok(Operand::Copy(place));
                }
                // A `fn` value: the adapter of its signature calls what the environment holds.
                let code = self.value_adapter(fun);
                let env = self.value(byte_ptr(), Rvalue::Ref(place));
                Ok(self.value(ty.clone(), Rvalue::Record(ty.clone(), vec![code, env])))
            }
        }
    }

    /// Lowers closure `e` as a function of its own; returns its code and its environment.
    fn closure(
        &mut self,
        e: ExprId,
        params: &[(BinderId, cairn_hir::body::TypeRef)],
        body: &HirBlock,
        fun: &cairn_hir::types::FnTy,
    ) -> R<(Operand, Operand)> {
        let symbol: Arc<str> = Arc::from(format!("{}$closure{}", self.symbol, e.0));
        // The environment: a pointer to each captured binding (a handle is copied).
        let captures: Vec<LocalRef> = self.check.captures_of(e).to_vec();
        let mut fields: Vec<MTy> = Vec::with_capacity(captures.len());
        let mut values: Vec<Operand> = Vec::with_capacity(captures.len());
        for local_ref in &captures {
            let outer =
                *self.bindings.get(local_ref).ok_or_else(|| LowerError("a captured binding with no local".into()))?;
            let ty = self.local_ty(outer).clone();
            if matches!(ty, MTy::View(_) | MTy::Ptr(_)) || is_callable(&ty) {
                fields.push(ty);
                values.push(copy(outer));
            } else {
                let pointer = MTy::Ptr(Arc::new(ty));
                values.push(self.value(pointer.clone(), Rvalue::Ref(Place::local(outer))));
                fields.push(pointer);
            }
        }
        let env_ty = MTy::Record { name: Arc::from(format!("env {symbol}")), fields: Arc::from(fields.clone()) };
        let env = self.temp(env_ty.clone());
        self.assign(Place::local(env), Rvalue::Record(env_ty.clone(), values));
        let env_ptr = self.value(MTy::Ptr(Arc::new(env_ty.clone())), Rvalue::Ref(Place::local(env)));
        // The closure's own function: the environment, its parameters, then its body.
        let ret = mty(self.db, &fun.ret);
        let mut inner = Lower::new(self.db, self.body, self.check, ret.clone(), fun.ret.clone(), symbol.clone());
        let env_local = inner.new_local(Some(Arc::from("env")), MTy::Ptr(Arc::new(env_ty)));
        for ((binder, _), ty) in params.iter().zip(fun.params.iter()) {
            let name = self.body.binder(*binder).clone();
            let local = inner.new_local(Some(name), mty(self.db, ty));
            inner.bindings.insert(LocalRef::Binder(*binder), local);
        }
        for (k, (local_ref, ty)) in captures.iter().zip(fields).enumerate() {
            let local = inner.new_local(None, ty);
            let field = Place::local(env_local).project(Proj::Deref).project(Proj::Field(k as u32));
            inner.assign(Place::local(local), Rvalue::Use(Operand::Copy(field)));
            inner.bindings.insert(*local_ref, local);
        }
        inner.scoped_block(body)?;
        if inner.open() {
            let term = if ret == MTy::Void { Terminator::Return(None) } else { Terminator::Unreachable };
            inner.terminate(term);
        }
        let blocks = inner.finish_blocks();
        let function = Function {
            symbol: symbol.clone(),
            name: symbol.trim_start_matches("cairn.").into(),
            kind: FnKind::Function,
            params: 1 + params.len() as u32,
            ret,
            locals: inner.locals,
            blocks,
            extents: Vec::new(),
            device: false,
        };
        self.extra.extend(inner.extra);
        self.extra.push(function);
        Ok((Operand::Const(Const::Fn(symbol)), env_ptr))
    }

    /// The adapter that lends declared function `item` as a callable: it ignores the
    /// environment and calls the function.
    fn function_adapter(&mut self, item: Item, fun: &cairn_hir::types::FnTy) -> Operand {
        let target = symbol(self.db, item);
        let adapter: Arc<str> = Arc::from(format!("{target}$callable"));
        let params: Vec<MTy> = fun.params.iter().map(|p| mty(self.db, p)).collect();
        let ret = mty(self.db, &fun.ret);
        let function = adapter_function(adapter.clone(), byte_ptr(), &params, ret, |locals, args| {
            (Vec::new(), Some(Inst::Call { dst: None, callee: target.clone(), args }), locals)
        });
        self.extra.push(function);
        Operand::Const(Const::Fn(adapter))
    }

    /// The adapter of a signature that calls the `fn` value its environment points at.
    fn value_adapter(&mut self, fun: &cairn_hir::types::FnTy) -> Operand {
        let shown = Ty::Fn(Arc::new(fun.clone())).to_string();
        let adapter: Arc<str> =
            Arc::from(format!("cairn.callable${}", shown.replace(|c: char| !c.is_ascii_alphanumeric(), "_")));
        let params: Vec<MTy> = fun.params.iter().map(|p| mty(self.db, p)).collect();
        let ret = mty(self.db, &fun.ret);
        let code_ty = MTy::Fn { params: Arc::from(params.clone()), ret: Arc::new(ret.clone()) };
        let env = MTy::Ptr(Arc::new(code_ty.clone()));
        let function = adapter_function(adapter.clone(), env, &params, ret, |mut locals, args| {
            // The environment (local 0) points at the value.
            let code = Local(locals.len() as u32);
            locals.push(LocalDecl { name: None, ty: code_ty.clone() });
            let load = Inst::Assign(
                Place::local(code),
                Rvalue::Use(Operand::Copy(Place::local(Local(0)).project(Proj::Deref))),
            );
            let guard = Inst::Guard(Guard {
                kind: GuardKind::Callable,
                check: Check::Callable(copy(code)),
                at: None,
                elided: false,
                hoisted: false,
                facts: Vec::new(),
                only_if: None,
            });
            (vec![load, guard], Some(Inst::CallIndirect { dst: None, callee: copy(code), args }), locals)
        });
        self.extra.push(function);
        Operand::Const(Const::Fn(adapter))
    }
}

/// An adapter: locals `env, params…`, the instructions `make` gives, then its call (whose
/// result, if any, is returned).
fn adapter_function(
    symbol: Arc<str>,
    env: MTy,
    params: &[MTy],
    ret: MTy,
    make: impl FnOnce(Vec<LocalDecl>, Vec<Operand>) -> (Vec<Inst>, Option<Inst>, Vec<LocalDecl>),
) -> Function {
    let mut locals = vec![LocalDecl { name: Some(Arc::from("env")), ty: env }];
    for ty in params {
        locals.push(LocalDecl { name: None, ty: ty.clone() });
    }
    let args: Vec<Operand> = (1..=params.len()).map(|i| copy(Local(i as u32))).collect();
    let (mut insts, call, mut locals) = make(locals, args);
    let result = (ret != MTy::Void).then(|| {
        locals.push(LocalDecl { name: None, ty: ret.clone() });
        Local(locals.len() as u32 - 1)
    });
    if let Some(call) = call {
        insts.push(match (call, result) {
            (Inst::Call { callee, args, .. }, Some(r)) => Inst::Call { dst: Some(Place::local(r)), callee, args },
            (Inst::CallIndirect { callee, args, .. }, Some(r)) => {
                Inst::CallIndirect { dst: Some(Place::local(r)), callee, args }
            }
            (other, _) => other,
        });
    }
    let anchors = vec![None; insts.len()];
    Function {
        name: symbol.trim_start_matches("cairn.").into(),
        symbol,
        kind: FnKind::Function,
        params: 1 + params.len() as u32,
        ret,
        locals,
        blocks: vec![Block { insts, anchors, term: Terminator::Return(result.map(copy)), term_anchor: None }],
        extents: Vec::new(),
        device: false,
    }
}
