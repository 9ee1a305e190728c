//! DWARF line tables (`--debug`): one compile unit, a file per source file, a subprogram for
//! every function and for the C `main`, and a location for every MIR instruction, taken from the
//! statement or expression it came from (`SiteText`).
//!
//! Invariant: only line tables are emitted (no variables or types), so optimised code keeps
//! its lines and nothing here changes the code itself. Without `--debug` every function here
//! does nothing.

use std::collections::HashMap;

use cairn_mir::{Anchor, Function};
use inkwell::debug_info::{
    AsDIScope, DIFile, DIFlags, DIFlagsConstants, DIScope, DWARFEmissionKind, DWARFSourceLanguage,
};
use inkwell::module::FlagBehavior;
use inkwell::values::FunctionValue;

use crate::function::FnGen;
use crate::module::{Debug, ModuleGen};

impl<'ctx> ModuleGen<'ctx, '_> {
    /// Starts the module's debug information.
    pub(crate) fn start_debug_info(&mut self) {
        let (builder, unit) = self.module.create_debug_info_builder(
            true,
            DWARFSourceLanguage::C,
            "program.cairn",
            ".",
            "cairn-rs",
            self.options.optimize,
            "",
            0,
            "",
            DWARFEmissionKind::LineTablesOnly,
            0,
            false,
            false,
            "",
            "",
        );
        let i32t = self.ctx.i32_type();
        self.module.add_basic_value_flag("Debug Info Version", FlagBehavior::Warning, i32t.const_int(3, false));
        self.module.add_basic_value_flag("Dwarf Version", FlagBehavior::Warning, i32t.const_int(4, false));
        self.debug = Some(Debug { builder, unit, files: HashMap::new() });
    }

    /// Completes the module's debug information, once every function is defined.
    pub(crate) fn finish_debug_info(&self) {
        if let Some(debug) = &self.debug {
            debug.builder.finalize();
        }
    }

    /// Describes a function for the debugger; returns its scope.
    pub(crate) fn debug_function(&mut self, mir: &Function, function: FunctionValue<'ctx>) -> Option<DIScope<'ctx>> {
        let site = (self.site)(mir, None);
        let file = self.debug_file(site.file.as_deref().unwrap_or("library.cairn"))?;
        let debug = self.debug.as_ref()?;
        let ty = debug.builder.create_subroutine_type(file, None, &[], DIFlags::PUBLIC);
        let program = debug.builder.create_function(
            debug.unit.as_debug_info_scope(),
            &mir.name,
            Some(&mir.symbol),
            file,
            site.line,
            ty,
            true,
            true,
            site.line,
            DIFlags::PUBLIC,
            self.options.optimize,
        );
        function.set_subprogram(program);
        Some(program.as_debug_info_scope())
    }

    /// Points the builder's next instructions (a function's entry block) at the function's line.
    pub(crate) fn locate_function(&mut self, mir: &Function, scope: DIScope<'ctx>) {
        let site = (self.site)(mir, None);
        let location =
            self.debug.as_ref().map(|d| d.builder.create_debug_location(self.ctx, site.line.max(1), 0, scope, None));
        if let Some(location) = location {
            self.builder.set_current_debug_location(location);
        }
    }

    /// Describes the C entry (`main`) for the debugger, so code inlined into it keeps its lines.
    pub(crate) fn debug_entry(&mut self, function: FunctionValue<'ctx>) {
        let Some(debug) = &self.debug else { return };
        let Some(file) = debug.files.values().next().copied() else { return };
        let ty = debug.builder.create_subroutine_type(file, None, &[], DIFlags::PUBLIC);
        let program = debug.builder.create_function(
            debug.unit.as_debug_info_scope(),
            "main",
            None,
            file,
            1,
            ty,
            false,
            true,
            1,
            DIFlags::PUBLIC,
            self.options.optimize,
        );
        function.set_subprogram(program);
        let location = debug.builder.create_debug_location(self.ctx, 1, 0, program.as_debug_info_scope(), None);
        self.builder.set_current_debug_location(location);
    }

    /// The debug file of a source file name.
    fn debug_file(&mut self, name: &str) -> Option<DIFile<'ctx>> {
        let debug = self.debug.as_mut()?;
        if let Some(file) = debug.files.get(name) {
            return Some(*file);
        }
        let path = std::path::Path::new(name);
        let file_name = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| name.to_string());
        let directory = path.parent().map(|d| d.to_string_lossy().to_string()).unwrap_or_default();
        let file = debug.builder.create_file(&file_name, if directory.is_empty() { "." } else { &directory });
        debug.files.insert(name.to_string(), file);
        Some(file)
    }
}

impl FnGen<'_, '_, '_> {
    /// Points the builder's next instructions at the source of `anchor`.
    pub(crate) fn locate(&mut self, anchor: Option<Anchor>) {
        let Some(scope) = self.scope else { return };
        let site = (self.cx.site)(self.mir, anchor);
        if let Some(debug) = &self.cx.debug {
            let location = debug.builder.create_debug_location(self.cx.ctx, site.line.max(1), site.column, scope, None);
            self.cx.builder.set_current_debug_location(location);
        }
    }
}
