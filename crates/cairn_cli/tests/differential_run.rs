//! Compiled code against the reference evaluator of MIR: random arithmetic programs (every
//! integer type, conversions, wrapping and checked operators, shifts, division, loops, calls,
//! printing) are built and run by `cairn run`, and evaluated by `cairn_mir::eval`; their
//! standard output must be identical, and they must end the same way — the same exit status, or
//! a trap of the same guard kind (status 134, the guard named on standard error). Literals lean
//! to the ends of each type's range, so many programs trap somewhere.
//!
//! The generic flavour writes each function, with even chance, as a template over one of its
//! parameter types (`fn f1[T:integer](p0:T, …)`, its literals and conversions at `T`), so that
//! the compiled and evaluated code is an instance made on demand from the calls.

use std::path::PathBuf;
use std::process::Command;

use cairn_hir::{SourceText, Workspace};
use cairn_mir::eval::{Ending, run};
use cairn_testgen::Rng;

const INTS: [(&str, bool, u32); 9] = [
    ("u8", false, 8),
    ("u16", false, 16),
    ("u32", false, 32),
    ("u64", false, 64),
    ("usize", false, 64),
    ("i8", true, 8),
    ("i16", true, 16),
    ("i32", true, 32),
    ("i64", true, 64),
];

struct Gen {
    rng: Rng,
    out: String,
    /// Functions written so far: name, parameter types, result type.
    functions: Vec<(String, Vec<usize>, usize)>,
    /// Whether functions may be written as templates.
    generic: bool,
    /// The type written `T` in the function being written (a template's parameter).
    tparam: Option<usize>,
}

impl Gen {
    fn ty(&mut self) -> usize {
        self.rng.below(INTS.len() as u64) as usize
    }

    /// How type `t` is written where the generator stands: `T` inside a template over it.
    fn tyname(&self, t: usize) -> &'static str {
        if self.tparam == Some(t) { "T" } else { INTS[t].0 }
    }

    /// A literal of type `t`, often at the ends of its range.
    fn literal(&mut self, t: usize) -> String {
        let (_, signed, bits) = INTS[t];
        let max: u128 = if signed { (1u128 << (bits - 1)) - 1 } else { (1u128 << bits) - 1 };
        let pick = self.rng.below(24);
        if signed && pick == 10 {
            // The minimum, which only a negative literal reaches.
            return format!("(-{})", max + 1);
        }
        let magnitude: u128 = match pick {
            0 => 0,
            1 => 1,
            2 => max,
            3 => max - 1,
            4 => max / 2,
            5 | 11..=16 => u128::from(self.rng.below(16)),
            _ => u128::from(self.rng.next_u64()) % (max.min(100_000) + 1),
        };
        if signed && self.rng.chance(1, 3) && magnitude > 0 {
            format!("(-{magnitude})")
        } else {
            format!("{magnitude}")
        }
    }

    /// An expression of type `t` over the names in `scope` (name, type).
    fn expr(&mut self, t: usize, scope: &[(String, usize)], depth: u32) -> String {
        let (_, signed, _) = INTS[t];
        let name = self.tyname(t);
        let same: Vec<&(String, usize)> = scope.iter().filter(|(_, ty)| *ty == t).collect();
        if depth == 0 || self.rng.chance(1, 4) {
            if !same.is_empty() && self.rng.chance(2, 3) {
                return same[self.rng.below(same.len() as u64) as usize].0.clone();
            }
            return format!("{name}({})", self.literal(t));
        }
        let a = self.expr(t, scope, depth - 1);
        let b = self.expr(t, scope, depth - 1);
        // Bitwise operators and the wrapping builtins take unsigned operands only.
        let choice = if signed { *self.rng.pick(&[0, 1, 2, 3, 4, 8, 9, 10, 11]) } else { self.rng.below(14) };
        match choice {
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b})"),
            2 => format!("({a} * {b})"),
            3 => format!("({a} / {b})"),
            4 => format!("({a} % {b})"),
            5 => format!("({a} & {b})"),
            6 => format!("({a} | {b})"),
            7 => format!("({a} ^ {b})"),
            8 => format!("min({a}, {b})"),
            9 => format!("max({a}, {b})"),
            10 => {
                // A conversion from another type.
                let from = self.ty();
                let inner = self.expr(from, scope, depth - 1);
                format!("{name}({inner})")
            }
            11 if signed => format!("(-{a})"),
            11 => format!("add_wrap({a}, {b})"),
            12 => format!("mul_wrap({a}, {b})"),
            _ => {
                let k = self.rng.below(70);
                if self.rng.chance(1, 2) { format!("shl_wrap({a}, {k})") } else { format!("shr({a}, {k})") }
            }
        }
    }

    fn function(&mut self, index: usize) {
        let params: Vec<usize> = (0..1 + self.rng.below(3)).map(|_| self.ty()).collect();
        let ret = self.ty();
        let name = format!("f{index}");
        // A template over one of its parameters' types (inferred from the typed arguments).
        self.tparam =
            (self.generic && self.rng.chance(1, 2)).then(|| params[self.rng.below(params.len() as u64) as usize]);
        let gparams = if self.tparam.is_some() { "[T:integer]" } else { "" };
        let mut scope: Vec<(String, usize)> = params.iter().enumerate().map(|(i, t)| (format!("p{i}"), *t)).collect();
        let list: Vec<String> = scope.iter().map(|(n, t)| format!("{n}:{}", self.tyname(*t))).collect();
        self.out.push_str(&format!("fn {name}{gparams}({}) -> {} {{\n", list.join(", "), self.tyname(ret)));
        for j in 0..1 + self.rng.below(3) {
            let t = self.ty();
            let value = self.expr(t, &scope, 2);
            self.out.push_str(&format!("  let v{j}:{} = {value};\n", self.tyname(t)));
            scope.push((format!("v{j}"), t));
        }
        if self.rng.chance(1, 2) {
            let t = scope[self.rng.below(scope.len() as u64) as usize].1;
            let a = self.expr(t, &scope, 1);
            let b = self.expr(t, &scope, 1);
            let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
            self.out.push_str(&format!("  if {a} {op} {b} {{\n    println(\"{name} branch \", {a});\n  }}\n"));
        }
        if self.rng.chance(1, 3) {
            // A bounded loop accumulating with wrapping arithmetic.
            self.out.push_str("  let mut acc:u64 = 0;\n  let mut k:u64 = 0;\n");
            self.out.push_str(&format!("  while k < {} {{\n", 1 + self.rng.below(20)));
            self.out.push_str("    acc = add_wrap(mul_wrap(acc, 31), k);\n    k += 1;\n  }\n");
            self.out.push_str("  println(\"loop \", acc);\n");
        }
        if let Some((callee, callee_params, callee_ret)) = (!self.functions.is_empty())
            .then(|| self.functions[self.rng.below(self.functions.len() as u64) as usize].clone())
        {
            let args: Vec<String> = callee_params.iter().map(|t| self.expr(*t, &scope, 1)).collect();
            self.out.push_str(&format!("  let c:{} = {callee}({});\n", self.tyname(callee_ret), args.join(", ")));
            scope.push(("c".into(), callee_ret));
        }
        let result = self.expr(ret, &scope, 2);
        self.out.push_str(&format!("  println(\"{name} \", {result});\n"));
        self.out.push_str(&format!("  return {result};\n}}\n\n"));
        self.tparam = None;
        self.functions.push((name, params, ret));
    }

    fn main(&mut self) {
        self.out.push_str("fn main() -> i32 {\n");
        for (name, params, ret) in self.functions.clone() {
            let args: Vec<String> = params.iter().map(|t| format!("{}({})", INTS[*t].0, self.literal(*t))).collect();
            self.out.push_str(&format!("  let r_{name}:{} = {name}({});\n", INTS[ret].0, args.join(", ")));
            self.out.push_str(&format!("  println(\"{name} -> \", r_{name});\n"));
        }
        self.out.push_str(&format!("  return {};\n}}\n", self.rng.below(300)));
    }
}

fn program(seed: u64) -> String {
    generate(seed, false)
}

fn generic_program(seed: u64) -> String {
    generate(seed, true)
}

fn generate(seed: u64, generic: bool) -> String {
    let mut generator = Gen { rng: Rng::new(seed), out: String::new(), functions: Vec::new(), generic, tparam: None };
    for index in 0..1 + generator.rng.below(4) as usize {
        generator.function(index);
    }
    generator.main();
    generator.out
}

#[test]
fn compiled_programs_behave_as_the_evaluator_says() {
    compare(program, 0..300, "plain");
}

#[test]
fn compiled_instances_behave_as_the_evaluator_says() {
    compare(generic_program, 1000..1200, "generic");
}

fn compare(program: fn(u64) -> String, seeds: std::ops::Range<u64>, flavour: &str) {
    let scratch = std::env::temp_dir().join(format!("cairn-differential-{flavour}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch");
    let mut compared = 0;
    let mut trapped = 0;
    let mut refused = 0;
    let mut failures = Vec::new();
    let mut templates = 0;
    for seed in seeds {
        let text = program(seed);
        let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.clone() }]);
        if let Some(refusal) = workspace.check().refusal {
            if std::env::var_os("CAIRN_DIFF_DEBUG").is_some() {
                eprintln!("seed {seed}: {} {} line {}", refusal.first.code, refusal.first.message, refusal.first.line);
            }
            refused += 1;
            continue;
        }
        if text.contains("[T:integer]") {
            templates += 1;
        }
        let lowered = cairn_mir::program_mir(workspace.db());
        assert!(lowered.errors.is_empty(), "seed {seed}: {:?}", lowered.errors);
        let expected = run(&lowered.functions, "cairn.main", 1_000_000);
        let file: PathBuf = scratch.join(format!("p{seed}.cairn"));
        std::fs::write(&file, &text).expect("write");
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("run")
            .arg(&file)
            .args(["--format", "json", "--out"])
            .arg(scratch.join("build"))
            .output()
            .expect("run cairn");
        let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON record");
        let stdout = record["stdout"].as_str().unwrap_or_default();
        let stderr = record["stderr"].as_str().unwrap_or_default();
        let code = record["exit_code"].as_i64().unwrap_or(-1);
        let same_output = stdout.as_bytes() == expected.stdout.as_slice();
        let same_ending = match &expected.ending {
            Ending::Exit(status) => code == i64::from(*status as u8),
            Ending::Trap(kind) => {
                trapped += 1;
                code == 134 && stderr.starts_with(&format!("{} guard failed", kind.name()))
            }
            other => panic!("seed {seed}: the evaluator could not run the program: {other:?}"),
        };
        compared += 1;
        if !(same_output && same_ending) {
            failures.push(format!(
                "seed {seed}: evaluator {:?} {:?}, compiled exit {code} stdout {stdout:?} stderr {stderr:?}\n{text}",
                expected.ending,
                String::from_utf8_lossy(&expected.stdout)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!("{compared} programs compared, {trapped} of them trapped, {refused} refused by the checker");
    assert!(failures.is_empty(), "{} of {compared} programs differ:\n{}", failures.len(), failures.join("\n"));
    assert!(compared >= 100, "only {compared} programs were accepted ({refused} refused): the generator is off");
    assert!(flavour == "plain" || templates >= 60, "only {templates} accepted programs had a template");
    assert!(trapped >= 20, "only {trapped} programs trapped: the traps are not being exercised");
    assert!(compared - trapped >= 20, "only {} programs ran to the end", compared - trapped);
}

/// The tier-1 run tests (instances, traits, function values, closures, owners, regions and
/// collectors, whose lanes the evaluator runs one after another) under the
/// evaluator: the same standard output and ending as the compiled program's expectations in their
/// headers, and no heap allocation left live by a program that ends normally.
#[test]
fn tier_one_run_tests_behave_the_same_under_the_evaluator() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/run");
    let mut compared = 0;
    for name in [
        "920-generics-spec-example.cairn",
        "921-generics-trap-in-instance.cairn",
        "922-traits-static-dispatch.cairn",
        "923-function-values.cairn",
        "924-trap-zero-function-value.cairn",
        "925-closures.cairn",
        "926-dyn-references.cairn",
        "930-owners-pool.cairn",
        "931-owners-nested-and-exits.cairn",
        "932-trap-buf-bounds.cairn",
        "934-defer-linear-buffer.cairn",
        "935-abort-runs-no-defer.cairn",
        "936-arrays.cairn",
        "937-lends.cairn",
        "938-trap-lent-part.cairn",
        "939-trap-empty-dyn.cairn",
        "940-dyn-owners.cairn",
        "942-field-extents.cairn",
        "943-generic-owners.cairn",
        "944-dyn-of-owners.cairn",
        "950-parallel-regions.cairn",
        "951-collectors.cairn",
        "952-trap-in-lane.cairn",
        "953-reduce-traps-in-order.cairn",
        "954-block-lanes.cairn",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect("a run test");
        let expected: String =
            text.lines().filter_map(|l| l.strip_prefix("// stdout: ")).map(|l| format!("{l}\n")).collect();
        let exit: i32 = text.lines().find_map(|l| l.strip_prefix("// exit: ")).and_then(|c| c.parse().ok()).unwrap();
        let mut workspace = Workspace::new(vec![SourceText { name: name.into(), text: text.clone() }]);
        assert!(workspace.check().refusal.is_none(), "{name} is accepted");
        let lowered = cairn_mir::program_mir(workspace.db());
        assert!(lowered.errors.is_empty(), "{name}: {:?}", lowered.errors);
        let outcome = run(&lowered.functions, "cairn.main", 200_000_000);
        assert_eq!(String::from_utf8_lossy(&outcome.stdout), expected, "{name}: standard output");
        match outcome.ending {
            Ending::Exit(status) => {
                assert_eq!(status, exit, "{name}: exit status");
                assert_eq!(outcome.leaked, 0, "{name}: allocations left live");
            }
            Ending::Trap(_) => assert_eq!(exit, 134, "{name}: a trap where the compiled program exits {exit}"),
            other => panic!("{name}: the evaluator could not run it: {other:?}"),
        }
        compared += 1;
    }
    assert_eq!(compared, 25);
}
