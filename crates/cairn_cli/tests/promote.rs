//! `cairn promote` (issue 18, docs/tools/promote.md): an implementation becomes the one that runs
//! only by an approval bound to its evaluation. Evaluated and sealed here, approved by the digest
//! typed back at a terminal (a pseudo-terminal) or by the operator's token (the test plays the
//! operator: it holds the key); refused without a terminal or a token, when the evaluation is
//! stale, when the history was copied from elsewhere, and when another promotion came first; a
//! rollback keeps every record.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-promote-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// The reference sums four times, alternately backwards, and adds the first two sums and the
/// difference of the last two (four passes over memory the compiler cannot merge: it cannot know
/// the sums are equal); the implementations sum once and double it. Four passes against one keep
/// the implementation the faster one however the machine's load moves a timing (with two, a
/// loaded machine sometimes timed the reference faster and the evaluation was not corroborated).
const PROGRAM: &str = "fn sum8(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut a:u64 = 0;
  for i in 0..n { a = add_wrap(a, xs[i]); }
  let mut b:u64 = 0;
  for i in 0..n { b = add_wrap(b, xs[n - 1 - i]); }
  let mut c:u64 = 0;
  for i in 0..n { c = add_wrap(c, xs[i]); }
  let mut d:u64 = 0;
  for i in 0..n { d = add_wrap(d, xs[n - 1 - i]); }
  return add_wrap(add_wrap(a, b), sub_wrap(c, d));
}

fn sum8_fast(n:usize, xs:ro<u64>[n]) -> u64 implements sum8 {
  let mut s:u64 = 0;
  for i in 0..n { s = add_wrap(s, xs[i]); }
  return add_wrap(s, s);
}

fn sum8_also(n:usize, xs:ro<u64>[n]) -> u64 implements sum8 {
  let mut t:u64 = 0;
  for i in 0..n { t = add_wrap(t, xs[i]); }
  return add_wrap(t, t);
}

fn main() -> i32 { return 0; }
";

/// Runs `cairn` in `dir` with the operator's key at `key`, without a controlling terminal.
fn cairn(dir: &Path, key: &Path, token: Option<&str>, args: &[&str]) -> (serde_json::Value, i32) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.current_dir(dir).args(args).args(["--format", "json"]).env("CAIRN_APPROVAL_KEY", key);
    command.env_remove("CAIRN_APPROVAL_TOKEN");
    if let Some(token) = token {
        command.env("CAIRN_APPROVAL_TOKEN", token);
    }
    // SAFETY: setsid is async-signal-safe; the child loses the terminal, as an agent's process would.
    unsafe {
        command.pre_exec(|| {
            libc_setsid();
            Ok(())
        });
    }
    let output = command.output().expect("run cairn");
    let first = String::from_utf8_lossy(&output.stdout).lines().next().unwrap_or_default().to_string();
    let record = serde_json::from_str(&first).unwrap_or_else(|_| panic!("no record: {output:?}"));
    (record, output.status.code().unwrap_or(-1))
}

fn libc_setsid() {
    unsafe extern "C" {
        fn setsid() -> i32;
    }
    // SAFETY: setsid takes no arguments and only changes this process's session.
    unsafe {
        setsid();
    }
}

/// HMAC-SHA256 (RFC 2104), in hex: the operator's token for `message`.
fn hmac(key: &[u8], message: &str) -> String {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message.as_bytes()).finalize();
    let outer = Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize();
    outer.iter().map(|b| format!("{b:02x}")).collect()
}

fn token(key: &Path, evaluated: &serde_json::Value) -> String {
    let key = std::fs::read(key).expect("the key");
    let (revision, evaluation) =
        (evaluated["revision"].as_str().expect("r"), evaluated["evaluation"].as_str().expect("e"));
    hmac(&key, &format!("approve:{revision}:{evaluation}"))
}

fn history(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(".cairn/history/records.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect()
}

fn stages(dir: &Path) -> Vec<String> {
    history(dir)
        .iter()
        .filter_map(|r| {
            r["detail"]["lifecycle"].as_str().map(|s| format!("{s} {}", r["candidate"].as_str().unwrap_or("")))
        })
        .collect()
}

const EVALUATE: [&str; 9] =
    ["promote", "p.cairn", "--symbol", "sum8", "--use", "sum8_fast", "--evaluate", "--at", "n=1000000"];

#[test]
fn an_approved_evaluation_is_promoted_and_a_rollback_keeps_every_record() {
    let dir = scratch("approve");
    let key = dir.join("operator.key");
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("write");
    let (evaluated, code) = cairn(&dir, &key, None, &[&EVALUATE[..], &["--threshold", "0"]].concat());
    assert_eq!(code, 0, "{evaluated}");
    assert_eq!(evaluated["status"], "corroborated", "{evaluated}");
    assert!(key.exists(), "the operator's key was made");
    let approve = ["promote", "p.cairn", "--symbol", "sum8", "--use", "sum8_fast"];
    // No terminal and no token: nothing is approved, nothing written.
    let (record, code) = cairn(&dir, &key, None, &approve);
    assert_ne!(code, 0, "{record}");
    assert_eq!(std::fs::read_to_string(dir.join("p.cairn")).expect("read"), PROGRAM);
    // A token for something else is refused.
    let (record, code) = cairn(&dir, &key, Some(&"0".repeat(64)), &approve);
    assert_eq!((code, record["status"].as_str()), (1, Some("refused")), "{record}");
    // The operator's token for this evaluation: promoted, the selection written.
    let (record, code) = cairn(&dir, &key, Some(&token(&key, &evaluated)), &approve);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["status"], "promoted");
    let text = std::fs::read_to_string(dir.join("p.cairn")).expect("read");
    assert!(text.contains("plan sum8 use sum8_fast;"), "{text}");
    // Rolled back: the selection goes, and every record stays, the withdrawal appended.
    let before = history(&dir).len();
    let (record, code) = cairn(&dir, &key, None, &["promote", "p.cairn", "--symbol", "sum8", "--rollback"]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(std::fs::read_to_string(dir.join("p.cairn")).expect("read"), PROGRAM);
    assert_eq!(history(&dir).len(), before + 1);
    assert_eq!(
        stages(&dir),
        [
            "corroborated plan sum8 use sum8_fast;",
            "promoted plan sum8 use sum8_fast;",
            "withdrawn plan sum8 use sum8_fast;"
        ]
    );
    // The evaluation was overtaken by its own promotion and withdrawal: evaluate again.
    let (record, code) = cairn(&dir, &key, Some(&token(&key, &evaluated)), &approve);
    assert_eq!(code, 1, "{record}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_stale_evaluation_a_copied_history_and_a_racing_promotion_are_refused() {
    let dir = scratch("refuse");
    let key = dir.join("operator.key");
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("write");
    let (evaluated, code) = cairn(&dir, &key, None, &[&EVALUATE[..], &["--threshold", "0"]].concat());
    assert_eq!(code, 0, "{evaluated}");
    let approve = ["promote", "p.cairn", "--symbol", "sum8", "--use", "sum8_fast"];
    // The implementation changed since its evaluation: stale.
    let revised =
        PROGRAM.replace("for i in 0..n { s = add_wrap(s, xs[i]); }", "for i in 0..n { s = add_wrap(xs[i], s); }");
    assert_ne!(revised, PROGRAM);
    std::fs::write(dir.join("p.cairn"), &revised).expect("write");
    let (record, code) = cairn(&dir, &key, Some(&token(&key, &evaluated)), &approve);
    assert_eq!(code, 1, "{record}");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("stale")), "{record}");
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("write");
    // A copy of this history in another project, under another operator's key: approves nothing.
    let other = scratch("copied");
    std::fs::write(other.join("p.cairn"), PROGRAM).expect("write");
    std::fs::create_dir_all(other.join(".cairn/history")).expect("dir");
    std::fs::copy(dir.join(".cairn/history/records.jsonl"), other.join(".cairn/history/records.jsonl")).expect("copy");
    let other_key = other.join("operator.key");
    std::fs::write(&other_key, [7u8; 32]).expect("key");
    let (record, code) = cairn(&other, &other_key, Some(&token(&other_key, &evaluated)), &approve);
    assert_eq!(code, 1, "{record}");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("no sealed corroboration")), "{record}");
    assert_eq!(std::fs::read_to_string(other.join("p.cairn")).expect("read"), PROGRAM);
    // Two implementations evaluated for one function: the first approval wins, the second is stale.
    let (also, code) = cairn(
        &dir,
        &key,
        None,
        &[
            "promote",
            "p.cairn",
            "--symbol",
            "sum8",
            "--use",
            "sum8_also",
            "--evaluate",
            "--at",
            "n=1000000",
            "--threshold",
            "0",
        ],
    );
    assert_eq!(code, 0, "{also}");
    let (record, code) = cairn(&dir, &key, Some(&token(&key, &evaluated)), &approve);
    assert_eq!(code, 0, "{record}");
    let (record, code) =
        cairn(&dir, &key, Some(&token(&key, &also)), &["promote", "p.cairn", "--symbol", "sum8", "--use", "sum8_also"]);
    assert_eq!(code, 1, "{record}");
    assert!(record["reason"].as_str().is_some_and(|r| r.contains("stale")), "{record}");
    assert!(std::fs::read_to_string(dir.join("p.cairn")).expect("read").contains("plan sum8 use sum8_fast;"));
    // A threshold the implementation cannot meet: not corroborated.
    let (record, code) = cairn(&dir, &key, None, &[&EVALUATE[..], &["--threshold", "99"]].concat());
    assert_eq!((code, record["status"].as_str()), (1, Some("not-corroborated")), "{record}");
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&other).ok();
}

/// Runs `cairn promote …` at a terminal (a pseudo-terminal made by util-linux `script`), typing
/// `typed` when asked: the promotion record and the exit code.
fn at_terminal(dir: &Path, key: &Path, args: &str, typed: &str) -> (serde_json::Value, i32) {
    use std::io::Write;
    let command = format!("{} promote p.cairn {args} --format json", env!("CARGO_BIN_EXE_cairn"));
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .current_dir(dir)
        .env("CAIRN_APPROVAL_KEY", key)
        .env_remove("CAIRN_APPROVAL_TOKEN")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs the command at a terminal");
    child.stdin.take().expect("stdin").write_all(format!("{typed}\n").as_bytes()).expect("type");
    let output = child.wait_with_output().expect("wait");
    // At a terminal the record is pretty-printed after the prompt, with the terminal's line ends.
    let text = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    let start = text.rfind("\n{").map(|at| at + 1).unwrap_or_else(|| panic!("no record: {text}"));
    let record = serde_json::from_str(&text[start..]).unwrap_or_else(|_| panic!("no record: {text}"));
    (record, output.status.code().unwrap_or(-1))
}

#[test]
fn at_a_terminal_the_person_types_the_evaluation_back() {
    let dir = scratch("terminal");
    let key = dir.join("operator.key");
    std::fs::write(dir.join("p.cairn"), PROGRAM).expect("write");
    let (evaluated, code) = cairn(&dir, &key, None, &[&EVALUATE[..], &["--threshold", "0"]].concat());
    assert_eq!(code, 0, "{evaluated}");
    let evaluation = evaluated["evaluation"].as_str().expect("an evaluation digest");
    // The wrong characters: refused, nothing written.
    let (record, code) = at_terminal(&dir, &key, "--symbol sum8 --use sum8_fast", "deadbeef");
    assert_eq!((code, record["status"].as_str()), (1, Some("refused")), "{record}");
    assert_eq!(std::fs::read_to_string(dir.join("p.cairn")).expect("read"), PROGRAM);
    // A token asked for at the terminal is the operator's HMAC of this evaluation.
    let (issued, code) = at_terminal(&dir, &key, "--symbol sum8 --use sum8_fast --issue-token", &evaluation[..8]);
    assert_eq!(code, 0, "{issued}");
    assert_eq!(issued["token"].as_str(), Some(token(&key, &evaluated).as_str()));
    // The first 8 characters of the evaluation digest: promoted.
    let (record, code) = at_terminal(&dir, &key, "--symbol sum8 --use sum8_fast", &evaluation[..8]);
    assert_eq!(code, 0, "{record}");
    assert_eq!(record["status"], "promoted");
    assert!(std::fs::read_to_string(dir.join("p.cairn")).expect("read").contains("plan sum8 use sum8_fast;"));
    std::fs::remove_dir_all(&dir).ok();
}
