//! `cairn diff` and `cairn verify` end to end: every class on a pair of programs, witnesses
//! replayed natively, git revisions as sides, `--require` exits, obligations that the `z3`
//! binary re-checks to the same answers, and each verify status with its exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn cairn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
}

/// The solver's limit is wall-clock time and tests share few cores: a generous limit for answers
/// the tests expect decided (an `unknown` would not be wrong, only not what is checked).
const DECIDED: [&str; 2] = ["--timeout-ms", "120000"];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-diff-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    })
}

const OLD: &str = "\
fn mid(x:u64, y:u64) -> u64 { return (x + y) / 2; }
fn twice(x:i32) -> i32 { return x * 2; }
fn same(x:u8) -> u8 { return x + 1; }
fn gone(x:u8) -> u8 { return x; }
fn q(a:i32, b:i32) -> i32 { return a / b; }
fn widen(x:u8) -> u16 { return u16(x); }
fn count(n:u32) -> u32 {
  if n == 0 { return 0; }
  return count(n - 1) + 1;
}
fn fill(n:usize, xs:rw<u8>[n]) {
  for i in 0..n { xs[i] = 7; }
}
struct P { x:i32; y:i32; }
fn settle(p:rw<P>) { p.x = p.x + p.y; p.y = 0; }
fn main() -> i32 { return 0; }
";

const NEW: &str = "\
fn mid(x:u64, y:u64) -> u64 { return (x & y) + shr(x ^ y, 1); }
fn twice(x:i32) -> i32 { return x + x; }
fn same(x:u8) -> u8 { return x + 1; }
fn still(x:u8) -> u8 { return x; }
fn q(a:i32, b:i32) -> i32 {
  if b == 0 { return 0; }
  return a / b;
}
fn widen(x:u8) -> u32 { return u32(x); }
fn count(n:u32) -> u32 { return n; }
fn fill(n:usize, xs:rw<u8>[n]) {
  for i in 0..n {
    if i != 2 { xs[i] = 7; }
  }
}
fn extra() -> u8 { return 1; }
struct P { x:i32; y:i32; }
fn settle(p:rw<P>) { p.x = p.x + p.y; }
fn main() -> i32 { return 0; }
";

#[test]
fn every_class_on_one_pair_with_native_replays() {
    let dir = scratch("classes");
    std::fs::write(dir.join("old.cairn"), OLD).unwrap();
    std::fs::write(dir.join("new.cairn"), NEW).unwrap();
    let out = cairn()
        .current_dir(&dir)
        .args(["diff", "old.cairn", "new.cairn", "--format", "json", "--markdown", "pr.md"])
        .args(DECIDED)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let record = json_of(&out);
    assert_eq!(record["schema"], "cairn.diff/1");
    assert_eq!(record["old"]["kind"], "path");
    let f = &record["functions"];
    let class = |name: &str| f[name]["class"].as_str().unwrap_or("?").to_string();
    assert_eq!(class("same"), "identical-code");
    assert_eq!(class("main"), "identical-code");
    assert_eq!(class("twice"), "smt-equivalent");
    assert_eq!(class("mid"), "behavior-changed");
    assert_eq!(class("q"), "behavior-changed");
    assert_eq!(class("fill"), "behavior-changed");
    assert_eq!(class("widen"), "signature-changed");
    assert_eq!(class("gone"), "renamed");
    assert_eq!(f["gone"]["to"], "still");
    assert_eq!(class("extra"), "added");
    assert_eq!(class("count"), "unknown");
    assert!(f["count"]["reason"].as_str().unwrap().contains("recursion"), "{}", f["count"]);
    assert!(f.get("still").is_none(), "a rename is listed once");
    // Every witness was reproduced natively, and shows what each version did.
    for name in ["mid", "q", "fill", "settle"] {
        let w = &f[name]["witness"];
        assert_eq!(w["replay"]["native"]["status"], "reproduced", "{name}: {w}");
        assert!(w["inputs"].is_object());
        assert_ne!(w["before"], w["after"], "{name}");
    }
    assert_eq!(f["q"]["witness"]["inputs"]["b"], 0);
    assert_eq!(f["q"]["witness"]["before"]["defined"], false);
    assert_eq!(f["q"]["witness"]["after"]["return"], 0);
    // The fill witness shows the leftover element the new version leaves alone.
    let left_before = &f["fill"]["witness"]["before"]["leftovers"]["xs"];
    let left_after = &f["fill"]["witness"]["after"]["leftovers"]["xs"];
    assert!(left_before.as_array().unwrap().len() >= 3);
    assert_ne!(left_before, left_after);
    assert_eq!(f["widen"]["changes"]["signature"]["after"], "fn widen(x:u8) -> u32");
    // A borrowed record's input and leftovers are shown as the record's fields.
    let w = &f["settle"]["witness"];
    assert!(w["inputs"]["p"].is_array(), "{w}");
    assert!(w["before"]["leftovers"]["p"].is_array(), "{w}");
    assert_eq!(w["before"]["leftovers"]["p"][1], 0);
    assert_eq!(record["semver"]["level"], "major");
    let reasons = record["semver"]["reasons"].to_string();
    assert!(reasons.contains("mid has a witness") && reasons.contains("gone renamed"), "{reasons}");
    let md = std::fs::read_to_string(dir.join("pr.md")).unwrap();
    assert!(md.contains("| behavior-changed | `q` |"), "{md}");
    // --require fails on this pair.
    let out =
        cairn().current_dir(&dir).args(["diff", "old.cairn", "new.cairn", "--require", "equivalent"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_equivalent_refactoring_passes_require_equivalent_but_not_identical() {
    let dir = scratch("require");
    std::fs::write(dir.join("old.cairn"), "fn f(x:i32) -> i32 { return x * 2; }\nfn g(x:u8) -> u8 = x;\n").unwrap();
    std::fs::write(dir.join("new.cairn"), "fn f(x:i32) -> i32 { return x + x; }\nfn g(y:u8) -> u8 = y;\n").unwrap();
    let run = |level: &str| {
        cairn()
            .current_dir(&dir)
            .args(["diff", "old.cairn", "new.cairn", "--require", level, "--format", "json"])
            .output()
            .unwrap()
    };
    let out = run("equivalent");
    assert_eq!(out.status.code(), Some(0));
    let record = json_of(&out);
    assert_eq!(record["functions"]["g"]["class"], "identical-code", "a renamed parameter is the same code");
    assert_eq!(record["semver"]["level"], "patch");
    assert_eq!(run("identical").status.code(), Some(1));
}

/// A closure's body is the code of the function that lends it: changing only the closure is
/// not `identical-code` (it was, and `--require identical` passed a behaviour change).
#[test]
fn a_changed_closure_changes_the_code_of_the_function_that_lends_it() {
    let dir = scratch("closure");
    let text = |d: &str| {
        format!(
            "fn apply1(x:u64, f:ro<fn(u64) -> u64>) -> u64 = f(x);\nfn user(k:u64) -> u64 {{\n  let r = apply1(k, |x:u64| -> u64 {{ return x / {d}; }});\n  return r;\n}}\nfn main() -> i32 {{ return 0; }}\n"
        )
    };
    std::fs::write(dir.join("old.cairn"), text("2")).unwrap();
    std::fs::write(dir.join("new.cairn"), text("3")).unwrap();
    let out = cairn()
        .current_dir(&dir)
        .args(["diff", "old.cairn", "new.cairn", "--require", "identical", "--format", "json"])
        .output()
        .unwrap();
    let record = json_of(&out);
    assert_eq!(record["functions"]["user"]["class"], "behavior-changed", "{record}");
    assert_eq!(record["functions"]["apply1"]["class"], "identical-code", "{record}");
    assert_ne!(out.status.code(), Some(0), "--require identical must fail: {record}");
}

/// A region's lanes and a device reduce's yield are code of the function that holds them: a
/// change there is not `identical-code` (both were, when the digest followed calls only).
#[test]
fn a_changed_region_or_device_reduce_changes_its_function_s_code() {
    let dir = scratch("lanes");
    let text = |k: &str| {
        format!(
            "fn total(n:usize, xs:ro<u32>[n]@device) -> u64 {{\n  let s = reduce + parallel i in n yield u64(xs[i]) * {k};\n  return s;\n}}\nfn fill(n:usize, out:rw<u64>[n]) {{\n  parallel i in n {{ out[i] = u64(i) * {k}; }}\n}}\nfn main() -> i32 {{ return 0; }}\n"
        )
    };
    std::fs::write(dir.join("old.cairn"), text("1")).unwrap();
    std::fs::write(dir.join("new.cairn"), text("2")).unwrap();
    std::fs::write(dir.join("same.cairn"), text("1")).unwrap();
    let out = cairn().current_dir(&dir).args(["diff", "old.cairn", "new.cairn", "--format", "json"]).output().unwrap();
    let record = json_of(&out);
    for f in ["total", "fill"] {
        assert_ne!(record["functions"][f]["class"], "identical-code", "{f}: {record}");
    }
    let out = cairn().current_dir(&dir).args(["diff", "old.cairn", "same.cairn", "--format", "json"]).output().unwrap();
    let record = json_of(&out);
    for f in ["total", "fill"] {
        assert_eq!(record["functions"][f]["class"], "identical-code", "{f}: {record}");
    }
}

/// A method of a trait's impl is a function of the program: classed by diff and covered by
/// `verify --all` under its protocol name (they were left out).
#[test]
fn impl_methods_are_classed_and_verified() {
    let dir = scratch("methods");
    let text = |k: &str| {
        format!(
            "trait Area {{ fn area(s:ro<Self>) -> u64; }}\nstruct Rect {{ w:u64; h:u64; }}\nimpl Area for Rect {{ fn area(s:ro<Rect>) -> u64 = s.w * {k}; }}\nfn main() -> i32 {{ return 0; }}\n"
        )
    };
    std::fs::write(dir.join("old.cairn"), text("s.h")).unwrap();
    std::fs::write(dir.join("new.cairn"), text("s.h + 0")).unwrap();
    std::fs::write(dir.join("bad.cairn"), text("2")).unwrap();
    let out = cairn().current_dir(&dir).args(["diff", "old.cairn", "new.cairn", "--format", "json"]).output().unwrap();
    let record = json_of(&out);
    assert_eq!(record["functions"]["Area.Rect.area"]["class"], "smt-equivalent", "{record}");
    let out = cairn().current_dir(&dir).args(["diff", "old.cairn", "bad.cairn", "--format", "json"]).output().unwrap();
    let record = json_of(&out);
    assert_eq!(record["functions"]["Area.Rect.area"]["class"], "behavior-changed", "{record}");
    let out = cairn()
        .current_dir(&dir)
        .args(["verify", "old.cairn", "bad.cairn", "--all", "--format", "json"])
        .output()
        .unwrap();
    let record = json_of(&out);
    assert_eq!(record["functions"]["Area.Rect.area"]["status"], "counterexample", "{record}");
}

#[test]
fn a_side_that_does_not_compile_is_refused_in_that_side() {
    let dir = scratch("refused");
    std::fs::write(dir.join("old.cairn"), "fn f() -> u8 { return 1; }\n").unwrap();
    std::fs::write(dir.join("new.cairn"), "fn f() -> u8 { return true; }\n").unwrap();
    let out = cairn().current_dir(&dir).args(["diff", "old.cairn", "new.cairn", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let record = json_of(&out);
    assert_eq!(record["status"], "refused");
    assert_eq!(record["side"], "new");
    assert!(record["diagnostic"]["code"].as_str().unwrap().starts_with("E-"));
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn git_revisions_are_read_without_checking_out() {
    let dir = scratch("git");
    git(&dir, &["init", "-q"]);
    std::fs::create_dir_all(dir.join("proj")).unwrap();
    std::fs::write(dir.join("proj/p.cairn"), "fn f(a:i32, b:i32) -> i32 { return a / b; }\n").unwrap();
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    std::fs::write(
        dir.join("proj/p.cairn"),
        "fn f(a:i32, b:i32) -> i32 {\n  if b == 0 { return 0; }\n  return a / b;\n}\n",
    )
    .unwrap();
    git(&dir, &["commit", "-q", "-am", "two"]);
    let out = cairn()
        .current_dir(&dir)
        .args(["diff", "HEAD~1", "HEAD", "--in", "proj/p.cairn", "--format", "json"])
        .args(DECIDED)
        .output()
        .unwrap();
    let record = json_of(&out);
    assert_eq!(record["old"]["kind"], "revision");
    assert_eq!(record["old"]["commit"].as_str().unwrap().len(), 40);
    assert_eq!(record["functions"]["f"]["class"], "behavior-changed");
    // The working tree is as it was.
    assert!(std::fs::read_to_string(dir.join("proj/p.cairn")).unwrap().contains("b == 0"));
    // A revision that names nothing is an environment error.
    let out = cairn().current_dir(&dir).args(["diff", "no-such-rev", "HEAD", "--in", "proj/p.cairn"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn obligations_re_check_in_the_z3_binary() {
    let dir = scratch("obligations");
    std::fs::write(dir.join("a.cairn"), "fn sum(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  for i in 0..n { t = t + xs[i]; }\n  return t;\n}\n").unwrap();
    std::fs::write(dir.join("b.cairn"), "fn sum(n:usize, xs:ro<i64>[n]) -> i64 {\n  let mut t:i64 = 0;\n  let mut i:usize = 0;\n  while i < n { t = t + xs[i]; i = i + 1; }\n  return t;\n}\n").unwrap();
    let out = cairn()
        .current_dir(&dir)
        .args([
            "verify",
            "a.cairn",
            "b.cairn",
            "--symbol",
            "sum",
            "--assume",
            "sum=n <= 8",
            "--allow-reference-traps",
            "--obligations",
            "ob",
            "--format",
            "json",
            "--timeout-ms",
            "120000",
        ])
        .output()
        .unwrap();
    let record = json_of(&out);
    assert_eq!(record["status"], "smt-equivalent", "{record}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(record["receipt"]["domain"], "n <= 8");
    let files = record["receipt"]["obligations"].as_array().unwrap();
    assert!(files.len() >= 4);
    for (file, query) in files.iter().zip(record["receipt"]["queries"].as_array().unwrap()) {
        let path = dir.join("ob").join(file.as_str().unwrap());
        let z3 = Command::new("z3").arg(&path).output().expect("the z3 binary (scripts/setup.sh installs it)");
        assert_eq!(String::from_utf8_lossy(&z3.stdout).trim(), query["answer"], "{}", path.display());
    }
}

#[test]
fn verify_statuses_and_exits() {
    let dir = scratch("verify");
    let clamp = "fn clamp(v:i32, lo:i32, hi:i32) -> i32 {\n  if v < lo { return lo; }\n  if v > hi { return hi; }\n  return v;\n}\n";
    std::fs::write(dir.join("ref.cairn"), clamp).unwrap();
    std::fs::write(dir.join("cand.cairn"), "fn clamp(v:i32, lo:i32, hi:i32) -> i32 = min(max(v, lo), hi);\n").unwrap();
    std::fs::write(dir.join("other.cairn"), "fn clamp(v:i32, lo:i32) -> i32 = v;\n").unwrap();
    std::fs::write(dir.join("bad.cairn"), "fn clamp(v:i32, lo:i32, hi:i32) -> i32 { return true; }\n").unwrap();
    let verify = |args: &[&str]| {
        let out = cairn()
            .current_dir(&dir)
            .arg("verify")
            .args(args)
            .args(["--format", "json"])
            .args(DECIDED)
            .output()
            .unwrap();
        (out.status.code(), json_of(&out))
    };
    let (code, r) = verify(&["ref.cairn", "cand.cairn", "--symbol", "clamp"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("counterexample")), "{r}");
    assert_eq!(r["native_replay"]["status"], "reproduced");
    assert!(r["counterexample"]["lo"].as_i64().unwrap() > r["counterexample"]["hi"].as_i64().unwrap());
    let (code, r) = verify(&["ref.cairn", "cand.cairn", "--symbol", "clamp", "--assume", "clamp=lo <= hi"]);
    assert_eq!((code, r["status"].as_str()), (Some(0), Some("smt-equivalent")), "{r}");
    let (code, r) = verify(&["ref.cairn", "cand.cairn", "--symbol", "clamp", "--assume", "clamp=lo > hi && lo < hi"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("invalid-domain")), "{r}");
    let (code, r) = verify(&["ref.cairn", "cand.cairn", "--symbol", "clamp", "--assume", "clamp=lo +"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("invalid-domain")), "{r}");
    let (code, r) = verify(&["ref.cairn", "other.cairn", "--symbol", "clamp"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("invalid-contract")), "{r}");
    let (code, r) = verify(&["ref.cairn", "bad.cairn", "--symbol", "clamp"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("rejected")), "{r}");
    let (code, r) = verify(&["bad.cairn", "ref.cairn", "--symbol", "clamp"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("invalid-reference")), "{r}");
    // A reference that traps on an allowed input is refused unless traps are allowed.
    std::fs::write(dir.join("div.cairn"), "fn q(a:i32, b:i32) -> i32 { return a / b; }\n").unwrap();
    std::fs::write(dir.join("div2.cairn"), "fn q(a:i32, b:i32) -> i32 { return a / b; }\nfn unused() -> u8 = 1;\n")
        .unwrap();
    let (code, r) = verify(&["div.cairn", "div2.cairn", "--symbol", "q"]);
    assert_eq!((code, r["status"].as_str()), (Some(1), Some("invalid-reference")), "{r}");
    let (code, r) = verify(&["div.cairn", "div2.cairn", "--symbol", "q", "--allow-reference-traps"]);
    assert_eq!((code, r["status"].as_str()), (Some(0), Some("smt-equivalent")), "{r}");
    let (code, r) =
        verify(&["div.cairn", "div2.cairn", "--symbol", "q", "--assume", "q=b != 0 && !(a == -2147483648 && b == -1)"]);
    assert_eq!((code, r["status"].as_str()), (Some(0), Some("smt-equivalent")), "{r}");
    // Outside the fragment: unknown, exit 2.
    std::fs::write(dir.join("p1.cairn"), "fn p(n:u32) -> u32 {\n  println(n);\n  return n;\n}\n").unwrap();
    let (code, r) = verify(&["p1.cairn", "p1.cairn", "--symbol", "p"]);
    assert_eq!((code, r["status"].as_str()), (Some(2), Some("unknown")), "{r}");
    // --all
    let (code, r) = verify(&["ref.cairn", "cand.cairn", "--all", "--assume", "clamp=lo <= hi"]);
    assert_eq!((code, r["status"].as_str()), (Some(0), Some("smt-module-equivalent")), "{r}");
    let (code, r) = verify(&["ref.cairn", "cand.cairn", "--all"]);
    assert_eq!((code, r["status"].as_str()), (Some(2), Some("not-smt-module-equivalent")), "{r}");
}

/// A template has no code of its own: it is compared through each instance either version makes
/// (`twice[u8]`), each classed like any function — a changed template was once `identical-code`,
/// its empty MIR equal to itself. A template no instance of which is made is compared by its
/// text: the same text is identical, a changed one `unknown`.
#[test]
fn templates_are_compared_through_their_instances() {
    let dir = scratch("instances");
    let program = |body: &str| {
        format!(
            "fn twice[T:integer](x:T) -> T = {body};\nfn never[T:copy](x:T) -> T = x;\nfn main() -> i32 {{\n  let a = twice[u32](3);\n  let b = twice[u8](2);\n  if a != 6 || b != 4 {{ return 1; }}\n  return 0;\n}}\n"
        )
    };
    std::fs::write(dir.join("old.cairn"), program("x + x")).unwrap();
    std::fs::write(dir.join("same.cairn"), program("x * 2")).unwrap();
    std::fs::write(dir.join("bumped.cairn"), program("x + 1")).unwrap();
    std::fs::write(
        dir.join("never.cairn"),
        program("x + x").replace("fn never[T:copy](x:T) -> T = x;", "fn never[T:copy](x:T) -> T { return x; }"),
    )
    .unwrap();
    std::fs::write(dir.join("switched.cairn"), program("x + x").replace("twice[u32](3)", "twice[u64](3)")).unwrap();
    let diff = |new: &str| {
        let out = cairn()
            .current_dir(&dir)
            .args(["diff", "old.cairn", new, "--format", "json"])
            .args(DECIDED)
            .output()
            .unwrap();
        json_of(&out)
    };
    let same = diff("same.cairn");
    for instance in ["twice[u32]", "twice[u8]"] {
        assert_eq!(same["functions"][instance]["class"], "smt-equivalent", "{same}");
    }
    assert!(same["functions"].get("twice").is_none(), "the template is its instances: {same}");
    assert_eq!(same["functions"]["never"]["class"], "identical-source", "tokens compared: {same}");
    let bumped = diff("bumped.cairn");
    for instance in ["twice[u32]", "twice[u8]"] {
        let entry = &bumped["functions"][instance];
        assert_eq!(entry["class"], "behavior-changed", "{bumped}");
        assert_eq!(entry["witness"]["replay"]["native"]["status"], "reproduced", "{bumped}");
    }
    assert_eq!(bumped["semver"]["level"], "major");
    // Which instances are made changed, the template did not: no API moved.
    let switched = diff("switched.cairn");
    assert_eq!(switched["functions"]["twice[u32]"]["class"], "removed", "{switched}");
    assert_eq!(switched["functions"]["twice[u64]"]["class"], "added", "{switched}");
    assert_eq!(switched["semver"]["level"], "patch", "{switched}");
    let never = diff("never.cairn");
    assert_eq!(never["functions"]["never"]["class"], "unknown", "{never}");
    assert!(never["functions"]["never"]["reason"].as_str().is_some_and(|r| r.contains("no instance")), "{never}");
    // verify names an instance; a template alone, an instance not made or arguments on a plain
    // function are invalid contracts that say what to name (they once panicked).
    let verify = |symbol: &str| {
        let out = cairn()
            .current_dir(&dir)
            .args([
                "verify",
                "old.cairn",
                "same.cairn",
                "--symbol",
                symbol,
                "--allow-reference-traps",
                "--format",
                "json",
            ])
            .args(DECIDED)
            .output()
            .unwrap();
        (json_of(&out), out.status.code())
    };
    let (record, code) = verify("twice[u8]");
    assert_eq!((record["status"].as_str(), code), (Some("smt-equivalent"), Some(0)), "{record}");
    let (record, code) = verify("twice");
    assert_eq!((record["status"].as_str(), code), (Some("invalid-contract"), Some(1)), "{record}");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("twice[u32], twice[u8]")), "{record}");
    let (record, _) = verify("twice[u64]");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("no instance this program makes")), "{record}");
    let (record, _) = verify("main[u8]");
    assert_eq!(record["status"], "invalid-contract", "{record}");
    let out = cairn()
        .current_dir(&dir)
        .args(["verify", "old.cairn", "same.cairn", "--all", "--allow-reference-traps", "--format", "json"])
        .args(DECIDED)
        .output()
        .unwrap();
    let all = json_of(&out);
    assert_eq!(all["functions"]["twice[u32]"]["status"], "smt-equivalent", "{all}");
    assert!(all["functions"].get("twice").is_none(), "{all}");
    // The template no side instantiates has no code to verify: it neither passes nor fails.
    assert!(all["functions"].get("never").is_none(), "{all}");
    assert_eq!((all["status"].as_str(), out.status.code()), (Some("smt-module-equivalent"), Some(0)), "{all}");
    std::fs::remove_dir_all(&dir).ok();
}
