//! Carried stores (`cairn_mir::rewrite_for_build`, issue 22): which loops keep the value they store
//! at `v[i]` in a local for the read of `v[i - 1]` in the next iteration, which stay as lowered,
//! and that the rewritten program computes, prints and traps as the lowered one does — under the
//! evaluator, which runs the rewritten reads from the local.

mod common;

use cairn_mir::eval::{Ending, run};
use cairn_mir::{Function, GuardKind, Inst, Operand, Place, Proj, Rvalue};
use common::{lowered, named, rewritten};

/// How many reads of `v[t]` (`v` the local numbered `view`, `t` a local computed as `x - 1`) the
/// function's arithmetic and guards hold: the reads of what the iteration before stored.
fn reads_back(f: &Function, view: u32) -> usize {
    let behind: Vec<cairn_mir::Local> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|inst| match inst {
            Inst::Assign(p, Rvalue::Binary(cairn_mir::BinOp::Sub, _, Operand::Const(cairn_mir::Const::Int(1, _)))) => {
                Some(p.local)
            }
            _ => None,
        })
        .collect();
    let mut count = 0;
    let mut look = |o: &Operand| {
        if let Operand::Copy(Place { local, proj }) = o
            && local.0 == view
            && matches!(proj.as_slice(), [Proj::Index(Operand::Copy(t))] if t.proj.is_empty() && behind.contains(&t.local))
        {
            count += 1;
        }
    };
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        match inst {
            Inst::Assign(_, Rvalue::Binary(_, a, b)) => {
                look(a);
                look(b);
            }
            Inst::Guard(g) => {
                if let cairn_mir::Check::NoOverflow(_, _, a, b) = &g.check {
                    look(a);
                    look(b);
                }
            }
            _ => {}
        }
    }
    count
}

const PROGRAM: &str = "
fn prefix(m:usize, v:rw<u64>[m], lo:usize) {
  for i in lo..m {
    v[i] = v[i] + v[i - 1];
  }
}

fn triple(m:usize, v:rw<u64>[m]) {
  for i in 1..m {
    println(\"at \", i);
    v[i] = v[i - 1] * 3 + 1;
  }
}

fn two_back(m:usize, v:rw<u64>[m]) {
  for i in 2..m {
    v[i] = v[i - 2] + 1;
  }
}

fn also_writes(m:usize, v:rw<u64>[m], w:rw<u64>[m]) {
  for i in 1..m {
    w[i - 1] = 5;
    v[i] = v[i - 1] + 1;
  }
}

fn main() -> i32 {
  stack a:u64[8] = zeroed;
  stack w:u64[8] = zeroed;
  for i in 0..8 {
    a[i] = u64(i);
  }
  prefix(8, a, 1);
  println(a[7]);
  two_back(8, a);
  also_writes(8, a, w);
  println(a[7], \" \", w[0]);
  triple(8, a);
  println(a[7]);
  a[0] = 18446744073709551000;
  triple(8, a);
  println(a[7]);
  return 0;
}
";

#[test]
fn a_value_stored_and_read_back_next_iteration_is_carried() {
    let before = lowered(PROGRAM);
    let after = rewritten(&before);
    // `v` is local 1 of `prefix` and `triple`.
    for name in ["prefix", "triple"] {
        let (b, a) = (named(&before, name), named(&after, name));
        // Each read of `v[i - 1]` in the loop (in its guard and in its arithmetic) reads the
        // local; one read of `v[lo - 1]` before the loop takes their place.
        assert!(reads_back(b, 1) >= 2, "{name}\n{b}");
        assert_eq!(reads_back(a, 1), 0, "{name}\n{a}");
        // A test, a load and a join before the loop (and `prefix`, whose `i - 1` may fail, is
        // versioned too).
        assert!(a.blocks.len() >= b.blocks.len() + 3, "{name}\n{a}");
    }
    // `v[i - 2]` is not what the last iteration stored, and a second store may write `v`'s
    // memory: both stay as lowered.
    for name in ["two_back", "also_writes"] {
        assert_eq!(named(&after, name).blocks.len(), named(&before, name).blocks.len(), "{name}");
    }
}

#[test]
fn a_carried_program_computes_prints_and_traps_as_lowered() {
    let before = lowered(PROGRAM);
    let after = rewritten(&before);
    let (a, b) = (run(&before, "cairn.main", 1_000_000), run(&after, "cairn.main", 1_000_000));
    assert_eq!(String::from_utf8_lossy(&a.stdout), String::from_utf8_lossy(&b.stdout));
    assert_eq!(a.ending, b.ending);
    // The second `triple` overflows at `v[0] * 3`, after printing how far it got.
    assert_eq!(a.ending, Ending::Trap(GuardKind::Overflow));
    assert!(String::from_utf8_lossy(&a.stdout).ends_with("at 1\n"), "{}", String::from_utf8_lossy(&a.stdout));
}

#[test]
fn a_loop_from_zero_reads_nothing_before_it_and_traps_at_its_first_step() {
    // `prefix(…, 0)`: `i - 1` fails at the first iteration; the read before the loop is skipped
    // (`lo >= 1` fails) and the guard still traps where it did.
    let program = PROGRAM.replace("prefix(8, a, 1);", "prefix(8, a, 0);");
    let before = lowered(&program);
    let after = rewritten(&before);
    let (a, b) = (run(&before, "cairn.main", 1_000_000), run(&after, "cairn.main", 1_000_000));
    assert_eq!((a.stdout.clone(), a.ending.clone()), (b.stdout, b.ending));
    assert_eq!(a.ending, Ending::Trap(GuardKind::Overflow));
}
