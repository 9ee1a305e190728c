//! Lowering expressions and places: literals, names (as the check resolved them: a local, a
//! constant, a variant), fields, operators with their guards, `try`; and places (a local, a
//! field path, an element with its bounds guard). Mirrors `cairn_hir::check::expr`.

use super::*;

impl Lower<'_> {
    /// The place an expression names (a local, a field path, an element), with the guards its
    /// evaluation needs. A value that is not a place is stored in a temporary.
    pub(super) fn place(&mut self, e: ExprId) -> R<Place> {
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
                Resolution::Field { index, .. } => {
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
    pub(super) fn is_value_path(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(_) => self.local_of(e).is_some(),
            Expr::Field { base, .. } | Expr::Index { base, .. } => self.is_value_path(*base),
            _ => true,
        }
    }

    pub(super) fn spill(&mut self, e: ExprId) -> R<Place> {
        let ty = self.mty_of(e);
        let value = self.expr(e)?;
        let owns = ty.needs_drop();
        let t = self.temp(ty);
        self.assign(Place::local(t), Rvalue::Use(value));
        if owns {
            self.temporaries.push(t);
        }
        Ok(Place::local(t))
    }

    /// The length of a view or array place, as an operand.
    pub(super) fn len_of(&mut self, place: &Place) -> R<Operand> {
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

    /// Evaluates an expression whose value is not used (an expression statement).
    pub(super) fn expr_discard(&mut self, e: ExprId) -> R<()> {
        let value = self.expr(e)?;
        // A result nobody keeps: an owner is released at once.
        let ty = self.mty_of(e);
        if ty.needs_drop() {
            let place = self.operand_place(value, &ty);
            self.emit(Inst::Drop(place));
        }
        Ok(())
    }

    /// The value of `e` for a use that consumes it: a named owner (a local, a field, an
    /// element) moves out of its place (`owner.rs`).
    pub(super) fn expr(&mut self, e: ExprId) -> R<Operand> {
        let value = self.expr_value(e)?;
        if let Operand::Copy(place) = &value
            && matches!(self.body.expr(self.body.unparen(e)), Expr::Name(_) | Expr::Field { .. } | Expr::Index { .. })
        {
            return self.take_from(place.clone());
        }
        Ok(value)
    }

    fn expr_value(&mut self, e: ExprId) -> R<Operand> {
        let body = self.body.clone();
        match body.expr(e) {
            Expr::Missing | Expr::Unsupported(_) | Expr::TypeArg(_) | Expr::Closure(_) => {
                fail("an expression the lowering does not know (a closure is lowered only where it is lent)")
            }
            Expr::Spawn { work, .. } => self.spawn(*work),
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
            // `twice[u64]` as a value: the instance's code.
            Expr::Index { .. } if matches!(self.check.resolution(e), Resolution::Function(_)) => {
                let Resolution::Function(item) = self.check.resolution(e) else { unreachable!("matched above") };
                let args = self.check.value_instance(e).cloned().unwrap_or_else(|| Arc::from(Vec::new()));
                let instance = cairn_hir::instance::Instance::new(self.db, item, args);
                Ok(Operand::Const(Const::Fn(crate::lower::instance_symbol(self.db, instance))))
            }
            Expr::Index { .. } => {
                let place = self.place(e)?;
                Ok(Operand::Copy(place))
            }
            Expr::Part { .. } => fail("a part outside a call"),
            Expr::Call { callee, args } => self.call(e, *callee, args),
            Expr::Try(operand) => self.try_expr(e, *operand),
        }
    }

    pub(super) fn literal(&mut self, e: ExprId, literal: &Literal, negative: bool) -> R<Operand> {
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

    pub(super) fn name(&mut self, e: ExprId, name: &Arc<str>) -> R<Operand> {
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
            Resolution::Natural(value) => Ok(lit_usize(value)),
            // A family's copy names its template's instance (`sc_3` is `scaled[3]`).
            Resolution::Function(item) => match self.check.value_instance(e) {
                Some(args) => {
                    let instance = cairn_hir::instance::Instance::new(self.db, item, args.clone());
                    Ok(Operand::Const(Const::Fn(crate::lower::instance_symbol(self.db, instance))))
                }
                None => Ok(Operand::Const(Const::Fn(symbol(self.db, item)))),
            },
            _ => fail(format!("the checker recorded no meaning for {name}")),
        }
    }

    /// The folded value of a constant.
    pub(super) fn constant(&self, item: Item) -> Option<Operand> {
        match cairn_hir::constant_value(self.db, item).as_ref()? {
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
    pub(super) fn variant(&mut self, e: ExprId, index: u32, payload: Option<Operand>) -> R<Operand> {
        let ty = self.ty(e);
        let Ty::Enum(_) = ty.value() else { return fail("a variant of a type that is no enum") };
        let mty = mty(self.db, &ty);
        match mty {
            MTy::Enum { variants, .. } => Ok(Operand::Const(Const::Tag(index, variants))),
            _ => Ok(self.value(mty.clone(), Rvalue::Variant(mty, index, payload))),
        }
    }

    pub(super) fn field(&mut self, e: ExprId, base: ExprId, name: &Arc<str>) -> R<Operand> {
        // `Type.Variant`, `module.CONST`, or a record field: as the checker resolved it.
        match self.check.resolution(e) {
            Resolution::Variant { index, .. } => self.variant(e, index, None),
            Resolution::Const(item) => {
                self.constant(item).ok_or_else(|| LowerError(format!("the constant {name} is not folded")))
            }
            Resolution::Field { index, .. } => {
                let base_place = self.place(base)?;
                Ok(Operand::Copy(base_place.project(Proj::Field(index))))
            }
            _ => fail(format!("the checker recorded no meaning for the field {name}")),
        }
    }

    pub(super) fn binary(&mut self, e: ExprId, op: BinaryOp, lhs: ExprId, rhs: ExprId) -> R<Operand> {
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
    pub(super) fn arith(&mut self, op: BinaryOp, ty: MTy, a: Operand, b: Operand, at: Option<ExprId>) -> R<Operand> {
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

    /// `a && b`, `a || b`: the right side runs only when it decides.
    pub(super) fn logical(&mut self, op: BinaryOp, lhs: ExprId, rhs: ExprId) -> R<Operand> {
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

    pub(super) fn try_expr(&mut self, e: ExprId, operand: ExprId) -> R<Operand> {
        let ty = self.mty_of(operand);
        let value = self.expr(operand)?;
        let held = self.temp(ty.clone());
        self.assign(Place::local(held), Rvalue::Use(value));
        self.own(held);
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
        let payload = match variants[failure].1 {
            Some(_) => Some(self.take_from(Place::local(held).project(Proj::Payload(failure as u32)))?),
            None => None,
        };
        let ret = self.ret.clone();
        let out = self.value(ret.clone(), Rvalue::Variant(ret, ret_index, payload));
        self.return_with(Some(out))?;
        self.switch_to(ok);
        let result_ty = self.mty_of(e);
        let result = self.temp(result_ty);
        let value = self.take_from(Place::local(held).project(Proj::Payload(success as u32)))?;
        self.assign(Place::local(result), Rvalue::Use(value));
        Ok(copy(result))
    }
}
