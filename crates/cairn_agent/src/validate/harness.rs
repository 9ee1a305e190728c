//! The CAIRN text of a validation harness: one `test` block per case and run, appended to the
//! file that declares the implementation (so the reference and the implementation are named as
//! their module names them, and a test may call the implementation by name).
//!
//! A block makes the case's inputs — a `let` per extent and scalar named like the parameter, a
//! zeroed `buffer` per view filled by its pattern (a `@device` view's buffer filled on the host
//! and transferred in) — calls the function, and prints what it returns and then every element
//! of every `rw` view, one value a line (floats as their bits; device elements transferred back
//! first).
//! An implementation's block first tests the `when` condition through a helper function with the
//! implementation's parameters and condition (`cairn_validate_when`), and prints only
//! [`NOT_RUN`] where the condition does not hold.

use std::fmt::Write;

use cairn_hir::types::{FloatTy, IntTy, Place};

use super::cases::{Case, Fed, Pattern, Scalar, Shape};

/// What an implementation's block prints where its condition does not hold.
pub const NOT_RUN: &str = "cairn-validate: condition false";

/// The implementation as the harness calls it.
pub struct Callee {
    /// `g` or `g[8]`.
    pub call: String,
    /// The helper's declaration (`fn cairn_validate_when[K:nat](params) -> bool = cond;`), when the
    /// implementation has a condition, and how to call it (`cairn_validate_when[8]`).
    pub when: Option<(String, String)>,
}

/// Which function a block calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// The reference, without a selection.
    Reference,
    /// The implementation, where its condition holds.
    Implementation,
    /// The reference under `plan f use g;`.
    Dispatch,
}

impl Run {
    pub fn name(self) -> &'static str {
        match self {
            Run::Reference => "reference",
            Run::Implementation => "implementation",
            Run::Dispatch => "dispatch",
        }
    }
}

/// The name of a case's block.
pub fn block_name(index: usize, run: Run) -> String {
    format!("cairn_validate_{index}_{}", run.name())
}

/// The harness text for `cases`, each run once per entry of `runs`.
pub fn harness(shape: &Shape, cases: &[Case], runs: &[Run], reference: &str, callee: &Callee) -> String {
    let mut out = String::from("\n// cairn validate: generated harness\n");
    if let (Some((declaration, _)), true) = (&callee.when, runs.contains(&Run::Implementation)) {
        out.push_str(declaration);
        out.push('\n');
    }
    for (index, case) in cases.iter().enumerate() {
        for &run in runs {
            let _ = writeln!(out, "test {} {{", block_name(index, run));
            out.push_str(&setup(shape, case));
            let args = arguments(shape, case);
            let (call, guarded) = match run {
                Run::Reference | Run::Dispatch => (format!("{reference}({args})"), None),
                Run::Implementation => {
                    (format!("{}({args})", callee.call), callee.when.as_ref().map(|(_, w)| format!("{w}({args})")))
                }
            };
            let mut body = String::new();
            match shape.ret {
                Some(ret) => {
                    let _ = writeln!(body, "  let cairn_result:{} = {call};", ret.name());
                    let _ = writeln!(body, "  println({});", shown(ret, "cairn_result"));
                }
                None => {
                    let _ = writeln!(body, "  {call};");
                }
            }
            // A device view's elements come back to the host buffer before they are printed.
            for (name, fed) in &shape.params {
                if let Fed::View { rw: true, place: Place::Device, .. } = fed {
                    let _ = writeln!(body, "  transfer(cv_{name}, cd_{name});");
                }
            }
            for (name, fed) in &shape.params {
                if let Fed::View { elem, rw: true, .. } = fed {
                    let (offset, length) = placement(shape, case, fed);
                    let _ = writeln!(
                        body,
                        "  for cairn_i in 0..{length} {{ println({}); }}",
                        shown(*elem, &format!("cv_{name}[{offset} + cairn_i]"))
                    );
                }
            }
            match guarded {
                Some(condition) => {
                    let _ = writeln!(out, "  if {condition} {{");
                    for line in body.lines() {
                        let _ = writeln!(out, "  {line}");
                    }
                    let _ = writeln!(out, "  }} else {{\n    println(\"{NOT_RUN}\");\n  }}");
                }
                None => out.push_str(&body),
            }
            out.push_str("}\n");
        }
    }
    out
}

/// A value as a block prints it: floats as their bits.
fn shown(ty: Scalar, value: &str) -> String {
    match ty {
        Scalar::Float(_) => format!("to_bits({value})"),
        _ => value.to_string(),
    }
}

/// Where a view's elements lie in its buffer, and how many.
fn placement(shape: &Shape, case: &Case, fed: &Fed) -> (u64, u64) {
    let Fed::View { extent, .. } = fed else { return (0, 0) };
    let length = shape.length(case, *extent);
    let offset = u64::from(case.pattern == Pattern::Offset);
    (offset, length)
}

fn arguments(shape: &Shape, case: &Case) -> String {
    let args: Vec<String> = shape
        .params
        .iter()
        .map(|(name, fed)| match fed {
            Fed::View { place, .. } => {
                let (offset, length) = placement(shape, case, fed);
                let cells = if *place == Place::Device { "cd" } else { "cv" };
                format!("{cells}_{name}[{offset}..{}]", offset + length)
            }
            _ => name.clone(),
        })
        .collect();
    args.join(", ")
}

/// The `let`s and buffers of a case.
fn setup(shape: &Shape, case: &Case) -> String {
    let mut out = String::new();
    for (name, fed) in &shape.params {
        match fed {
            Fed::Extent => {
                let _ = writeln!(out, "  let {name}:usize = {};", case.extent_of(name));
            }
            Fed::Scalar(scalar) => {
                let value = case.scalars.get(name).map(String::as_str).unwrap_or("0");
                let _ = writeln!(out, "  let {name}:{} = {};", scalar.name(), literal(*scalar, value));
            }
            Fed::View { elem, place, .. } => {
                let (offset, length) = placement(shape, case, fed);
                let capacity = offset + length + 1;
                let cells = format!("cv_{name}");
                // Pinned and unified memory is filled where it is; device memory is filled on
                // the host and transferred in below.
                let placed = match place {
                    Place::Pinned | Place::Unified => format!("@{}", place.name()),
                    Place::Host | Place::Device => String::new(),
                };
                let _ = writeln!(out, "  buffer {cells}:{}[{capacity}]{placed} = zeroed;", elem.name());
                match case.views.get(name) {
                    // Given element by element (a counterexample), at the view's place.
                    Some(values) => {
                        for (i, value) in values.iter().enumerate() {
                            let _ = writeln!(out, "  {cells}[{}] = {};", offset + i as u64, literal(*elem, value));
                        }
                    }
                    None => out.push_str(&fill(&cells, *elem, capacity, case)),
                }
                if *place == Place::Device {
                    let _ = writeln!(out, "  buffer cd_{name}:{}[{capacity}]@device = zeroed;", elem.name());
                    let _ = writeln!(out, "  transfer(cd_{name}, {cells});");
                }
            }
        }
    }
    out
}

/// A scalar literal as a `let` of its type takes it (a signed minimum written so that it never
/// overflows).
fn literal(scalar: Scalar, value: &str) -> String {
    if let Scalar::Int(int) = scalar
        && int.signed()
        && value.starts_with('-')
        && value.trim_start_matches('-').parse::<i128>().ok() == Some(-int.range().0)
    {
        return format!("{} - 1", int.range().0 + 1);
    }
    value.to_string()
}

/// The statements that fill a view's buffer by the case's pattern.
fn fill(cells: &str, elem: Scalar, capacity: u64, case: &Case) -> String {
    let maximum = match elem {
        Scalar::Int(int) => int.range().1.to_string(),
        Scalar::Float(FloatTy::F64) => "1e300".into(),
        Scalar::Float(FloatTy::F32) => "3e38".into(),
        Scalar::Bool => "true".into(),
    };
    let one = match elem {
        Scalar::Float(_) => "1.0",
        Scalar::Bool => "true",
        Scalar::Int(_) => "1",
    };
    let ascending = match elem {
        Scalar::Int(int) if int.bits() < 64 => format!("{}(cairn_i & {})", int.name(), int.range().1),
        Scalar::Int(int) if int.signed() => format!("{}(cairn_i & 9223372036854775807)", int.name()),
        Scalar::Int(int) => format!("{}(cairn_i)", int.name()),
        Scalar::Float(float) => format!("{}(cairn_i)", float.name()),
        Scalar::Bool => "cairn_i % 2 == 1".into(),
    };
    let each = |value: &str| format!("  for cairn_i in 0..{capacity} {{ {cells}[cairn_i] = {value}; }}\n");
    match case.pattern {
        Pattern::Zeroed => String::new(),
        Pattern::Ones => each(one),
        Pattern::Ascending | Pattern::Offset => each(&ascending),
        Pattern::Maximum => each(&maximum),
        Pattern::Alternating => {
            format!("  for cairn_i in 0..{capacity} {{ if cairn_i % 2 == 1 {{ {cells}[cairn_i] = {maximum}; }} }}\n")
        }
        Pattern::Random => {
            let state = format!("{cells}_seed");
            let drawn = match elem {
                Scalar::Int(IntTy::U64) | Scalar::Int(IntTy::Usize) => format!("{}({state})", elem.name()),
                Scalar::Int(int) if int.signed() => format!("{}(shr({state}, {}))", int.name(), 65 - int.bits()),
                Scalar::Int(int) => format!("{}(shr({state}, {}))", int.name(), 64 - int.bits()),
                Scalar::Float(FloatTy::F64) => format!("f64(shr({state}, 11)) / 9007199254740992.0 * 2.0 - 1.0"),
                Scalar::Float(FloatTy::F32) => format!("f32(shr({state}, 40)) / 16777216.0 * 2.0 - 1.0"),
                Scalar::Bool => format!("({state} & 1) == 1"),
            };
            let negate = match elem {
                Scalar::Int(int) if int.signed() => {
                    format!(" if ({state} & 2) == 2 {{ {cells}[cairn_i] = -{cells}[cairn_i]; }}")
                }
                _ => String::new(),
            };
            format!(
                "  let mut {state}:u64 = {};\n  for cairn_i in 0..{capacity} {{ {state} = add_wrap(mul_wrap({state}, 6364136223846793005), 1442695040888963407); {cells}[cairn_i] = {drawn};{negate} }}\n",
                case.seed
            )
        }
    }
}

/// The name of a timing block: `setup` makes the inputs only, `run` makes them and calls.
pub fn timing_name(index: usize, run: bool) -> String {
    format!("cairn_tune_{index}_{}", if run { "run" } else { "setup" })
}

/// The timing harness of `cairn tune`: per case, a block that only makes the inputs and one that
/// makes them and calls `function` `reps` times (the result kept alive by printing it once).
pub fn timing(shape: &Shape, cases: &[Case], function: &str, reps: &[u64]) -> String {
    let mut out = String::from("\n// cairn tune: generated timing harness\n");
    for (index, case) in cases.iter().enumerate() {
        let args = arguments(shape, case);
        let _ = writeln!(out, "test {} {{\n{}}}", timing_name(index, false), setup(shape, case));
        let _ = writeln!(out, "test {} {{", timing_name(index, true));
        out.push_str(&setup(shape, case));
        let reps = reps.get(index).copied().unwrap_or(1).max(1);
        match shape.ret {
            Some(ret) => {
                let _ = writeln!(out, "  let mut cairn_last:{} = {function}({args});", ret.name());
                let _ = writeln!(out, "  for cairn_r in 1..{reps} {{ cairn_last = {function}({args}); }}");
                let _ = writeln!(out, "  println({});", shown(ret, "cairn_last"));
            }
            None => {
                let _ = writeln!(out, "  for cairn_r in 0..{reps} {{ {function}({args}); }}");
            }
        }
        out.push_str("}\n");
    }
    out
}
