//! The C runtime (`host.c`, embedded; `device.c` too for a program built for a GPU): the
//! declarations of its functions in every module, and linking a program with it.
//!
//! The runtime is compiled once per runtime text into a per-user cache
//! (`$XDG_CACHE_HOME/cairn` or `~/.cache/cairn`, else the build directory) and linked with the
//! program's object by the system `cc`, which also brings in libc and libm.
//!
//! Invariant: the declarations here and the definitions in `host.c` agree in name and
//! signature; the functions that report a failure are `noreturn`, `cold` and `nounwind`, so
//! LLVM keeps trap paths out of the hot code.

use std::path::{Path, PathBuf};
use std::process::Command;

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::FunctionValue;

use crate::module::ModuleGen;

/// The runtime's source.
pub const RUNTIME_C: &str = include_str!("host.c");

/// The device half of the runtime (`device.c`): loading the CUDA driver, device memory,
/// transfers and launches. Linked only into programs built for a GPU.
pub const DEVICE_C: &str = include_str!("device.c");

/// Links `object` with the runtime into the executable `output`, using `work` for the object
/// file, and with the system `libraries` a project's foreign functions name (rows of the
/// manifest's closed table, checked where the manifest is read). Errors carry the linker's
/// message.
pub fn link(object: &[u8], output: &Path, work: &Path, libraries: &[String]) -> Result<(), String> {
    link_with(object, output, work, libraries, false)
}

/// [`link`], with the device half of the runtime too when `gpu` (a program built for a GPU,
/// whose host module holds the tables `device.c` reads).
pub fn link_with(object: &[u8], output: &Path, work: &Path, libraries: &[String], gpu: bool) -> Result<(), String> {
    let program = work.join("program.o");
    std::fs::write(&program, object).map_err(|e| format!("cannot write {}: {e}", program.display()))?;
    let mut objects = vec![runtime_object(work, "cairn-runtime", RUNTIME_C)?];
    if gpu {
        objects.push(runtime_object(work, "cairn-device-runtime", DEVICE_C)?);
    }
    let result = Command::new("cc")
        .arg("-o")
        .arg(output)
        .arg(&program)
        .args(&objects)
        .args(libraries.iter().map(|l| format!("-l{l}")))
        .arg("-lm")
        .arg("-pthread")
        .args(if gpu { &["-ldl"][..] } else { &[][..] })
        .output()
        .map_err(|e| format!("cannot run the system linker `cc`: {e}"))?;
    if !result.status.success() {
        return Err(format!("the link failed: {}", String::from_utf8_lossy(&result.stderr).trim()));
    }
    Ok(())
}

impl<'ctx> ModuleGen<'ctx, '_> {
    /// Declares every runtime function in the module.
    pub(crate) fn declare_runtime(&mut self) {
        let ptr = self.ptr().into();
        let i64t = self.ctx.i64_type().into();
        let i32t = self.ctx.i32_type().into();
        let f64t = self.ctx.f64_type().into();
        let f32t = self.ctx.f32_type().into();
        self.runtime_fn("cairn_rt_print_begin", &[i32t]);
        self.runtime_fn("cairn_rt_put_u64", &[i64t]);
        self.runtime_fn("cairn_rt_put_i64", &[i64t]);
        self.runtime_fn("cairn_rt_put_f64", &[f64t]);
        self.runtime_fn("cairn_rt_put_f32", &[f32t]);
        self.runtime_fn("cairn_rt_put_bool", &[i32t]);
        self.runtime_fn("cairn_rt_put_byte", &[i32t]);
        self.runtime_fn("cairn_rt_put_bytes", &[ptr, i64t]);
        self.runtime_fn("cairn_rt_print_end", &[i32t, i32t]);
        self.runtime_fn("cairn_rt_format_begin", &[]);
        let format_end = self.ptr().fn_type(&[], false);
        self.module.add_function("cairn_rt_format_end", format_end, Some(Linkage::External));
        let format_len = self.ctx.i64_type().fn_type(&[], false);
        self.module.add_function("cairn_rt_format_len", format_len, Some(Linkage::External));
        self.runtime_noreturn("cairn_rt_trap", &[ptr]);
        self.runtime_noreturn("cairn_rt_assert_failed", &[ptr, ptr, i64t]);
        self.runtime_noreturn("cairn_rt_assert_eq_i64", &[ptr, ptr, i64t, i64t, i64t]);
        self.runtime_noreturn("cairn_rt_assert_eq_u64", &[ptr, ptr, i64t, i64t, i64t]);
        self.runtime_noreturn("cairn_rt_assert_eq_f64", &[ptr, ptr, i64t, f64t, f64t]);
        self.runtime_noreturn("cairn_rt_assert_eq_f32", &[ptr, ptr, i64t, f32t, f32t]);
        self.runtime_noreturn("cairn_rt_assert_eq_bool", &[ptr, ptr, i64t, i32t, i32t]);
        let alloc = self.ptr().fn_type(&[i64t, i64t], false);
        let alloc = self.module.add_function("cairn_rt_alloc", alloc, Some(Linkage::External));
        for attribute in ["nounwind", "noalias"] {
            let kind = Attribute::get_named_enum_kind_id(attribute);
            let loc = if attribute == "noalias" { AttributeLoc::Return } else { AttributeLoc::Function };
            alloc.add_attribute(loc, self.ctx.create_enum_attribute(kind, 0));
        }
        self.runtime_fn("cairn_rt_free", &[ptr]);
        self.runtime_fn("cairn_rt_parallel", &[ptr, ptr, i64t, i64t, i64t, i32t]);
        // The device half (`device.c`), called only by programs built for a GPU.
        let gpu_alloc = self.ptr().fn_type(&[i64t, i64t, i32t], false);
        self.module.add_function("cairn_rt_gpu_alloc", gpu_alloc, Some(Linkage::External));
        self.runtime_fn("cairn_rt_gpu_copy", &[ptr, ptr, i64t]);
        self.runtime_fn("cairn_rt_gpu_launch", &[i32t, ptr, i64t, i64t, i32t, i32t]);
        self.runtime_fn("cairn_rt_gpu_fold", &[i32t, ptr, i64t, i64t, i32t, i32t, ptr, i32t, ptr, i64t]);
        let index = self.ctx.i64_type().fn_type(&[i32t, ptr, i64t], false);
        self.module.add_function("cairn_rt_test_index", index, Some(Linkage::External));
    }

    /// A runtime function, declared by `declare_runtime`.
    pub(crate) fn rt(&self, name: &str) -> FunctionValue<'ctx> {
        self.module.get_function(name).unwrap_or_else(|| panic!("the runtime function {name} is declared"))
    }

    fn runtime_fn(&mut self, name: &str, params: &[BasicMetadataTypeEnum<'ctx>]) -> FunctionValue<'ctx> {
        let fn_type = self.ctx.void_type().fn_type(params, false);
        self.module.add_function(name, fn_type, Some(Linkage::External))
    }

    /// A runtime function that reports a failure and aborts.
    fn runtime_noreturn(&mut self, name: &str, params: &[BasicMetadataTypeEnum<'ctx>]) {
        let function = self.runtime_fn(name, params);
        for attribute in ["noreturn", "cold", "nounwind"] {
            let kind = Attribute::get_named_enum_kind_id(attribute);
            function.add_attribute(AttributeLoc::Function, self.ctx.create_enum_attribute(kind, 0));
        }
    }
}

/// A compiled part of the runtime (`stem` names it, `source` is its C text), from the cache
/// when it is there.
fn runtime_object(work: &Path, stem: &str, source_text: &str) -> Result<PathBuf, String> {
    let hash = fnv1a(source_text.as_bytes());
    let name = format!("{stem}-{hash:016x}.o");
    for dir in cache_dirs(work) {
        let path = dir.join(&name);
        if path.is_file() {
            return Ok(path);
        }
        if std::fs::create_dir_all(&dir).is_err() {
            continue;
        }
        let source = dir.join(format!("{stem}-{hash:016x}-{}.c", std::process::id()));
        if std::fs::write(&source, source_text).is_err() {
            continue;
        }
        let partial = dir.join(format!("{name}.{}.tmp", std::process::id()));
        let result = Command::new("cc")
            .args(["-O2", "-std=c11", "-fPIC", "-c", "-o"])
            .arg(&partial)
            .arg(&source)
            .output()
            .map_err(|e| format!("cannot run the system C compiler `cc`: {e}"))?;
        let _ = std::fs::remove_file(&source);
        if !result.status.success() {
            return Err(format!("the runtime did not compile: {}", String::from_utf8_lossy(&result.stderr).trim()));
        }
        // Published by rename, so a concurrent build never links a half-written object.
        if std::fs::rename(&partial, &path).is_ok() {
            return Ok(path);
        }
    }
    Err("no directory can hold the compiled runtime".into())
}

/// The per-user cache the compiled runtime goes to (`$XDG_CACHE_HOME/cairn`, else
/// `~/.cache/cairn`), when the environment names one.
pub fn cache_dir() -> Option<PathBuf> {
    cache_dirs(Path::new("")).into_iter().find(|d| !d.as_os_str().is_empty())
}

fn cache_dirs(work: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(cache) = std::env::var_os("XDG_CACHE_HOME") {
        dirs.push(PathBuf::from(cache).join("cairn"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cache").join("cairn"));
    }
    dirs.push(work.to_path_buf());
    dirs
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
