//! Calls and the calling convention: every program function is an internal LLVM function whose
//! parameters and result are the LLVM types of its MIR locals and return type, so a view
//! travels as one `{ ptr, i64 }` value and a single borrow as a `ptr`.
//!
//! Invariant: every function of the program is declared before any is defined, so a call can
//! name any function, whatever the order of the definitions. What the ABI will add later
//! (closures as `{ fn, env }`, calls through vtables, owners) belongs here too.

use cairn_mir::{Function, MTy, Operand, Place};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicType};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, ValueKind};

use crate::function::FnGen;
use crate::module::{G, ModuleGen};

impl ModuleGen<'_, '_> {
    /// Declares a program function under its symbol; a foreign one under its C symbol, with C's
    /// types (`declare_foreign`).
    pub(crate) fn declare(&mut self, function: &Function) {
        if function.kind == cairn_mir::FnKind::Foreign {
            self.declare_foreign(function);
            return;
        }
        let params: Vec<BasicMetadataTypeEnum> =
            function.locals[..function.params as usize].iter().map(|l| self.basic(&l.ty).into()).collect();
        let fn_type = match self.ty(&function.ret) {
            Some(ret) => ret.fn_type(&params, false),
            None => self.ctx.void_type().fn_type(&params, false),
        };
        let linkage = if self.options.keep_functions { Linkage::External } else { Linkage::Internal };
        let value = self.module.add_function(&function.symbol, fn_type, Some(linkage));
        self.functions.insert(function.symbol.clone(), value);
    }
}

impl ModuleGen<'_, '_> {
    /// A foreign function (language §45), declared once per C symbol with the C calling
    /// convention's types: a view is its data pointer, a borrow its address, an integer narrower
    /// than 32 bits is extended by the caller as C's ABI asks (`signext`/`zeroext`).
    fn declare_foreign(&mut self, function: &Function) {
        if let Some(existing) = self.module.get_function(&function.symbol) {
            self.functions.insert(function.symbol.clone(), existing);
            self.foreign.insert(function.symbol.clone());
            return;
        }
        let param_tys: Vec<&MTy> = function.locals[..function.params as usize].iter().map(|l| &l.ty).collect();
        let params: Vec<BasicMetadataTypeEnum> = param_tys
            .iter()
            .map(|ty| match ty {
                MTy::View(_) => self.ptr().into(),
                other => self.basic(other).into(),
            })
            .collect();
        let fn_type = match self.ty(&function.ret) {
            Some(ret) => ret.fn_type(&params, false),
            None => self.ctx.void_type().fn_type(&params, false),
        };
        let value = self.module.add_function(&function.symbol, fn_type, Some(Linkage::External));
        let extension = |ty: &MTy| match ty {
            MTy::Bool => Some("zeroext"),
            MTy::Int(i) if i.bits() < 32 => Some(if i.signed() { "signext" } else { "zeroext" }),
            _ => None,
        };
        for (i, ty) in param_tys.iter().enumerate() {
            if let Some(name) = extension(ty) {
                let kind = Attribute::get_named_enum_kind_id(name);
                value.add_attribute(AttributeLoc::Param(i as u32), self.ctx.create_enum_attribute(kind, 0));
            }
        }
        if let Some(name) = extension(&function.ret) {
            let kind = Attribute::get_named_enum_kind_id(name);
            value.add_attribute(AttributeLoc::Return, self.ctx.create_enum_attribute(kind, 0));
        }
        self.functions.insert(function.symbol.clone(), value);
        self.foreign.insert(function.symbol.clone());
    }
}

impl FnGen<'_, '_, '_> {
    /// A call of a program function: the arguments in order, then the result stored at `dst`.
    /// A foreign function takes a view's data pointer where the view is passed.
    pub(crate) fn call(&mut self, dst: Option<&Place>, callee: &str, args: &[Operand]) -> G<()> {
        let target = self.cx.functions[callee];
        let foreign = self.cx.foreign.contains(callee);
        let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
        for arg in args {
            let value = self.operand(arg)?;
            let value = match (foreign, self.operand_ty(arg)) {
                (true, MTy::View(_)) => {
                    self.cx.builder.build_extract_value(value.into_struct_value(), 0, "data")?.as_basic_value_enum()
                }
                _ => value,
            };
            values.push(value.into());
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
