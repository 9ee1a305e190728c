//! Printing: a print instruction as calls of the runtime, which formats the line into its
//! buffer and writes it whole (`cairn_rt_print_begin`, one `cairn_rt_put_*` per argument,
//! `cairn_rt_print_end`).
//!
//! Invariant: every argument is computed before the first call, so a trap while computing one
//! prints nothing of the line. A target without the runtime refuses a print (`Print::Refused`)
//! rather than drop it.

use cairn_mir::{FloatTy, MTy, PrintArg, Stream};

use crate::function::FnGen;
use crate::module::{G, GenError};
use crate::target::Print;

impl FnGen<'_, '_, '_> {
    /// A print: every argument computed, then one runtime call per piece, between the calls that
    /// start and end the print's line.
    pub(crate) fn print(&mut self, stream: Stream, newline: bool, args: &[PrintArg]) -> G<()> {
        match self.cx.info.print {
            Print::Runtime => {}
            Print::Refused => return Err(GenError::Refused("printing needs the runtime, which this target lacks")),
        }
        // Every argument is computed before any byte is written.
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.operand(&arg.value)?);
        }
        let i64t = self.cx.ctx.i64_type();
        let i32t = self.cx.ctx.i32_type();
        let fd = i32t.const_int(if stream == Stream::Stdout { 1 } else { 2 }, false);
        self.cx.builder.build_call(self.cx.rt("cairn_rt_print_begin"), &[fd.into()], "")?;
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
        let newline = i32t.const_int(u64::from(newline), false);
        self.cx.builder.build_call(self.cx.rt("cairn_rt_print_end"), &[fd.into(), newline.into()], "")?;
        self.overflow = None;
        Ok(())
    }
}
