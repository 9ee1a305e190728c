//! Links `cairn`, `cairn-serve` and `cairn-full` as position-dependent executables (`-no-pie`). A
//! position-independent executable is relocated by the loader at every start: in `cairn-full`,
//! which links LLVM and Z3 statically, that writes pointers into about 30 MB of tables (LLVM's
//! option and pass registries, vtables), each written page private to the process. Linked at a
//! fixed address those pages stay clean and are read only when used: `cairn-full --version` peaks
//! at 35 MiB instead of 45, and `cairn mcp` (then served by `cairn-full`) after 200 written edits
//! of a 10k-line program held 89 MiB instead of 97 (docs/architecture.md, "Three binaries"). The
//! cost is that the executable's own image is not placed at a random address; the heap, stack and
//! shared libraries still are.

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
