//! Equivalent and non-equivalent pairs of functions: the verdict, and for a difference a
//! witness whose replay on the evaluator shows the two versions doing different things.

use std::sync::Arc;

use cairn_hir::{SourceText, Workspace};
use cairn_mir::Function;
use cairn_smt::{Observed, Options, Request, Side, Verdict, WValue, compare};

fn lowered(text: &str) -> Vec<Arc<Function>> {
    let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.to_string() }]);
    let outcome = workspace.check();
    assert!(outcome.refusal.is_none(), "the program must be accepted: {:?}\n{text}", outcome.refusal);
    let program = cairn_mir::program_mir(workspace.db());
    assert!(program.errors.is_empty(), "{:?}", program.errors);
    program.functions
}

fn symbol(functions: &[Arc<Function>], name: &str) -> String {
    functions.iter().find(|f| &*f.name == name).unwrap_or_else(|| panic!("no {name}")).symbol.to_string()
}

/// Compares `name` in two programs, with an optional precondition function `pre` in `old`.
fn judge_with(old: &str, new: &str, name: &str, pre: Option<&str>, options: Options) -> Verdict {
    let old = lowered(old);
    let new = lowered(new);
    let old_symbol = symbol(&old, name);
    let new_symbol = symbol(&new, name);
    let pre_symbol = pre.map(|p| symbol(&old, p));
    let request = Request {
        old: Side { functions: &old, symbol: &old_symbol },
        new: Side { functions: &new, symbol: &new_symbol },
        assume: pre_symbol.as_deref().map(|s| Side { functions: &old, symbol: s }),
        reference_must_not_trap: false,
        options,
    };
    let comparison = compare(&request);
    for query in &comparison.queries {
        assert!(query.smt2.contains("(check-sat)"), "{}", query.smt2);
    }
    comparison.verdict
}

/// Options for a question the test expects decided: the solver's limit is wall-clock time, and
/// tests run side by side on few cores, so the limit is generous (`unknown` would not be wrong,
/// only not what the test checks).
fn decided() -> Options {
    Options { timeout_ms: 120_000, ..Options::default() }
}

fn judge(old: &str, new: &str, name: &str) -> Verdict {
    judge_with(old, new, name, None, decided())
}

fn assert_equivalent(verdict: Verdict) {
    assert_eq!(verdict, Verdict::Equivalent);
}

fn witness(verdict: Verdict) -> cairn_smt::Witness {
    match verdict {
        Verdict::Differs(w) => w,
        other => panic!("expected a difference, got {other:?}"),
    }
}

#[test]
fn a_reassociated_sum_is_equivalent_trap_for_trap() {
    assert_equivalent(judge(
        "fn f(x:u32, y:u32) -> u32 { return x + y; }",
        "fn f(x:u32, y:u32) -> u32 { return y + x; }",
        "f",
    ));
    assert_equivalent(judge("fn f(x:i32) -> i32 { return x * 2; }", "fn f(x:i32) -> i32 { return x + x; }", "f"));
}

#[test]
fn an_overflowing_midpoint_differs_from_the_safe_one() {
    let w = witness(judge(
        "fn mid(x:u64, y:u64) -> u64 { return (x + y) / 2; }",
        "fn mid(x:u64, y:u64) -> u64 { return (x & y) + shr(x ^ y, 1); }",
        "mid",
    ));
    // The original traps (the checked sum overflows); the new one returns.
    assert_eq!(w.before, Observed::Trap);
    assert!(matches!(w.after, Observed::Returned { .. }));
    let (WValue::Int(x), WValue::Int(y)) = (&w.inputs[0].1, &w.inputs[1].1) else { panic!("{w:?}") };
    assert!(x + y > i128::from(u64::MAX));
}

#[test]
fn the_safe_midpoints_are_equivalent() {
    assert_equivalent(judge(
        "fn mid(x:u64, y:u64) -> u64 { return x / 2 + y / 2 + (x % 2 + y % 2) / 2; }",
        "fn mid(x:u64, y:u64) -> u64 { return (x & y) + shr(x ^ y, 1); }",
        "mid",
    ));
}

#[test]
fn a_division_guard_is_a_change_of_behaviour() {
    let w = witness(judge(
        "fn q(a:i32, b:i32) -> i32 { return a / b; }",
        "fn q(a:i32, b:i32) -> i32 {\n  if b == 0 { return 0; }\n  return a / b;\n}",
        "q",
    ));
    assert_eq!(w.inputs[1].1, WValue::Int(0));
    assert_eq!(w.before, Observed::Trap);
    assert_eq!(w.after, Observed::Returned { value: WValue::Int(0), leftovers: vec![None, None] });
}

#[test]
fn branches_merge_and_a_changed_boundary_is_found() {
    let w = witness(judge(
        "fn clamp(v:i32, lo:i32, hi:i32) -> i32 {\n  if v < lo { return lo; }\n  if v > hi { return hi; }\n  return v;\n}",
        "fn clamp(v:i32, lo:i32, hi:i32) -> i32 {\n  if v <= lo { return lo; }\n  if v >= hi { return hi; }\n  return v;\n}",
        "clamp",
    ));
    // Equal on every input where lo <= hi; the witness must have lo > hi somewhere on the boundary.
    assert_ne!(w.before, w.after);
    assert_equivalent(judge(
        "fn clamp(v:i32, lo:i32, hi:i32) -> i32 {\n  if v < lo { return lo; }\n  if v > hi { return hi; }\n  return v;\n}",
        "fn clamp(v:i32, lo:i32, hi:i32) -> i32 {\n  let mut r:i32 = v;\n  if v < lo { r = lo; } else if v > hi { r = hi; }\n  return r;\n}",
        "clamp",
    ));
}

const AVERAGE: &str = "fn average(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  for i in 0..n {\n    t = t + xs[i];\n  }\n  return t / i64(n);\n}\nfn small(n:usize, xs:ro<i64>[n]) -> bool = n <= 6;\n";

#[test]
fn the_average_example_loop_bounds() {
    // A while loop over the same elements, backwards.
    let backwards = "fn average(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  let mut i:usize = n;\n  while i > 0 {\n    i = i - 1;\n    t = t + xs[i];\n  }\n  return t / i64(n);\n}\n";
    // Summing backwards overflows on other inputs than summing forwards (three elements
    // suffice), which the unrolled paths already show, bound or no bound.
    let w = witness(judge(AVERAGE, backwards, "average"));
    let WValue::Array(items) = &w.inputs[1].1 else { panic!("{w:?}") };
    assert!(items.len() >= 3);
    let verdict = judge_with(AVERAGE, backwards, "average", Some("small"), decided());
    match verdict {
        Verdict::Equivalent => panic!("partial sums overflow in different orders; they cannot be equivalent"),
        Verdict::Differs(w) => assert_ne!(w.before, w.after),
        Verdict::Unknown(why) => panic!("{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_average_with_the_empty_case_handled_differs_at_zero() {
    let guarded = "fn average(n:usize, xs:ro<i64>[n]) -> i64 {\n  if n == 0 { return 0; }\n  let mut t:i64 = 0;\n  for i in 0..n {\n    t = t + xs[i];\n  }\n  return t / i64(n);\n}\nfn small(n:usize, xs:ro<i64>[n]) -> bool = n <= 6;\n";
    let w = witness(judge_with(AVERAGE, guarded, "average", Some("small"), decided()));
    assert_eq!(w.inputs[0].1, WValue::Int(0));
    assert_eq!(w.before, Observed::Trap);
}

const SUM: &str = "fn sum(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  for i in 0..n {\n    t = t + xs[i];\n  }\n  return t;\n}\nfn small(n:usize, xs:ro<i64>[n]) -> bool = n <= 6;\n";

#[test]
fn the_same_loop_written_with_an_index_is_equivalent_within_the_bound() {
    let indexed = "fn sum(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  let mut i:usize = 0;\n  while i < n {\n    t = t + xs[i];\n    i = i + 1;\n  }\n  return t;\n}\n";
    assert_equivalent(judge_with(SUM, indexed, "sum", Some("small"), decided()));
    // Without the bound the loop can run past the unroll limit: nothing is decided.
    let verdict = judge(SUM, indexed, "sum");
    assert!(matches!(&verdict, Verdict::Unknown(why) if why.contains("iterations")), "{verdict:?}");
}

#[test]
fn nested_constant_loops_count_iterations_per_loop() {
    // 4 x 4 = 16 inner iterations in all, but no loop runs more than 4 times: decided.
    assert_equivalent(judge(
        "fn f(x:u8) -> u8 {\n  let mut s:u8 = 0;\n  for i in 0..4 { for j in 0..4 { s = add_wrap(s, x); } }\n  return s;\n}",
        "fn f(x:u8) -> u8 { return shl_wrap(x, 4); }",
        "f",
    ));
    // 16 iterations are followed; 17 are not.
    assert_equivalent(judge(
        "fn f(x:u8) -> u8 {\n  let mut s:u8 = 0;\n  for i in 0..16 { s = add_wrap(s, x); }\n  return s;\n}",
        "fn f(x:u8) -> u8 { return shl_wrap(x, 4); }",
        "f",
    ));
    let verdict = judge(
        "fn f(x:u8) -> u8 {\n  let mut s:u8 = 0;\n  for i in 0..17 { s = add_wrap(s, x); }\n  return s;\n}",
        "fn f(x:u8) -> u8 { return mul_wrap(x, 17); }",
        "f",
    );
    assert!(matches!(&verdict, Verdict::Unknown(why) if why.contains("16 iterations")), "{verdict:?}");
}

#[test]
fn a_difference_at_one_needle_is_found_by_the_solver_and_replayed() {
    // No probe hits x == 123456789123; the solver's model does, and the replay confirms it.
    let w = witness(judge(
        "fn f(x:u64) -> u64 {\n  if x == 123456789123 { return 0; }\n  return x;\n}",
        "fn f(x:u64) -> u64 { return x; }",
        "f",
    ));
    assert_eq!(w.found_by, "solver");
    assert_eq!(w.inputs[0].1, WValue::Int(123456789123));
    assert_eq!(w.before, Observed::Returned { value: WValue::Int(0), leftovers: vec![None] });
    // The same inside a view: only when the third element is the needle.
    let w = witness(judge(
        "fn g(n:usize, xs:ro<u32>[n]) -> u32 {\n  if n == 3 && xs[2] == 177777 { return 1; }\n  return 0;\n}",
        "fn g(n:usize, xs:ro<u32>[n]) -> u32 { return 0; }",
        "g",
    ));
    assert_eq!(w.found_by, "solver");
    let WValue::Array(items) = &w.inputs[1].1 else { panic!("{w:?}") };
    assert_eq!((items.len(), &items[2]), (3, &WValue::Int(177777)));
}

#[test]
fn witnesses_prefer_short_views() {
    // Any length past 2 shows the difference; the witness keeps the view short.
    let w = witness(judge(
        "fn g(n:usize, xs:ro<u32>[n]) -> u32 {\n  if n > 2 && xs[n - 1] == 177777 { return 1; }\n  return 0;\n}",
        "fn g(n:usize, xs:ro<u32>[n]) -> u32 { return 0; }",
        "g",
    ));
    let WValue::Array(items) = &w.inputs[1].1 else { panic!("{w:?}") };
    assert!((3..=8).contains(&items.len()), "{w:?}");
}

#[test]
fn probing_finds_common_differences_without_a_solver() {
    // A float rounding difference the solver would need a wide float division for.
    let w =
        witness(judge("fn f(x:f64) -> f64 { return x / 3.0; }", "fn f(x:f64) -> f64 { return x * (1.0 / 3.0); }", "f"));
    assert_eq!(w.found_by, "probe");
    assert_ne!(w.before, w.after);
}

/// Probing has a budget in evaluator steps over all its runs: a loop bounded by a wide integer
/// runs every try out of fuel, and the probe stops at the budget instead of taking seconds — yet
/// a difference at small inputs is still found by the probe, first.
#[test]
fn probing_is_bounded_and_still_finds_a_difference_on_small_inputs() {
    let old = "fn f(n:u64, x:f64) -> f64 {\n  let mut t:f64 = 0.0;\n  let mut i:u64 = 0;\n  while i < n { t = t / 3.0 + x; i += 1; }\n  return t;\n}\n";
    let new = "fn f(n:u64, x:f64) -> f64 {\n  let mut t:f64 = 0.0;\n  let mut i:u64 = 0;\n  while i < n { t = t * (1.0 / 3.0) + x; i += 1; }\n  return t;\n}\n";
    let w = witness(judge(old, new, "f"));
    assert_eq!(w.found_by, "probe");
    assert_ne!(w.before, w.after);
}

/// A difference question the solver gave up on at one loop depth is not asked again deeper
/// (each ask would cost its whole timeout), and stays the reason the answer is unknown.
#[test]
fn a_question_given_up_is_not_asked_again_at_a_deeper_depth() {
    let old = "fn f(n:u64, x:f64) -> f64 {\n  let mut t:f64 = 0.0;\n  let mut i:u64 = 0;\n  while i < n { t = t / 2.0 + x; i += 1; }\n  return t;\n}\n";
    let new = "fn f(n:u64, x:f64) -> f64 {\n  let mut t:f64 = 0.0;\n  let mut i:u64 = 0;\n  while i < n { t = t * 0.5 + x; i += 1; }\n  return t;\n}\n";
    let (old, new) = (lowered(old), lowered(new));
    let (old_symbol, new_symbol) = (symbol(&old, "f"), symbol(&new, "f"));
    let request = Request {
        old: Side { functions: &old, symbol: &old_symbol },
        new: Side { functions: &new, symbol: &new_symbol },
        assume: None,
        reference_must_not_trap: false,
        options: Options { timeout_ms: 50, ..Options::default() },
    };
    let comparison = compare(&request);
    let values: Vec<&str> =
        comparison.queries.iter().filter(|q| q.purpose == "difference-values").map(|q| q.answer.as_str()).collect();
    // Whatever the solver decides in its time, nothing is asked after its first `unknown` — and
    // within 50 ms it decides no float loop here, so the last ask is that `unknown`.
    assert_eq!(values.iter().filter(|a| **a == "unknown").count(), 1, "{values:?}");
    assert_eq!(values.last(), Some(&"unknown"), "asked again after giving up: {values:?}");
    assert!(matches!(comparison.verdict, Verdict::Unknown(_)), "{:?}", comparison.verdict);
}

#[test]
fn written_views_are_observed() {
    let w = witness(judge(
        "fn fill(n:usize, xs:rw<u8>[n]) {\n  for i in 0..n { xs[i] = 1; }\n}\nfn few(n:usize, xs:rw<u8>[n]) -> bool = n < 4;\n",
        "fn fill(n:usize, xs:rw<u8>[n]) {\n  for i in 0..n { if i > 0 { xs[i] = 1; } }\n}\n",
        "fill",
    ));
    let Observed::Returned { leftovers, .. } = &w.before else { panic!("{w:?}") };
    assert!(leftovers[1].is_some());
    assert_ne!(w.before, w.after);
}

#[test]
fn floats_differ_on_signed_zero_and_nan_is_unknown() {
    // x + 0.0 turns -0.0 into +0.0; x itself does not.
    let w = witness(judge("fn g(x:f64) -> f64 { return x + 0.0; }", "fn g(x:f64) -> f64 { return x; }", "g"));
    assert_eq!(w.inputs[0].1, WValue::Float((-0.0f64).to_bits()));
    // x * 2.0 and x + x agree on every input, but the result may be NaN: unknown by the rules.
    assert!(matches!(
        judge("fn g(x:f64) -> f64 { return x * 2.0; }", "fn g(x:f64) -> f64 { return x + x; }", "g"),
        Verdict::Unknown(_)
    ));
    // Excluding NaN inputs (and infinities, whose doubles are NaN-free anyway) decides it.
    assert_equivalent(judge_with(
        "fn g(x:f64) -> f64 { return x * 2.0; }\nfn real(x:f64) -> bool = x == x;\n",
        "fn g(x:f64) -> f64 { return x + x; }",
        "g",
        Some("real"),
        decided(),
    ));
}

#[test]
fn calls_are_inlined_and_records_compared() {
    assert_equivalent(judge(
        "struct P { x:i32; y:i32; }\nfn swap(p:P) -> P = P(p.y, p.x);\nfn twice(p:P) -> P = swap(swap(p));\n",
        "struct P { x:i32; y:i32; }\nfn swap(p:P) -> P = P(p.y, p.x);\nfn twice(p:P) -> P = p;\n",
        "twice",
    ));
}

#[test]
fn sums_and_matches() {
    let old = "import std.core (Option);\nfn get(o:Option[u32]) -> u32 {\n  match o {\n    Some(v) => return v;\n    None => return 0;\n  }\n}\n";
    let same = "import std.core (Option);\nfn get(o:Option[u32]) -> u32 {\n  match o {\n    None => return 0;\n    Some(v) => return v + 0;\n  }\n}\n";
    let other = "import std.core (Option);\nfn get(o:Option[u32]) -> u32 {\n  match o {\n    Some(v) => return v;\n    None => return 1;\n  }\n}\n";
    assert_equivalent(judge(old, same, "get"));
    let w = witness(judge(old, other, "get"));
    assert_eq!(w.after, Observed::Returned { value: WValue::Int(1), leftovers: vec![None] });
}

#[test]
fn a_forced_timeout_is_unknown_never_equivalent() {
    // Chained 64-bit divisions must be bit-blasted (they are equal); with a 1 ms budget the
    // solver gives up, and that is `unknown`, never equivalence.
    let (old, new) = ("fn h(x:u64) -> u64 { return x / 3 / 5; }", "fn h(x:u64) -> u64 { return x / 15; }");
    let verdict = judge_with(old, new, "h", None, Options { timeout_ms: 1, ..Options::default() });
    assert!(matches!(&verdict, Verdict::Unknown(why) if why.contains("time limit")), "{verdict:?}");
    // The same identity on 8 bits is decided.
    assert_equivalent(judge("fn h(x:u8) -> u8 { return x / 3 / 5; }", "fn h(x:u8) -> u8 { return x / 15; }", "h"));
}

#[test]
fn recursion_and_printing_are_outside_the_fragment() {
    assert!(matches!(
        judge(
            "fn r(n:u32) -> u32 {\n  if n == 0 { return 0; }\n  return r(n - 1);\n}",
            "fn r(n:u32) -> u32 { return 0; }",
            "r"
        ),
        Verdict::Unknown(_)
    ));
    assert!(matches!(
        judge("fn p(n:u32) -> u32 {\n  println(n);\n  return n;\n}", "fn p(n:u32) -> u32 { return n; }", "p"),
        Verdict::Unknown(_)
    ));
}

#[test]
fn every_query_re_checks_to_the_same_answer_in_the_z3_binary() {
    let pairs = [
        (
            "fn q(a:i32, b:i32) -> i32 { return a / b; }",
            "fn q(a:i32, b:i32) -> i32 {\n  if b == 0 { return 0; }\n  return a / b;\n}",
            "q",
        ),
        (
            SUM,
            "fn sum(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  let mut i:usize = 0;\n  while i < n {\n    t = t + xs[i];\n    i = i + 1;\n  }\n  return t;\n}\n",
            "sum",
        ),
        ("fn g(x:f64) -> f64 { return x + 0.0; }", "fn g(x:f64) -> f64 { return x; }", "g"),
    ];
    let dir = std::env::temp_dir().join(format!("cairn-smt-recheck-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for (old, new, name) in pairs {
        let (old, new) = (lowered(old), lowered(new));
        let (a, b) = (symbol(&old, name), symbol(&new, name));
        let comparison = compare(&Request {
            old: Side { functions: &old, symbol: &a },
            new: Side { functions: &new, symbol: &b },
            assume: None,
            reference_must_not_trap: false,
            options: decided(),
        });
        for query in &comparison.queries {
            let path = dir.join(format!("{}.smt2", query.sha256()));
            std::fs::write(&path, &query.smt2).unwrap();
            let out = std::process::Command::new("z3")
                .arg(&path)
                .output()
                .expect("the z3 binary (scripts/setup.sh installs it)");
            let answer = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert_eq!(answer, query.answer, "{} ({})", query.purpose, path.display());
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} queries");
    std::fs::remove_dir_all(&dir).ok();
}

/// Function values (language §21): a value the path fixes is called like its function, one a
/// branch chooses is each function it may hold under the branch's condition, and a closure is
/// its code over its captures. A value the inputs choose (a parameter) is outside the fragment.
#[test]
fn function_values_are_the_functions_they_may_hold() {
    let program = |pick: &str, closure: &str| {
        format!(
            "fn inc(x:u32) -> u32 = add_wrap(x, 1);
fn dec(x:u32) -> u32 = sub_wrap(x, 1);
fn apply(f:fn(u32) -> u32, x:u32) -> u32 = f(x);
fn pick(flag:bool, x:u32) -> u32 {{
  let mut f:fn(u32) -> u32 = inc;
  {pick}
  return f(x);
}}
fn map_all(n:usize, xs:rw<u32>[n], f:ro<fn(u32) -> u32>) {{ for i in 0..n {{ xs[i] = f(xs[i]); }} }}
fn shift(n:usize, xs:rw<u32>[n], by:u32) {{ map_all(xs, |x:u32| -> u32 {{ {closure} }}); }}
fn twice_inc(x:u32) -> u32 = apply(inc, apply(inc, x));
fn small(n:usize, xs:rw<u32>[n], by:u32) -> bool = n <= 4;
fn main() -> i32 {{ return 0; }}
"
        )
    };
    let old = program("if flag { f = dec; }", "return add_wrap(x, by);");
    let same = program("if !flag { f = inc; } else { f = dec; }", "return add_wrap(by, x);");
    let other = program("if flag { f = inc; }", "return add_wrap(x, add_wrap(by, 1));");
    assert_equivalent(judge(&old, &same, "pick"));
    assert_equivalent(judge_with(&old, &same, "shift", Some("small"), decided()));
    let found = witness(judge(&old, &other, "pick"));
    assert_ne!(found.before, found.after, "{found:?}");
    let found = witness(judge_with(&old, &other, "shift", Some("small"), decided()));
    assert_ne!(found.before, found.after, "{found:?}");
    // A fixed value inlines: apply(inc, apply(inc, x)) is x + 2.
    let plus_two = program("", "return x;").replace("= apply(inc, apply(inc, x));", "= add_wrap(x, 2);");
    assert_equivalent(judge(&old, &plus_two, "twice_inc"));
    // A function value given as an input is outside the fragment.
    assert!(matches!(judge(&old, &same, "apply"), Verdict::Unknown(_)));
}
