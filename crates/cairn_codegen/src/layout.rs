//! MIR types as LLVM types: `bool` is `i1`, integers `iN` (`usize` is `i64`), a record an LLVM
//! struct of its fields, a tag-only enum its `i32` tag, a sum `{ i32 tag, [k x i64] payload }`,
//! a view `{ ptr, i64 }` (and a `Buf`, which owns what it points at), a single borrow a `ptr`, `stack` storage an array. A view's pointer is
//! in the target's view address space and its length an index of the target's index width
//! (`TargetInfo`): on the host, address space 0 and 64 bits.
//!
//! Invariant: `void` has no LLVM type (`ty` is `None`); where a value must still take room (a
//! `void` field, a `void` local) it is an `i8`. A sum's payload is as many 8-byte words as its
//! largest variant needs under the module's data layout, and at least one.

use cairn_mir::{FloatTy, IntTy, MTy};
use inkwell::AddressSpace;
use inkwell::targets::TargetData;
use inkwell::types::{BasicType, BasicTypeEnum, IntType, PointerType, StructType};

use crate::module::ModuleGen;

impl<'ctx> ModuleGen<'ctx, '_> {
    /// The LLVM type of a MIR type (`None` for `void`).
    pub(crate) fn ty(&self, ty: &MTy) -> Option<BasicTypeEnum<'ctx>> {
        Some(match ty {
            MTy::Void => return None,
            MTy::Bool => self.ctx.bool_type().into(),
            MTy::Int(i) => self.int(*i).into(),
            MTy::Float(FloatTy::F32) => self.ctx.f32_type().into(),
            MTy::Float(FloatTy::F64) => self.ctx.f64_type().into(),
            MTy::Record { fields, .. } => {
                let fields: Vec<BasicTypeEnum> =
                    fields.iter().map(|f| self.ty(f).unwrap_or_else(|| self.ctx.i8_type().into())).collect();
                self.ctx.struct_type(&fields, false).into()
            }
            MTy::Enum { .. } => self.ctx.i32_type().into(),
            MTy::Sum { .. } => self.sum_type(ty).into(),
            // An owner of elements is laid out as the view of them it lends.
            MTy::View(_) | MTy::Buf(_) => self.view_type().into(),
            // A Dyn is laid out as the dyn reference it lends.
            MTy::DynBox(reference) => return self.ty(reference),
            // A type met again through an owner: the type it names.
            MTy::Named(named) => return self.ty(named.body()),
            MTy::Ptr(_) | MTy::Fn { .. } => self.ptr().into(),
            MTy::Array(elem, n) => {
                let elem = self.ty(elem).unwrap_or_else(|| self.ctx.i8_type().into());
                elem.array_type(*n as u32).into()
            }
        })
    }

    /// The LLVM type of a MIR type, with `void` taking an `i8`.
    pub(crate) fn basic(&self, ty: &MTy) -> BasicTypeEnum<'ctx> {
        self.ty(ty).unwrap_or_else(|| self.ctx.i8_type().into())
    }

    /// A scalar constant (an integer, float, `bool` or tag) as LLVM's; `None` for a function
    /// or a string, which need the module.
    pub(crate) fn scalar_constant(&self, c: &cairn_mir::Const) -> Option<inkwell::values::BasicValueEnum<'ctx>> {
        use cairn_mir::Const;
        Some(match c {
            Const::Int(v, i) => self.int(*i).const_int(*v as u64, i.signed()).into(),
            Const::Float(bits, FloatTy::F32) => {
                self.ctx.f32_type().const_float(f32::from_bits(*bits as u32) as f64).into()
            }
            Const::Float(bits, FloatTy::F64) => self.ctx.f64_type().const_float(f64::from_bits(*bits)).into(),
            Const::Bool(b) => self.ctx.bool_type().const_int(u64::from(*b), false).into(),
            Const::Tag(t, _) => self.ctx.i32_type().const_int(u64::from(*t), false).into(),
            Const::Fn(_) | Const::Str(_) => return None,
        })
    }

    pub(crate) fn ptr(&self) -> PointerType<'ctx> {
        self.ctx.ptr_type(AddressSpace::default())
    }

    pub(crate) fn int(&self, i: IntTy) -> IntType<'ctx> {
        self.int_of_width(i.bits())
    }

    /// The type of a view's length and of an index into a view or array.
    pub(crate) fn index_type(&self) -> IntType<'ctx> {
        self.int_of_width(self.info.index_bits)
    }

    /// A view: its data pointer and its length.
    pub(crate) fn view_type(&self) -> StructType<'ctx> {
        let data = self.ctx.ptr_type(self.info.view_space);
        self.ctx.struct_type(&[data.into(), self.index_type().into()], false)
    }

    /// A sum: its tag and enough 8-byte words for the largest payload.
    pub(crate) fn sum_type(&self, ty: &MTy) -> StructType<'ctx> {
        let MTy::Sum { variants, .. } = ty else { unreachable!("sum_type of a sum") };
        let data = self.module.get_data_layout();
        let target = TargetData::create(data.as_str().to_str().unwrap_or(""));
        let words = variants
            .iter()
            .flatten()
            .map(|p| self.ty(p).map_or(0, |t| target.get_abi_size(&t)))
            .max()
            .unwrap_or(0)
            .div_ceil(8)
            .max(1);
        self.ctx.struct_type(&[self.ctx.i32_type().into(), self.ctx.i64_type().array_type(words as u32).into()], false)
    }

    pub(crate) fn int_of_width(&self, bits: u32) -> IntType<'ctx> {
        match bits {
            8 => self.ctx.i8_type(),
            16 => self.ctx.i16_type(),
            32 => self.ctx.i32_type(),
            _ => self.ctx.i64_type(),
        }
    }
}
