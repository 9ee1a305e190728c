//! Loop versioning (`cairn_mir::rewrite_for_build`, issue 22): which loops get a check before them
//! and a copy without their counter-affine guards, which guards that copy leaves out, which loops
//! stay as lowered, and that the check itself computes nothing that could trap. What the copy
//! does natively is compared with the evaluator by `crates/cairn_cli/tests/differential_guards.rs`
//! (the evaluator checks every guard, elided or not, so it cannot tell the copies apart).

mod common;

use cairn_mir::eval::{Ending, run};
use cairn_mir::{Check, Function, GuardKind, Inst, Terminator};
use common::{lowered, named, rewritten};

/// The kinds of the guards the copy leaves out, sorted.
fn hoisted(f: &Function) -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = f.guards().filter(|g| g.hoisted).map(|g| g.kind.name()).collect();
    kinds.sort();
    kinds
}

const PROGRAM: &str = "
fn row(n:usize, x:ro<u64>[n], r:usize, w:usize, cols:usize) -> u64 {
  let mut t:u64 = 0;
  for j in 0..cols {
    t = add_wrap(t, x[r * w + j]);
  }
  return t;
}

fn grid(n:usize, x:ro<u64>[n], rows:usize, cols:usize, w:usize) -> u64 {
  let mut t:u64 = 0;
  for r in 0..rows {
    for c in 0..cols {
      t = add_wrap(t, x[r * w + c]);
    }
  }
  return t;
}

fn shifted(n:usize, x:ro<u64>[n], lo:usize, hi:usize, d:usize) -> u64 {
  let mut t:u64 = 0;
  for i in lo..hi {
    println(\"at \", i);
    t = add_wrap(t, x[i - d]);
  }
  return t;
}

fn gather(n:usize, x:ro<u64>[n], at:ro<usize>[n]) -> u64 {
  let mut t:u64 = 0;
  for i in 0..n {
    t = add_wrap(t, x[at[i]]);
  }
  return t;
}

fn walk(n:usize, x:ro<u64>[n], k:usize) -> u64 {
  let mut t:u64 = 0;
  let mut i:usize = 0;
  while i < k {
    t = add_wrap(t, x[i + 1]);
    i += 1;
  }
  return t;
}

fn main() -> i32 {
  stack x:u64[12] = zeroed;
  stack at:usize[12] = zeroed;
  for i in 0..12 {
    x[i] = u64(i * 7 % 11);
    at[i] = (i * 5) % 12;
  }
  println(gather(12, x, at));
  println(row(12, x, 1, 4, 4));
  println(grid(12, x, 3, 4, 4));
  println(shifted(12, x, 2, 12, 2));
  println(row(12, x, 2, 4, 5));
  return 0;
}
";

#[test]
fn counted_loops_get_a_check_and_a_copy_without_their_affine_guards() {
    let before = lowered(PROGRAM);
    let after = rewritten(&before);
    // `x[r * w + j]`: the product, the sum and the index, checked once before the loop.
    assert_eq!(hoisted(named(&after, "row")), ["bounds", "overflow", "overflow"]);
    // `x[i - d]` from `lo`: the difference (checked at the first counter) and the index.
    assert_eq!(hoisted(named(&after, "shifted")), ["bounds", "overflow"]);
    // A loaded index is not the counter's: nothing to version.
    assert!(hoisted(named(&after, "gather")).is_empty());
    assert_eq!(named(&after, "gather").blocks.len(), named(&before, "gather").blocks.len());
    // A `while` loop's counter is the program's own: not followed.
    assert!(hoisted(named(&after, "walk")).is_empty());
    for name in ["row", "shifted"] {
        let (b, a) = (named(&before, name), named(&after, name));
        // The copy: every guard of the loop again, the decided ones hoisted; the loop as lowered
        // keeps every guard in force.
        let in_force = |f: &Function| f.guards().filter(|g| !g.elided).count();
        assert_eq!(in_force(a), in_force(b), "{name}: the loop as lowered keeps its guards");
        assert_eq!(a.guards().count(), b.guards().count() + hoisted(a).len(), "{name}: one copy more");
        // Two branches more: the check's (to the copy or to the loop as lowered) and the copy's
        // header.
        let branches = |f: &Function| f.blocks.iter().filter(|blk| matches!(blk.term, Terminator::Branch(..))).count();
        assert_eq!(branches(a), branches(b) + 2, "{name}");
        // The check divides only by `max(_, 1)`: it never traps or faults.
        let check = a.blocks.last().expect("the check block");
        assert!(check.insts.iter().all(|i| !matches!(i, Inst::Guard(_))), "{name}: the check holds no guard");
    }
    // A nest: the check stands before the outer loop (for every `r` and `c` at once), right
    // where the entry went to the outer loop's header.
    let (b, a) = (named(&before, "grid"), named(&after, "grid"));
    // Its three sites are left out twice: in the outer loop's copy, and in the copy of the inner
    // loop that the outer loop as lowered gets (versioned on its own, when the outer check fails).
    assert_eq!(hoisted(a), ["bounds", "bounds", "overflow", "overflow", "overflow", "overflow"], "{a}");
    let Terminator::Goto(first) = a.blocks[0].term else { panic!("the entry jumps: {a}") };
    let check = &a.blocks[first.0 as usize];
    assert!(first.0 as usize >= b.blocks.len(), "the entry goes to a new block first: {a}");
    assert!(matches!(check.term, Terminator::Branch(..)) && check.insts.iter().all(|i| !matches!(i, Inst::Guard(_))));
    // A second rewrite of a rewritten program versions nothing again.
    let twice = rewritten(&after);
    assert_eq!(named(&twice, "row").blocks.len(), named(&after, "row").blocks.len());
}

#[test]
fn a_versioned_program_prints_and_traps_as_lowered() {
    let before = lowered(PROGRAM);
    let after = rewritten(&before);
    let (a, b) = (run(&before, "cairn.main", 1_000_000), run(&after, "cairn.main", 1_000_000));
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.ending, b.ending);
    // `row(12, x, 2, 4, 5)` reads x[12]: the bounds guard, after everything before it printed.
    assert_eq!(a.ending, Ending::Trap(GuardKind::Bounds));
    assert!(String::from_utf8_lossy(&a.stdout).contains("at 11\n"));
}

#[test]
fn only_unsigned_sums_products_and_indices_are_decided() {
    let program = "
fn signed(n:usize, x:ro<i64>[n], k:i64) -> i64 {
  let mut t:i64 = 0;
  for i in 0..n {
    t = t + x[i] * k;
  }
  return t;
}

fn main() -> i32 {
  stack x:i64[4] = zeroed;
  println(signed(4, x, 3));
  return 0;
}
";
    let after = rewritten(&lowered(program));
    let f = named(&after, "signed");
    // `x[i]` is discharged by the range analysis already; `t + x[i] * k` is signed and reads a
    // loaded value: no guard of this loop is decided, so it is not copied.
    assert!(hoisted(f).is_empty());
    assert!(f.guards().all(|g| !g.hoisted || matches!(g.check, Check::InBounds(..))));
}

#[test]
fn a_local_whose_address_is_taken_is_never_followed() {
    // `t` is written once in the loop (`t = j`), but `nudge` writes it through a borrow before
    // the index reads it: following `t` back to the counter would leave out a guard that fails.
    let program = "
fn nudge(c:rw<usize>, by:usize) {
  c += by;
}

fn f(n:usize, x:ro<u64>[n], by:usize) -> u64 {
  let mut s:u64 = 0;
  for j in 0..n {
    let mut t:usize = j;
    nudge(t, by);
    s = add_wrap(s, x[t]);
  }
  return s;
}

fn main() -> i32 {
  stack x:u64[4] = zeroed;
  println(f(4, x, 0));
  println(f(4, x, 1000000));
  return 0;
}
";
    let before = lowered(program);
    let after = rewritten(&before);
    assert!(hoisted(named(&after, "f")).is_empty(), "{}", named(&after, "f"));
    let (a, b) = (run(&before, "cairn.main", 1_000_000), run(&after, "cairn.main", 1_000_000));
    assert_eq!((a.stdout, a.ending), (b.stdout, b.ending.clone()));
    assert_eq!(b.ending, Ending::Trap(GuardKind::Bounds));
}
