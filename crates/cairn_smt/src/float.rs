//! IEEE-754 floats in Z3's floating-point theory, which is exact for the language's float
//! semantics (round to nearest even, `-0.0 ≠ +0.0`, NaN compared unordered), plus the
//! conversions the `z3` crate does not wrap (bits to float, integers to float), made through
//! `z3-sys` on the thread's context.

use cairn_mir::FloatTy;
use z3::ast::RoundingMode;
use z3::ast::{Ast, BV, Float};
use z3::{Context, Sort};

pub fn fp_sort(ty: FloatTy) -> Sort {
    match ty {
        FloatTy::F32 => Sort::float32(),
        FloatTy::F64 => Sort::double(),
    }
}

pub fn bits_of(ty: FloatTy) -> u32 {
    match ty {
        FloatTy::F32 => 32,
        FloatTy::F64 => 64,
    }
}

/// The float whose IEEE bit pattern is `bits` (32 or 64 bits wide).
pub fn from_bits(bits: &BV, ty: FloatTy) -> Float {
    let ctx = Context::thread_local();
    let sort = fp_sort(ty);
    // SAFETY: every argument belongs to this thread's context, and Z3 returns a fresh term.
    unsafe {
        let ast = z3_sys::Z3_mk_fpa_to_fp_bv(ctx.get_z3_context(), bits.get_z3_ast(), sort.get_z3_sort())
            .expect("Z3 made the conversion");
        Float::wrap(&ctx, ast)
    }
}

pub fn zero_float(ty: FloatTy) -> Float {
    from_bits(&BV::from_u64(0, bits_of(ty)), ty)
}

pub fn rne() -> RoundingMode {
    RoundingMode::round_nearest_ties_to_even()
}

/// An integer converted to a float, rounded to nearest even (what `sitofp`/`uitofp` do).
pub fn from_int(value: &BV, signed: bool, ty: FloatTy) -> Float {
    let ctx = Context::thread_local();
    let sort = fp_sort(ty);
    let rm = rne();
    // SAFETY: as in `from_bits`.
    unsafe {
        let raw = ctx.get_z3_context();
        let ast = if signed {
            z3_sys::Z3_mk_fpa_to_fp_signed(raw, rm.get_z3_ast(), value.get_z3_ast(), sort.get_z3_sort())
        } else {
            z3_sys::Z3_mk_fpa_to_fp_unsigned(raw, rm.get_z3_ast(), value.get_z3_ast(), sort.get_z3_sort())
        }
        .expect("Z3 made the conversion");
        Float::wrap(&ctx, ast)
    }
}
