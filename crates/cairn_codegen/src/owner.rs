//! Owners of heap storage: `Buf[T](n)` as a call of the runtime's zeroing allocator, and the
//! release of a place (`Inst::Drop`) as a call of its type's *drop glue*.
//!
//! A `Buf` is laid out as a view (`{ ptr, i64 }`); its zero value (pointer null, length 0) owns
//! nothing. The drop glue of a type is one private function per type, `cairn.drop.<n>`, made the
//! first time a release of that type is met: for a `Buf` it releases each element that owns
//! storage, frees the block and stores the zero value back; for a `Dyn` it calls the object's drop
//! entry (when its type owns anything) and frees the object's block;
//! for a record, sum or array it
//! releases the parts that own storage. Releasing a zeroed owner does nothing, so a moved-from
//! place (the lowering zeroes what a move leaves) or a second release is harmless.
//!
//! Invariant: glue is built with a builder of its own, so making it in the middle of a function
//! never moves the function's insertion point.

use cairn_mir::{MTy, Operand, Place};
use inkwell::AddressSpace;
use inkwell::module::Linkage;
use inkwell::types::BasicType;
use inkwell::values::{BasicValueEnum, FunctionValue, PointerValue};
use inkwell::{IntPredicate, builder::Builder};

use crate::function::FnGen;
use crate::module::{G, ModuleGen};

impl<'ctx> FnGen<'_, 'ctx, '_> {
    /// `Buf[T](n)`: `n` zeroed elements of `elem` (null for none, and null when the machine has
    /// no room: the allocation guard that follows reports it).
    pub(crate) fn alloc(&mut self, elem: &MTy, count: &Operand) -> G<BasicValueEnum<'ctx>> {
        let count = self.operand(count)?.into_int_value();
        let size = self.cx.basic(elem).size_of().expect("a sized element");
        let size = self.cx.builder.build_int_cast(size, self.cx.ctx.i64_type(), "size")?;
        let call = self.cx.builder.build_call(self.cx.rt("cairn_rt_alloc"), &[count.into(), size.into()], "buf")?;
        let data = call.try_as_basic_value().basic().expect("a pointer").into_pointer_value();
        let view = self.cx.view_type().get_undef();
        let view = self.cx.builder.build_insert_value(view, data, 0, "buf")?;
        let view = self.cx.builder.build_insert_value(view, count, 1, "buf")?;
        Ok(view.into_struct_value().into())
    }

    /// Releases what `place` owns and leaves it zeroed.
    pub(crate) fn drop_place(&mut self, place: &Place) -> G<()> {
        let (ptr, ty) = self.place(place)?;
        if !ty.needs_drop() {
            return Ok(());
        }
        let glue = self.cx.drop_glue(&ty)?;
        self.cx.builder.build_call(glue, &[ptr.into()], "")?;
        Ok(())
    }
}

impl<'ctx> ModuleGen<'ctx, '_> {
    /// The drop glue of `ty` (a type that owns storage), made once per module.
    pub(crate) fn drop_glue(&mut self, ty: &MTy) -> G<FunctionValue<'ctx>> {
        // A named type's glue is the glue of what it names (made, or being made, further out).
        let ty = ty.resolved();
        if let Some(glue) = self.glue.get(ty) {
            return Ok(*glue);
        }
        let fn_type = self.ctx.void_type().fn_type(&[self.ptr().into()], false);
        let name = format!("cairn.drop.{}", self.glue.len());
        let glue = self.module.add_function(&name, fn_type, Some(Linkage::Private));
        // Inserted before the body is built, so a type that holds itself would find it.
        self.glue.insert(ty.clone(), glue);
        let builder = self.ctx.create_builder();
        let entry = self.ctx.append_basic_block(glue, "entry");
        builder.position_at_end(entry);
        let this = glue.get_first_param().expect("the place").into_pointer_value();
        self.glue_body(&builder, glue, this, ty)?;
        builder.build_return(None)?;
        Ok(glue)
    }

    /// The instructions that release what the value of type `ty` at `this` owns.
    fn glue_body(
        &mut self,
        builder: &Builder<'ctx>,
        glue: FunctionValue<'ctx>,
        this: PointerValue<'ctx>,
        ty: &MTy,
    ) -> G<()> {
        match ty {
            MTy::Buf(elem) => {
                let view_ty = self.view_type();
                let view = builder.build_load(view_ty, this, "buf")?.into_struct_value();
                let data = builder.build_extract_value(view, 0, "data")?.into_pointer_value();
                if elem.needs_drop() {
                    let len = builder.build_extract_value(view, 1, "len")?.into_int_value();
                    let elem_ty = self.basic(elem);
                    let inner = self.drop_glue(elem)?;
                    self.each_element(builder, glue, len, |builder, i| {
                        // SAFETY: i < len, the Buf's own length.
                        let at = unsafe { builder.build_in_bounds_gep(elem_ty, data, &[i], "elem")? };
                        builder.build_call(inner, &[at.into()], "")?;
                        Ok(())
                    })?;
                }
                let data =
                    builder.build_address_space_cast(data, self.ctx.ptr_type(AddressSpace::default()), "data")?;
                builder.build_call(self.rt("cairn_rt_free"), &[data.into()], "")?;
                builder.build_store(this, view_ty.const_zero())?;
            }
            MTy::DynBox(owner) => {
                // The object's drop entry (its last word) releases what the object owns, when it
                // owns anything; then the object's block is freed.
                let st = self.basic(owner).into_struct_type();
                let last = st.count_fields() - 1;
                let object_ptr = builder.build_struct_gep(st, this, 0, "object")?;
                let object = builder.build_load(self.ptr(), object_ptr, "object")?.into_pointer_value();
                let entry_ptr = builder.build_struct_gep(st, this, last, "drop_entry")?;
                let entry = builder.build_load(self.ptr(), entry_ptr, "drop_entry")?.into_pointer_value();
                let release = self.ctx.append_basic_block(glue, "release");
                let free = self.ctx.append_basic_block(glue, "free");
                let none = builder.build_is_null(entry, "no_entry")?;
                builder.build_conditional_branch(none, free, release)?;
                builder.position_at_end(release);
                let entry_ty = self.ctx.void_type().fn_type(&[self.ptr().into()], false);
                builder.build_indirect_call(entry_ty, entry, &[object.into()], "")?;
                builder.build_unconditional_branch(free)?;
                builder.position_at_end(free);
                builder.build_call(self.rt("cairn_rt_free"), &[object.into()], "")?;
                builder.build_store(this, st.const_zero())?;
            }
            MTy::Record { fields, .. } => {
                let st = self.basic(ty).into_struct_type();
                for (i, field) in fields.iter().enumerate() {
                    if field.needs_drop() {
                        let inner = self.drop_glue(field)?;
                        let at = builder.build_struct_gep(st, this, i as u32, "field")?;
                        builder.build_call(inner, &[at.into()], "")?;
                    }
                }
            }
            MTy::Sum { variants, .. } => {
                let st = self.sum_type(ty);
                let tag_ptr = builder.build_struct_gep(st, this, 0, "tag")?;
                let tag = builder.build_load(self.ctx.i32_type(), tag_ptr, "tag")?.into_int_value();
                let payload = builder.build_struct_gep(st, this, 1, "payload")?;
                let done = self.ctx.append_basic_block(glue, "done");
                let mut cases = Vec::new();
                for (index, variant) in variants.iter().enumerate() {
                    let Some(variant) = variant.as_ref().filter(|v| v.needs_drop()) else { continue };
                    let block = self.ctx.append_basic_block(glue, "variant");
                    cases.push((self.ctx.i32_type().const_int(index as u64, false), block));
                    let inner = self.drop_glue(variant)?;
                    let here = builder.get_insert_block();
                    builder.position_at_end(block);
                    builder.build_call(inner, &[payload.into()], "")?;
                    builder.build_unconditional_branch(done)?;
                    if let Some(here) = here {
                        builder.position_at_end(here);
                    }
                }
                builder.build_switch(tag, done, &cases)?;
                builder.position_at_end(done);
            }
            MTy::Array(elem, n) => {
                let array_ty = self.basic(ty);
                let inner = self.drop_glue(elem)?;
                let len = self.index_type().const_int(*n, false);
                let zero = self.index_type().const_zero();
                self.each_element(builder, glue, len, |builder, i| {
                    // SAFETY: i < n, the array's length.
                    let at = unsafe { builder.build_in_bounds_gep(array_ty, this, &[zero, i], "elem")? };
                    builder.build_call(inner, &[at.into()], "")?;
                    Ok(())
                })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A counted loop `for i in 0..len { body(i) }` in the glue function.
    fn each_element(
        &self,
        builder: &Builder<'ctx>,
        glue: FunctionValue<'ctx>,
        len: inkwell::values::IntValue<'ctx>,
        body: impl Fn(&Builder<'ctx>, inkwell::values::IntValue<'ctx>) -> G<()>,
    ) -> G<()> {
        let index_ty = len.get_type();
        let before = builder.get_insert_block().expect("a block");
        let header = self.ctx.append_basic_block(glue, "each");
        let inside = self.ctx.append_basic_block(glue, "element");
        let after = self.ctx.append_basic_block(glue, "after");
        builder.build_unconditional_branch(header)?;
        builder.position_at_end(header);
        let i = builder.build_phi(index_ty, "i")?;
        let more = builder.build_int_compare(IntPredicate::ULT, i.as_basic_value().into_int_value(), len, "more")?;
        builder.build_conditional_branch(more, inside, after)?;
        builder.position_at_end(inside);
        let current = i.as_basic_value().into_int_value();
        body(builder, current)?;
        let next = builder.build_int_add(current, index_ty.const_int(1, false), "next")?;
        let latch = builder.get_insert_block().expect("a block");
        builder.build_unconditional_branch(header)?;
        i.add_incoming(&[(&index_ty.const_zero(), before), (&next, latch)]);
        builder.position_at_end(after);
        Ok(())
    }
}
