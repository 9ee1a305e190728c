//! The C runtime (`host.c`, embedded) and linking a program with it.
//!
//! The runtime is compiled once per runtime text into a per-user cache
//! (`$XDG_CACHE_HOME/cairn` or `~/.cache/cairn`, else the build directory) and linked with the
//! program's object by the system `cc`, which also brings in libc and libm.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The runtime's source.
pub const RUNTIME_C: &str = include_str!("host.c");

/// Links `object` with the runtime into the executable `output`, using `work` for the object
/// file. Errors carry the linker's message.
pub fn link(object: &[u8], output: &Path, work: &Path) -> Result<(), String> {
    let program = work.join("program.o");
    std::fs::write(&program, object).map_err(|e| format!("cannot write {}: {e}", program.display()))?;
    let runtime = runtime_object(work)?;
    let result = Command::new("cc")
        .arg("-o")
        .arg(output)
        .arg(&program)
        .arg(&runtime)
        .arg("-lm")
        .output()
        .map_err(|e| format!("cannot run the system linker `cc`: {e}"))?;
    if !result.status.success() {
        return Err(format!("the link failed: {}", String::from_utf8_lossy(&result.stderr).trim()));
    }
    Ok(())
}

/// The compiled runtime, from the cache when it is there.
fn runtime_object(work: &Path) -> Result<PathBuf, String> {
    let hash = fnv1a(RUNTIME_C.as_bytes());
    let name = format!("cairn-runtime-{hash:016x}.o");
    for dir in cache_dirs(work) {
        let path = dir.join(&name);
        if path.is_file() {
            return Ok(path);
        }
        if std::fs::create_dir_all(&dir).is_err() {
            continue;
        }
        let source = dir.join(format!("cairn-runtime-{hash:016x}-{}.c", std::process::id()));
        if std::fs::write(&source, RUNTIME_C).is_err() {
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
