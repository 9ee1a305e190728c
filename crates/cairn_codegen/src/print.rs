//! Printing: a print instruction as calls of the runtime, which formats the line into its
//! buffer and writes it whole (`cairn_rt_print_begin`, one `cairn_rt_put_*` per argument,
//! `cairn_rt_print_end`), and `format` as the same pieces put into the runtime's scratch text
//! (`cairn_rt_format_begin` … `cairn_rt_format_end`).
//!
//! Invariant: every argument is computed before the first call, so a trap while computing one
//! prints nothing of the line. A target without the runtime refuses a print (`Print::Refused`)
//! rather than drop it.

use cairn_mir::{FloatTy, MTy, PrintArg, Stream};
use inkwell::values::ValueKind;

use crate::function::FnGen;
use crate::module::{G, GenError};
use crate::target::Print;

impl<'ctx> FnGen<'_, 'ctx, '_> {
    /// A print: every argument computed, then one runtime call per piece, between the calls that
    /// start and end the print's line.
    pub(crate) fn print(&mut self, stream: Stream, newline: bool, args: &[PrintArg]) -> G<()> {
        let values = self.computed(args, "printing needs the runtime, which this target lacks")?;
        let i32t = self.cx.ctx.i32_type();
        let fd = i32t.const_int(if stream == Stream::Stdout { 1 } else { 2 }, false);
        self.cx.builder.build_call(self.cx.rt("cairn_rt_print_begin"), &[fd.into()], "")?;
        self.put_pieces(args, values)?;
        let newline = i32t.const_int(u64::from(newline), false);
        self.cx.builder.build_call(self.cx.rt("cairn_rt_print_end"), &[fd.into(), newline.into()], "")?;
        self.overflow = None;
        Ok(())
    }

    /// `format`'s rendering: every piece computed, then put into the runtime's scratch text, and
    /// `dst` (a `u8` view) set to that text.
    pub(crate) fn format(&mut self, dst: &cairn_mir::Place, args: &[PrintArg]) -> G<()> {
        let values = self.computed(args, "format needs the runtime, which this target lacks")?;
        self.cx.builder.build_call(self.cx.rt("cairn_rt_format_begin"), &[], "")?;
        self.put_pieces(args, values)?;
        let data = self.cx.builder.build_call(self.cx.rt("cairn_rt_format_end"), &[], "text")?;
        let len = self.cx.builder.build_call(self.cx.rt("cairn_rt_format_len"), &[], "len")?;
        let (ValueKind::Basic(data), ValueKind::Basic(len)) = (data.try_as_basic_value(), len.try_as_basic_value())
        else {
            return Err(GenError::Refused("the runtime's format calls return no value"));
        };
        let (at, ty) = self.place(dst)?;
        let view_ty = self.cx.basic(&ty).into_struct_type();
        let view = self.cx.builder.build_insert_value(view_ty.get_undef(), data, 0, "view")?;
        let view = self.cx.builder.build_insert_value(view, len, 1, "view")?;
        self.cx.builder.build_store(at, view)?;
        self.overflow = None;
        Ok(())
    }

    /// Every piece of a print or a format computed, before any runtime call (a target without
    /// the runtime refuses, saying `refused`).
    fn computed(&mut self, args: &[PrintArg], refused: &'static str) -> G<Vec<inkwell::values::BasicValueEnum<'ctx>>> {
        if self.cx.info.print == Print::Refused {
            return Err(GenError::Refused(refused));
        }
        args.iter().map(|arg| self.operand(&arg.value)).collect()
    }

    /// One runtime call per piece of a print or a format, each value already computed.
    fn put_pieces(&mut self, args: &[PrintArg], values: Vec<inkwell::values::BasicValueEnum<'_>>) -> G<()> {
        let i64t = self.cx.ctx.i64_type();
        let i32t = self.cx.ctx.i32_type();
        for (arg, value) in args.iter().zip(values) {
            match &arg.ty {
                MTy::Int(_) if arg.char => {
                    let byte = self.cx.builder.build_int_cast_sign_flag(value.into_int_value(), i32t, false, "byte")?;
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_byte"), &[byte.into()], "")?;
                }
                MTy::Int(i) if i.signed() => {
                    let v = self.cx.builder.build_int_s_extend_or_bit_cast(value.into_int_value(), i64t, "v")?;
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_i64"), &[v.into()], "")?;
                }
                MTy::Int(_) => {
                    let v = self.cx.builder.build_int_z_extend_or_bit_cast(value.into_int_value(), i64t, "v")?;
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_u64"), &[v.into()], "")?;
                }
                MTy::Bool => {
                    let v = self.cx.builder.build_int_z_extend(value.into_int_value(), i32t, "v")?;
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_bool"), &[v.into()], "")?;
                }
                MTy::Float(FloatTy::F32) => {
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_f32"), &[value.into()], "")?;
                }
                MTy::Float(FloatTy::F64) => {
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_f64"), &[value.into()], "")?;
                }
                _ => {
                    let view = value.into_struct_value();
                    let data = self.cx.builder.build_extract_value(view, 0, "data")?;
                    let len = self.cx.builder.build_extract_value(view, 1, "len")?;
                    self.cx.builder.build_call(self.cx.rt("cairn_rt_put_bytes"), &[data.into(), len.into()], "")?;
                }
            }
        }
        Ok(())
    }
}
