//! The packaged standard library: CAIRN sources compiled into the binary, linked when imported.
//!
//! Invariant: each module's file declares exactly `module std.<name>;` and nothing outside it.
//! The set grows with the tiers the checker supports (language §30: which modules are packaged is
//! `MODULES`; the rest are `LATER_MODULES`).

/// One packaged module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryModule {
    /// The module's name, e.g. `std.core`.
    pub name: &'static str,
    /// Its file, as diagnostics name it.
    pub file: &'static str,
    pub text: &'static str,
}

/// The record `format(out, …)` appends to, at `u8` (language §13.1).
pub const VEC_RECORD: &str = "std.vec.Vec";

/// The function `format` appends with (see `Resolver::format_append`).
pub const FORMAT_APPEND: &str = "std.vec.extend_from";

/// Every packaged module.
pub const MODULES: &[LibraryModule] = &[
    LibraryModule { name: "std.core", file: "std/core.cairn", text: include_str!("../../../std/core.cairn") },
    LibraryModule { name: "std.sys", file: "std/sys.cairn", text: include_str!("../../../std/sys.cairn") },
    LibraryModule { name: "std.vec", file: "std/vec.cairn", text: include_str!("../../../std/vec.cairn") },
    LibraryModule { name: "std.mem", file: "std/mem.cairn", text: include_str!("../../../std/mem.cairn") },
    LibraryModule { name: "std.text", file: "std/text.cairn", text: include_str!("../../../std/text.cairn") },
    LibraryModule { name: "std.io", file: "std/io.cairn", text: include_str!("../../../std/io.cairn") },
    LibraryModule { name: "std.time", file: "std/time.cairn", text: include_str!("../../../std/time.cairn") },
    LibraryModule { name: "std.env", file: "std/env.cairn", text: include_str!("../../../std/env.cairn") },
    LibraryModule { name: "std.sort", file: "std/sort.cairn", text: include_str!("../../../std/sort.cairn") },
    LibraryModule { name: "std.fs", file: "std/fs.cairn", text: include_str!("../../../std/fs.cairn") },
    LibraryModule { name: "std.math", file: "std/math.cairn", text: include_str!("../../../std/math.cairn") },
    LibraryModule { name: "std.map", file: "std/map.cairn", text: include_str!("../../../std/map.cairn") },
    LibraryModule { name: "std.fmt", file: "std/fmt.cairn", text: include_str!("../../../std/fmt.cairn") },
    LibraryModule { name: "std.arena", file: "std/arena.cairn", text: include_str!("../../../std/arena.cairn") },
    LibraryModule { name: "std.wire", file: "std/wire.cairn", text: include_str!("../../../std/wire.cairn") },
    LibraryModule { name: "std.derived", file: "std/derived.cairn", text: include_str!("../../../std/derived.cairn") },
    LibraryModule { name: "std.net", file: "std/net.cairn", text: include_str!("../../../std/net.cairn") },
    LibraryModule { name: "std.zlib", file: "std/zlib.cairn", text: include_str!("../../../std/zlib.cairn") },
    LibraryModule { name: "std.image", file: "std/image.cairn", text: include_str!("../../../std/image.cairn") },
    LibraryModule { name: "std.draw", file: "std/draw.cairn", text: include_str!("../../../std/draw.cairn") },
];

/// The system libraries a linked library module needs at link time (`std.zlib` is the system
/// zlib's interface).
pub const MODULE_LIBRARIES: &[(&str, &str)] = &[("std.zlib", "z")];

/// The packaged module named `name`, if there is one.
pub fn module(name: &str) -> Option<LibraryModule> {
    MODULES.iter().copied().find(|m| m.name == name)
}

/// Modules of the standard library that later tiers package (language §30); importing one is
/// refused with `E-UNSUPPORTED` rather than `E-IMPORT`, because the module exists.
pub const LATER_MODULES: &[&str] = &[];
