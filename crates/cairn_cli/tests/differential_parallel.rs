//! Random parallel programs (language §24–§26), evaluated and compiled side by side, at several
//! lane counts: regions writing by element (reading inputs at neighbouring and wrapped indices),
//! regions owning blocks (a strided row filled by an inner loop, a part lent to a helper),
//! regions calling a `fn` parameter, pooled and in-order `reduce`s of every operator, `scan`s
//! (inclusive and exclusive, in place or not), `compact`s, and random plans (grain, lanes, fuse).
//! Sizes are drawn around the pool's thresholds (below 16,384 elements a region is the plain
//! loop), and now and then a value overflows a checked operation, so some programs trap in a
//! lane.
//!
//! Each program must print the same bytes and end the same way under the evaluator (which runs
//! lanes one after another) and compiled, with `CAIRN_LANES` at 1, 2, 3 and 7. The lane count
//! never changes a result. `CAIRN_PARALLEL_PROGRAMS` sets how many programs are drawn (24 by
//! default; the seeds are fixed, so a failure names the seed that reproduces it).

use std::path::PathBuf;
use std::process::Command;

use cairn_hir::{SourceText, Workspace};
use cairn_mir::eval::{Ending, run};
use cairn_testgen::Rng;

const PRELUDE: &str = r#"fn fill(n:usize, xs:rw<u64>[n], seed:u64) {
  for i in 0..n { xs[i] = mul_wrap(add_wrap(u64(i), seed), 2654435761) % 1000003; }
}
fn digest(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut t:u64 = 0;
  for i in 0..n { t = add_wrap(mul_wrap(t, 31), xs[i]); }
  return t;
}
fn clear(row:rw<u64>[8]) { for k in 0..8 { row[k] = u64(k); } }
fn twist(x:u64) -> u64 = mul_wrap(x ^ shr(x, 7), 11400714819323198485);
fn apply(n:usize, out:rw<u64>[n], f:fn(u64) -> u64) { parallel i in n { out[i] = f(out[i]); } }

"#;

struct Gen {
    rng: Rng,
    out: String,
    /// The functions written so far (regions live in functions of their own).
    functions: String,
    next: usize,
}

fn line(out: &mut String, indent: usize, text: &str) {
    out.push_str(&"  ".repeat(indent));
    out.push_str(text);
    out.push('\n');
}

impl Gen {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// A wrapping expression of the lane index `i` and the input `xs` (read anywhere).
    fn value(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(1, 3) {
            return match self.rng.below(5) {
                0 => "u64(i)".to_string(),
                1 => "xs[i]".to_string(),
                2 => format!("xs[(i + {}) % n]", 1 + self.rng.below(9)),
                3 => "xs[n - 1 - i]".to_string(),
                _ => format!("{}", self.rng.below(1000)),
            };
        }
        let a = self.value(depth - 1);
        let b = self.value(depth - 1);
        match self.rng.below(6) {
            0 => format!("add_wrap({a}, {b})"),
            1 => format!("mul_wrap({a}, {b})"),
            2 => format!("({a} ^ {b})"),
            3 => format!("shr({a}, {})", self.rng.below(20)),
            4 => format!("max({a}, {b})"),
            _ => format!("twist({a})"),
        }
    }

    /// A function with one or two regions (or collectors) and a call of it from `main`.
    fn region(&mut self) {
        let name = self.fresh("work");
        let kind = self.rng.below(7);
        let mut f = String::new();
        let (call, print) = match kind {
            0 | 1 => {
                // By element; sometimes a second region over the same count (fusable or not).
                line(&mut f, 0, &format!("fn {name}(n:usize, xs:ro<u64>[n], out:rw<u64>[n]) {{"));
                let v = self.value(3);
                line(&mut f, 1, &format!("parallel i in n {{ out[i] = {v}; }}"));
                if self.rng.chance(1, 2) {
                    line(&mut f, 1, "parallel i in n { if out[i] > xs[i] { out[i] = xs[i]; } }");
                }
                if self.rng.chance(1, 6) {
                    // A checked `+` that overflows where the input is large.
                    line(&mut f, 1, "parallel i in n { out[i] = out[i] + 18446744073708551615; }");
                }
                line(&mut f, 0, "}");
                (format!("{name}(N, xs, out);"), "out")
            }
            2 => {
                // Lanes owning blocks of 8: an inner loop, and a part lent to a helper.
                line(&mut f, 0, &format!("fn {name}(k:usize, n:usize, m:usize, xs:ro<u64>[n], out:rw<u64>[m]) {{"));
                line(&mut f, 1, "parallel b in k {");
                if self.rng.chance(1, 2) {
                    line(&mut f, 2, "clear(out[b * 8 .. b * 8 + 8]);");
                }
                line(&mut f, 2, "for j in 0..8 {");
                line(&mut f, 3, "let i = b * 8 + j;");
                line(&mut f, 3, "if i < n { out[b * 8 + j] = add_wrap(out[b * 8 + j], twist(xs[i])); }");
                line(&mut f, 2, "}");
                line(&mut f, 1, "}");
                line(&mut f, 0, "}");
                (format!("{name}(N / 8, N, N, xs, out);"), "out")
            }
            3 => {
                line(&mut f, 0, &format!("fn {name}(n:usize, xs:ro<u64>[n]) -> u64 {{"));
                let op = ["+", "add_wrap", "mul_wrap", "&", "|", "^", "min", "max"][self.rng.below(8) as usize];
                let form = if self.rng.chance(2, 3) { "parallel" } else { "for" };
                let v = if op == "+" { "xs[i] % 65536".to_string() } else { self.value(2) };
                line(&mut f, 1, &format!("let r = reduce {op} {form} i in n yield {v};"));
                line(&mut f, 1, "return r;");
                line(&mut f, 0, "}");
                (format!("let {name}_r = {name}(N, xs);\n  println(\"{name} \", {name}_r);"), "")
            }
            4 => {
                line(&mut f, 0, &format!("fn {name}(n:usize, xs:ro<u64>[n], out:rw<u64>[n]) -> u64 {{"));
                let op = ["add_wrap", "^", "max", "min", "|"][self.rng.below(5) as usize];
                let form = if self.rng.chance(2, 3) { "parallel" } else { "for" };
                let exclusive = if self.rng.chance(1, 2) { " exclusive" } else { "" };
                let v = self.value(2);
                line(&mut f, 1, &format!("let t = scan {op}{exclusive} out {form} i in n yield {v};"));
                line(&mut f, 1, "return t;");
                line(&mut f, 0, "}");
                (format!("let {name}_t = {name}(N, xs, out);\n  println(\"{name} \", {name}_t);"), "out")
            }
            5 => {
                line(&mut f, 0, &format!("fn {name}(n:usize, xs:ro<u64>[n], out:rw<u64>[n]) -> usize {{"));
                let k = 2 + self.rng.below(5);
                let v = self.value(2);
                line(&mut f, 1, &format!("let c = compact out for i in n where xs[i] % {k} == 0 yield {v};"));
                line(&mut f, 1, "return c;");
                line(&mut f, 0, "}");
                (format!("let {name}_c = {name}(N, xs, out);\n  println(\"{name} \", {name}_c);"), "out")
            }
            _ => {
                // A `fn` parameter called in lanes: a declared function.
                line(&mut f, 0, &format!("fn {name}(n:usize, out:rw<u64>[n]) {{ apply(n, out, twist); }}"));
                (format!("{name}(N, out);"), "out")
            }
        };
        // A plan now and then, for the functions with a `parallel` statement.
        if matches!(kind, 0 | 1 | 2) && self.rng.chance(1, 2) {
            let mut items = Vec::new();
            if self.rng.chance(1, 2) {
                items.push(format!("grain {};", 1 + self.rng.below(20000)));
            }
            if self.rng.chance(1, 2) {
                items.push(format!("lanes {};", 1 + self.rng.below(8)));
            }
            if items.is_empty() {
                items.push("lanes 3;".to_string());
            }
            line(&mut f, 0, &format!("plan {name} {{ {} }}", items.join(" ")));
        }
        self.functions.push_str(&f);
        line(&mut self.out, 1, &call);
        if !print.is_empty() {
            line(&mut self.out, 1, &format!("println(\"{name} \", digest(N, {print}));"));
        }
    }
}

fn parallel_program(seed: u64) -> String {
    let mut g = Gen { rng: Rng::new(seed), out: String::new(), functions: String::new(), next: 0 };
    let sizes = [1000u64, 16383, 16384, 20011, 40000];
    let n = sizes[g.rng.below(sizes.len() as u64) as usize];
    let count = 2 + g.rng.below(4);
    for _ in 0..count {
        g.region();
    }
    let mut text = String::from(PRELUDE);
    text.push_str(&format!("const N:usize = {n};\n\n"));
    text.push_str(&g.functions);
    text.push_str("\nfn main() -> i32 {\n  buffer xs:u64[N] = zeroed;\n  buffer out:u64[N] = zeroed;\n");
    text.push_str(&format!("  fill(N, xs, {});\n", seed));
    text.push_str(&g.out);
    text.push_str("  return 0;\n}\n");
    text
}

#[test]
fn parallel_programs_agree_at_every_lane_count() {
    let count: u64 = std::env::var("CAIRN_PARALLEL_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let scratch = std::env::temp_dir().join(format!("cairn-differential-parallel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch");
    let (mut compared, mut trapped) = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..count {
        let text = parallel_program(seed);
        let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.clone() }]);
        if let Some(refusal) = workspace.check().refusal {
            failures.push(format!(
                "seed {seed}: refused {} at line {}: {}\n{text}",
                refusal.first.code, refusal.first.line, refusal.first.message
            ));
            continue;
        }
        let lowered = cairn_mir::program_mir(workspace.db());
        assert!(lowered.errors.is_empty(), "seed {seed}: {:?}", lowered.errors);
        let expected = run(&lowered.functions, "cairn.main", 400_000_000);
        let file: PathBuf = scratch.join(format!("p{seed}.cairn"));
        std::fs::write(&file, &text).expect("write");
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("build")
            .arg(&file)
            .args(["--format", "json", "--out"])
            .arg(scratch.join(format!("build{seed}")))
            .output()
            .expect("run cairn");
        let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON record");
        let binary = PathBuf::from(record["artifact"].as_str().expect("an artifact"));
        let want_trap = match &expected.ending {
            Ending::Exit(0) => None,
            Ending::Trap(kind) => {
                trapped += 1;
                Some(format!("{} guard failed", kind.name()))
            }
            other => panic!("seed {seed}: the evaluator could not run the program: {other:?}\n{text}"),
        };
        compared += 1;
        for lanes in [1, 2, 3, 7] {
            let ran = Command::new(&binary).env("CAIRN_LANES", lanes.to_string()).output().expect("run the program");
            let ended = match &want_trap {
                None => ran.status.code() == Some(0),
                Some(line) => {
                    use std::os::unix::process::ExitStatusExt;
                    ran.status.signal() == Some(6) && String::from_utf8_lossy(&ran.stderr).starts_with(line.as_str())
                }
            };
            if !ended || ran.stdout != expected.stdout {
                failures.push(format!(
                    "seed {seed}, CAIRN_LANES={lanes}: evaluator {:?} {:?}, compiled {:?} stdout {:?} stderr {:?}\n{text}",
                    expected.ending,
                    String::from_utf8_lossy(&expected.stdout),
                    ran.status,
                    String::from_utf8_lossy(&ran.stdout),
                    String::from_utf8_lossy(&ran.stderr)
                ));
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!("{compared} parallel programs compared at four lane counts, {trapped} of them trapped");
    assert!(failures.is_empty(), "{} programs differ:\n{}", failures.len(), failures.join("\n\n"));
    assert!(compared * 4 >= count * 3, "only {compared} of {count} programs were accepted");
}
