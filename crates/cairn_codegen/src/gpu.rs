//! The host side of a program built for a GPU (language §36–§38): device allocations, transfers
//! and region launches as calls of the device runtime (`runtime/device.c`), and the tables that
//! runtime reads from the host module — the PTX text, the kernels' names by index and the device
//! guards' messages by trap number.
//!
//! The same MIR builds for host threads under `--emulate` (`ModuleGen::gpu` is `None`): device
//! memory is then host memory, a transfer a `memcpy` and a device region a pooled region. Built
//! for a GPU, a `buffer …@device` is `cairn_rt_gpu_alloc`, released by the same drop as any
//! owner (the runtime knows its device blocks), a transfer touching driver memory is
//! `cairn_rt_gpu_copy`, and a region whose lanes are device lanes is `cairn_rt_gpu_launch` of its
//! kernel with a copy of its environment (device regions keep only copies in it).

use std::sync::Arc;

use cairn_mir::{MTy, Memory, Operand};
use inkwell::AddressSpace;
use inkwell::module::Linkage;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, PointerValue};

use crate::device::{Ptx, block_of};
use inkwell::types::BasicType;

use crate::function::FnGen;
use crate::module::{G, Gpu, ModuleGen};

/// What the host module learns of the device module `ptx`: each lane function's kernel number.
pub(crate) fn host_side(ptx: &Ptx) -> Gpu {
    let kernels = ptx.kernels.iter().enumerate().map(|(k, (_, lane))| (lane.clone(), k as u32)).collect();
    Gpu { kernels }
}

impl<'ctx> ModuleGen<'ctx, '_> {
    /// Defines the tables `device.c` reads: `cairn_gpu_ptx`, `cairn_gpu_kernels` with
    /// `cairn_gpu_kernel_count`, and `cairn_gpu_messages` with `cairn_gpu_message_count`.
    pub(crate) fn gpu_tables(&mut self, ptx: &Ptx) {
        let text = self.ctx.const_string(ptx.text.as_bytes(), true);
        let global = self.module.add_global(text.get_type(), None, "cairn_gpu_ptx");
        global.set_initializer(&text);
        global.set_constant(true);
        global.set_linkage(Linkage::External);
        let names: Vec<PointerValue> = ptx.kernels.iter().map(|(name, _)| self.bytes(name.as_bytes())).collect();
        self.pointer_table("cairn_gpu_kernels", "cairn_gpu_kernel_count", &names);
        let messages: Vec<PointerValue> = ptx.messages.iter().map(|m| self.bytes(m.as_bytes())).collect();
        self.pointer_table("cairn_gpu_messages", "cairn_gpu_message_count", &messages);
    }

    /// An external constant array of pointers and an external constant `i32` holding its length.
    fn pointer_table(&mut self, name: &str, count: &str, entries: &[PointerValue<'ctx>]) {
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        // A table of no entries still has one (null) slot, so the symbol exists.
        let mut values: Vec<PointerValue<'ctx>> = entries.to_vec();
        if values.is_empty() {
            values.push(ptr.const_null());
        }
        let array = ptr.const_array(&values);
        let global = self.module.add_global(array.get_type(), None, name);
        global.set_initializer(&array);
        global.set_constant(true);
        global.set_linkage(Linkage::External);
        let i32t = self.ctx.i32_type();
        let length = self.module.add_global(i32t, None, count);
        length.set_initializer(&i32t.const_int(entries.len() as u64, false));
        length.set_constant(true);
        length.set_linkage(Linkage::External);
    }
}

impl<'ctx> FnGen<'_, 'ctx, '_> {
    /// `count` zeroed elements in device (or unified) memory from the driver: a view-shaped
    /// owner as `alloc` makes, whose pointer is null when the device had no room.
    pub(crate) fn gpu_alloc(&mut self, elem: &MTy, count: &Operand, memory: Memory) -> G<BasicValueEnum<'ctx>> {
        let count = self.operand(count)?.into_int_value();
        let i64t = self.cx.ctx.i64_type();
        let size = self.cx.basic(elem).size_of().expect("a sized element");
        let size = self.cx.builder.build_int_cast(size, i64t, "size")?;
        let managed = self.cx.ctx.i32_type().const_int(u64::from(memory == Memory::Unified), false);
        let call = self.cx.builder.build_call(
            self.cx.rt("cairn_rt_gpu_alloc"),
            &[count.into(), size.into(), managed.into()],
            "device_buf",
        )?;
        let data = call.try_as_basic_value().basic().expect("a pointer").into_pointer_value();
        let view = self.cx.view_type().get_undef();
        let view = self.cx.builder.build_insert_value(view, data, 0, "device_buf")?;
        let view = self.cx.builder.build_insert_value(view, count, 1, "device_buf")?;
        Ok(view.into_struct_value().into())
    }

    /// `transfer(dst, src)`: `len(dst)` elements, through the driver when a GPU build touches
    /// driver memory (`device`), else a `memcpy`.
    pub(crate) fn transfer(&mut self, dst: &Operand, src: &Operand, device: bool) -> G<()> {
        let elem = match self.operand_ty(dst) {
            MTy::View(elem) => (*elem).clone(),
            other => unreachable!("the verifier rejects a transfer into {other:?}"),
        };
        let to = self.operand(dst)?.into_struct_value();
        let from = self.operand(src)?.into_struct_value();
        let b = &self.cx.builder;
        let to_ptr = b.build_extract_value(to, 0, "to")?.into_pointer_value();
        let count = b.build_extract_value(to, 1, "count")?.into_int_value();
        let from_ptr = b.build_extract_value(from, 0, "from")?.into_pointer_value();
        let i64t = self.cx.ctx.i64_type();
        let size = self.cx.basic(&elem).size_of().expect("a sized element");
        let size = self.cx.builder.build_int_cast(size, i64t, "size")?;
        let count = self.cx.builder.build_int_cast(count, i64t, "count")?;
        let bytes = self.cx.builder.build_int_nuw_mul(count, size, "bytes")?;
        if device && self.cx.gpu.is_some() {
            let copy = self.cx.rt("cairn_rt_gpu_copy");
            self.cx.builder.build_call(copy, &[to_ptr.into(), from_ptr.into(), bytes.into()], "")?;
        } else {
            // The checker keeps the sides apart (`E-ALIAS`), so they never overlap.
            self.cx.builder.build_memcpy(to_ptr, 1, from_ptr, 1, bytes)?;
        }
        Ok(())
    }

    /// A device `reduce` built for a GPU (`Inst::DeviceReduce`): the runtime starts a device
    /// cell at `identity` (the element `dest` itself when `dest_device`, else a cell of its
    /// own), launches the lane function's kernel over `count` indices with the cell, and, for a
    /// host `dest`, copies the total back into it. False when this is not a GPU build.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gpu_fold(
        &mut self,
        lane: &Arc<str>,
        env: &Operand,
        count: &Operand,
        identity: &cairn_mir::Const,
        dest: &cairn_mir::Place,
        dest_device: bool,
        schedule: &cairn_mir::Schedule,
    ) -> G<bool> {
        let per_lane = crate::device::fold_per_lane(schedule);
        let Some(mut args) = self.launch_args(lane, env, count, block_of(schedule), per_lane)? else {
            return Ok(false);
        };
        let i64t = self.cx.ctx.i64_type();
        let i32t = self.cx.ctx.i32_type();
        let (dest, ty) = self.place(dest)?;
        let start = self.operand(&Operand::Const(identity.clone()))?;
        // In the entry block, as every local's slot: an alloca where the reduce stands would
        // take fresh stack on each pass of a loop around it.
        let entry = self.function.get_first_basic_block().expect("an entry block");
        let at_entry = self.cx.ctx.create_builder();
        match entry.get_terminator() {
            Some(terminator) => at_entry.position_before(&terminator),
            None => at_entry.position_at_end(entry),
        }
        let start_slot = at_entry.build_alloca(start.get_type(), "identity")?;
        self.cx.builder.build_store(start_slot, start)?;
        let size = self.cx.basic(&ty).size_of().expect("a sized total");
        let size = self.cx.builder.build_int_cast(size, i64t, "size")?;
        args.extend::<[BasicMetadataValueEnum<'ctx>; 4]>([
            dest.into(),
            i32t.const_int(u64::from(dest_device), false).into(),
            start_slot.into(),
            size.into(),
        ]);
        self.cx.builder.build_call(self.cx.rt("cairn_rt_gpu_fold"), &args, "")?;
        Ok(true)
    }

    /// A device region built for a GPU: its kernel launched over `count` indices with a copy of
    /// the environment record `env` points to, in blocks of the plan's `block` threads (else
    /// `DEFAULT_BLOCK`), each thread running `per_lane` consecutive indices (the kernel was
    /// made for that number, `device::kernel`). False when this is not a GPU build or `lane`
    /// has no kernel (the caller then runs the region on the lane pool).
    pub(crate) fn gpu_launch(
        &mut self,
        lane: &Arc<str>,
        env: &Operand,
        count: &Operand,
        schedule: &cairn_mir::Schedule,
    ) -> G<bool> {
        let per_lane = schedule.per_lane.max(1);
        let Some(args) = self.launch_args(lane, env, count, block_of(schedule), per_lane)? else {
            return Ok(false);
        };
        self.cx.builder.build_call(self.cx.rt("cairn_rt_gpu_launch"), &args, "")?;
        Ok(true)
    }

    /// The arguments every launch of `lane`'s kernel starts with — its number, the environment
    /// record and its size, the count, `block` and `per_lane` — or `None` when this is not a GPU
    /// build or `lane` has no kernel.
    fn launch_args(
        &mut self,
        lane: &Arc<str>,
        env: &Operand,
        count: &Operand,
        block: u32,
        per_lane: u32,
    ) -> G<Option<Vec<BasicMetadataValueEnum<'ctx>>>> {
        let Some(kernel) = self.cx.gpu.as_ref().and_then(|gpu| gpu.kernels.get(lane).copied()) else {
            return Ok(None);
        };
        let record = match self.operand_ty(env) {
            MTy::Ptr(record) => (*record).clone(),
            other => unreachable!("the verifier rejects an environment of type {other:?}"),
        };
        let i64t = self.cx.ctx.i64_type();
        let i32t = self.cx.ctx.i32_type();
        let env_bytes = self.cx.basic(&record).size_of().expect("a sized environment");
        let env_bytes = self.cx.builder.build_int_cast(env_bytes, i64t, "env_bytes")?;
        let env = self.operand(env)?;
        let count = self.operand(count)?.into_int_value();
        let count = self.cx.builder.build_int_cast(count, i64t, "count")?;
        Ok(Some(vec![
            i32t.const_int(u64::from(kernel), false).into(),
            env.into(),
            env_bytes.into(),
            count.into(),
            i32t.const_int(u64::from(block), false).into(),
            i32t.const_int(u64::from(per_lane), false).into(),
        ]))
    }
}
