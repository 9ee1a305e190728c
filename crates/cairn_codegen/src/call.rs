//! Calls and the calling convention: every program function is an internal LLVM function whose
//! parameters and result are the LLVM types of its MIR locals and return type, so a view
//! travels as one `{ ptr, i64 }` value and a single borrow as a `ptr`.
//!
//! Invariant: every function of the program is declared before any is defined, so a call can
//! name any function, whatever the order of the definitions. What the ABI will add later
//! (closures as `{ fn, env }`, calls through vtables, owners) belongs here too.

use cairn_mir::{Function, MTy, Operand, Place};
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicType};
use inkwell::values::{BasicMetadataValueEnum, ValueKind};

use crate::function::FnGen;
use crate::module::{G, ModuleGen};

impl ModuleGen<'_, '_> {
    /// Declares a program function under its symbol.
    pub(crate) fn declare(&mut self, function: &Function) {
        let params: Vec<BasicMetadataTypeEnum> =
            function.locals[..function.params as usize].iter().map(|l| self.basic(&l.ty).into()).collect();
        let fn_type = match self.ty(&function.ret) {
            Some(ret) => ret.fn_type(&params, false),
            None => self.ctx.void_type().fn_type(&params, false),
        };
        let value = self.module.add_function(&function.symbol, fn_type, Some(Linkage::Internal));
        self.functions.insert(function.symbol.clone(), value);
    }
}

impl FnGen<'_, '_, '_> {
    /// A call of a program function: the arguments in order, then the result stored at `dst`.
    pub(crate) fn call(&mut self, dst: Option<&Place>, callee: &str, args: &[Operand]) -> G<()> {
        let target = self.cx.functions[callee];
        let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.operand(arg)?.into());
        }
        let call = self.cx.builder.build_call(target, &values, "")?;
        if let (Some(dst), ValueKind::Basic(value)) = (dst, call.try_as_basic_value()) {
            let (ptr, _) = self.place(dst)?;
            self.cx.builder.build_store(ptr, value)?;
        }
        self.overflow = None;
        Ok(())
    }

    /// A call through a code pointer (its `callable` guard came before): the pointer's MIR type
    /// gives the function type.
    pub(crate) fn call_indirect(&mut self, dst: Option<&Place>, callee: &Operand, args: &[Operand]) -> G<()> {
        let MTy::Fn { params, ret } = self.operand_ty(callee) else {
            unreachable!("the checker calls only function values indirectly")
        };
        let param_types: Vec<BasicMetadataTypeEnum> = params.iter().map(|p| self.cx.basic(p).into()).collect();
        let fn_type = match self.cx.ty(&ret) {
            Some(ret) => ret.fn_type(&param_types, false),
            None => self.cx.ctx.void_type().fn_type(&param_types, false),
        };
        let target = self.operand(callee)?.into_pointer_value();
        let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.operand(arg)?.into());
        }
        let call = self.cx.builder.build_indirect_call(fn_type, target, &values, "")?;
        if let (Some(dst), ValueKind::Basic(value)) = (dst, call.try_as_basic_value()) {
            let (ptr, _) = self.place(dst)?;
            self.cx.builder.build_store(ptr, value)?;
        }
        self.overflow = None;
        Ok(())
    }
}
