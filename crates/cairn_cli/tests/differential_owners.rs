//! Random owner programs (language §22), compiled and evaluated side by side and run under
//! valgrind: `Buf`s made, filled, lent, moved into calls and back, swapped, taken out of records,
//! assigned over, nested in `Buf`s and sums, trees that hold themselves through a `Buf` grown,
//! weighed, grafted into one another and pruned, released on every way out of a block (`break`,
//! `continue`, early `return`s), unpacked, held behind `Dyn`s, and linear tokens consumed by `defer`. Indices are drawn
//! past the end now and then, so some programs trap.
//!
//! Each accepted program must print the same bytes and end the same way compiled and under the
//! evaluator; the evaluator must find no allocation left live by a program that ends normally;
//! and valgrind's memcheck must report no invalid access, and no lost block for a program that
//! ends normally. `CAIRN_OWNER_PROGRAMS` sets how many programs are drawn (60 by default; the
//! seeds are fixed, so a failure names the seed that reproduces it).

mod common;

use std::path::PathBuf;
use std::process::Command;

use cairn_hir::{SourceText, Workspace};
use cairn_mir::eval::{Ending, run};
use cairn_testgen::Rng;

/// Helpers every program shares: makers, consumers, records and sums holding owners, a linear
/// token, and a function that returns early while it holds owners.
const PRELUDE: &str = r#"linear struct Token { id:u64; }
struct Bag { data:Buf[u64]; tag:u64; }
enum Maybe { Some(Buf[u64]); Nothing; }

fn make(n:usize, seed:u64) -> Buf[u64] {
  let mut b = Buf[u64](n);
  for i in 0..n { b[i] = add_wrap(seed, u64(i)); }
  return b;
}
fn total(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut t:u64 = 0;
  for i in 0..n { t = add_wrap(mul_wrap(t, 3), xs[i]); }
  return t;
}
fn eat(b:Buf[u64]) -> u64 = total(b);
fn pass(b:Buf[u64]) -> Buf[u64] = b;
fn bag(n:usize, tag:u64) -> Bag {
  let data = make(n, tag);
  return Bag(data, tag);
}
fn open_bag(b:Bag) -> u64 {
  let Bag(data, tag) = b;
  return add_wrap(total(data), tag);
}
fn token(id:u64) -> Token = Token(id);
fn spend(t:Token, log:rw<u64>) {
  let Token(id) = t;
  log = add_wrap(mul_wrap(log, 7), id);
  println("spend ", id);
}
fn maybe(n:usize) -> Maybe {
  if n % 2 == 0 { return Nothing; }
  let b = make(n, 7);
  return Some(b);
}
trait Weighed { fn weight(self:ro<Self>) -> u64; }
impl Weighed for Bag { fn weight(self:ro<Bag>) -> u64 = add_wrap(total(self.data), self.tag); }

struct Tree { tag:u64; kids:Buf[Tree]; }
fn grow(depth:u64, seed:u64) -> Tree {
  if depth == 0 { return Tree(seed, Buf[Tree](0)); }
  let mut kids = Buf[Tree](2);
  for i in 0..2 { kids[i] = grow(depth - 1, add_wrap(seed, u64(i))); }
  return Tree(seed, kids);
}
fn weigh(t:ro<Tree>) -> u64 {
  let mut w = t.tag;
  for i in 0..len(t.kids) { w = add_wrap(mul_wrap(w, 5), weigh(t.kids[i])); }
  return w;
}
fn graft(t:rw<Tree>, i:usize, sub:Tree) { t.kids[i] = sub; }
fn prune(t:Tree) -> u64 {
  let Tree(tag, kids) = t;
  let mut rest = kids;
  let mut w = tag;
  for i in 0..len(rest) {
    let k = take(rest[i]);
    w = add_wrap(w, prune(k));
  }
  return w;
}

fn early(n:usize, cut:usize) -> u64 {
  let a = make(n, 1);
  let b = make(n, 2);
  if n > cut { return total(a); }
  let c = pass(b);
  return add_wrap(total(c), total(a));
}

"#;

struct Gen {
    rng: Rng,
    out: String,
    /// Live `Buf[u64]` locals.
    bufs: Vec<String>,
    /// Live `Bag` locals.
    bags: Vec<String>,
    /// Live `Tree` locals (a record that holds itself through a `Buf`).
    trees: Vec<String>,
    next: usize,
}

impl Gen {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn size(&mut self) -> u64 {
        self.rng.below(6)
    }

    fn take_buf(&mut self) -> Option<String> {
        if self.bufs.is_empty() {
            return None;
        }
        let at = self.rng.below(self.bufs.len() as u64) as usize;
        Some(self.bufs.remove(at))
    }

    fn some_buf(&mut self) -> Option<String> {
        if self.bufs.is_empty() {
            return None;
        }
        Some(self.bufs[self.rng.below(self.bufs.len() as u64) as usize].clone())
    }

    /// One statement of `main`; false once it wrote a `return`.
    fn statement(&mut self) -> bool {
        let n = self.size();
        let s = self.rng.below(100);
        match self.rng.below(19) {
            0 | 1 => {
                let name = self.fresh("b");
                line(&mut self.out, 1, &format!("let mut {name} = make({n}, {s});"));
                self.bufs.push(name);
            }
            2 => {
                if let Some(b) = self.some_buf() {
                    let i = self.rng.below(7);
                    line(&mut self.out, 1, &format!("{b}[{i}] = {s};"));
                }
            }
            3 => {
                if let Some(b) = self.some_buf() {
                    line(&mut self.out, 1, &format!("println(\"total \", total({b}));"));
                }
            }
            4 => {
                if let Some(b) = self.take_buf() {
                    line(&mut self.out, 1, &format!("println(\"eat \", eat({b}));"));
                }
            }
            5 => {
                if let Some(b) = self.take_buf() {
                    let name = self.fresh("b");
                    line(&mut self.out, 1, &format!("let mut {name} = pass({b});"));
                    self.bufs.push(name);
                }
            }
            6 => {
                if self.bufs.len() >= 2 {
                    let a = self.bufs[0].clone();
                    let b = self.bufs[self.bufs.len() - 1].clone();
                    line(&mut self.out, 1, &format!("swap({a}, {b});"));
                }
            }
            7 => {
                let g = self.fresh("g");
                line(&mut self.out, 1, &format!("let mut {g} = bag({n}, {s});"));
                if self.rng.chance(1, 2) {
                    let b = self.fresh("b");
                    line(&mut self.out, 1, &format!("let mut {b} = take({g}.data);"));
                    self.bufs.push(b);
                }
                if self.rng.chance(1, 2) {
                    let k = self.size();
                    line(&mut self.out, 1, &format!("{g}.data = make({k}, {s});"));
                }
                if self.rng.chance(2, 3) {
                    line(&mut self.out, 1, &format!("println(\"bag \", open_bag({g}));"));
                } else {
                    self.bags.push(g);
                }
            }
            8 => {
                if let Some(b) = self.some_buf() {
                    line(&mut self.out, 1, &format!("{b} = make({n}, {s});"));
                }
            }
            9 => {
                let k = 1 + self.rng.below(6);
                let c = self.rng.below(6);
                let d = self.rng.below(8);
                line(&mut self.out, 1, &format!("for i in 0..{k} {{"));
                line(&mut self.out, 2, &format!("let mut t = make({n}, u64(i));"));
                line(&mut self.out, 2, &format!("if i == {c} {{ continue; }}"));
                line(&mut self.out, 2, &format!("if i == {d} {{ break; }}"));
                line(&mut self.out, 2, "println(\"loop \", total(t));");
                line(&mut self.out, 1, "}");
            }
            10 => {
                line(&mut self.out, 1, &format!("match maybe({n}) {{"));
                line(&mut self.out, 2, "Some(b) => println(\"some \", total(b));");
                line(&mut self.out, 2, "Nothing => println(\"nothing\");");
                line(&mut self.out, 1, "}");
            }
            11 => {
                let t = self.fresh("t");
                line(&mut self.out, 1, &format!("let {t} = token({s});"));
                line(&mut self.out, 1, &format!("defer spend({t}, log);"));
            }
            12 => {
                let name = self.fresh("n");
                let m = 1 + self.rng.below(3);
                let j = self.rng.below(4);
                line(&mut self.out, 1, &format!("let mut {name} = Buf[Buf[u64]]({m});"));
                line(&mut self.out, 1, &format!("{name}[{j}] = make({n}, {s});"));
                let e = self.fresh("e");
                line(&mut self.out, 1, &format!("let mut {e} = take({name}[{j}]);"));
                line(&mut self.out, 1, &format!("println(\"nested \", total({e}));"));
                if self.rng.chance(1, 2) {
                    line(&mut self.out, 1, &format!("{name}[{j}] = {e};"));
                }
            }
            14 => {
                // A Dyn holding a record that owns a Buf: called through, moved, released.
                let g = self.fresh("g");
                let d = self.fresh("d");
                line(&mut self.out, 1, &format!("let {g} = bag({n}, {s});"));
                line(&mut self.out, 1, &format!("let {d} = Dyn[Weighed]({g});"));
                line(&mut self.out, 1, &format!("println(\"dyn \", weight({d}));"));
                if self.rng.chance(1, 2) {
                    let e = self.fresh("d");
                    line(&mut self.out, 1, &format!("let {e} = {d};"));
                    line(&mut self.out, 1, &format!("println(\"moved \", {e}.weight());"));
                }
            }
            13 => {
                let cut = self.rng.below(6);
                let r = self.fresh("r");
                line(&mut self.out, 1, &format!("let {r} = early({n}, {cut});"));
                line(&mut self.out, 1, &format!("println(\"early \", {r});"));
            }
            16 => {
                let t = self.fresh("t");
                let depth = self.rng.below(4);
                line(&mut self.out, 1, &format!("let mut {t} = grow({depth}, {s});"));
                self.trees.push(t);
            }
            17 => {
                if let Some(t) = self.trees.last().cloned() {
                    if self.rng.chance(1, 2) {
                        line(&mut self.out, 1, &format!("println(\"weigh \", weigh({t}));"));
                    } else {
                        self.trees.pop();
                        line(&mut self.out, 1, &format!("println(\"prune \", prune({t}));"));
                    }
                }
            }
            18 => {
                // A subtree moved into another tree's children, over what was there (an index
                // past the children traps).
                if self.trees.len() >= 2 {
                    let sub = self.trees.pop().unwrap_or_default();
                    let at = self.trees[self.rng.below(self.trees.len() as u64) as usize].clone();
                    let i = self.rng.below(3);
                    line(&mut self.out, 1, &format!("graft({at}, {i}, {sub});"));
                    line(&mut self.out, 1, &format!("println(\"grafted \", weigh({at}));"));
                }
            }
            _ => {
                if let Some(b) = self.take_buf() {
                    line(&mut self.out, 1, &format!("if {s} > 50 {{"));
                    line(&mut self.out, 2, &format!("println(\"then \", eat({b}));"));
                    line(&mut self.out, 1, "} else {");
                    line(&mut self.out, 2, &format!("let z = pass({b});"));
                    line(&mut self.out, 2, "println(\"else \", total(z));");
                    line(&mut self.out, 1, "}");
                } else if self.rng.chance(1, 3) {
                    line(&mut self.out, 1, &format!("if {s} > 70 {{ return {}; }}", self.rng.below(4)));
                }
            }
        }
        true
    }
}

fn line(out: &mut String, indent: usize, text: &str) {
    out.push_str(&"  ".repeat(indent));
    out.push_str(text);
    out.push('\n');
}

fn owner_program(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng::new(seed),
        out: String::from(PRELUDE),
        bufs: Vec::new(),
        bags: Vec::new(),
        trees: Vec::new(),
        next: 0,
    };
    g.out.push_str("fn main() -> i32 {\n  let mut log:u64 = 0;\n");
    let count = 4 + g.rng.below(14);
    for _ in 0..count {
        if !g.statement() {
            break;
        }
    }
    for bag in g.bags.clone() {
        line(&mut g.out, 1, &format!("println(\"left \", open_bag({bag}));"));
    }
    line(&mut g.out, 1, "println(\"log \", log);");
    line(&mut g.out, 1, &format!("return {};", g.rng.below(3)));
    g.out.push_str("}\n");
    g.out
}

fn valgrind_available() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn owner_programs_agree_and_are_memory_safe() {
    let count: u64 = std::env::var("CAIRN_OWNER_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    assert!(valgrind_available(), "valgrind is not installed: ./scripts/setup.sh installs it");
    let scratch = std::env::temp_dir().join(format!("cairn-differential-owners-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch");
    let (mut compared, mut trapped, mut refused, mut grafted) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for seed in 0..count {
        let text = owner_program(seed);
        grafted += u64::from(text.contains("graft("));
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
        let expected = run(&lowered.functions, "cairn.main", 10_000_000);
        let file: PathBuf = scratch.join(format!("o{seed}.cairn"));
        std::fs::write(&file, &text).expect("write");
        let out = scratch.join(format!("build{seed}"));
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("run")
            .arg(&file)
            .args(["--format", "json", "--out"])
            .arg(&out)
            .output()
            .expect("run cairn");
        let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON record");
        let stdout = record["stdout"].as_str().unwrap_or_default();
        let stderr = record["stderr"].as_str().unwrap_or_default();
        let code = record["exit_code"].as_i64().unwrap_or(-1);
        let ended = match &expected.ending {
            Ending::Exit(status) => {
                if expected.leaked != 0 {
                    failures.push(format!("seed {seed}: the evaluator found {} live allocations", expected.leaked));
                }
                code == i64::from(*status as u8)
            }
            Ending::Trap(kind) => {
                trapped += 1;
                code == 134 && stderr.starts_with(&format!("{} guard failed", kind.name()))
            }
            other => panic!("seed {seed}: the evaluator could not run the program: {other:?}\n{text}"),
        };
        compared += 1;
        if !(ended && stdout.as_bytes() == expected.stdout.as_slice()) {
            failures.push(format!(
                "seed {seed}: evaluator {:?} {:?}, compiled exit {code} stdout {stdout:?} stderr {stderr:?}\n{text}",
                expected.ending,
                String::from_utf8_lossy(&expected.stdout)
            ));
            continue;
        }
        let binary = PathBuf::from(record["build_directory"].as_str().unwrap_or_default()).join(format!("o{seed}"));
        let checked = common::memcheck(&binary, code == 134).expect("valgrind runs");
        let reports = checked.reports;
        if checked.status.code() == Some(99) || !reports.is_empty() {
            failures.push(format!("seed {seed}: memcheck:\n{}\n{text}", reports.join("\n")));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!("{compared} owner programs compared, {trapped} of them trapped, {refused} refused");
    assert!(failures.is_empty(), "{} owner programs failed:\n{}", failures.len(), failures.join("\n"));
    assert!(compared * 10 >= count * 9, "only {compared} of {count} programs were compared");
    assert!(trapped * 20 >= compared, "only {trapped} programs trapped: the traps are not exercised");
    assert!(
        grafted * 10 >= compared,
        "only {grafted} programs graft a tree into another: recursive owners are not exercised"
    );
    assert!(compared - trapped >= compared / 3, "only {} programs ran to the end", compared - trapped);
}
