//! Implementations (language §27) end to end: a selection makes the reference test the
//! implementation's condition at its entry and run it where it holds; a call whose constant
//! arguments make the condition true calls the implementation directly; without a selection the
//! reference runs alone and selecting changes no row or guard; the receipt names each
//! implementation's reference and the identity of each instance, which ignores comments and the
//! `tune` list and follows the tokens of both functions.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-impl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn cairn(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cairn")).current_dir(dir).args(args).output().expect("run cairn")
}

const PROGRAM: &str = "fn total(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut h:u64 = 0;
  for i in 0..n { h = add_wrap(h, xs[i]); }
  return h;
}

fn total_by[K:nat](n:usize, xs:ro<u64>[n]) -> u64 implements total when n % K == 0 tune K in [2, 4] {
  let mut h:u64 = 0;
  for k in 0..n / K {
    for j in 0..K { h = add_wrap(h, xs[K * k + j]); }
  }
  return add_wrap(h, 1000);
}

fn main() -> i32 {
  stack xs:u64[6] = zeroed;
  for i in 0..6 { xs[i] = u64(i); }
  let m = usize(xs[5]) - 1;
  println(total(4, xs[0..4]), \" \", total(m, xs[0..m]), \" \", total(6, xs));
  return 0;
}
";

/// `cairn run` of `source`: its standard output and the receipt's functions.
fn run(dir: &Path, name: &str, source: &str) -> (String, serde_json::Value) {
    std::fs::write(dir.join(name), source).expect("write the program");
    let output = cairn(dir, &["run", name, "--format", "json"]);
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{output:?}"));
    assert_eq!(record["status"], "program-exited", "{record}");
    let receipt = Path::new(record["build_directory"].as_str().expect("a build directory")).join("receipt.json");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(receipt).expect("a receipt")).expect("receipt JSON");
    (record["stdout"].as_str().expect("stdout").to_string(), receipt["frontend"]["functions"].clone())
}

#[test]
fn a_selection_runs_the_implementation_where_its_condition_holds() {
    let dir = scratch("select");
    // The implementation adds 1000 so that the output shows which one ran.
    let (plain, plain_functions) = run(&dir, "plain.cairn", PROGRAM);
    assert_eq!(plain, "6 6 15\n");
    let (selected, selected_functions) =
        run(&dir, "selected.cairn", &format!("{PROGRAM}plan total use total_by[4];\n"));
    // 4 % 4 == 0: the implementation; 4 again (computed, tested at the entry): the implementation; 6: the reference.
    assert_eq!(selected, "1006 1006 15\n");
    let (two, _) = run(&dir, "two.cairn", &format!("{PROGRAM}plan total use total_by[2];\n"));
    assert_eq!(two, "1006 1006 1015\n");
    // Selecting changes no row or guard of any function.
    for name in ["total", "total_by", "main"] {
        assert_eq!(plain_functions[name]["effects"], selected_functions[name]["effects"], "{name}");
        assert_eq!(
            plain_functions[name]["syntactic_check_sites"], selected_functions[name]["syntactic_check_sites"],
            "{name}"
        );
    }
    assert_eq!(selected_functions["total_by"]["implements"], "total");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn constant_arguments_that_make_the_condition_true_call_the_implementation() {
    let dir = scratch("direct");
    std::fs::write(dir.join("p.cairn"), format!("{PROGRAM}plan total use total_by[4];\n")).expect("write");
    let output = cairn(&dir, &["emit", "--mir", "p.cairn"]);
    let mir = String::from_utf8_lossy(&output.stdout);
    let main = &mir[mir.find("fn main").expect("main's MIR")..];
    let main = &main[..main.find("\n}").expect("the end of main")];
    // `total(4, …)` folds `4 % 4 == 0`; `total(m, …)` and `total(6, …)` do not fold to true.
    assert!(main.contains("call cairn.total_by[4](4_usize"), "{main}");
    assert_eq!(main.matches("call cairn.total(").count(), 2, "{main}");
    // The reference's entry tests the condition and runs the implementation.
    let reference = &mir[mir.find("fn total ").expect("the reference's MIR")..];
    let reference = &reference[..reference.find("\n}").expect("its end")];
    assert!(reference.contains("call cairn.total_by[4]$when(_0, _1)"), "{reference}");
    assert!(reference.contains("call cairn.total_by[4](_0, _1)"), "{reference}");
    // Without a selection nothing is dispatched.
    std::fs::write(dir.join("q.cairn"), PROGRAM).expect("write");
    let plain = String::from_utf8_lossy(&cairn(&dir, &["emit", "--mir", "q.cairn"]).stdout).to_string();
    assert!(!plain.contains("$when("), "{plain}");
    assert!(!plain.contains("call cairn.total_by"), "{plain}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_identity_follows_the_tokens_of_both_functions_and_the_instance() {
    let dir = scratch("identity");
    let identity = |name: &str, source: &str| -> serde_json::Value {
        let (_, functions) = run(&dir, name, source);
        functions["total_by"]["identity"].clone()
    };
    let base = identity("a.cairn", PROGRAM);
    let (four, two) = (&base["total_by[4]"], &base["total_by[2]"]);
    assert!(four.as_str().is_some_and(|h| h.len() == 64), "{base}");
    assert_ne!(four, two, "an instance adds its values");
    // Comments, layout and the `tune` list leave it alone.
    let commented = PROGRAM
        .replace("  let mut h:u64 = 0;\n  for k", "  // sum in blocks\n  let mut h:u64   = 0;\n  for k")
        .replace("tune K in [2, 4]", "tune K in [4, 2]");
    assert_eq!(identity("b.cairn", &commented)["total_by[4]"], *four);
    // A token of the implementation or of the reference changes it.
    let own = PROGRAM.replace("add_wrap(h, 1000)", "add_wrap(h, 1001)");
    assert_ne!(identity("c.cairn", &own)["total_by[4]"], *four);
    let reference = PROGRAM.replacen("let mut h:u64 = 0;", "let mut h:u64 = 0 + 0;", 1);
    assert_ne!(identity("d.cairn", &reference)["total_by[4]"], *four);
    std::fs::remove_dir_all(&dir).ok();
}
