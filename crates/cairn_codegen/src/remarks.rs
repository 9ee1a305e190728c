//! LLVM's optimization remarks about loop vectorization, collected while a module is optimized
//! (`cairn explain`): why a loop was not vectorized, or with what width it was. LLVM emits
//! remarks only for passes its global options name, so the first collecting compile of a process
//! turns on the vectorizer's remarks; from then on every context of the process delivers them to
//! its diagnostic handler, and a compile that does not collect drops them (its handler ignores
//! everything but errors, which the pipeline reports itself).

use std::ffi::{CStr, c_void};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use inkwell::context::Context;
use inkwell::llvm_sys::LLVMDiagnosticSeverity;
use inkwell::llvm_sys::core::{LLVMContextSetDiagnosticHandler, LLVMGetDiagInfoDescription, LLVMGetDiagInfoSeverity};
use inkwell::llvm_sys::prelude::LLVMDiagnosticInfoRef;

/// Remarks gathered from one context, in the order LLVM gave them.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) remarks: Vec<String>,
    collecting: bool,
}

/// Whether this process turned the vectorizer's remarks on (every later context must then drop
/// what it is not asked to collect).
static ENABLED: AtomicBool = AtomicBool::new(false);

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// Turns the vectorizer's remarks on for this process (once).
fn enable() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ENABLED.store(true, Ordering::SeqCst);
        crate::options::parse(&[
            "-pass-remarks=loop-vectorize",
            "-pass-remarks-missed=loop-vectorize",
            "-pass-remarks-analysis=loop-vectorize",
        ]);
    });
}

extern "C" fn handle(info: LLVMDiagnosticInfoRef, context: *mut c_void) {
    // SAFETY: `context` is the `Collected` that `install` registered, alive for the whole compile
    // (it is uninstalled before it is dropped); `info` is valid for this call.
    unsafe {
        let collected = &mut *(context as *mut Collected);
        if !collected.collecting || LLVMGetDiagInfoSeverity(info) == LLVMDiagnosticSeverity::LLVMDSError {
            return;
        }
        let description = LLVMGetDiagInfoDescription(info);
        if description.is_null() {
            return;
        }
        let text = CStr::from_ptr(description).to_string_lossy().into_owned();
        inkwell::llvm_sys::core::LLVMDisposeMessage(description);
        collected.remarks.push(text);
    }
}

/// Registers `collected` as `context`'s diagnostic handler; with `collecting`, the vectorizer's
/// remarks are turned on first.
pub(crate) fn install(context: &Context, collected: &mut Collected, collecting: bool) {
    if collecting {
        enable();
    }
    collected.collecting = collecting;
    // SAFETY: the handler reads `collected` only while the context lives and `uninstall` runs
    // before `collected` goes away.
    unsafe {
        LLVMContextSetDiagnosticHandler(context.raw(), Some(handle), collected as *mut Collected as *mut c_void);
    }
}

/// Removes the handler (before the `Collected` it points at is dropped).
pub(crate) fn uninstall(context: &Context) {
    // SAFETY: a null handler restores LLVM's default.
    unsafe { LLVMContextSetDiagnosticHandler(context.raw(), None, std::ptr::null_mut()) };
}
