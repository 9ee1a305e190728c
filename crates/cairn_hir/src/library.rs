//! The packaged standard library: CAIRN sources compiled into the binary, linked when imported.
//!
//! Invariant: each module's file declares exactly `module std.<name>;` and nothing outside it.
//! The set grows with the tiers the checker supports; today it is what tier 0 needs.

/// One packaged module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryModule {
    /// The module's name, e.g. `std.core`.
    pub name: &'static str,
    /// Its file, as diagnostics name it.
    pub file: &'static str,
    pub text: &'static str,
}

/// Every packaged module.
pub const MODULES: &[LibraryModule] =
    &[LibraryModule { name: "std.core", file: "std/core.cairn", text: include_str!("../../../std/core.cairn") }];

/// The packaged module named `name`, if there is one.
pub fn module(name: &str) -> Option<LibraryModule> {
    MODULES.iter().copied().find(|m| m.name == name)
}

/// Modules of the standard library that later tiers package (language §30); importing one is
/// refused with `E-UNSUPPORTED` rather than `E-IMPORT`, because the module exists.
pub const LATER_MODULES: &[&str] = &[
    "std.vec",
    "std.text",
    "std.io",
    "std.fs",
    "std.fmt",
    "std.math",
    "std.map",
    "std.arena",
    "std.sort",
    "std.mem",
    "std.time",
    "std.env",
    "std.net",
    "std.sys",
    "std.zlib",
    "std.wire",
    "std.derived",
    "std.image",
    "std.draw",
];
