//! The guards the range analysis discharges, and the `if`/`else`s a build speculates, never
//! change what a program does (language §15, issue 22): random index-heavy programs — loops over
//! views with offsets, strides and products of binders, bounds drawn at, one below and one past
//! the edges, early returns, `&&` and `||`, counters indexed by masked values, conversions of index
//! arithmetic, checked arithmetic in both arms of an `if` that overflows now in one arm, now in the
//! other — are run three ways: built as usual (discharged guards left out, small `if`/`else`s
//! speculated), built with `--keep-guards` (every guard emitted, the program as lowered), and
//! under the MIR evaluator (as lowered), which also checks every fact a discharged guard rests
//! on. All three must print the same bytes and end the same way; the two builds must also write
//! the same standard error, so a trap fails with the same guard kind at the same line and column.
//!
//! The edges are drawn on purpose: an analysis off by one at any of them discharges a guard that
//! fails in some seed. `CAIRN_GUARD_PROGRAMS` sets how many programs are drawn (200 by default;
//! the seeds are fixed, so a failure names the seed that reproduces it).

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_hir::{SourceText, Workspace};
use cairn_mir::eval::{Ending, run};
use cairn_testgen::Rng;

/// The length of the array `main` passes as `x` (the `[n]` view of every function).
const N: u64 = 12;

struct Gen {
    rng: Rng,
    out: String,
    calls: Vec<String>,
}

impl Gen {
    /// A small constant, often at an edge of the view.
    fn edge(&mut self) -> u64 {
        *self.rng.pick(&[0, 1, 2, 3, N - 2, N - 1, N, N + 1])
    }

    /// A bound for an index: the extent, the extent less a little, or a literal near it.
    fn bound(&mut self) -> String {
        match self.rng.below(4) {
            0 => "n".into(),
            1 => format!("n - {}", 1 + self.rng.below(2)),
            _ => format!("{}", self.edge()),
        }
    }

    fn cmp(&mut self) -> &'static str {
        *self.rng.pick(&["<", "<=", ">", ">=", "!="])
    }

    /// An index built from the binder `i`.
    fn index(&mut self, i: &str) -> String {
        let c = 1 + self.rng.below(3);
        match self.rng.below(10) {
            0..=3 => i.to_string(),
            4 => format!("{i} + {c}"),
            5 => format!("{i} - {c}"),
            6 => format!("{i} * {c}"),
            7 | 8 => format!("{i} / {c}"),
            _ => format!("{}", self.edge()),
        }
    }

    fn function(&mut self, k: usize) {
        let name = format!("g{k}");
        let shape = self.rng.below(16);
        let _ = std::fmt::Write::write_fmt(
            &mut self.out,
            format_args!("fn {name}(n:usize, x:ro<u64>[n], k:usize) -> u64 {{\n  let mut total:u64 = 0;\n"),
        );
        let body = match shape {
            0 => {
                let (cmp, bound, index) = (self.cmp(), self.bound(), self.index("i"));
                format!(
                    "  for i in 0..n {{\n    if i {cmp} {bound} {{\n      total = add_wrap(total, x[{index}]);\n    }}\n  }}\n"
                )
            }
            1 => {
                let start = self.rng.below(3);
                let cmp = *self.rng.pick(&["<", "<="]);
                let (bound, index, step) = (self.bound(), self.index("i"), 1 + self.rng.below(2));
                format!(
                    "  let mut i:usize = {start};\n  while i {cmp} {bound} {{\n    total = add_wrap(total, x[{index}]);\n    i += {step};\n  }}\n"
                )
            }
            2 => {
                let stop = self.rng.below(3);
                let (index, step) = (self.index("i"), 1 + self.rng.below(2));
                format!(
                    "  let mut i:usize = n;\n  while i > {stop} {{\n    total = add_wrap(total, x[{index}]);\n    i -= {step};\n  }}\n"
                )
            }
            3 => {
                let (cmp, bound, index) = (self.cmp(), self.bound(), self.index("k"));
                let back = self.rng.below(3);
                format!(
                    "  if k {cmp} {bound} {{\n    return {back};\n  }}\n  total = x[{index}];\n  if k > 0 {{\n    total = add_wrap(total, x[k - 1]);\n  }}\n"
                )
            }
            4 => {
                let (index, other) = (self.index("k"), self.index("k"));
                if self.rng.chance(1, 2) {
                    let bound = self.bound();
                    format!("  if k < {bound} && x[{index}] > 3 {{\n    total = x[{other}];\n  }}\n")
                } else {
                    let bound = self.bound();
                    format!(
                        "  if k >= {bound} || x[{index}] == 0 {{\n    total = 1;\n  }} else {{\n    total = x[{other}];\n  }}\n"
                    )
                }
            }
            5 => {
                let len = *self.rng.pick(&[8u64, 16, 256]);
                let mask = *self.rng.pick(&[len - 1, len, len / 2, len + 1]);
                let op = *self.rng.pick(&["&", "%"]);
                format!(
                    "  stack counts:u64[{len}] = zeroed;\n  for i in 0..n {{\n    counts[usize(x[i] * 37 {op} {mask})] += 1;\n  }}\n  total = counts[usize(u64(k) {op} {mask})];\n"
                )
            }
            6 => {
                let (rows, cols) = (2 + self.rng.below(3), 2 + self.rng.below(3));
                let (r, c) =
                    (rows + self.rng.below(2) * self.rng.below(2), cols + self.rng.below(2) * self.rng.below(2));
                let cells = rows * cols;
                format!(
                    "  stack grid:u64[{cells}] = zeroed;\n  for i in 0..{r} {{\n    for j in 0..{c} {{\n      grid[i * {cols} + j] = u64(i + j);\n    }}\n  }}\n  for i in 0..{cells} {{\n    total = add_wrap(total, grid[i]);\n  }}\n"
                )
            }
            8 => {
                // Checked arithmetic in both arms of an `if` (speculated: both arms run, joined by
                // selects), overflowing now and then.
                let big = *self.rng.pick(&["1", "1000", "288230376151711744", "4611686018427387904"]);
                let (cmp, bound) = (self.cmp(), self.bound());
                let test = match self.rng.below(3) {
                    0 => format!("i {cmp} {bound}"),
                    1 => "v % 2 == 0".to_string(),
                    _ => "v < 4611686018427387904".to_string(),
                };
                let grow =
                    *self.rng.pick(&["3 * v + 1", "v * v + 1", "v + 6148914691236517205", "v - 7", "3 * v + x[i]"]);
                let shrink = *self.rng.pick(&["v / 2", "v - 1", "u64(u8(v % 300))", "shr(v, i % 3)"]);
                let else_arm = if self.rng.chance(1, 3) {
                    String::new()
                } else {
                    format!(" else {{\n      v = {shrink};\n    }}")
                };
                format!(
                    "  let mut v:u64 = u64(k) * {big};\n  for i in 0..n {{\n    if {test} {{\n      v = {grow};\n    }}{else_arm}\n  }}\n  total = v;\n"
                )
            }
            10 => {
                // The binder stepped before it is used: what held of it before the step moves.
                let (start, step) = (self.rng.below(3), 1 + self.rng.below(2));
                let cmp = *self.rng.pick(&["<", "<="]);
                let (bound, index) = (self.bound(), self.index("i"));
                format!(
                    "  let mut i:usize = {start};\n  while i {cmp} {bound} {{\n    i += {step};\n    total = add_wrap(total, x[{index}]);\n  }}\n"
                )
            }
            9 => {
                let start = *self.rng.pick(&["-5", "100", "-9223372036854775800", "9223372036854775000"]);
                let step = *self.rng.pick(&["s * 2 - 1", "-s", "s / 3", "s - 400"]);
                let other = *self.rng.pick(&["s + 1000", "s * s", "s % 7"]);
                format!(
                    "  let mut s:i64 = i64(k) + ({start});\n  for i in 0..n {{\n    if s < 0 {{\n      s = {step};\n    }} else {{\n      s = {other};\n    }}\n    if s >= 0 {{\n      total = add_wrap(total, u64(s % 256));\n    }}\n  }}\n"
                )
            }
            11 => {
                // A counted loop whose index grows with the counter by values known only at run
                // time (versioned), now and then printing, so a trap shows how far it got. Three
                // in four stay within the view; the others fail at the first or a later iteration.
                let (lo, hi, index) = if self.rng.chance(3, 4) {
                    *self.rng.pick(&[
                        ("0", "n", "i"),
                        ("k / 4", "n - k / 3", "i + k / 3"),
                        ("0", "n / 2", "i * 2"),
                        ("0", "n - 1", "i + 1"),
                        ("1", "k % 6 + 1", "i * 2"),
                        ("1", "n", "i - 1"),
                        ("k % 3", "n / 3", "(i + 1) * 3 - k % 3"),
                    ])
                } else {
                    *self.rng.pick(&[
                        ("0", "n + 1", "i"),
                        ("k / 4", "k", "i"),
                        ("0", "k + 2", "i"),
                        ("0", "13", "i - 1"),
                        ("1", "n", "i * k"),
                        ("0", "2", "i + 18446744073709551610"),
                        ("0", "n", "i * 3074457345618258603"),
                    ])
                };
                let print = if self.rng.chance(1, 3) { "    println(\"at \", i);\n" } else { "" };
                format!("  for i in {lo}..{hi} {{\n{print}    total = add_wrap(total, x[{index}]);\n  }}\n")
            }
            12 => {
                // Loop nests whose sizes are known only at run time (versioned outermost first:
                // the inner loops lend their counters as ranges), printing now and then.
                let print = if self.rng.chance(1, 3) { "      println(\"at \", i, \" \", j);\n" } else { "" };
                match self.rng.below(6) {
                    0 | 1 => {
                        let (rows, cols, width) = if self.rng.chance(3, 4) {
                            *self.rng.pick(&[
                                ("3", "4", "4"),
                                ("k / 4", "3", "3"),
                                ("2", "n / 2", "n / 2"),
                                ("n / 4", "k / 4", "4"),
                            ])
                        } else {
                            *self.rng.pick(&[("k", "3", "3"), ("3", "k", "4"), ("2", "n", "k / 2")])
                        };
                        format!(
                            "  for i in 0..{rows} {{\n    for j in 0..{cols} {{\n{print}      total = add_wrap(total, x[i * {width} + j]);\n    }}\n  }}\n"
                        )
                    }
                    2 | 3 => {
                        // The inner loop from a run-time start, reading one before it (from 0, the
                        // first `j - 1` at `i = 0` fails).
                        let (start, cols) = *self.rng.pick(&[
                            ("1", "4"),
                            ("k % 3", "4"),
                            ("1", "k % 5"),
                            ("2", "5"),
                            ("0", "4"),
                            ("k % 2", "3"),
                        ]);
                        format!(
                            "  let s:usize = {start};\n  for i in 0..3 {{\n    for j in s..{cols} {{\n{print}      total = add_wrap(total, x[i * 4 + j - 1]);\n    }}\n  }}\n"
                        )
                    }
                    4 => {
                        // Three levels, a guard at the outer level too, the innermost maybe empty.
                        let cols = *self.rng.pick(&["3", "k / 4", "0", "4"]);
                        format!(
                            "  for i in 0..2 {{\n    total = add_wrap(total, x[i * 5]);\n    for j in 0..2 {{\n      for l in 0..{cols} {{\n{print}        total = add_wrap(total, x[i * 6 + j * 3 + l]);\n      }}\n    }}\n  }}\n"
                        )
                    }
                    _ => {
                        // A triangular nest: the inner bound moves with the outer counter.
                        let rows = *self.rng.pick(&["4", "k / 3", "5"]);
                        format!(
                            "  for i in 0..{rows} {{\n    for j in 0..i {{\n{print}      total = add_wrap(total, x[i * 3 + j]);\n    }}\n  }}\n"
                        )
                    }
                }
            }
            14 => {
                // A checked count stepped in a counted loop (bounded by the counter when it starts
                // low and steps by at most 1; near the top it overflows).
                let start =
                    *self.rng.pick(&["0", "u64(k)", "18446744073709551610", "18446744073709551605 + u64(k % 4)"]);
                let lo = *self.rng.pick(&["0", "2", "k % 4"]);
                let test = *self.rng.pick(&["x[i] > 3", "i % 2 == 0", "x[i] != 7"]);
                let step = *self.rng.pick(&["1", "1", "2"]);
                format!(
                    "  let mut count:u64 = {start};\n  for i in {lo}..n {{\n    if {test} {{\n      count += {step};\n    }}\n  }}\n  total = count;\n"
                )
            }
            15 => {
                // A recurrence over an array: each step stores `y[i]` from what the step before
                // stored at `y[i - 1]` (carried in a local by the build), now and then printing
                // it; from 0 the first `i - 1` fails, and the products overflow after a few steps.
                let lo = *self.rng.pick(&["1", "1", "1", "2", "2", "0", "k % 3"]);
                let step = *self.rng.pick(&[
                    "y[i] + y[i - 1]",
                    "y[i - 1] * 3 + 1",
                    "y[i - 1] + x[i]",
                    "y[i - 1] * 1000 + y[i]",
                ]);
                let print = if self.rng.chance(1, 3) { "    println(\"y \", y[i - 1]);\n" } else { "" };
                format!(
                    "  stack y:u64[{N}] = zeroed;\n  for i in 0..n {{\n    y[i] = x[i];\n  }}\n  for i in {lo}..n {{\n{print}    y[i] = {step};\n  }}\n  total = y[n - 1];\n"
                )
            }
            13 => {
                // A local written once in the loop, then through a borrow by a call, then read
                // as an index: never followed back to the counter (its address is taken).
                let index = *self.rng.pick(&["i", "i / 2"]);
                format!(
                    "  for i in 0..n {{\n    let mut t:usize = {index};\n    nudge(t, k % 3);\n    total = add_wrap(total, x[t]);\n  }}\n"
                )
            }
            _ => {
                let (cmp, bound) = (self.cmp(), self.bound());
                let wide = *self.rng.pick(&["u8", "u16"]);
                let add = *self.rng.pick(&[0u64, 200, 250, 65530]);
                format!(
                    "  for i in 0..n {{\n    if i {cmp} {bound} {{\n      let small = {wide}(i + {add});\n      total = add_wrap(total, u64(small));\n    }}\n  }}\n"
                )
            }
        };
        self.out.push_str(&body);
        self.out.push_str("  return total;\n}\n\n");
        let arg = *self.rng.pick(&[0, 1, 2, 3, 5, N - 2, N - 1, N, N + 1]);
        self.calls.push(format!("  println(\"{name} \", {name}({N}, x, {arg}));\n"));
    }
}

fn program(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng::new(seed),
        out: "fn nudge(c:rw<usize>, by:usize) {\n  c += by;\n}\n\n".into(),
        calls: Vec::new(),
    };
    for k in 0..2 + g.rng.below(3) as usize {
        g.function(k);
    }
    g.out.push_str(&format!(
        "fn main() -> i32 {{\n  stack x:u64[{N}] = zeroed;\n  for i in 0..{N} {{\n    x[i] = u64(i * 7 % 11);\n  }}\n"
    ));
    for call in g.calls.clone() {
        g.out.push_str(&call);
    }
    g.out.push_str("  return 0;\n}\n");
    g.out
}

/// `cairn run` of a file: (exit code, stdout, stderr).
fn native(file: &Path, out: &Path, keep: bool) -> (i64, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("run").arg(file).args(["--format", "json", "--out"]).arg(out);
    if keep {
        command.arg("--keep-guards");
    }
    let output = command.output().expect("run cairn");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON record");
    (
        record["exit_code"].as_i64().unwrap_or(-1),
        record["stdout"].as_str().unwrap_or_default().to_string(),
        record["stderr"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn discharged_guards_never_change_what_a_program_does() {
    let count: u64 = std::env::var("CAIRN_GUARD_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let scratch = std::env::temp_dir().join(format!("cairn-differential-guards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch");
    let (mut compared, mut trapped, mut refused, mut discharged, mut hoisted) = (0u64, 0u64, 0u64, 0usize, 0usize);
    let mut failures = Vec::new();
    for seed in 0..count {
        let text = program(seed);
        let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.clone() }]);
        if let Some(refusal) = workspace.check().refusal {
            failures.push(format!(
                "seed {seed}: refused {} at line {}: {}\n{text}",
                refusal.first.code, refusal.first.line, refusal.first.message
            ));
            refused += 1;
            continue;
        }
        let lowered = cairn_mir::program_mir(workspace.db());
        assert!(lowered.errors.is_empty(), "seed {seed}: {:?}", lowered.errors);
        discharged += lowered.functions.iter().flat_map(|f| f.guards()).filter(|g| !g.facts.is_empty()).count();
        let mut rewritten = lowered.functions.clone();
        cairn_mir::rewrite_for_build(&mut rewritten);
        hoisted += rewritten.iter().flat_map(|f| f.guards()).filter(|g| g.hoisted).count();
        let expected = run(&lowered.functions, "cairn.main", 10_000_000);
        let file: PathBuf = scratch.join(format!("g{seed}.cairn"));
        std::fs::write(&file, &text).expect("write");
        let (code, stdout, stderr) = native(&file, &scratch.join("plain"), false);
        let kept = native(&file, &scratch.join("kept"), true);
        let ended = match &expected.ending {
            Ending::Exit(status) => code == i64::from(*status as u8),
            Ending::Trap(kind) => {
                trapped += 1;
                code == 134 && stderr.starts_with(&format!("{} guard failed", kind.name()))
            }
            other => {
                failures.push(format!("seed {seed}: the evaluator stopped: {other:?}\n{text}"));
                continue;
            }
        };
        compared += 1;
        if !(ended && stdout.as_bytes() == expected.stdout.as_slice()) {
            failures.push(format!(
                "seed {seed}: evaluator {:?} {:?}, compiled exit {code} stdout {stdout:?} stderr {stderr:?}\n{text}",
                expected.ending,
                String::from_utf8_lossy(&expected.stdout)
            ));
        } else if kept != (code, stdout.clone(), stderr.clone()) {
            failures.push(format!(
                "seed {seed}: with every guard kept: {kept:?}; as built: {:?}\n{text}",
                (code, stdout, stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "{compared} programs compared, {trapped} trapped, {refused} refused, {discharged} guards discharged, {hoisted} hoisted"
    );
    assert!(failures.is_empty(), "{} programs failed:\n{}", failures.len(), failures.join("\n"));
    assert!(compared * 10 >= count * 9, "only {compared} of {count} programs were compared");
    assert!(trapped * 5 >= compared, "only {trapped} programs trapped: the edges are not exercised");
    assert!(compared - trapped >= compared / 4, "only {} programs ran to the end", compared - trapped);
    assert!(discharged as u64 >= compared, "only {discharged} guards discharged: the analysis is not exercised");
    assert!(hoisted as u64 * 4 >= compared, "only {hoisted} guards hoisted: loop versioning is not exercised");
}
