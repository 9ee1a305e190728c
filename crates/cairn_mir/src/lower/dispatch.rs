//! Implementations (language §27) in MIR: the reference's entry under a selecting plan, and the
//! function an implementation's `when` condition becomes.
//!
//! With `plan f use g;` the reference `f` starts by calling `g$when` with its parameters (the
//! condition, lowered from `g`'s body as a function of its own, [`when_function`]); where it
//! holds, `f` returns what `g` returns, and elsewhere its own body runs. Without a `when`, `f`
//! returns `g`'s result at once (its body is left as unreachable code). The parameters are handed
//! on as they are: an owner passed by value moves to `g`, which releases it, and `f` returns
//! without releasing anything. The condition cannot trap or read memory (`E-IMPL-WHEN`), so
//! testing it changes nothing a caller can see.

use super::*;

/// The symbol of the function an implementation instance's `when` condition is lowered to.
pub(super) fn when_symbol(db: &dyn Db, instance: Instance<'_>) -> Arc<str> {
    Arc::from(format!("{}$when", instance_symbol(db, instance)))
}

impl Lower<'_> {
    /// The reference's entry: test the selected implementation's condition and run it.
    pub(super) fn dispatch(&mut self, chosen: Instance<'_>, params: &[Local]) {
        let args: Vec<Operand> = params.iter().map(|&l| copy(l)).collect();
        let run = self.new_block();
        if fn_body(self.db, chosen.item(self.db)).when.is_some() {
            let holds = self.temp(MTy::Bool);
            self.emit(Inst::Call {
                dst: Some(Place::local(holds)),
                callee: when_symbol(self.db, chosen),
                args: args.clone(),
            });
            let reference = self.new_block();
            self.terminate(Terminator::Branch(copy(holds), run, reference));
            self.switch_to(run);
            self.run_implementation(chosen, args);
            self.switch_to(reference);
        } else {
            self.terminate(Terminator::Goto(run));
            self.switch_to(run);
            self.run_implementation(chosen, args);
        }
    }

    fn run_implementation(&mut self, chosen: Instance<'_>, args: Vec<Operand>) {
        let callee = instance_symbol(self.db, chosen);
        if self.ret == MTy::Void {
            self.emit(Inst::Call { dst: None, callee, args });
            self.terminate(Terminator::Return(None));
        } else {
            let result = self.temp(self.ret.clone());
            self.emit(Inst::Call { dst: Some(Place::local(result)), callee, args });
            self.terminate(Terminator::Return(Some(copy(result))));
        }
    }
}

/// The function `g$when(params) -> bool` of an implementation instance with a `when` condition.
pub(super) fn when_function<'db>(
    db: &'db dyn Db,
    instance: Instance<'db>,
    body: &'db Arc<Body>,
    check: &'db FnCheck,
    signature: &cairn_hir::Signature,
) -> R<Function> {
    let Some(condition) = body.when else { return fail("an implementation without a `when` condition") };
    let symbol = when_symbol(db, instance);
    let mut lower = Lower::new(db, body, check, MTy::Bool, Ty::Bool, symbol.clone());
    for (i, param) in signature.params.iter().enumerate() {
        let local = lower.new_local(Some(param.name.clone()), mty(db, &param.ty));
        lower.bindings.insert(LocalRef::Param(i as u32), local);
    }
    let holds = lower.expr(condition)?;
    lower.terminate(Terminator::Return(Some(holds)));
    let blocks = lower.finish_blocks();
    Ok(Function {
        symbol: symbol.clone(),
        name: Arc::from(format!("{}$when", instance.display(db))),
        kind: FnKind::Function,
        params: signature.params.len() as u32,
        ret: MTy::Bool,
        locals: lower.locals,
        blocks,
        extents: Vec::new(),
        device: false,
    })
}

impl Lower<'_> {
    /// The implementation a call of `instance` with `args` calls directly: the one a plan selects
    /// for it, when it has no condition or its condition folds to true over the constant
    /// arguments (language §27).
    pub(super) fn direct_implementation(&self, instance: Instance<'_>, args: &[Operand]) -> Option<Arc<str>> {
        let db = self.db;
        if !instance.is_monomorphic(db) {
            return None;
        }
        let chosen = cairn_hir::implementations::selected(db, instance.item(db))?;
        let body = fn_body(db, chosen.item(db));
        let Some(condition) = body.when else { return Some(instance_symbol(db, chosen)) };
        let check = cairn_hir::check::instance_check(db, chosen);
        let leaf = |e: ExprId| match check.resolutions.get(e.0 as usize)? {
            Resolution::Natural(n) => Some(Value::Int(i128::from(*n))),
            Resolution::Const(item) => cairn_hir::implementations::constant(db, *item),
            Resolution::Local(LocalRef::Param(i)) => match args.get(*i as usize)? {
                Operand::Const(Const::Int(v, _)) => Some(Value::Int(*v)),
                Operand::Const(Const::Bool(b)) => Some(Value::Bool(*b)),
                Operand::Const(Const::Float(bits, FloatTy::F64)) => Some(Value::Float(f64::from_bits(*bits))),
                Operand::Const(Const::Float(bits, FloatTy::F32)) => {
                    Some(Value::Float(f64::from(f32::from_bits(*bits as u32))))
                }
                _ => None,
            },
            _ => None,
        };
        let holds = cairn_hir::implementations::fold_condition(&body, condition, &leaf);
        (holds == Some(Value::Bool(true))).then(|| instance_symbol(db, chosen))
    }
}
