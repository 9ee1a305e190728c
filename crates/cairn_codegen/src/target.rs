//! What code is generated for. A `Target` knows its triple, its data layout (its machine's), how
//! to initialise LLVM's back end and create the target machine, and what the machine emits for a
//! finished module. A `TargetInfo` is the little the body generator may know of it: how a
//! failed guard traps, how a print is lowered, which address space a view points into, and how
//! wide an index is.
//!
//! Invariant: `function.rs`, `rvalue.rs`, `guard.rs` and the rooms below them read the target
//! only through `TargetInfo`; nothing but this file and `lib.rs` names a `Target`.
//! Invariant: a module is prepared (`prepare`) with the triple and data layout of the machine
//! that will optimise and emit it, before any type is laid out in it (a sum's size depends on
//! the data layout).
//!
//! Programs are built for the host; `Nvptx` compiles a program's device lanes to PTX
//! (`device.rs`, `cairn emit --ptx`), which nothing launches yet (no device runtime).

use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple,
};
use inkwell::{AddressSpace, OptimizationLevel};

/// LLVM's calling convention for a PTX kernel (`ptx_kernel`).
pub(crate) const PTX_KERNEL: u32 = 71;

/// A target of code generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The machine the compiler runs on (x86-64): objects linked with the C runtime.
    Host { cpu: &'static str },
    /// An NVIDIA GPU through LLVM's NVPTX back end: PTX text for `sm_<sm>` (`sm_<sm>a` when
    /// `specific`) in PTX ISA version `<ptx / 10>.<ptx % 10>`.
    Nvptx { sm: u32, ptx: u32, specific: bool },
}

/// What the body generator knows of its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TargetInfo {
    /// How a failed guard stops the program.
    pub(crate) trap: Trap,
    /// How a print is lowered.
    pub(crate) print: Print,
    /// The address space a view's data pointer points into.
    pub(crate) view_space: AddressSpace,
    /// The width in bits of a view's length and of an index into a view or array.
    ///
    /// Invariant: it equals `usize`'s width (64 in MIR), so an index is a `usize` value as is.
    pub(crate) index_bits: u32,
}

/// How a failed guard stops the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trap {
    /// A call of a `noreturn` runtime function that writes the guard's message and aborts.
    Runtime,
    /// A device guard (no runtime to write with): the guard's trap number is stored in the
    /// module's `cairn_device_trap` unless a lane stored one first, and the thread ends (PTX
    /// `exit`); the host reads the flag after the launch and reports that guard's message
    /// (`ModuleGen::device_messages`, `runtime/device.c`).
    Flag,
}

/// How a print is lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Print {
    /// Calls of the runtime's buffered writer.
    Runtime,
    /// Not at all: a print is refused, with the reason, when its function is generated.
    Refused,
}

impl Target {
    /// The host, as every build targets it today.
    pub(crate) const HOST: Target = Target::Host { cpu: "x86-64" };

    /// What the body generator knows of the target.
    pub(crate) fn info(&self) -> TargetInfo {
        match self {
            Target::Host { .. } => TargetInfo {
                trap: Trap::Runtime,
                print: Print::Runtime,
                view_space: AddressSpace::default(),
                index_bits: 64,
            },
            // Views are generic pointers: a lane's own `stack` array and global memory share
            // one view type, and PTX's generic addressing reaches both.
            Target::Nvptx { .. } => TargetInfo {
                trap: Trap::Flag,
                print: Print::Refused,
                view_space: AddressSpace::default(),
                index_bits: 64,
            },
        }
    }

    /// The target triple.
    pub(crate) fn triple(&self) -> TargetTriple {
        match self {
            Target::Host { .. } => TargetMachine::get_default_triple(),
            Target::Nvptx { .. } => TargetTriple::create("nvptx64-nvidia-cuda"),
        }
    }

    /// Initialises LLVM's back end for the target and creates its machine.
    pub(crate) fn machine(&self) -> Result<TargetMachine, String> {
        crate::options::code_generation();
        let (cpu, features, reloc) = match self {
            Target::Host { cpu } => {
                LlvmTarget::initialize_x86(&InitializationConfig::default());
                (cpu.to_string(), String::new(), RelocMode::PIC)
            }
            Target::Nvptx { sm, ptx, specific } => {
                LlvmTarget::initialize_nvptx(&InitializationConfig::default());
                let suffix = if *specific { "a" } else { "" };
                (format!("sm_{sm}{suffix}"), format!("+ptx{ptx}"), RelocMode::Default)
            }
        };
        let triple = self.triple();
        let target = LlvmTarget::from_triple(&triple).map_err(|e| e.to_string())?;
        target
            .create_target_machine(&triple, &cpu, &features, OptimizationLevel::Default, reloc, CodeModel::Default)
            .ok_or_else(|| format!("LLVM has no target machine for {cpu}"))
    }

    /// Gives `module` the target's triple and the machine's data layout.
    pub(crate) fn prepare(&self, module: &Module, machine: &TargetMachine) {
        module.set_triple(&self.triple());
        module.set_data_layout(&machine.get_target_data().get_data_layout());
    }

    /// What the machine makes of a finished module: an object file for the host, PTX text for
    /// the device.
    pub(crate) fn emit(&self, module: &Module, machine: &TargetMachine) -> Result<Vec<u8>, String> {
        let (file_type, what) = match self {
            Target::Host { .. } => (FileType::Object, "the object"),
            Target::Nvptx { .. } => (FileType::Assembly, "PTX"),
        };
        let buffer = machine
            .write_to_memory_buffer(module, file_type)
            .map_err(|e| format!("LLVM could not emit {what}: {}", e.to_string()))?;
        Ok(buffer.as_slice().to_vec())
    }
}

/// Runs the `default<O2>` pipeline over `module` on the target's machine.
pub(crate) fn optimize(module: &Module, machine: &TargetMachine) -> Result<(), String> {
    module
        .run_passes("default<O2>", machine, PassBuilderOptions::create())
        .map_err(|e| format!("the LLVM pipeline failed: {}", e.to_string()))
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;

    use super::Target;

    /// What `target` emits for a module holding one empty function, optimised.
    #[track_caller]
    fn check_emit(target: Target) -> Vec<u8> {
        let machine = target.machine().expect("a target machine");
        let context = Context::create();
        let module = context.create_module("probe");
        target.prepare(&module, &machine);
        let function = module.add_function("nothing", context.void_type().fn_type(&[], false), None);
        let builder = context.create_builder();
        builder.position_at_end(context.append_basic_block(function, "entry"));
        builder.build_return(None).expect("a return");
        module.verify().expect("a valid module");
        super::optimize(&module, &machine).expect("the pipeline");
        target.emit(&module, &machine).expect("emitted code")
    }

    #[test]
    fn the_host_emits_an_elf_object() {
        let object = check_emit(Target::HOST);
        assert_eq!(&object[..4], b"\x7fELF");
    }

    #[test]
    fn nvptx_emits_ptx_for_its_architecture_and_isa() {
        let ptx =
            String::from_utf8(check_emit(Target::Nvptx { sm: 90, ptx: 80, specific: false })).expect("PTX is text");
        for line in [".version 8.0", ".target sm_90", ".address_size 64", ".visible .func nothing()"] {
            assert!(ptx.lines().any(|l| l.trim() == line), "no `{line}` in:\n{ptx}");
        }
    }
}
