//! Symbolic values and the memory they live in: the Z3 terms a MIR value becomes, how two of
//! them are merged under a condition (`ite`) where two paths join, and how a value is read or
//! written through a path of fields, payloads and elements.
//!
//! Memory is a vector of objects (one per local of every call, one per input array, one per
//! string literal); views and single borrows name an object and a path into it, so aliasing
//! through views of the same array is exact. An array local of `stack` storage is a vector of
//! element values (`Fixed`); an input view's backing store is a Z3 array from `u64` indices to
//! its scalar element (`Smt`).

use cairn_mir::{FloatTy, IntTy, MTy};
use z3::ast::{Array, Ast, BV, Bool, Dynamic, Float};

use crate::float::{fp_sort, zero_float};

/// Why a function left the modelled fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

pub type R<T> = Result<T, Unsupported>;

pub fn unsupported<T>(what: impl Into<String>) -> R<T> {
    Err(Unsupported(what.into()))
}

/// A symbolic value.
#[derive(Clone, Debug)]
pub enum SV {
    Void,
    Bool(Bool),
    Int(BV, IntTy),
    Float(Float, FloatTy),
    Record(Vec<SV>),
    /// A tag-only enum value (32 bits).
    Tag(BV),
    /// A sum: its tag and one payload per variant (every variant's, so merges stay structural).
    Sum(BV, Vec<Option<SV>>),
    /// Array storage: each element.
    Fixed(Vec<SV>),
    /// Array storage of scalars with symbolic contents, and the element type.
    Smt(Array, MTy),
    /// Elements `start..start + len` of the array at `obj`/`path`.
    View {
        obj: usize,
        path: Vec<Step>,
        start: BV,
        len: BV,
    },
    /// A single borrow of the place `obj`/`path`.
    Ptr {
        obj: usize,
        path: Vec<Step>,
    },
}

/// One step of a path into an object.
#[derive(Clone, Debug)]
pub enum Step {
    Field(u32),
    Payload(u32),
    Elem(BV),
}

pub fn int_bits(ty: IntTy) -> u32 {
    ty.bits()
}

/// `value` as a `bits`-wide two's-complement constant (at most 128 bits).
pub fn bv_const(value: i128, bits: u32) -> BV {
    assert!(bits <= 128, "constants are at most 128 bits wide");
    let mask = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    let raw = (value as u128) & mask;
    if bits <= 64 { BV::from_u64(raw as u64, bits) } else { BV::from_str(bits, &raw.to_string()).expect("a numeral") }
}

pub fn usize_const(value: u64) -> BV {
    BV::from_u64(value, 64)
}

/// A 64-bit index from an integer of any width (indices are unsigned).
pub fn to_index(bv: &BV) -> BV {
    let size = bv.get_size();
    if size < 64 {
        bv.zero_ext(64 - size)
    } else if size > 64 {
        bv.extract(63, 0)
    } else {
        bv.clone()
    }
}

/// The concrete value of a term, when it simplifies to a numeral.
pub fn concrete(bv: &BV) -> Option<u64> {
    bv.simplify().as_u64()
}

/// Whether a value may be an element of an `Smt` array.
pub fn scalar(ty: &MTy) -> bool {
    matches!(ty, MTy::Bool | MTy::Int(_) | MTy::Float(_) | MTy::Enum { .. })
}

pub fn sort_of(ty: &MTy) -> R<z3::Sort> {
    Ok(match ty {
        MTy::Bool => z3::Sort::bool(),
        MTy::Int(i) => z3::Sort::bitvector(int_bits(*i)),
        MTy::Float(f) => fp_sort(*f),
        MTy::Enum { .. } => z3::Sort::bitvector(32),
        other => return unsupported(format!("an array of {other}")),
    })
}

pub fn to_dyn(value: &SV) -> R<Dynamic> {
    Ok(match value {
        SV::Bool(b) => Dynamic::from_ast(b),
        SV::Int(b, _) | SV::Tag(b) => Dynamic::from_ast(b),
        SV::Float(f, _) => Dynamic::from_ast(f),
        _ => return unsupported("a non-scalar array element"),
    })
}

pub fn from_dyn(value: Dynamic, ty: &MTy) -> R<SV> {
    let bad = || Unsupported(format!("an array element of {ty}"));
    Ok(match ty {
        MTy::Bool => SV::Bool(value.as_bool().ok_or_else(bad)?),
        MTy::Int(i) => SV::Int(value.as_bv().ok_or_else(bad)?, *i),
        MTy::Float(f) => SV::Float(value.as_float().ok_or_else(bad)?, *f),
        MTy::Enum { .. } => SV::Tag(value.as_bv().ok_or_else(bad)?),
        _ => return Err(bad()),
    })
}

/// `if c { a } else { b }`, structurally; `None` when the two have different shapes (views of
/// different objects, say), which keeps the two states apart.
pub fn merge(c: &Bool, a: &SV, b: &SV) -> Option<SV> {
    Some(match (a, b) {
        (SV::Void, SV::Void) => SV::Void,
        (SV::Bool(x), SV::Bool(y)) => SV::Bool(c.ite(x, y)),
        (SV::Int(x, t), SV::Int(y, u)) if t == u => SV::Int(c.ite(x, y), *t),
        (SV::Float(x, t), SV::Float(y, u)) if t == u => SV::Float(c.ite(x, y), *t),
        (SV::Tag(x), SV::Tag(y)) => SV::Tag(c.ite(x, y)),
        (SV::Record(x), SV::Record(y)) if x.len() == y.len() => {
            SV::Record(x.iter().zip(y).map(|(x, y)| merge(c, x, y)).collect::<Option<_>>()?)
        }
        (SV::Sum(tx, px), SV::Sum(ty, py)) if px.len() == py.len() => {
            let mut payloads = Vec::with_capacity(px.len());
            for (x, y) in px.iter().zip(py) {
                payloads.push(match (x, y) {
                    (Some(x), Some(y)) => Some(merge(c, x, y)?),
                    (Some(v), None) | (None, Some(v)) => Some(v.clone()),
                    (None, None) => None,
                });
            }
            SV::Sum(c.ite(tx, ty), payloads)
        }
        (SV::Fixed(x), SV::Fixed(y)) if x.len() == y.len() => {
            SV::Fixed(x.iter().zip(y).map(|(x, y)| merge(c, x, y)).collect::<Option<_>>()?)
        }
        (SV::Smt(x, t), SV::Smt(y, u)) if t == u => SV::Smt(c.ite(x, y), t.clone()),
        (SV::View { obj: o1, path: p1, start: s1, len: l1 }, SV::View { obj: o2, path: p2, start: s2, len: l2 })
            if o1 == o2 =>
        {
            SV::View { obj: *o1, path: merge_path(c, p1, p2)?, start: c.ite(s1, s2), len: c.ite(l1, l2) }
        }
        (SV::Ptr { obj: o1, path: p1 }, SV::Ptr { obj: o2, path: p2 }) if o1 == o2 => {
            SV::Ptr { obj: *o1, path: merge_path(c, p1, p2)? }
        }
        _ => return None,
    })
}

fn merge_path(c: &Bool, a: &[Step], b: &[Step]) -> Option<Vec<Step>> {
    if a.len() != b.len() {
        return None;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (Step::Field(i), Step::Field(j)) if i == j => Some(Step::Field(*i)),
            (Step::Payload(i), Step::Payload(j)) if i == j => Some(Step::Payload(*i)),
            (Step::Elem(i), Step::Elem(j)) => Some(Step::Elem(c.ite(i, j))),
            _ => None,
        })
        .collect()
}

/// Reads `steps` into `value`.
pub fn get(value: &SV, steps: &[Step]) -> R<SV> {
    let Some((step, rest)) = steps.split_first() else { return Ok(value.clone()) };
    match (value, step) {
        (SV::Record(fields), Step::Field(i)) => match fields.get(*i as usize) {
            Some(field) => get(field, rest),
            None => unsupported("a field past a record's end"),
        },
        (SV::Sum(_, payloads), Step::Payload(i)) => match payloads.get(*i as usize) {
            Some(Some(payload)) => get(payload, rest),
            _ => unsupported("a payload the variant does not carry"),
        },
        (SV::Fixed(items), Step::Elem(i)) => {
            if items.is_empty() {
                return unsupported("an element of an empty array");
            }
            if let Some(k) = concrete(i) {
                // Past the end only on a path a bounds guard already cut off: any element does.
                let k = (k as usize).min(items.len() - 1);
                return get(&items[k], rest);
            }
            let mut acc = get(&items[items.len() - 1], rest)?;
            for (j, item) in items.iter().enumerate().rev().skip(1) {
                let here = get(item, rest)?;
                acc = merge(&i.eq(usize_const(j as u64)), &here, &acc)
                    .ok_or_else(|| Unsupported("elements of different shapes read at one index".into()))?;
            }
            Ok(acc)
        }
        (SV::Smt(array, ty), Step::Elem(i)) if rest.is_empty() => from_dyn(array.select(i), ty),
        _ => unsupported("a path the value does not have"),
    }
}

/// `value` with `steps` replaced by `new`.
pub fn put(value: &SV, steps: &[Step], new: &SV) -> R<SV> {
    let Some((step, rest)) = steps.split_first() else { return Ok(new.clone()) };
    match (value, step) {
        (SV::Record(fields), Step::Field(i)) if (*i as usize) < fields.len() => {
            let mut fields = fields.clone();
            fields[*i as usize] = put(&fields[*i as usize], rest, new)?;
            Ok(SV::Record(fields))
        }
        (SV::Sum(tag, payloads), Step::Payload(i)) if (*i as usize) < payloads.len() => {
            let mut payloads = payloads.clone();
            payloads[*i as usize] = Some(match &payloads[*i as usize] {
                Some(p) => put(p, rest, new)?,
                None if rest.is_empty() => new.clone(),
                None => return unsupported("a write into a payload the variant does not carry"),
            });
            Ok(SV::Sum(tag.clone(), payloads))
        }
        (SV::Fixed(items), Step::Elem(i)) => {
            let mut items = items.clone();
            if items.is_empty() {
                return Ok(SV::Fixed(items));
            }
            if let Some(k) = concrete(i) {
                if (k as usize) < items.len() {
                    items[k as usize] = put(&items[k as usize], rest, new)?;
                }
                return Ok(SV::Fixed(items));
            }
            for (j, item) in items.iter_mut().enumerate() {
                let written = put(item, rest, new)?;
                *item = merge(&i.eq(usize_const(j as u64)), &written, item)
                    .ok_or_else(|| Unsupported("an element written with a different shape".into()))?;
            }
            Ok(SV::Fixed(items))
        }
        (SV::Smt(array, ty), Step::Elem(i)) if rest.is_empty() => {
            Ok(SV::Smt(array.store(i, &to_dyn(new)?), ty.clone()))
        }
        _ => unsupported("a write through a path the value does not have"),
    }
}

/// Structural equality of two observations: `=` on floats (NaN equals NaN, `-0.0` differs
/// from `+0.0`), payloads compared only for the active variant.
pub fn same(a: &SV, b: &SV) -> R<Bool> {
    Ok(match (a, b) {
        (SV::Void, SV::Void) => Bool::from_bool(true),
        (SV::Bool(x), SV::Bool(y)) => x.iff(y),
        (SV::Int(x, _), SV::Int(y, _)) | (SV::Tag(x), SV::Tag(y)) if x.get_size() == y.get_size() => x.eq(y),
        (SV::Float(x, t), SV::Float(y, u)) if t == u => x.eq(y),
        (SV::Record(x), SV::Record(y)) if x.len() == y.len() => {
            let parts = x.iter().zip(y).map(|(x, y)| same(x, y)).collect::<R<Vec<_>>>()?;
            Bool::and(&parts)
        }
        (SV::Sum(tx, px), SV::Sum(ty, py)) if px.len() == py.len() => {
            let mut parts = vec![tx.eq(ty)];
            for (j, (x, y)) in px.iter().zip(py).enumerate() {
                if let (Some(x), Some(y)) = (x, y) {
                    parts.push(tx.eq(bv_const(j as i128, 32)).implies(&same(x, y)?));
                }
            }
            Bool::and(&parts)
        }
        (SV::Fixed(x), SV::Fixed(y)) if x.len() == y.len() => {
            let parts = x.iter().zip(y).map(|(x, y)| same(x, y)).collect::<R<Vec<_>>>()?;
            Bool::and(&parts)
        }
        _ => return unsupported("an observation that is a view or a borrow"),
    })
}

/// Whether some float in the observation is NaN.
pub fn has_nan(value: &SV) -> Bool {
    match value {
        SV::Float(f, _) => f.is_nan(),
        SV::Record(items) | SV::Fixed(items) => Bool::or(&items.iter().map(has_nan).collect::<Vec<_>>()),
        SV::Sum(tag, payloads) => Bool::or(
            &payloads
                .iter()
                .enumerate()
                .filter_map(|(j, p)| p.as_ref().map(|p| tag.eq(bv_const(j as i128, 32)) & has_nan(p)))
                .collect::<Vec<_>>(),
        ),
        _ => Bool::from_bool(false),
    }
}

/// The zero value of a type (what `Zeroed` stores and what a fresh local holds), allocating
/// storage for views and borrows in `objs`.
pub fn zero(ty: &MTy, objs: &mut Vec<SV>) -> R<SV> {
    Ok(match ty {
        MTy::Void => SV::Void,
        MTy::Bool => SV::Bool(Bool::from_bool(false)),
        MTy::Int(i) => SV::Int(bv_const(0, int_bits(*i)), *i),
        MTy::Float(f) => SV::Float(zero_float(*f), *f),
        MTy::Record { fields, .. } => SV::Record(fields.iter().map(|f| zero(f, objs)).collect::<R<_>>()?),
        MTy::Enum { .. } => SV::Tag(bv_const(0, 32)),
        MTy::Sum { variants, .. } => SV::Sum(
            bv_const(0, 32),
            variants.iter().map(|v| v.as_ref().map(|t| zero(t, objs)).transpose()).collect::<R<_>>()?,
        ),
        // A function value's zero (`exec.rs`: 0, not callable).
        MTy::Fn { .. } => SV::Tag(bv_const(0, 32)),
        MTy::Buf(_) | MTy::DynBox(_) | MTy::Named(_) => return unsupported("a heap owner (Buf, Dyn)"),
        MTy::Array(element, n) => {
            if *n > 4096 {
                return unsupported(format!("a local array of {n} elements"));
            }
            let element = zero(element, objs)?;
            SV::Fixed(vec![element; *n as usize])
        }
        MTy::View(_) => {
            objs.push(SV::Fixed(Vec::new()));
            SV::View { obj: objs.len() - 1, path: Vec::new(), start: usize_const(0), len: usize_const(0) }
        }
        MTy::Ptr(inner) => {
            let value = zero(inner, objs)?;
            objs.push(value);
            SV::Ptr { obj: objs.len() - 1, path: Vec::new() }
        }
    })
}
