//! LLVM's process-wide options (its `cl::opt`s), which only its command-line parser sets: each
//! group is parsed once per process, and no option is named by two groups (LLVM refuses a second
//! occurrence of one).
//!
//! Loop alignment (issue 22). LLVM aligns an x86 loop's header to 16 bytes, so a 40–60-byte
//! inner loop often straddles a 64-byte line, and on this project's machines (AMD EPYC) such a
//! loop runs markedly slower than the same instructions within one line: the prefix-sum kernel's
//! checked loop — the very instructions clang emits for `__builtin_add_overflow` — took 0.45–0.71 s
//! across a line and 0.35–0.57 s inside one (bench/README.md). Innermost loops are aligned to 64
//! bytes (X86's `x86-experimental-pref-innermost-loop-alignment`, the one loop-alignment option
//! the code generator itself reads; llc's `-align-loops` is a flag of llc's, not of the library):
//! a few bytes of padding before each inner loop, which the code runs past once.
//! `CAIRN_ALIGN_LOOPS=N` (a power of two, 1–4096 bytes) sets another alignment, to measure both
//! ways.

use std::ffi::{CString, c_char};
use std::sync::Once;

use inkwell::llvm_sys::support::LLVMParseCommandLineOptions;

/// The alignment of an innermost loop's first block, in bytes.
const LOOP_ALIGNMENT: u32 = 64;

/// Sets `args` (LLVM option spellings) for the rest of the process.
pub(crate) fn parse(args: &[&str]) {
    let args: Vec<CString> =
        std::iter::once("cairn").chain(args.iter().copied()).map(|a| CString::new(a).expect("no NUL")).collect();
    let pointers: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    let overview = CString::new("cairn").expect("no NUL");
    // SAFETY: the pointers outlive the call; LLVM copies what it keeps.
    unsafe { LLVMParseCommandLineOptions(pointers.len() as i32, pointers.as_ptr(), overview.as_ptr()) };
}

/// The code generator's options, set before the first machine is made.
pub(crate) fn code_generation() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let alignment = std::env::var("CAIRN_ALIGN_LOOPS")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|n| n.is_power_of_two() && *n <= 4096)
            .unwrap_or(LOOP_ALIGNMENT);
        // The option takes the alignment's log2.
        parse(&[&format!("-x86-experimental-pref-innermost-loop-alignment={}", alignment.trailing_zeros())]);
    });
}
