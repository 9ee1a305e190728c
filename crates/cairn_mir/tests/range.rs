//! The range analysis (`cairn_mir::range`): the guards it discharges — the examples language §15
//! names among them — with the facts that prove each, the guards it must leave in force, the
//! audit that re-checks every proof, and the verifier that refuses a discharge its facts do not
//! imply.

use std::sync::Arc;

mod common;

use cairn_mir::range::{Fact, audit};
use cairn_mir::{BinOp, Check, Const, Function, GuardKind, Inst, IntTy, Local, Operand, Place};
use common::lowered;

fn function<'a>(functions: &'a [Arc<Function>], name: &str) -> &'a Function {
    functions.iter().find(|f| &*f.name == name).unwrap_or_else(|| panic!("no function {name}"))
}

/// The guards of `kind` in a function, as (discharged by the range analysis, still in force).
fn tally(f: &Function, kind: GuardKind) -> (usize, usize) {
    let guards: Vec<_> = f.guards().filter(|g| g.kind == kind).collect();
    (guards.iter().filter(|g| g.elided && !g.facts.is_empty()).count(), guards.iter().filter(|g| !g.elided).count())
}

const EXAMPLES: &str = "
fn after_return(n:usize, x:ro<u64>[n], k:usize) -> u64 {
  if k >= n {
    return 0;
  }
  return x[k];
}

fn under_positive(n:usize, x:ro<u64>[n], i:usize) -> u64 {
  if i > 0 && i < n {
    return x[i - 1];
  }
  return 0;
}

fn count_zeros(n:usize, c:ro<u8>[n]) -> u64 {
  let mut count:u64 = 0;
  for k in 2..n {
    if c[k] == 0 {
      count += 1;
    }
  }
  return count;
}

fn count_pairs(n:usize, c:ro<u8>[n]) -> u64 {
  let mut count:u64 = 0;
  for k in 0..n {
    for j in 0..n {
      if c[j] == c[k] {
        count += 1;
      }
    }
  }
  return count;
}

fn count_by_two(n:usize, c:ro<u8>[n]) -> u64 {
  let mut count:u64 = 0;
  for k in 0..n {
    if c[k] == 0 {
      count += 2;
    }
  }
  if n > 1 {
    return u64(c[n - 2]);
  }
  return count;
}

fn counters(v:u64) -> u64 {
  stack counts:u64[256] = zeroed;
  counts[usize(v & 255)] = 1;
  return counts[usize(v % 256)];
}

fn right_of_and(n:usize, x:ro<u64>[n], k:usize) -> bool {
  return k < n && x[k] > 3;
}

fn next_one(n:usize, x:ro<u64>[n]) -> u64 {
  let mut total:u64 = 0;
  for i in 0..n {
    if i + 1 < n {
      total = add_wrap(total, x[i + 1]);
    }
  }
  return total;
}

fn steps_back(n:usize, x:ro<u64>[n]) -> u64 {
  let mut total:u64 = 0;
  let mut i:usize = 1;
  while i < n {
    total = add_wrap(total, x[i - 1]);
    i += 1;
  }
  return total;
}

fn grid(a:ro<f64>[4096]) -> f64 {
  let mut total:f64 = 0.0;
  for i in 0..64 {
    for j in 0..64 {
      total += a[i * 64 + j];
    }
  }
  return total;
}

fn grid_local() -> f64 {
  stack a:f64[4096] = zeroed;
  let mut total:f64 = 0.0;
  for i in 0..64 {
    for j in 0..64 {
      total += a[i * 64 + j];
    }
  }
  return total;
}

fn bounded_loop() -> u64 {
  let mut acc:u64 = 0;
  let mut k:u64 = 0;
  while k < 20 {
    acc = acc + k * 3;
    k += 1;
  }
  return acc;
}

fn rows_above(w:usize, h:usize, n:usize, src:ro<f64>[n]) -> f64 {
  let mut total:f64 = 0.0;
  for y in 1..h {
    for x in 0..w {
      let i = y * w + x;
      if i < n {
        total += src[i - w];
      }
    }
  }
  return total;
}

fn marks(n:usize, c:rw<u8>[n]) {
  let mut i:usize = 2;
  while i * i < n {
    let mut j = i * i;
    while j < n {
      c[j] = 1;
      j += i;
    }
    i += 1;
  }
}

fn main() -> i32 {
  stack x:u64[8] = zeroed;
  stack a:f64[4096] = zeroed;
  stack c:u8[64] = zeroed;
  marks(64, c);
  println(after_return(8, x, 2), under_positive(8, x, 1), counters(7), right_of_and(8, x, 1));
  println(next_one(8, x), steps_back(8, x), grid(a), grid_local(), bounded_loop(), rows_above(64, 64, 4096, a));
  return 0;
}
";

#[test]
fn the_examples_of_the_language_are_discharged() {
    let functions = lowered(EXAMPLES);
    // `x[k]` after `if k >= n { return …; }`.
    assert_eq!(tally(function(&functions, "after_return"), GuardKind::Bounds), (1, 0));
    // `x[i - 1]` under `if i > 0` (here the left of an `&&`): the subtraction and the index.
    let under = function(&functions, "under_positive");
    assert_eq!(tally(under, GuardKind::Bounds), (1, 0));
    assert_eq!(tally(under, GuardKind::Overflow), (1, 0));
    // `counts[usize(v & 255)]` and `counts[usize(v % 256)]` into 256 counters.
    assert_eq!(tally(function(&functions, "counters"), GuardKind::Bounds), (2, 0));
    // `x[k]` on the right of `k < n && …`.
    assert_eq!(tally(function(&functions, "right_of_and"), GuardKind::Bounds), (1, 0));
    // `x[i + 1]` under `if i + 1 < n`, and `x[i - 1]` in a loop from 1.
    assert_eq!(tally(function(&functions, "next_one"), GuardKind::Bounds), (1, 0));
    let back = function(&functions, "steps_back");
    assert_eq!(tally(back, GuardKind::Bounds), (1, 0));
    assert_eq!(tally(back, GuardKind::Overflow), (2, 0), "`i - 1` and `i += 1`");
    // Index arithmetic over literal loop bounds: `a[i * 64 + j]`, into an array of 4096 and into
    // a parameter declared `[4096]` (every caller passes a view of that length: one whose length
    // the checker could not compare is compared at the call).
    let grid = function(&functions, "grid");
    assert_eq!(tally(grid, GuardKind::Bounds), (1, 0));
    assert_eq!(tally(grid, GuardKind::Overflow), (2, 0));
    let local = function(&functions, "grid_local");
    assert_eq!(tally(local, GuardKind::Bounds), (1, 0));
    assert_eq!(tally(local, GuardKind::Overflow), (2, 0));
    // `i - w` where `i = y * w + x` and `y >= 1` (a factor of at least 1: `w <= y * w <= i`), and
    // the index below `i`; the product and the sum themselves stay checked.
    let rows = function(&functions, "rows_above");
    assert_eq!(tally(rows, GuardKind::Bounds), (1, 0));
    assert_eq!(tally(rows, GuardKind::Overflow), (1, 2));
    // The sieve's marking loop: `c[j]` under `j < n`, `i += 1` where `i <= i * i < n`, and
    // `j += i` where both are below `n`, itself a view's length and so at most 2^63 - 1 (no
    // object is larger); the two `i * i` stay checked.
    let marks = function(&functions, "marks");
    assert_eq!(tally(marks, GuardKind::Bounds), (1, 0));
    assert_eq!(tally(marks, GuardKind::Overflow), (2, 2));
    // A count stepped by at most 1 per iteration of `for k in 2..n`: `count <= k - 2` (seeded
    // at the loop's header from `count = 0`, `k = 2`, kept as both step), and `k < n`, a view's
    // length; so `count + 1` cannot overflow.
    let zeros = function(&functions, "count_zeros");
    assert_eq!(tally(zeros, GuardKind::Overflow), (1, 0));
    // Stepped by 2: no bound by the counter holds, the seeded one widens away — and the rest of
    // the function is still analysed (`c[n - 2]` under `n > 1`: the subtraction and the index).
    let by_two = function(&functions, "count_by_two");
    assert_eq!(tally(by_two, GuardKind::Overflow), (1, 1));
    assert_eq!(tally(by_two, GuardKind::Bounds), (1, 0));
    // Counted in an inner loop: up to n per outer step, not bounded by either counter.
    assert_eq!(tally(function(&functions, "count_pairs"), GuardKind::Overflow), (0, 1));
    // `acc + k * 3` with `k < 20` and `acc` unbounded: the product is proved, the sum is not.
    assert_eq!(tally(function(&functions, "bounded_loop"), GuardKind::Overflow), (2, 1));
}

#[test]
fn each_discharge_names_the_facts_that_prove_it() {
    let functions = lowered(EXAMPLES);
    let guard = function(&functions, "after_return")
        .guards()
        .find(|g| g.kind == GuardKind::Bounds)
        .expect("the index guard")
        .clone();
    let Check::InBounds(Operand::Copy(index), Operand::Copy(len)) = &guard.check else {
        panic!("an index against the extent: {guard}")
    };
    // `k <= n - 1` is the fact; `k`'s interval says it is not negative.
    assert!(
        guard.facts.contains(&Fact::AtMost(Operand::Copy(index.clone()), Operand::Copy(len.clone()), -1)),
        "{guard}"
    );
    assert!(guard.to_string().contains(" by "), "the MIR text shows the facts: {guard}");
}

#[test]
fn guards_that_can_fail_stay() {
    let functions = lowered(
        "
fn plain_index(n:usize, x:ro<u64>[n], k:usize) -> u64 = x[k];

fn one_off(n:usize, x:ro<u64>[n], k:usize) -> u64 {
  if k > n {
    return 0;
  }
  return x[k];
}

fn step_down(i:usize) -> usize {
  if i >= 0 {
    return i - 1;
  }
  return 0;
}

fn sum(a:u64, b:u64) -> u64 = a + b;

fn narrow(v:u64) -> u8 = u8(v & 511);

fn loop_past(n:usize, x:ro<u64>[n]) -> u64 {
  let mut total:u64 = 0;
  for i in 0..n {
    if i < n {
      total = add_wrap(total, x[i + 1 - 1 + 1]);
    }
  }
  return total;
}

fn after_loop(n:usize, x:ro<u64>[n]) -> u64 {
  let mut i:usize = 0;
  while i < n {
    i += 1;
  }
  return x[i];
}

fn main() -> i32 {
  stack x:u64[4] = zeroed;
  println(plain_index(4, x, 1), one_off(4, x, 1), step_down(3), sum(1, 2), narrow(3), loop_past(4, x), after_loop(4, x));
  return 0;
}
",
    );
    for (name, kind) in [
        ("plain_index", GuardKind::Bounds),
        ("one_off", GuardKind::Bounds),
        ("step_down", GuardKind::Overflow),
        ("sum", GuardKind::Overflow),
        ("narrow", GuardKind::Conversion),
        ("loop_past", GuardKind::Bounds),
        ("after_loop", GuardKind::Bounds),
    ] {
        let (discharged, kept) = tally(function(&functions, name), kind);
        assert_eq!(discharged, 0, "{name}: a {} guard that can fail was discharged", kind.name());
        assert!(kept >= 1, "{name}: the guard is in force");
    }
}

#[test]
fn the_audit_reads_only_the_facts() {
    let i = Operand::Copy(Place::local(Local(1)));
    let n = Operand::Copy(Place::local(Local(0)));
    let m = Operand::Copy(Place::local(Local(2)));
    let one = Operand::Const(Const::Int(1, IntTy::Usize));
    let bounds = Check::InBounds(i.clone(), n.clone());
    // `i < n` from `i <= n - 1` and `i >= 0`; not from `i <= n`, nor without a lower end.
    assert!(audit(&bounds, &[Fact::Within(i.clone(), 0, 9), Fact::AtMost(i.clone(), n.clone(), -1)]));
    assert!(!audit(&bounds, &[Fact::Within(i.clone(), 0, 9), Fact::AtMost(i.clone(), n.clone(), 0)]));
    assert!(!audit(&bounds, &[Fact::AtMost(i.clone(), n.clone(), -1)]));
    // Through a third value: `i <= m - 2` and `m <= n + 1`.
    assert!(audit(
        &bounds,
        &[Fact::Within(i.clone(), 0, 5), Fact::AtMost(i.clone(), m.clone(), -2), Fact::AtMost(m.clone(), n.clone(), 1)]
    ));
    // By intervals: `i in 0..=9` below `n in 10..=10`.
    assert!(audit(&bounds, &[Fact::Within(i.clone(), 0, 9), Fact::Within(n.clone(), 10, 10)]));
    assert!(!audit(&bounds, &[Fact::Within(i.clone(), 0, 10), Fact::Within(n.clone(), 10, 10)]));
    // Overflow: `i + 1` fits when `i` is below the top; `i - 1` when `i` is at least 1.
    let max = i128::from(u64::MAX);
    let add = Check::NoOverflow(BinOp::Add, IntTy::Usize, i.clone(), one.clone());
    assert!(audit(&add, &[Fact::Within(i.clone(), 0, max - 1)]));
    assert!(!audit(&add, &[Fact::Within(i.clone(), 0, max)]));
    let sub = Check::NoOverflow(BinOp::Sub, IntTy::Usize, i.clone(), one.clone());
    assert!(audit(&sub, &[Fact::Within(i.clone(), 1, max)]));
    assert!(!audit(&sub, &[Fact::Within(i.clone(), 0, max)]));
    // `-i` of an unsigned value fits only when it is 0; of a signed one, above the minimum.
    let neg = Check::NegNoOverflow(IntTy::Usize, i.clone());
    assert!(!audit(&neg, &[Fact::Within(i.clone(), 1, 5)]));
    assert!(audit(&neg, &[Fact::Within(i.clone(), 0, 0)]));
    let neg_signed = Check::NegNoOverflow(IntTy::I64, i.clone());
    assert!(audit(&neg_signed, &[Fact::Within(i.clone(), -5, 5)]));
    assert!(!audit(&neg_signed, &[Fact::Within(i.clone(), i128::from(i64::MIN), 5)]));
    // A fact about another operand proves nothing.
    assert!(!audit(&sub, &[Fact::Within(m.clone(), 1, 5)]));
    // A check the analysis never discharges is never implied.
    assert!(!audit(&Check::Unreachable, &[Fact::Within(i, 0, 0)]));
}

#[test]
fn the_verifier_refuses_a_discharge_its_facts_do_not_imply() {
    let functions = lowered(EXAMPLES);
    let mut broken = (*function(&functions, "after_return")).clone();
    let mut changed = false;
    for block in &mut broken.blocks {
        for inst in &mut block.insts {
            if let Inst::Guard(guard) = inst
                && guard.kind == GuardKind::Bounds
            {
                // An off-by-one proof: `k <= n` does not put `k` below `n`.
                for fact in &mut guard.facts {
                    if let Fact::AtMost(_, _, k) = fact {
                        *k = 0;
                        changed = true;
                    }
                }
            }
        }
    }
    assert!(changed, "the proof had a difference bound to break");
    let fault = cairn_mir::verify::verify(&broken).expect_err("the broken proof is refused");
    assert!(fault.contains("which its facts do not imply"), "{fault}");
}

#[test]
fn the_evaluator_checks_the_facts_it_meets() {
    // A discharged guard whose fact is false at run time is a compiler bug the evaluator
    // reports, even where the guard itself would pass.
    let functions = lowered(EXAMPLES);
    let mut functions: Vec<Arc<Function>> = functions.to_vec();
    let at = functions.iter().position(|f| &*f.name == "counters").expect("counters");
    let mut wrong = (*functions[at]).clone();
    for block in &mut wrong.blocks {
        for inst in &mut block.insts {
            if let Inst::Guard(guard) = inst {
                for fact in &mut guard.facts {
                    if let Fact::Within(_, lo, hi) = fact {
                        // `usize(7 & 255)` is 7: claim it is at least 100.
                        *lo = 100;
                        *hi = 255;
                    }
                }
            }
        }
    }
    functions[at] = Arc::new(wrong);
    let outcome = cairn_mir::eval::run(&functions, "cairn.main", 10_000_000);
    let cairn_mir::eval::Ending::Unsupported(why) = outcome.ending else {
        panic!("the false fact went unnoticed: {:?}", outcome.ending)
    };
    assert!(why.contains("does not hold (a compiler bug)"), "{why}");
    // Unchanged, the program runs to its end.
    let fine = cairn_mir::eval::run(&lowered(EXAMPLES), "cairn.main", 10_000_000);
    assert_eq!(fine.ending, cairn_mir::eval::Ending::Exit(0));
}

#[test]
fn a_declared_extent_is_a_length_that_every_call_makes_good() {
    // A record's lent part (extent unknown) passed where `[8]` is declared is compared with 8 at
    // the call (`FnCheck::length_checks`), so inside `last` the view holds 8 elements and `x[7]`
    // is proved; the one-element part traps at the call, before any element is read.
    let functions = lowered(
        "
struct V { data:Buf[u64]; len:usize; lends data[0..len]; }
fn last(x:ro<u64>[8]) -> u64 = x[7];
fn main() -> i32 {
  let v = V(Buf[u64](1), 1);
  println(last(v));
  return 0;
}
",
    );
    assert_eq!(tally(function(&functions, "last"), GuardKind::Bounds), (1, 0));
    // In `main`: the lent part's own bounds, and the comparison of its length with 8 at the call.
    assert_eq!(tally(function(&functions, "main"), GuardKind::Bounds).1, 2);
    let outcome = cairn_mir::eval::run(&functions, "cairn.main", 1_000_000);
    assert_eq!(outcome.ending, cairn_mir::eval::Ending::Trap(GuardKind::Bounds));
}
