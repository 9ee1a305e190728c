//! What code is generated for: the target's triple, its data layout, its LLVM target machine
//! (with the back end initialised), the pass pipeline run on that machine, and what the machine
//! emits for a finished module.
//!
//! Invariant: a module is prepared (`prepare`) with the triple and data layout of the machine
//! that will optimise and emit it, before any type is laid out in it (a sum's size depends on
//! the data layout).

use inkwell::OptimizationLevel;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple,
};

/// A target of code generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The machine the compiler runs on (x86-64): objects linked with the C runtime.
    Host { cpu: &'static str },
}

impl Target {
    /// The host, as every build targets it today.
    pub(crate) const HOST: Target = Target::Host { cpu: "x86-64" };

    /// The target triple.
    pub(crate) fn triple(&self) -> TargetTriple {
        match self {
            Target::Host { .. } => TargetMachine::get_default_triple(),
        }
    }

    /// Initialises LLVM's back end for the target and creates its machine.
    pub(crate) fn machine(&self) -> Result<TargetMachine, String> {
        let (cpu, features, reloc) = match self {
            Target::Host { cpu } => {
                LlvmTarget::initialize_x86(&InitializationConfig::default());
                (cpu.to_string(), String::new(), RelocMode::PIC)
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

    /// What the machine makes of a finished module: an object file for the host.
    pub(crate) fn emit(&self, module: &Module, machine: &TargetMachine) -> Result<Vec<u8>, String> {
        let (file_type, what) = match self {
            Target::Host { .. } => (FileType::Object, "the object"),
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
