//! Concrete probing before any solver call: both versions run on the MIR evaluator over a
//! deterministic set of edge-case and pseudo-random inputs; an input on which they disagree is a
//! witness at once (it *is* a replay). Probing never decides equivalence — only the solver does
//! — but it finds most changes of behaviour in microseconds, including ones whose formulas the
//! solver cannot decide in time (float division, wide conversions).

use std::sync::Arc;

use cairn_mir::{FloatTy, Function, IntTy, MTy, ViewExtent};

use crate::replay::evaluate_counted;
use crate::{Observed, WValue, agree};

/// How many input tuples are tried, and the evaluator's step budget for each run.
const TRIES: usize = 400;
const FUEL: u64 = 200_000;
/// The steps all the runs of one probe may take together. A loop bounded by a wide random
/// integer runs each try out of fuel, and 800 such runs took seconds (issue 22: an unknown pair
/// must answer within a second); the budget is counted in steps, not time, so a probe finds the
/// same witness on every machine.
const TOTAL_FUEL: u64 = 8_000_000;

/// The evaluator's runs of one probe, within [`TOTAL_FUEL`].
struct Budget(u64);

impl Budget {
    fn evaluate(&mut self, functions: &[Arc<Function>], target: &Function, inputs: &[WValue]) -> Option<Observed> {
        if self.0 == 0 {
            return None;
        }
        let (observed, steps) = evaluate_counted(functions, target, inputs, FUEL.min(self.0));
        self.0 = self.0.saturating_sub(steps);
        Some(observed)
    }
}

/// A small deterministic generator (xorshift), so a run is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize].clone()
    }
}

fn ints(ty: IntTy, rng: &mut Rng) -> Vec<i128> {
    let (lo, hi) = ty.range();
    let mut v = vec![0, 1, 2, 3, 7, 100, 200, lo, hi, lo + 1, hi - 1, hi / 2, hi / 2 + 1];
    if ty.signed() {
        v.extend([-1, -2, -7, -100, lo / 2]);
    }
    for _ in 0..8 {
        let span = (hi - lo) as u128 + 1;
        v.push(lo + (u128::from(rng.next()) % span) as i128);
    }
    v.retain(|x| *x >= lo && *x <= hi);
    v
}

fn floats(ty: FloatTy, rng: &mut Rng) -> Vec<u64> {
    let base: [f64; 22] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        1.0 / 3.0,
        0.1,
        3.0,
        100.25,
        1048576.125,
        2147483647.5,
        -2147483648.75,
        1e300,
        -1e300,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        16777217.0,
    ];
    let mut v: Vec<u64> = match ty {
        FloatTy::F64 => base.iter().map(|x| x.to_bits()).collect(),
        FloatTy::F32 => base.iter().map(|x| u64::from((*x as f32).to_bits())).collect(),
    };
    for _ in 0..10 {
        let r = rng.next();
        v.push(match ty {
            // A random finite value of moderate size, and a random bit pattern.
            FloatTy::F64 => ((r % 2_000_000) as f64 / 997.0 - 1000.0).to_bits(),
            FloatTy::F32 => u64::from((((r % 2_000_000) as f32) / 997.0 - 1000.0).to_bits()),
        });
        v.push(match ty {
            FloatTy::F64 => rng.next(),
            FloatTy::F32 => rng.next() & 0xffff_ffff,
        });
    }
    v
}

/// One value of `ty`; `len` fixes a view's length.
fn value(ty: &MTy, rng: &mut Rng, len: Option<usize>) -> Option<WValue> {
    Some(match ty {
        MTy::Bool => WValue::Bool(rng.next().is_multiple_of(2)),
        MTy::Int(i) => {
            let choices = ints(*i, rng);
            WValue::Int(rng.pick(&choices))
        }
        MTy::Float(f) => {
            let choices = floats(*f, rng);
            WValue::Float(rng.pick(&choices))
        }
        MTy::Enum { variants, .. } => WValue::Tag((rng.next() % u64::from((*variants).max(1))) as u32),
        MTy::Record { fields, .. } => {
            WValue::Record(fields.iter().map(|f| value(f, rng, None)).collect::<Option<Vec<_>>>()?)
        }
        MTy::Sum { variants, .. } => {
            let t = (rng.next() % variants.len().max(1) as u64) as u32;
            let payload = match variants.get(t as usize)? {
                Some(p) => Some(Box::new(value(p, rng, None)?)),
                None => None,
            };
            WValue::Sum(t, payload)
        }
        MTy::View(element) => {
            let n = len.unwrap_or((rng.next() % 5) as usize);
            WValue::Array((0..n).map(|_| value(element, rng, None)).collect::<Option<Vec<_>>>()?)
        }
        MTy::Ptr(inner) => value(inner, rng, None)?,
        _ => return None,
    })
}

/// True when `target` reaches a call cycle (the evaluator would follow it thousands of calls
/// deep; the solver refuses recursion anyway).
fn recursive(functions: &[Arc<Function>], target: &Function) -> bool {
    fn visit<'a>(
        functions: &'a [Arc<Function>],
        f: &'a Function,
        stack: &mut Vec<&'a str>,
        done: &mut Vec<&'a str>,
    ) -> bool {
        if stack.contains(&&*f.symbol) {
            return true;
        }
        if done.contains(&&*f.symbol) {
            return false;
        }
        stack.push(&f.symbol);
        for block in &f.blocks {
            for inst in &block.insts {
                if let cairn_mir::Inst::Call { callee, .. } = inst
                    && let Some(g) = functions.iter().find(|g| g.symbol == *callee)
                    && visit(functions, g, stack, done)
                {
                    return true;
                }
            }
        }
        stack.pop();
        done.push(&f.symbol);
        false
    }
    visit(functions, target, &mut Vec::new(), &mut Vec::new())
}

/// What probing found.
pub enum Found {
    /// Inputs on which the two disagree, with what each did.
    Differs(Vec<WValue>, Observed, Observed),
    /// Inputs on which the reference traps.
    ReferenceTraps(Vec<WValue>, Observed),
}

/// Tries inputs on both versions; `assume` (a function over the same parameters) filters them.
#[allow(clippy::too_many_arguments)]
pub fn probe(
    old_functions: &[Arc<Function>],
    old: &Function,
    new_functions: &[Arc<Function>],
    new: &Function,
    assume: Option<(&[Arc<Function>], &Function)>,
    reference_must_not_trap: bool,
) -> Option<Found> {
    let params = old.params as usize;
    let types: Vec<&MTy> = old.locals[..params].iter().map(|l| &l.ty).collect();
    // usize parameters that are some view's extent take small values.
    let extent_of: Vec<Option<usize>> = (0..params)
        .map(|i| {
            old.extents.iter().find_map(|(view, extent)| match extent {
                ViewExtent::Param(p) if p.0 as usize == i => Some(view.0 as usize),
                _ => None,
            })
        })
        .collect();
    if old.extents.iter().any(|(_, e)| matches!(e, ViewExtent::Literal(n) if *n > 64))
        || recursive(old_functions, old)
        || recursive(new_functions, new)
        || assume.is_some_and(|(functions, f)| recursive(functions, f))
    {
        return None;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut budget = Budget(TOTAL_FUEL);
    for _ in 0..TRIES {
        let mut inputs: Vec<Option<WValue>> = vec![None; params];
        // Extents first, then the views they size, then the rest.
        for i in 0..params {
            if extent_of[i].is_some() {
                inputs[i] = Some(WValue::Int(i128::from((rng.next() % 5) as u32)));
            }
        }
        for i in 0..params {
            if inputs[i].is_some() {
                continue;
            }
            let len = old.extents.iter().find(|(v, _)| v.0 as usize == i).and_then(|(_, e)| match e {
                ViewExtent::Param(p) => match &inputs[p.0 as usize] {
                    Some(WValue::Int(n)) => Some(*n as usize),
                    _ => None,
                },
                ViewExtent::Literal(n) => Some(*n as usize),
            });
            inputs[i] = value(types[i], &mut rng, len);
        }
        let inputs = inputs.into_iter().collect::<Option<Vec<WValue>>>()?;
        if let Some((functions, function)) = assume {
            match budget.evaluate(functions, function, &inputs)? {
                Observed::Returned { value: WValue::Bool(true), .. } => {}
                _ => continue,
            }
        }
        let before = budget.evaluate(old_functions, old, &inputs)?;
        if matches!(before, Observed::NotRun(_)) {
            continue;
        }
        if reference_must_not_trap && before == Observed::Trap {
            return Some(Found::ReferenceTraps(inputs, before));
        }
        let after = budget.evaluate(new_functions, new, &inputs)?;
        if matches!(after, Observed::NotRun(_)) {
            continue;
        }
        if !agree(&before, &after) {
            return Some(Found::Differs(inputs, before, after));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budget counts the steps each run took and gives a run at most what is left: a loop
    /// run by a wide integer spends it, and no run starts once it is spent.
    #[test]
    fn runs_spend_the_budget_and_none_starts_past_it() {
        let text = "fn f(n:u64) -> u64 {\n  let mut i:u64 = 0;\n  while i < n { i += 1; }\n  return i;\n}\n";
        let mut workspace =
            cairn_hir::Workspace::new(vec![cairn_hir::SourceText { name: "p.cairn".into(), text: text.into() }]);
        assert!(workspace.check().refusal.is_none());
        let functions = cairn_mir::program_mir(workspace.db()).functions;
        let f = functions.iter().find(|f| &*f.name == "f").expect("f").clone();
        let mut budget = Budget(5_000);
        let short = budget.evaluate(&functions, &f, &[WValue::Int(3)]).expect("a run");
        assert!(matches!(short, Observed::Returned { .. }), "{short:?}");
        assert!(budget.0 < 5_000, "the run's steps are counted");
        let long = budget.evaluate(&functions, &f, &[WValue::Int(1 << 40)]).expect("a run");
        assert!(matches!(long, Observed::NotRun(_)), "{long:?}");
        assert_eq!(budget.0, 0, "the long run took what was left");
        assert!(budget.evaluate(&functions, &f, &[WValue::Int(3)]).is_none(), "no run past the budget");
    }
}
