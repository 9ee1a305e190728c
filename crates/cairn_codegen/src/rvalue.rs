//! Assignments: each `Rvalue` as LLVM instructions (binary and unary arithmetic, conversions,
//! float intrinsics, tags, lengths, views, selects) and its store into the place.
//!
//! Invariant: arithmetic here is raw (integers wrap, division and shifts are LLVM's), because the
//! guard before each operation has already trapped on every input the language forbids. Floats
//! use plain IEEE instructions with no fast-math flags, so nothing is contracted or reassociated.
//! Invariant: an operation right after the overflow guard that computed it reuses the guard's
//! result (`FnGen::overflow`) instead of computing it again; one right after an overflow guard
//! left out as proved (`FnGen::proved`) carries `nuw` (unsigned) or `nsw` (signed), the proof
//! being exactly that it does not wrap.

use cairn_mir::{AtomicOp, BinOp, FloatTy, MTy, Operand, Place, Rvalue, UnOp};
use inkwell::intrinsics::Intrinsic;
use inkwell::types::BasicType;
use inkwell::values::{BasicValue, BasicValueEnum, ValueKind};
use inkwell::{FloatPredicate, IntPredicate};

use crate::function::FnGen;
use crate::module::G;

impl<'ctx> FnGen<'_, 'ctx, '_> {
    /// Stores the value of `value` at `place`.
    pub(crate) fn assign(&mut self, place: &Place, value: &Rvalue) -> G<()> {
        match value {
            Rvalue::Zeroed => {
                // A memset: a store of a large zero aggregate costs LLVM more than linear time.
                let (ptr, ty) = self.place(place)?;
                let size = self.cx.basic(&ty).size_of().expect("a sized type");
                self.cx.builder.build_memset(ptr, 8, self.cx.ctx.i8_type().const_zero(), size)?;
                Ok(())
            }
            Rvalue::Variant(ty, index, payload) => {
                let payload = match payload {
                    Some(p) => Some(self.operand(p)?),
                    None => None,
                };
                let (ptr, _) = self.place(place)?;
                let st = self.cx.sum_type(ty);
                self.cx.builder.build_store(ptr, st.const_zero())?;
                let tag_ptr = self.cx.builder.build_struct_gep(st, ptr, 0, "tag")?;
                self.cx.builder.build_store(tag_ptr, self.cx.ctx.i32_type().const_int(u64::from(*index), false))?;
                if let Some(payload) = payload {
                    let payload_ptr = self.cx.builder.build_struct_gep(st, ptr, 1, "payload")?;
                    self.cx.builder.build_store(payload_ptr, payload)?;
                }
                Ok(())
            }
            Rvalue::Record(ty, fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for f in fields {
                    values.push(self.operand(f)?);
                }
                let (ptr, _) = self.place(place)?;
                let st = self.cx.basic(ty).into_struct_type();
                for (i, v) in values.into_iter().enumerate() {
                    let field = self.cx.builder.build_struct_gep(st, ptr, i as u32, "field")?;
                    self.cx.builder.build_store(field, v)?;
                }
                Ok(())
            }
            other => {
                let value = self.rvalue(other)?;
                let (ptr, _) = self.place(place)?;
                self.cx.builder.build_store(ptr, value)?;
                Ok(())
            }
        }
    }

    /// A call of the float intrinsic `name` (`llvm.sqrt`, …) of `x`'s type.
    pub(crate) fn float_intrinsic(&mut self, name: &str, x: BasicValueEnum<'ctx>) -> G<BasicValueEnum<'ctx>> {
        let intrinsic = Intrinsic::find(name).expect("an LLVM float intrinsic");
        let declaration =
            intrinsic.get_declaration(&self.cx.module, &[x.get_type()]).expect("the intrinsic's declaration");
        let call = self.cx.builder.build_call(declaration, &[x.into()], "f")?;
        match call.try_as_basic_value() {
            ValueKind::Basic(v) => Ok(v),
            _ => unreachable!("a float result"),
        }
    }

    fn rvalue(&mut self, value: &Rvalue) -> G<BasicValueEnum<'ctx>> {
        match value {
            Rvalue::Use(op) => self.operand(op),
            Rvalue::Binary(op, a, b) => self.binary(*op, a, b),
            Rvalue::Unary(op, a) => self.unary(*op, a),
            Rvalue::Cast(to, a) => self.cast(to, a),
            Rvalue::Tag(place) => {
                let (ptr, ty) = self.place(place)?;
                match ty {
                    MTy::Sum { .. } => {
                        let st = self.cx.sum_type(&ty);
                        let tag = self.cx.builder.build_struct_gep(st, ptr, 0, "tag")?;
                        Ok(self.cx.builder.build_load(self.cx.ctx.i32_type(), tag, "tag")?)
                    }
                    _ => Ok(self.cx.builder.build_load(self.cx.ctx.i32_type(), ptr, "tag")?),
                }
            }
            Rvalue::Len(place) => {
                let (ptr, ty) = self.place(place)?;
                match ty {
                    MTy::Array(_, n) => Ok(self.cx.index_type().const_int(n, false).into()),
                    _ => {
                        let view = self.cx.builder.build_load(self.cx.view_type(), ptr, "view")?.into_struct_value();
                        Ok(self.cx.builder.build_extract_value(view, 1, "len")?)
                    }
                }
            }
            Rvalue::View(place, bounds) => {
                let bounds = match bounds {
                    Some((lo, hi)) => Some((self.operand(lo)?.into_int_value(), self.operand(hi)?.into_int_value())),
                    None => None,
                };
                let (ptr, ty) = self.place(place)?;
                let (data, len, elem) = match &ty {
                    MTy::Array(elem, n) => (ptr, self.cx.index_type().const_int(*n, false), (**elem).clone()),
                    MTy::View(elem) | MTy::Buf(elem) => {
                        let view = self.cx.builder.build_load(self.cx.view_type(), ptr, "view")?.into_struct_value();
                        let data = self.cx.builder.build_extract_value(view, 0, "data")?.into_pointer_value();
                        let len = self.cx.builder.build_extract_value(view, 1, "len")?.into_int_value();
                        (data, len, (**elem).clone())
                    }
                    other => unreachable!("a view of {other}"),
                };
                let (data, len) = match bounds {
                    Some((lo, hi)) => {
                        let elem_ty = self.cx.basic(&elem);
                        // SAFETY: the part's guard established lo <= hi <= len before this view.
                        let start = unsafe { self.cx.builder.build_in_bounds_gep(elem_ty, data, &[lo], "part")? };
                        (start, self.cx.builder.build_int_sub(hi, lo, "part_len")?)
                    }
                    None => (data, len),
                };
                let view = self.cx.view_type().get_undef();
                let view = self.cx.builder.build_insert_value(view, data, 0, "view")?;
                let view = self.cx.builder.build_insert_value(view, len, 1, "view")?;
                Ok(view.as_basic_value_enum())
            }
            Rvalue::Ref(place) => Ok(self.place(place)?.0.into()),
            Rvalue::Alloc(elem, count, memory) if *memory != cairn_mir::Memory::Host && self.cx.gpu.is_some() => {
                self.gpu_alloc(elem, count, *memory)
            }
            Rvalue::Alloc(elem, count, _) => self.alloc(elem, count),
            Rvalue::Select(c, a, b) => {
                let c = self.operand(c)?.into_int_value();
                let a = self.operand(a)?;
                let b = self.operand(b)?;
                Ok(self.cx.builder.build_select(c, a, b, "select")?)
            }
            // Atomic element updates (language §34): relaxed (`monotonic`), the old value.
            Rvalue::AtomicRmw(op, place, v) => {
                let (ptr, ty) = self.place(place)?;
                let signed = matches!(ty, MTy::Int(i) if i.signed());
                let v = self.operand(v)?.into_int_value();
                use inkwell::AtomicRMWBinOp as A;
                let op = match op {
                    AtomicOp::AddWrap => A::Add,
                    AtomicOp::Min if signed => A::Min,
                    AtomicOp::Min => A::UMin,
                    AtomicOp::Max if signed => A::Max,
                    AtomicOp::Max => A::UMax,
                    AtomicOp::And => A::And,
                    AtomicOp::Or => A::Or,
                    AtomicOp::Xor => A::Xor,
                };
                Ok(self.cx.builder.build_atomicrmw(op, ptr, v, inkwell::AtomicOrdering::Monotonic)?.into())
            }
            Rvalue::AtomicCas(place, expected, desired) => {
                let (ptr, _) = self.place(place)?;
                let expected = self.operand(expected)?.into_int_value();
                let desired = self.operand(desired)?.into_int_value();
                let monotonic = inkwell::AtomicOrdering::Monotonic;
                let pair = self.cx.builder.build_cmpxchg(ptr, expected, desired, monotonic, monotonic)?;
                Ok(self.cx.builder.build_extract_value(pair, 0, "old")?)
            }
            Rvalue::Zeroed | Rvalue::Record(..) | Rvalue::Variant(..) => unreachable!("stored by `assign` directly"),
        }
    }

    fn binary(&mut self, op: BinOp, a: &Operand, b: &Operand) -> G<BasicValueEnum<'ctx>> {
        if let Some((cached_op, x, y, value)) = &self.overflow
            && *cached_op == op
            && x == a
            && y == b
        {
            let value = *value;
            self.overflow = None;
            return Ok(value.into());
        }
        // The guard before this operation was proved and left out: it cannot wrap.
        let no_wrap = self.proved.take().is_some_and(|(p, x, y)| p == op && x == *a && y == *b);
        let ty = self.operand_ty(a);
        let x = self.operand(a)?;
        let y = self.operand(b)?;
        let bd = &self.cx.builder;
        match ty {
            MTy::Float(_) => {
                let (x, y) = (x.into_float_value(), y.into_float_value());
                let cmp = |p| -> G<BasicValueEnum<'ctx>> { Ok(bd.build_float_compare(p, x, y, "cmp")?.into()) };
                match op {
                    BinOp::Add => Ok(bd.build_float_add(x, y, "fadd")?.into()),
                    BinOp::Sub => Ok(bd.build_float_sub(x, y, "fsub")?.into()),
                    BinOp::Mul => Ok(bd.build_float_mul(x, y, "fmul")?.into()),
                    BinOp::Div => Ok(bd.build_float_div(x, y, "fdiv")?.into()),
                    BinOp::Rem => Ok(bd.build_float_rem(x, y, "frem")?.into()),
                    BinOp::Eq => cmp(FloatPredicate::OEQ),
                    BinOp::Ne => cmp(FloatPredicate::UNE),
                    BinOp::Lt => cmp(FloatPredicate::OLT),
                    BinOp::Le => cmp(FloatPredicate::OLE),
                    BinOp::Gt => cmp(FloatPredicate::OGT),
                    BinOp::Ge => cmp(FloatPredicate::OGE),
                    other => unreachable!("{other:?} on floats"),
                }
            }
            _ => {
                let signed = matches!(ty, MTy::Int(i) if i.signed());
                let (x, y) = (x.into_int_value(), y.into_int_value());
                let cmp = |signed_p, unsigned_p| -> G<BasicValueEnum<'ctx>> {
                    Ok(bd.build_int_compare(if signed { signed_p } else { unsigned_p }, x, y, "cmp")?.into())
                };
                match op {
                    BinOp::Add if no_wrap && signed => Ok(bd.build_int_nsw_add(x, y, "add")?.into()),
                    BinOp::Add if no_wrap => Ok(bd.build_int_nuw_add(x, y, "add")?.into()),
                    BinOp::Add => Ok(bd.build_int_add(x, y, "add")?.into()),
                    BinOp::Sub if no_wrap && signed => Ok(bd.build_int_nsw_sub(x, y, "sub")?.into()),
                    BinOp::Sub if no_wrap => Ok(bd.build_int_nuw_sub(x, y, "sub")?.into()),
                    BinOp::Sub => Ok(bd.build_int_sub(x, y, "sub")?.into()),
                    BinOp::Mul if no_wrap && signed => Ok(bd.build_int_nsw_mul(x, y, "mul")?.into()),
                    BinOp::Mul if no_wrap => Ok(bd.build_int_nuw_mul(x, y, "mul")?.into()),
                    BinOp::Mul => Ok(bd.build_int_mul(x, y, "mul")?.into()),
                    BinOp::Div if signed => Ok(bd.build_int_signed_div(x, y, "div")?.into()),
                    BinOp::Div => Ok(bd.build_int_unsigned_div(x, y, "div")?.into()),
                    BinOp::Rem if signed => Ok(bd.build_int_signed_rem(x, y, "rem")?.into()),
                    BinOp::Rem => Ok(bd.build_int_unsigned_rem(x, y, "rem")?.into()),
                    BinOp::And => Ok(bd.build_and(x, y, "and")?.into()),
                    BinOp::Or => Ok(bd.build_or(x, y, "or")?.into()),
                    BinOp::Xor => Ok(bd.build_xor(x, y, "xor")?.into()),
                    BinOp::Shl | BinOp::Shr => {
                        let count = bd.build_int_cast_sign_flag(y, x.get_type(), false, "count")?;
                        if op == BinOp::Shl {
                            Ok(bd.build_left_shift(x, count, "shl")?.into())
                        } else {
                            Ok(bd.build_right_shift(x, count, signed, "shr")?.into())
                        }
                    }
                    BinOp::Eq => cmp(IntPredicate::EQ, IntPredicate::EQ),
                    BinOp::Ne => cmp(IntPredicate::NE, IntPredicate::NE),
                    BinOp::Lt => cmp(IntPredicate::SLT, IntPredicate::ULT),
                    BinOp::Le => cmp(IntPredicate::SLE, IntPredicate::ULE),
                    BinOp::Gt => cmp(IntPredicate::SGT, IntPredicate::UGT),
                    BinOp::Ge => cmp(IntPredicate::SGE, IntPredicate::UGE),
                    BinOp::Min | BinOp::Max => {
                        let less = bd.build_int_compare(
                            if signed { IntPredicate::SLT } else { IntPredicate::ULT },
                            x,
                            y,
                            "less",
                        )?;
                        let (first, second) = if op == BinOp::Min { (x, y) } else { (y, x) };
                        Ok(bd.build_select(less, first, second, "minmax")?)
                    }
                }
            }
        }
    }

    fn unary(&mut self, op: UnOp, a: &Operand) -> G<BasicValueEnum<'ctx>> {
        let ty = self.operand_ty(a);
        let x = self.operand(a)?;
        match (op, &ty) {
            (UnOp::Neg, MTy::Float(_)) => Ok(self.cx.builder.build_float_neg(x.into_float_value(), "fneg")?.into()),
            (UnOp::Neg, _) => Ok(self.cx.builder.build_int_neg(x.into_int_value(), "neg")?.into()),
            (UnOp::Not, _) | (UnOp::BitNot, _) => Ok(self.cx.builder.build_not(x.into_int_value(), "not")?.into()),
            (UnOp::Abs, MTy::Int(_)) => {
                let x = x.into_int_value();
                let negative =
                    self.cx.builder.build_int_compare(IntPredicate::SLT, x, x.get_type().const_zero(), "neg")?;
                let negated = self.cx.builder.build_int_neg(x, "negated")?;
                Ok(self.cx.builder.build_select(negative, negated, x, "abs")?)
            }
            (UnOp::ToBits, MTy::Float(f)) => {
                let target = if *f == FloatTy::F32 { self.cx.ctx.i32_type() } else { self.cx.ctx.i64_type() };
                Ok(self.cx.builder.build_bit_cast(x, target, "bits")?)
            }
            (op, MTy::Float(_)) => {
                let name = match op {
                    UnOp::Abs => "llvm.fabs",
                    UnOp::Sqrt => "llvm.sqrt",
                    UnOp::Floor => "llvm.floor",
                    UnOp::Ceil => "llvm.ceil",
                    _ => "llvm.trunc",
                };
                self.float_intrinsic(name, x)
            }
            (op, other) => unreachable!("{op:?} on {other}"),
        }
    }

    fn cast(&mut self, to: &MTy, a: &Operand) -> G<BasicValueEnum<'ctx>> {
        let from = self.operand_ty(a);
        let x = self.operand(a)?;
        let bd = &self.cx.builder;
        match (&from, to) {
            (MTy::Int(f), MTy::Int(t)) => {
                Ok(bd.build_int_cast_sign_flag(x.into_int_value(), self.cx.int(*t), f.signed(), "conv")?.into())
            }
            (MTy::Int(f), MTy::Float(t)) => {
                let target = if *t == FloatTy::F32 { self.cx.ctx.f32_type() } else { self.cx.ctx.f64_type() };
                if f.signed() {
                    Ok(bd.build_signed_int_to_float(x.into_int_value(), target, "conv")?.into())
                } else {
                    Ok(bd.build_unsigned_int_to_float(x.into_int_value(), target, "conv")?.into())
                }
            }
            (MTy::Float(_), MTy::Int(t)) => {
                if t.signed() {
                    Ok(bd.build_float_to_signed_int(x.into_float_value(), self.cx.int(*t), "conv")?.into())
                } else {
                    Ok(bd.build_float_to_unsigned_int(x.into_float_value(), self.cx.int(*t), "conv")?.into())
                }
            }
            (MTy::Float(FloatTy::F32), MTy::Float(FloatTy::F64)) => {
                Ok(bd.build_float_ext(x.into_float_value(), self.cx.ctx.f64_type(), "conv")?.into())
            }
            (MTy::Float(FloatTy::F64), MTy::Float(FloatTy::F32)) => {
                Ok(bd.build_float_trunc(x.into_float_value(), self.cx.ctx.f32_type(), "conv")?.into())
            }
            _ => Ok(x),
        }
    }
}
