//! Speculation of small checked `if`/`else`s (`cairn_mir::rewrite_for_build`): which branches
//! become selects, which stay, and that the rewritten program does what the lowered one does —
//! the same output, the same trap of the same guard — on inputs that overflow in either arm,
//! under the evaluator.

mod common;

use cairn_mir::eval::{Ending, run};
use cairn_mir::{Function, GuardKind, Terminator};
use common::{lowered, named, rewritten};

fn branches(f: &Function) -> usize {
    f.blocks.iter().filter(|b| matches!(b.term, Terminator::Branch(..))).count()
}

const PROGRAM: &str = "
fn step(x:u64) -> u64 {
  let mut v = x;
  if v % 2 == 0 {
    v = v / 2;
  } else {
    v = 3 * v + 1;
  }
  return v;
}

fn down(x:u64, k:u64) -> u64 {
  let mut v = x;
  if k > 10 {
    v = v - k;
  }
  return v;
}

fn signed(s:i64) -> i64 {
  let mut t = s;
  if t % 2 == 0 {
    t = -t * 2;
  } else {
    t = t - 100;
  }
  return t;
}

fn scaled(x:u64) -> u64 {
  let mut v:u64 = 0;
  if x < 1000 {
    let t = x + 5;
    v = t * 3;
  } else {
    v = x * 2;
  }
  return v;
}

fn loud(x:u64) -> u64 {
  let mut v = x;
  if v > 5 {
    println(\"big\");
    v = v + 1;
  }
  return v;
}

fn reads(n:usize, xs:ro<u64>[n], k:usize) -> u64 {
  let mut v:u64 = 0;
  if k < n {
    v = xs[k] + 1;
  }
  return v;
}

fn main() -> i32 {
  stack xs:u64[3] = zeroed;
  let l = loud(9);
  println(step(7), step(8), down(50, 20), down(5, 3), signed(-4), signed(400), l, reads(3, xs, 1), scaled(4));
  return 0;
}
";

#[test]
fn small_checked_arms_become_selects_and_others_stay() {
    let before = lowered(PROGRAM);
    let after = rewritten(&before);
    for name in ["step", "down", "signed"] {
        assert_eq!(branches(named(&before, name)), 1, "{name} branches as lowered");
        assert_eq!(branches(named(&after, name)), 0, "{name} is speculated");
        // Every guard is still there, in force as before.
        let kinds = |f: &Function| {
            let mut k: Vec<(GuardKind, bool)> = f.guards().map(|g| (g.kind, g.elided)).collect();
            k.sort_by_key(|(kind, elided)| (kind.name(), *elided));
            k
        };
        assert_eq!(kinds(named(&before, name)), kinds(named(&after, name)), "{name}: the same guards");
    }
    // An overflow guard of an arm keeps the arm's operands and fails only on the arm's path:
    // `step`'s are in its `else` arm, `down`'s in its `then` arm.
    for (name, on) in [("step", false), ("down", true)] {
        let overflow: Vec<_> =
            named(&after, name).guards().filter(|g| g.kind == GuardKind::Overflow && !g.elided).collect();
        assert!(!overflow.is_empty(), "{name} has overflow guards in force");
        for guard in overflow {
            assert!(matches!(guard.only_if, Some((_, v)) if v == on), "{name}: `{guard}` fails only on its arm's path");
        }
    }
    // A print and an element read may not run off their path; nor may a guard the range
    // analysis discharged on the strength of the branch's condition (`x < 1000` proves `t * 3`).
    assert_eq!(branches(named(&after, "loud")), 1);
    assert_eq!(branches(named(&after, "reads")), 1);
    assert_eq!(branches(named(&after, "scaled")), 1);
    assert!(named(&before, "scaled").guards().any(|g| !g.facts.is_empty()), "`t * 3` is discharged");
}

#[test]
fn speculated_code_does_what_the_lowered_code_does() {
    // Each input overflows in one arm, or in none; the rewritten program must trap (or not) the
    // same way, with the same guard, having printed the same.
    let cases = [
        "println(step(7), step(8));",
        "println(step(6148914691236517205));",
        "println(step(18446744073709551614));",
        "println(down(5, 11));",
        "println(down(5, 3), down(30, 12));",
        "println(signed(-4611686018427387904));",
        "println(signed(-9223372036854775807 - 1));",
        "println(signed(-9223372036854775807 + 100));",
        "println(signed(-9223372036854775807 + 99));",
        "println(signed(99), signed(-8));",
        "println(signed(9223372036854775807));",
        "println(scaled(999), scaled(1000));",
        "println(scaled(9223372036854775808));",
    ];
    let mut trapped = 0;
    for case in cases {
        let text = PROGRAM.replace(
            "println(step(7), step(8), down(50, 20), down(5, 3), signed(-4), signed(400), l, reads(3, xs, 1), scaled(4));",
            case,
        );
        let before = lowered(&text);
        let after = rewritten(&before);
        let (a, b) = (run(&before, "cairn.main", 1_000_000), run(&after, "cairn.main", 1_000_000));
        assert_eq!(a.ending, b.ending, "{case}");
        assert_eq!(a.stdout, b.stdout, "{case}");
        assert!(matches!(a.ending, Ending::Exit(0) | Ending::Trap(GuardKind::Overflow)), "{case}: {:?}", a.ending);
        trapped += usize::from(matches!(a.ending, Ending::Trap(_)));
    }
    assert!(trapped >= 4, "only {trapped} cases overflow: the arms are not exercised");
}
