//! Lowering calls: declared functions (views passed as pointer and length, borrows as pointers,
//! the callee's omitted extents filled in), record and variant construction, and the builtins
//! (conversions with their guard, wrapping arithmetic, shifts, float helpers, `len`, printing,
//! assertions). Mirrors `cairn_hir::check::call`.

use super::*;

impl Lower<'_> {
    pub(super) fn call(&mut self, e: ExprId, callee: ExprId, args: &Arc<[ExprId]>) -> R<Operand> {
        let target = self.check.call_target(e).cloned();
        let callee_inner = self.body.unparen(callee);
        // Method syntax: `x.f(a)` is `f(x, a)`.
        let (name, receiver) = match self.body.expr(callee_inner) {
            Expr::Name(name) => (name.clone(), None),
            Expr::Field { base, name } if self.is_value_path(*base) => (name.clone(), Some(*base)),
            Expr::Field { name, .. } => (name.clone(), None),
            // `f[u64](…)`: explicit generic arguments (the checker recorded the instance).
            Expr::Index { base, .. } => match self.body.expr(self.body.unparen(*base)) {
                Expr::Name(name) | Expr::Field { name, .. } => (name.clone(), None),
                _ => return fail("a callee that is not a name"),
            },
            _ => return fail("a callee that is not a name"),
        };
        let mut given: Vec<ExprId> = receiver.into_iter().collect();
        given.extend(args.iter().copied());
        match target {
            Some(CallTarget::Function(item, args)) => {
                let instance = Instance::new(self.db, item, args);
                self.call_function(e, instance, &given)
            }
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
            Some(CallTarget::Indirect) => self.call_indirect(e, callee_inner, &given),
            Some(CallTarget::Dynamic { index, member }) => self.call_dynamic(member, index, &given),
            None => fail(format!("the checker recorded no target for the call of {name}")),
        }
    }

    pub(super) fn call_function(&mut self, e: ExprId, instance: Instance<'_>, given: &[ExprId]) -> R<Operand> {
        let signature = cairn_hir::instance_signature(self.db, instance);
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
                Ty::Borrow(_, inner) if matches!(&**inner, Ty::Dyn(..)) => self.dyn_argument(arg, &ty)?,
                Ty::Borrow(_, inner) if matches!(&**inner, Ty::Fn(_)) => {
                    let Ty::Fn(fun) = &**inner else { unreachable!("matched above") };
                    self.callable_argument(arg, fun, &ty)?
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
            let first = cairn_hir::deciding_view(&params, name)
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
                        && cairn_hir::deciding_view(&params, name) == Some(i);
                    if decided { None } else { extent.and_then(|x| lowered[x].clone()) }
                }
                _ => None,
            };
            if let Some(expected) = expected {
                let at = filled[i].map(|a| self.body.unparen(a));
                self.guard(GuardKind::Bounds, Check::PartLength(lo, hi, expected), at, false);
            }
        }
        // A view the checker could not compare with its parameter's extent (a record's lent part,
        // an owner): its length must be the extent, checked here as a part `0..len` would be.
        for (i, param) in params.iter().enumerate() {
            let (Some(arg), Ty::View(view), None) = (filled[i], &param.ty, &parts[i]) else { continue };
            if self.check.length_checks.binary_search(&arg).is_err() {
                continue;
            }
            let expected = match &view.extent {
                Extent::Literal(n) => lit_usize(*n),
                Extent::Name(name) => {
                    let Some(value) = params.iter().position(|p| p.name == *name).and_then(|x| lowered[x].clone())
                    else {
                        continue;
                    };
                    value
                }
                _ => continue,
            };
            let view_value = lowered[i].clone().ok_or_else(|| LowerError("an unfilled view".into()))?;
            let place = self.operand_place(view_value, &mty(self.db, &param.ty));
            let len = self.value(MTy::usize(), Rvalue::Len(place));
            self.guard(
                GuardKind::Bounds,
                Check::PartLength(lit_usize(0), len, expected),
                Some(self.body.unparen(arg)),
                false,
            );
        }
        let args: Vec<Operand> = lowered.into_iter().map(|v| v.unwrap_or(lit_usize(0))).collect();
        let ret = mty(self.db, &signature.ret);
        let callee = self.direct_implementation(instance, &args).unwrap_or_else(|| instance_symbol(self.db, instance));
        if ret == MTy::Void {
            self.emit(Inst::Call { dst: None, callee, args });
            return Ok(Operand::Const(Const::Bool(false)));
        }
        let t = self.temp(ret);
        self.emit(Inst::Call { dst: Some(Place::local(t)), callee, args });
        Ok(copy(t))
    }

    /// An operand as a place (a temporary when it is a constant).
    pub(super) fn operand_place(&mut self, value: Operand, ty: &MTy) -> Place {
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
    pub(super) fn view_argument(&mut self, arg: ExprId, ty: &MTy) -> R<(Operand, Option<(Operand, Operand)>)> {
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
                if let Some(part) = self.lent_part(inner, &place)? {
                    return Ok((Operand::Copy(part), None));
                }
                match self.place_ty(&place)? {
                    MTy::View(_) => Ok((Operand::Copy(place), None)),
                    _ => Ok((self.value(ty.clone(), Rvalue::View(place, None)), None)),
                }
            }
        }
    }

    pub(super) fn builtin(&mut self, e: ExprId, builtin: Builtin, args: &[ExprId]) -> R<Operand> {
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
                let printed = self.printed(args)?;
                let stream = if matches!(builtin, B::Eprint | B::Eprintln) { Stream::Stderr } else { Stream::Stdout };
                let newline = matches!(builtin, B::Println | B::Eprintln);
                self.emit(Inst::Print { stream, newline, args: printed });
                Ok(Operand::Const(Const::Bool(false)))
            }
            B::Format => self.format(args),
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
            B::Buf => self.buf_new(e, args),
            B::Array => Ok(self.value(ty, Rvalue::Zeroed)),
            B::Dyn => self.dyn_new(e, args),
            B::Take => self.take(args),
            B::Swap => self.swap(args),
            B::Transfer => self.transfer(e, args),
            // Queued work ran at its spawn (emulation): waiting has nothing left to do.
            B::Wait => Ok(Operand::Const(Const::Bool(false))),
            atomic if atomic.atomic_update() => self.atomic(e, builtin, args),
            other => fail(format!("the builtin {}", other.name())),
        }
    }

    /// The pieces of a print or a `format`, each computed in order: a string, a u8 view, a part
    /// of one, a u8 `stack` array or owner, or a record that lends u8s as bytes; a scalar as itself.
    fn printed(&mut self, args: &[ExprId]) -> R<Vec<PrintArg>> {
        let mut printed = Vec::new();
        for &arg in args {
            let arg_ty = self.mty_of(arg);
            let char = matches!(self.body.expr(self.body.unparen(arg)), Expr::Literal(Literal::Char(_)));
            // Bytes: a string, a u8 view, a part of one, a u8 `stack` array or owner, or a record
            // that lends u8s.
            let lends = match self.ty(arg).value() {
                Ty::Record(adt) => cairn_hir::record_lends(self.db, adt.item).is_some(),
                _ => false,
            };
            let (ty, value) = match arg_ty {
                _ if lends => {
                    let view_ty = MTy::View(Arc::new(MTy::Int(IntTy::U8)));
                    let (value, _) = self.view_argument(arg, &view_ty)?;
                    (view_ty, value)
                }
                MTy::View(_) | MTy::Array(..) | MTy::Buf(_) => {
                    let view_ty = MTy::View(Arc::new(MTy::Int(IntTy::U8)));
                    let (value, _) = self.view_argument(arg, &view_ty)?;
                    (view_ty, value)
                }
                other => (other, self.expr(arg)?),
            };
            printed.push(PrintArg { ty, char, value });
        }
        Ok(printed)
    }

    /// `format(out, pieces…)`: the pieces rendered as a print renders them, into the runtime's
    /// scratch (a view valid until the next format), then appended to `out` by the call the
    /// checker recorded, `std.vec.extend_from[u8]`.
    fn format(&mut self, args: &[ExprId]) -> R<Operand> {
        let Some((&out, pieces)) = args.split_first() else { return fail("a format without its target") };
        let append = cairn_hir::Resolver::new(self.db)
            .format_append()
            .ok_or_else(|| LowerError("a format without std.vec.extend_from".into()))?;
        let instance = Instance::new(
            self.db,
            append,
            Arc::from(vec![cairn_hir::instance::InstanceArg::Type(Ty::Int(cairn_hir::types::IntTy::U8))]),
        );
        let signature = cairn_hir::instance_signature(self.db, instance);
        let target_ty = mty(self.db, &signature.params[0].ty);
        // Left to right: the target's place (its indices, their guards and calls) before the
        // pieces, and nothing between the rendering and the append that reads it.
        let place = self.place(out)?;
        let target = self.value(target_ty, Rvalue::Ref(place));
        let printed = self.printed(pieces)?;
        let bytes = MTy::View(Arc::new(MTy::Int(IntTy::U8)));
        let text = self.temp(bytes);
        self.emit(Inst::Format { dst: Place::local(text), args: printed });
        let len = self.value(MTy::usize(), Rvalue::Len(Place::local(text)));
        let callee = instance_symbol(self.db, instance);
        self.emit(Inst::Call { dst: None, callee, args: vec![target, len, copy(text)] });
        Ok(Operand::Const(Const::Bool(false)))
    }

    pub(super) fn string_literal(&self, e: ExprId) -> Option<Arc<[u8]>> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Literal(Literal::String(bytes)) => Some(bytes.clone()),
            _ => None,
        }
    }
}

impl Lower<'_> {
    /// A call through a `fn` value or a borrowed callable: the `callable` guard, then the call.
    fn call_indirect(&mut self, e: ExprId, callee: ExprId, given: &[ExprId]) -> R<Operand> {
        let Expr::Name(name) = self.body.expr(callee).clone() else {
            return fail("an indirect callee that is no name");
        };
        let local = self.local_of(callee).ok_or_else(|| LowerError(format!("{name} has no local")))?;
        let held = self.local_ty(local).clone();
        // A borrowed callable: its code takes its environment first.
        let (function, params, ret, mut args) = match &held {
            MTy::Record { fields, .. } if closure::is_callable(&held) => {
                let MTy::Fn { params, ret } = &fields[0] else { return fail("a callable without code") };
                let code = Operand::Copy(Place::local(local).project(Proj::Field(0)));
                let env = Operand::Copy(Place::local(local).project(Proj::Field(1)));
                (code, Arc::from(params[1..].to_vec()), ret.clone(), vec![env])
            }
            MTy::Fn { params, ret } => (self.name(callee, &name)?, params.clone(), ret.clone(), Vec::new()),
            // A `fn` value a closure captured: its environment points at the value (`name`
            // reads through the pointer).
            MTy::Ptr(target) if matches!(&**target, MTy::Fn { .. }) => {
                let MTy::Fn { params, ret } = &**target else { unreachable!("matched above") };
                (self.name(callee, &name)?, params.clone(), ret.clone(), Vec::new())
            }
            other => return fail(format!("an indirect call of a {other}")),
        };
        for (param, &arg) in params.iter().zip(given) {
            let value = match param {
                MTy::Ptr(_) => {
                    let place = self.place(arg)?;
                    self.value(param.clone(), Rvalue::Ref(place))
                }
                _ => self.expr(arg)?,
            };
            args.push(value);
        }
        self.guard(GuardKind::Callable, Check::Callable(function.clone()), Some(e), false);
        if *ret == MTy::Void {
            self.emit(Inst::CallIndirect { dst: None, callee: function, args });
            return Ok(Operand::Const(Const::Bool(false)));
        }
        let t = self.temp((*ret).clone());
        self.emit(Inst::CallIndirect { dst: Some(Place::local(t)), callee: function, args });
        Ok(copy(t))
    }
}

impl Lower<'_> {
    /// The symbol of an impl's method in a `dyn` table: the method's, or for a generic impl its
    /// instance at the impl's arguments `args`.
    pub(super) fn method_symbol(&self, method: Item, args: &Arc<[cairn_hir::instance::InstanceArg]>) -> Arc<str> {
        match args.is_empty() {
            true => symbol(self.db, method),
            false => instance_symbol(self.db, cairn_hir::instance::Instance::new(self.db, method, args.clone())),
        }
    }

    /// The entry of a `dyn` table for `method` of an impl at `args`: the method itself (its
    /// receiver, a borrow, is the object's address), or for a receiver taken by value the adapter
    /// that copies the object from its address and calls the method with the copy (the checker
    /// lends only `copy` types for such a trait).
    pub(super) fn table_entry(&mut self, method: Item, args: &Arc<[cairn_hir::instance::InstanceArg]>) -> Operand {
        let target = self.method_symbol(method, args);
        let signature = cairn_hir::instance_signature(self.db, Instance::new(self.db, method, args.clone()));
        // The receiver stands where the trait's member has it (an impl writes the type itself).
        let at = cairn_hir::member_family(self.db, method)
            .and_then(|(tr, name)| cairn_hir::member_named(self.db, tr, &name))
            .and_then(|member| cairn_hir::receiver_index(self.db, member))
            .unwrap_or(0);
        let Some(receiver) = signature.params.get(at).filter(|p| !matches!(p.ty, Ty::Borrow(..))) else {
            return Operand::Const(Const::Fn(target));
        };
        let adapter: Arc<str> = Arc::from(format!("{target}$dyn"));
        if !self.extra.iter().any(|f| f.symbol == adapter) {
            let value = mty(self.db, &receiver.ty);
            let mut locals: Vec<LocalDecl> = signature
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| LocalDecl {
                    name: Some(p.name.clone()),
                    ty: if i == at { MTy::Ptr(Arc::new(value.clone())) } else { mty(self.db, &p.ty) },
                })
                .collect();
            let copied = Local(locals.len() as u32);
            locals.push(LocalDecl { name: None, ty: value });
            let ret = mty(self.db, &signature.ret);
            let result = (ret != MTy::Void).then(|| {
                locals.push(LocalDecl { name: None, ty: ret.clone() });
                Local(locals.len() as u32 - 1)
            });
            let load = Inst::Assign(
                Place::local(copied),
                Rvalue::Use(Operand::Copy(Place::local(Local(at as u32)).project(Proj::Deref))),
            );
            let call_args = (0..signature.params.len())
                .map(|i| if i == at { copy(copied) } else { copy(Local(i as u32)) })
                .collect();
            let insts = vec![load, Inst::Call { dst: result.map(Place::local), callee: target, args: call_args }];
            self.extra.push(Function {
                name: adapter.trim_start_matches("cairn.").into(),
                symbol: adapter.clone(),
                kind: FnKind::Function,
                params: signature.params.len() as u32,
                ret,
                locals,
                blocks: vec![Block {
                    anchors: vec![None; insts.len()],
                    insts,
                    term: Terminator::Return(result.map(copy)),
                    term_anchor: None,
                }],
                extents: Vec::new(),
                device: false,
            });
        }
        Operand::Const(Const::Fn(adapter))
    }

    /// The `dyn` reference lent for argument `arg`: the object's address and the table of its
    /// impl's methods (which take the receiver's address first), or a `dyn` reference passed on.
    fn dyn_argument(&mut self, arg: ExprId, ty: &MTy) -> R<Operand> {
        let arg = self.body.unparen(arg);
        let place = self.place(arg)?;
        if let MTy::DynBox(_) = self.place_ty(&place)? {
            return self.dyn_owner_lent(arg, &place, ty);
        }
        let Some((imp, args)) = self.check.dyn_lend(arg) else { return Ok(Operand::Copy(place)) };
        let args = args.clone();
        let object = self.value(MTy::Ptr(Arc::new(MTy::Int(IntTy::U8))), Rvalue::Ref(place));
        let mut fields = vec![object];
        for method in cairn_hir::table_methods(self.db, imp) {
            fields.push(self.table_entry(method, &args));
        }
        Ok(self.value(ty.clone(), Rvalue::Record(ty.clone(), fields)))
    }

    /// A call of `member`, at `index` of the table of the `dyn` reference that is its receiver
    /// argument.
    fn call_dynamic(&mut self, member: Item, index: u32, given: &[ExprId]) -> R<Operand> {
        let at = cairn_hir::receiver_index(self.db, member).unwrap_or(0);
        let receiver = *given.get(at).ok_or_else(|| LowerError("a dyn call without its receiver".into()))?;
        // Left to right: the arguments before the receiver are computed before it is read (and,
        // for a `Dyn`, guarded).
        let mut args = Vec::with_capacity(given.len());
        for &arg in &given[..at] {
            args.push(self.expr(arg)?);
        }
        let reference = self.place(receiver)?;
        let mut held = self.place_ty(&reference)?;
        if let MTy::DynBox(inner) = held {
            // A Dyn called through must hold a value.
            self.dyn_held(receiver, &reference);
            held = (*inner).clone();
        }
        let MTy::Record { fields, .. } = &held else { return fail("a dyn call through something else") };
        let Some(MTy::Fn { ret, .. }) = fields.get(1 + index as usize) else {
            return fail("a dyn table without the member");
        };
        let ret = (**ret).clone();
        let code = Operand::Copy(reference.project(Proj::Field(1 + index)));
        args.push(Operand::Copy(reference.project(Proj::Field(0))));
        for &arg in &given[at + 1..] {
            args.push(self.expr(arg)?);
        }
        if ret == MTy::Void {
            self.emit(Inst::CallIndirect { dst: None, callee: code, args });
            return Ok(Operand::Const(Const::Bool(false)));
        }
        let t = self.temp(ret);
        self.emit(Inst::CallIndirect { dst: Some(Place::local(t)), callee: code, args });
        Ok(copy(t))
    }
}
