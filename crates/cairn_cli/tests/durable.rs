//! The kill test of durable sessions (issue 19, docs/durability.md): `cairn mcp` killed at
//! random points of scripted sessions, restarted, and resumed by a client that names its
//! handles and resends what got no answer.
//!
//! A trial runs the script below on a fresh three-file project. Each server of a trial may be
//! killed — at a named fault point (`CAIRN_FAULT=*:<n>`, `n` drawn over the points a dry run
//! passed) or at a random instant (`SIGKILL` after a random delay within a dry run's duration);
//! up to three servers die per trial, then one finishes. After every kill: no file is torn
//! (each holds its content before or after, byte for byte). On each restart the client resends
//! every write it got an answer to (the answer must come back word for word, never applied
//! again), then redoes the step that got no answer and goes on; every step must succeed, so
//! every session that survives is resumable. At the end: every file holds its change, the
//! journal holds exactly one committed write per change, and the ledger completes each key at
//! most once.
//!
//! Scale: `CAIRN_KILL_POINTS` (default 40) kills in all; `CAIRN_KILL_SEED` seeds the draws;
//! `CAIRN_BIN` names the binary (the release one, for the ≥ 5,000 kills of the closing note).
//! The escalation rules get their own deterministic tests below, as do two writers.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn cairn() -> PathBuf {
    std::env::var_os("CAIRN_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cairn")))
}

fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A scratch directory, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-durable-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// xorshift64*: draws that a seed pins, without a dependency.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

const MANIFEST: &str =
    "[project]\nname = \"p\"\nsources = [\"a.cairn\", \"b.cairn\", \"c.cairn\"]\n\n[build]\nkind = \"exe\"\n";
const FILES: [(&str, &str, &str); 3] = [
    (
        "a.cairn",
        "module p.a;\n\npub fn fa(x:i32) -> i32 {\n  return x + 1;\n}\n",
        "module p.a;\n\npub fn fa(x:i32) -> i32 {\n  return x + 10;\n}\n",
    ),
    (
        "b.cairn",
        "module p.b;\n\npub fn fb(x:i32) -> i32 {\n  return x + 2;\n}\n",
        "module p.b;\n\npub fn fb(x:i32) -> i32 {\n  return x + 20;\n}\n",
    ),
    (
        "c.cairn",
        "module p.c;\nimport p.a as a;\nimport p.b as b;\n\npub fn main() -> i32 {\n  return a.fa(0) + b.fb(0) - 3;\n}\n",
        "module p.c;\nimport p.a as a;\nimport p.b as b;\n\npub fn main() -> i32 {\n  return a.fa(0) + b.fb(0) - 30;\n}\n",
    ),
];

/// One step of the script: what it asks, on which session slot.
#[derive(Clone)]
enum Step {
    Open { slot: usize, symbol: &'static str },
    Expand { slot: usize, symbols: &'static [&'static str] },
    State { slot: usize },
    Body { slot: usize, replacement: &'static str },
}

const SCRIPT: &[Step] = &[
    Step::Open { slot: 0, symbol: "p.a.fa" },
    Step::Expand { slot: 0, symbols: &["p.b.fb"] },
    Step::Body { slot: 0, replacement: "{\n  return x + 10;\n}" },
    Step::Open { slot: 1, symbol: "p.b.fb" },
    Step::State { slot: 1 },
    Step::Body { slot: 1, replacement: "{\n  return x + 20;\n}" },
    Step::Open { slot: 2, symbol: "p.c.main" },
    Step::Body { slot: 2, replacement: "{\n  return a.fa(0) + b.fb(0) - 30;\n}" },
];

/// A running server and the client's end of its pipes.
struct Connection {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    id: u64,
}

impl Connection {
    fn start(dir: &Path, fault: Option<&str>) -> Connection {
        let mut command = Command::new(cairn());
        command.arg("mcp").current_dir(dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        command.env_remove("CAIRN_FAULT").env_remove("CAIRN_FAULT_TRACE");
        if let Some(fault) = fault {
            if let Some(trace) = fault.strip_prefix("trace=") {
                command.env("CAIRN_FAULT_TRACE", trace);
            } else {
                command.env("CAIRN_FAULT", fault);
            }
        }
        let mut child = command.spawn().expect("start cairn mcp");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Connection { child, input, output, id: 0 }
    }

    /// Sends one request; `None` when the server died before answering.
    fn ask(&mut self, method: &str, params: Value) -> Option<Value> {
        self.id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        if writeln!(self.input, "{message}").and_then(|_| self.input.flush()).is_err() {
            return None;
        }
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("a JSON-RPC answer")),
        }
    }

    fn initialize(&mut self) -> bool {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "kill", "version": "0"}});
        if self.ask("initialize", params).is_none() {
            return false;
        }
        writeln!(self.input, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).is_ok()
    }

    /// Calls a tool: `(record, isError)`, or `None` when the server died.
    fn call(&mut self, tool: &str, arguments: Value) -> Option<(Value, bool)> {
        let answer = self.ask("tools/call", json!({"name": tool, "arguments": arguments}))?;
        let result = &answer["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a tool result: {answer}"));
        Some((serde_json::from_str(text).expect("a record"), result["isError"] == json!(true)))
    }

    fn close(mut self) -> bool {
        drop(self.input);
        let status = self.child.wait().expect("wait");
        status.success()
    }
}

/// What the client knows: its handles, and the answers of the writes it got.
#[derive(Default)]
struct Client {
    handles: [Option<String>; 3],
    written: BTreeMap<usize, Value>,
    next: usize,
}

/// Runs one step; `None` when the server died. Panics when a step that must succeed is refused.
fn step(connection: &mut Connection, client: &mut Client, index: usize) -> Option<()> {
    let handle = |client: &Client, slot: usize| client.handles[slot].clone().expect("the slot's session is open");
    let request = |handle: String, kind: &str, extra: Value| {
        let mut request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": kind});
        for (key, value) in extra.as_object().expect("object") {
            request[key] = value.clone();
        }
        json!({ "request": request })
    };
    match &SCRIPT[index] {
        Step::Open { slot, symbol } => {
            let (packet, error) = connection.call("edit_open", json!({"path": ".", "symbol": symbol}))?;
            assert!(!error, "step {index}: open {symbol}: {packet}");
            client.handles[*slot] = Some(packet["handle"].as_str().expect("handle").to_string());
        }
        Step::Expand { slot, symbols } => {
            let (answer, error) = connection
                .call("edit_request", request(handle(client, *slot), "expand", json!({ "symbols": symbols })))?;
            assert!(!error, "step {index}: expand: {answer}");
        }
        Step::State { slot } => {
            let (answer, error) =
                connection.call("edit_request", request(handle(client, *slot), "state", json!({})))?;
            assert!(!error, "step {index}: state: {answer}");
        }
        Step::Body { slot, replacement } => {
            let call = request(handle(client, *slot), "body", json!({ "replacement": replacement }));
            let (answer, error) = connection.call("edit_request", call)?;
            assert!(!error, "step {index}: body: {answer}");
            assert_eq!(answer["status"], "typed", "step {index}: {answer}");
            assert!(answer["written"].is_array(), "step {index}: {answer}");
            client.written.insert(index, answer);
        }
    }
    client.next = index + 1;
    Some(())
}

/// On a fresh server: resend every write that was answered (the first answer must come back),
/// then go on from the first step without an answer. `None` when the server died.
fn resume(connection: &mut Connection, client: &mut Client) -> Option<()> {
    if !connection.initialize() {
        return None;
    }
    for (&index, first) in &client.written.clone() {
        let Step::Body { slot, replacement } = &SCRIPT[index] else { unreachable!() };
        let handle = client.handles[*slot].clone().expect("handle");
        let request = json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement}});
        let (answer, error) = connection.call("edit_request", request)?;
        assert!(!error, "the resend of step {index} was refused: {answer}");
        assert_eq!(&answer, first, "the resend of step {index} got the first answer");
    }
    for index in client.next..SCRIPT.len() {
        step(connection, client, index)?;
    }
    Some(())
}

fn project(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("project");
    std::fs::write(dir.join("cairn.toml"), MANIFEST).expect("manifest");
    for (name, before, _) in FILES {
        std::fs::write(dir.join(name), before).expect("file");
    }
}

/// Every file holds its content before or after, byte for byte.
fn assert_whole(dir: &Path, context: &str) {
    for (name, before, after) in FILES {
        let now = std::fs::read_to_string(dir.join(name)).expect("read");
        assert!(now == before || now == after, "{context}: {name} is torn: {now:?}");
    }
}

/// The journal's write entries that were committed and not rolled back.
fn committed_writes(dir: &Path) -> usize {
    let journal = dir.join(".cairn/journal");
    let names: Vec<String> = std::fs::read_dir(&journal)
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    names
        .iter()
        .filter_map(|n| n.strip_suffix(".write.json"))
        .filter(|seq| names.contains(&format!("{seq}.committed")) && !names.contains(&format!("{seq}.rolled-back")))
        .count()
}

/// Each key completed at most once; the number of completions.
fn ledger_completions(dir: &Path) -> usize {
    let text = std::fs::read_to_string(dir.join(".cairn/ledger.jsonl")).unwrap_or_default();
    let mut per_key: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("a whole ledger line");
        if record["kind"] == "complete" {
            *per_key.entry(record["key"].as_str().unwrap_or("").to_string()).or_default() += 1;
        }
    }
    assert!(per_key.values().all(|&n| n == 1), "a key completed twice: {per_key:?}");
    per_key.len()
}

/// A dry run: the fault points the script passes, and how long it takes.
fn dry_run(dir: &Path) -> (u64, Duration) {
    project(dir);
    let trace = dir.with_extension("trace");
    let _ = std::fs::remove_file(&trace);
    let started = Instant::now();
    let mut connection = Connection::start(dir, Some(&format!("trace={}", trace.display())));
    let mut client = Client::default();
    resume(&mut connection, &mut client).expect("the dry run's server stays up");
    assert!(connection.close());
    let took = started.elapsed();
    let points = std::fs::read_to_string(&trace).unwrap_or_default().lines().count() as u64;
    let _ = std::fs::remove_file(&trace);
    (points, took)
}

#[test]
fn killed_anywhere_a_session_resumes_and_every_change_is_applied_exactly_once() {
    let scratch = Scratch::new("kill");
    let dir = scratch.0.join("p");
    let (points, took) = dry_run(&dir);
    assert!(points >= 20, "the script passes the write-back's fault points ({points})");
    let wanted = knob("CAIRN_KILL_POINTS", 40);
    let mut draw = Draw(knob("CAIRN_KILL_SEED", 0x5eed_cafe_f00d).max(1));
    let mut kills = 0u64;
    let mut named = 0u64;
    let mut trials = 0u64;
    while kills < wanted {
        trials += 1;
        project(&dir);
        let mut client = Client::default();
        let mut lives = 0;
        loop {
            let kill = lives < 3 && (lives == 0 || draw.below(3) == 0);
            lives += 1;
            let at_point = kill && draw.below(2) == 0;
            let fault = at_point.then(|| format!("*:{}", 1 + draw.below(points + 4)));
            let mut connection = Connection::start(&dir, fault.as_deref());
            let killer = (kill && !at_point).then(|| {
                let pid = connection.child.id();
                let delay = Duration::from_micros(draw.below(took.as_micros() as u64 + 1));
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    // SAFETY: signalling the child this test started (still unreaped: the test
                    // waits for it only after this thread is joined).
                    unsafe { libc_kill(pid as i32) };
                })
            });
            let finished = resume(&mut connection, &mut client).is_some();
            if let Some(killer) = killer {
                killer.join().expect("killer");
            }
            drop(connection.input);
            let status = connection.child.wait().expect("wait");
            let died = !status.success();
            if died {
                kills += 1;
                named += u64::from(at_point);
                assert_whole(&dir, &format!("trial {trials}, after kill {kills}"));
            }
            if finished && !died {
                break;
            }
            if finished {
                // Killed after its last answer: one more life to check the resends.
                continue;
            }
        }
        for (name, _, after) in FILES {
            assert_eq!(std::fs::read_to_string(dir.join(name)).expect("read"), after, "trial {trials}: {name}");
        }
        assert_eq!(committed_writes(&dir), 3, "trial {trials}: one committed write per change");
        assert_eq!(ledger_completions(&dir), 3, "trial {trials}: one completion per change");
    }
    eprintln!(
        "kill test: {kills} kills ({named} at named points of {points}, {} at random instants within {took:?}) over {trials} trials; zero torn files, zero double applies, zero lost admissions",
        kills - named
    );
}

/// `kill(pid, SIGKILL)` without a libc dependency in this test crate.
unsafe fn libc_kill(pid: i32) {
    unsafe extern "C" {
        fn kill(pid: i32, signal: i32) -> i32;
    }
    // SAFETY: the caller's pid; 9 is SIGKILL on Linux.
    unsafe { kill(pid, 9) };
}

/// A server killed at `fault` during the first write; the file is then changed by someone
/// else (`foreign`), and a fresh server is asked for the session again.
fn killed_then_saved(tag: &str, fault: &str, foreign: Option<&str>) -> (Value, bool, String) {
    let scratch = Scratch::new(tag);
    let dir = scratch.0.join("p");
    project(&dir);
    let mut connection = Connection::start(&dir, Some(fault));
    let mut client = Client::default();
    assert!(connection.initialize());
    step(&mut connection, &mut client, 0).expect("open");
    step(&mut connection, &mut client, 1).expect("expand");
    assert!(step(&mut connection, &mut client, 2).is_none(), "the server dies at {fault}");
    let _ = connection.child.wait();
    if let Some(text) = foreign {
        std::fs::write(dir.join("a.cairn"), text).expect("save");
    }
    let mut connection = Connection::start(&dir, None);
    assert!(connection.initialize());
    let handle = client.handles[0].clone().expect("handle");
    let request = json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": "{\n  return x + 10;\n}"}});
    let (answer, error) = connection.call("edit_request", request).expect("answer");
    let now = std::fs::read_to_string(dir.join("a.cairn")).expect("read");
    assert!(connection.close());
    (answer, error, now)
}

#[test]
fn a_write_that_completed_before_the_kill_is_answered_not_applied_again() {
    let (answer, error, now) = killed_then_saved("complete", "before-completion", None);
    assert!(!error, "{answer}");
    assert_eq!(answer["written"], json!(["a.cairn"]));
    assert_eq!(now, FILES[0].2);
}

#[test]
fn a_write_killed_before_it_touched_a_file_is_not_applied_and_the_resend_applies_it() {
    let (answer, error, now) = killed_then_saved("not-applied", "after-intent", None);
    assert!(!error, "{answer}");
    assert_eq!(answer["status"], "typed");
    assert_eq!(answer["written"], json!(["a.cairn"]));
    assert_eq!(now, FILES[0].2);
}

#[test]
fn a_torn_ledger_line_is_cut_and_the_write_goes_on() {
    let (answer, error, now) = killed_then_saved("torn", "torn-ledger", None);
    assert!(!error, "{answer}");
    assert_eq!(now, FILES[0].2);
}

#[test]
fn a_foreign_change_after_a_torn_write_is_escalated_and_nothing_is_touched() {
    let saved = "module p.a;\n\npub fn fa(x:i32) -> i32 {\n  return x + 5;\n}\n";
    for (tag, fault) in [("escalate-after", "before-completion"), ("escalate-before", "after-intent")] {
        let (answer, error, now) = killed_then_saved(tag, fault, Some(saved));
        assert!(error, "{fault}: {answer}");
        assert_eq!(answer["code"], "E-SESSION", "{fault}");
        assert_eq!(answer["recovery"], "escalated", "{fault}: {answer}");
        assert_eq!(answer["files"], json!(["a.cairn"]), "{fault}");
        assert_eq!(now, saved, "{fault}: the foreign change stays");
    }
}

#[test]
fn two_servers_and_undo_never_interleave_or_lose_a_write() {
    let scratch = Scratch::new("two-writers");
    let dir = scratch.0.join("p");
    project(&dir);
    // Two servers on one project, each with a session on the same function.
    let mut first = Connection::start(&dir, None);
    let mut second = Connection::start(&dir, None);
    assert!(first.initialize() && second.initialize());
    let mut one = Client::default();
    let mut two = Client::default();
    step(&mut first, &mut one, 0).expect("open");
    step(&mut second, &mut two, 0).expect("open");
    assert_ne!(one.handles[0], two.handles[0], "the servers never share a handle");
    step(&mut first, &mut one, 2).expect("the first write");
    // The second server's session pinned what the first overwrote: its base is revalidated
    // under the lock and the write refused, naming the file; the first write stays.
    let handle = two.handles[0].clone().expect("handle");
    let request = json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": "{\n  return x + 99;\n}"}});
    let (answer, error) = second.call("edit_request", request).expect("answer");
    assert!(error && answer["code"] == "E-SESSION", "{answer}");
    assert_eq!(std::fs::read_to_string(dir.join("a.cairn")).expect("read"), FILES[0].2);
    // Beside `cairn undo`: the undo reverts the first write under the same lock; the first
    // server's resend is still answered from its record, never applied again.
    let undo = Command::new(cairn()).args(["undo", ".", "--format", "json"]).current_dir(&dir).output().expect("undo");
    assert!(undo.status.success(), "{}", String::from_utf8_lossy(&undo.stdout));
    assert_eq!(std::fs::read_to_string(dir.join("a.cairn")).expect("read"), FILES[0].1);
    let handle = one.handles[0].clone().expect("handle");
    let request = json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": "{\n  return x + 10;\n}"}});
    let (answer, error) = first.call("edit_request", request).expect("answer");
    assert!(!error);
    assert_eq!(&answer, one.written.get(&2).expect("the first answer"));
    assert_eq!(std::fs::read_to_string(dir.join("a.cairn")).expect("read"), FILES[0].1, "undone stays undone");
    assert!(first.close() && second.close());
}

#[test]
fn an_sdk_client_killed_mid_work_gets_its_handles_back_and_finishes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python SDK is not installed: run ./scripts/setup.sh (the README's test command does)"
    );
    let scratch = Scratch::new("python");
    let output = Command::new(&python)
        .arg(root.join("tests/python/mcp_resume.py"))
        .arg(cairn())
        .arg(root.join("examples/hello.cairn"))
        .arg(scratch.0.join("work"))
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the session failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("all steps passed"), "{stdout}");
}
