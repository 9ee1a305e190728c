//! Operations on evaluator values (the evaluator's arithmetic, `mod.rs` its machine): raw
//! integer operations wrapped to their type, IEEE float operations, conversions, the zero value
//! of a type, and floats formatted exactly as the runtime prints them.

use super::{E, Value, unsupported};
use crate::{BinOp, FloatTy, IntTy, MTy, UnOp};

pub(super) fn fits_float(f: f64, lo: i128, hi: i128) -> bool {
    if f.is_nan() {
        return false;
    }
    let t = f.trunc();
    t >= lo as f64 && t < (hi as f64) + 1.0
}

/// Wraps an exact integer to its type.
pub(super) fn wrap(v: i128, ty: IntTy) -> i128 {
    let bits = ty.bits();
    let mask = (1i128 << bits) - 1;
    let low = v & mask;
    if ty.signed() && low >= 1i128 << (bits - 1) { low - (1i128 << bits) } else { low }
}

pub(super) fn binary(op: BinOp, a: Value, b: Value) -> E<Value> {
    Ok(match (a, b) {
        (Value::Int(x, t), Value::Int(y, _)) => match op {
            BinOp::Add => Value::Int(wrap(x + y, t), t),
            BinOp::Sub => Value::Int(wrap(x - y, t), t),
            BinOp::Mul => Value::Int(wrap(x.wrapping_mul(y), t), t),
            BinOp::Div => Value::Int(wrap(x / y, t), t),
            BinOp::Rem => Value::Int(wrap(x % y, t), t),
            BinOp::And => Value::Int(wrap(x & y, t), t),
            BinOp::Or => Value::Int(wrap(x | y, t), t),
            BinOp::Xor => Value::Int(wrap(x ^ y, t), t),
            BinOp::Shl => Value::Int(wrap(x << (y as u32), t), t),
            BinOp::Shr => {
                let unsigned = if x < 0 { x + (1i128 << t.bits()) } else { x };
                Value::Int(wrap(if t.signed() { x >> (y as u32) } else { unsigned >> (y as u32) }, t), t)
            }
            BinOp::Eq => Value::Bool(x == y),
            BinOp::Ne => Value::Bool(x != y),
            BinOp::Lt => Value::Bool(x < y),
            BinOp::Le => Value::Bool(x <= y),
            BinOp::Gt => Value::Bool(x > y),
            BinOp::Ge => Value::Bool(x >= y),
            BinOp::Min => Value::Int(x.min(y), t),
            BinOp::Max => Value::Int(x.max(y), t),
        },
        (Value::F64(x), Value::F64(y)) => float_binary(op, x, y, Value::F64)?,
        (Value::F32(x), Value::F32(y)) => float_binary(op, f64::from(x), f64::from(y), |v| Value::F32(v as f32))?,
        (Value::Bool(x), Value::Bool(y)) => match op {
            BinOp::Eq => Value::Bool(x == y),
            BinOp::Ne => Value::Bool(x != y),
            BinOp::And => Value::Bool(x & y),
            BinOp::Or => Value::Bool(x | y),
            BinOp::Xor => Value::Bool(x ^ y),
            other => return unsupported(format!("{other:?} on bools")),
        },
        (Value::Tag(x), Value::Tag(y)) => match op {
            BinOp::Eq => Value::Bool(x == y),
            BinOp::Ne => Value::Bool(x != y),
            other => return unsupported(format!("{other:?} on tags")),
        },
        (a, b) => return unsupported(format!("{op:?} on {a:?} and {b:?}")),
    })
}

/// A float operation; an `f32` one is computed in `f64` and rounded once, which is exact for
/// `+ - * /` (the `f64` result of two `f32` operands rounds correctly to `f32`).
fn float_binary(op: BinOp, x: f64, y: f64, make: impl Fn(f64) -> Value) -> E<Value> {
    Ok(match op {
        BinOp::Add => make(x + y),
        BinOp::Sub => make(x - y),
        BinOp::Mul => make(x * y),
        BinOp::Div => make(x / y),
        BinOp::Rem => make(x % y),
        BinOp::Eq => Value::Bool(x == y),
        BinOp::Ne => Value::Bool(x != y),
        BinOp::Lt => Value::Bool(x < y),
        BinOp::Le => Value::Bool(x <= y),
        BinOp::Gt => Value::Bool(x > y),
        BinOp::Ge => Value::Bool(x >= y),
        other => return unsupported(format!("{other:?} on floats")),
    })
}

pub(super) fn unary(op: UnOp, a: Value) -> E<Value> {
    Ok(match (op, a) {
        (UnOp::Neg, Value::Int(x, t)) => Value::Int(wrap(-x, t), t),
        (UnOp::Neg, Value::F64(x)) => Value::F64(-x),
        (UnOp::Neg, Value::F32(x)) => Value::F32(-x),
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnOp::BitNot, Value::Int(x, t)) => Value::Int(wrap(!x, t), t),
        (UnOp::Abs, Value::Int(x, t)) => Value::Int(wrap(x.abs(), t), t),
        (UnOp::Abs, Value::F64(x)) => Value::F64(x.abs()),
        (UnOp::Abs, Value::F32(x)) => Value::F32(x.abs()),
        (UnOp::Sqrt, Value::F64(x)) => Value::F64(x.sqrt()),
        (UnOp::Sqrt, Value::F32(x)) => Value::F32(x.sqrt()),
        (UnOp::Floor, Value::F64(x)) => Value::F64(x.floor()),
        (UnOp::Floor, Value::F32(x)) => Value::F32(x.floor()),
        (UnOp::Ceil, Value::F64(x)) => Value::F64(x.ceil()),
        (UnOp::Ceil, Value::F32(x)) => Value::F32(x.ceil()),
        (UnOp::Trunc, Value::F64(x)) => Value::F64(x.trunc()),
        (UnOp::Trunc, Value::F32(x)) => Value::F32(x.trunc()),
        (UnOp::ToBits, Value::F64(x)) => Value::Int(i128::from(x.to_bits()), IntTy::U64),
        (UnOp::ToBits, Value::F32(x)) => Value::Int(i128::from(x.to_bits()), IntTy::U32),
        (op, a) => return unsupported(format!("{op:?} on {a:?}")),
    })
}

pub(super) fn cast(to: &MTy, a: Value) -> E<Value> {
    Ok(match (to, a) {
        (MTy::Int(t), Value::Int(x, _)) => Value::Int(wrap(x, *t), *t),
        (MTy::Int(t), Value::F64(x)) => Value::Int(x.trunc() as i128, *t),
        (MTy::Int(t), Value::F32(x)) => Value::Int(x.trunc() as i128, *t),
        (MTy::Float(FloatTy::F64), Value::Int(x, _)) => Value::F64(x as f64),
        (MTy::Float(FloatTy::F32), Value::Int(x, _)) => Value::F32(x as f32),
        (MTy::Float(FloatTy::F64), Value::F32(x)) => Value::F64(f64::from(x)),
        (MTy::Float(FloatTy::F32), Value::F64(x)) => Value::F32(x as f32),
        (_, v) => v,
    })
}

/// The zero value of a type (what `zeroed` storage and a fresh local hold).
pub(super) fn zero(ty: &MTy) -> Value {
    match ty {
        MTy::Void => Value::Void,
        MTy::Bool => Value::Bool(false),
        MTy::Int(i) => Value::Int(0, *i),
        MTy::Float(FloatTy::F32) => Value::F32(0.0),
        MTy::Float(FloatTy::F64) => Value::F64(0.0),
        MTy::Record { fields, .. } => Value::Record(fields.iter().map(zero).collect()),
        MTy::Enum { .. } => Value::Tag(0),
        MTy::Sum { .. } => Value::Sum(0, None),
        MTy::View(_) => Value::View { cell: 0, path: Vec::new(), start: 0, len: 0 },
        MTy::Ptr(_) => Value::Ptr { cell: 0, path: Vec::new() },
        MTy::Array(elem, n) => Value::Array((0..*n).map(|_| zero(elem)).collect()),
        MTy::Buf(_) => Value::Buf { cell: None, len: 0 },
        MTy::DynBox(reference) => zero(reference),
        MTy::Named(named) => zero(named.body()),
        MTy::Fn { .. } => Value::Fn(None),
    }
}

/// A float as `print` writes it (language §13.1): the fewest digits that read back to the same
/// value of its type, in ECMAScript's layout; `0`, `-0`, `inf`, `-inf`, `nan`, `-nan`.
pub fn format_float(value: f64, single: bool) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Rust's `{:e}` writes the shortest round-trip digits of the value's own type.
    let text = if single { format!("{:e}", value as f32) } else { format!("{value:e}") };
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let k = digits.len() as i32;
    let n = exponent.parse::<i32>().unwrap_or(0) + 1;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::format_float;

    #[test]
    fn floats_print_as_the_spec_lays_them_out() {
        let cases: [(f64, &str); 12] = [
            (100000.0, "100000"),
            (1.5, "1.5"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-0.0, "-0"),
            (0.1, "0.1"),
            (f64::INFINITY, "inf"),
            (-2.5, "-2.5"),
        ];
        for (value, text) in cases {
            assert_eq!(format_float(value, false), text);
        }
        assert_eq!(format_float(f64::from(0.1f32), true), "0.1");
        assert_eq!(format_float(f64::from(3.4028235e38f32), true), "3.4028235e+38");
    }
}
