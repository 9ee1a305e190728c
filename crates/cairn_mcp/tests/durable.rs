//! Durable sessions driven in process (docs/durability.md): a server that goes away and its
//! successor started in the same directory. Dropping a [`Server`] is what a kill leaves on disk
//! (the journal and the ledger are written before each answer, and so is the table but after a
//! write, whose checkpoint waits for `settle`; a drop without `settle` is a kill right after the
//! answer; a drop releases the table's lock as the kernel does for a killed process). The kills themselves, at named and
//! random points, are `crates/cairn_cli/tests/durable.rs`.

mod common;

use std::path::Path;

use cairn_mcp::Server;
use common::{Scratch, Silent, call};
use serde_json::{Map, Value, json};

const PROGRAM: &str = "fn double(x:u32) -> u32 {\n  return x * 2;\n}\n\nfn triple(x:u32) -> u32 {\n  return x * 3;\n}\n\nfn main() -> i32 {\n  if double(2) != 4 { return 1; }\n  return i32(triple(0));\n}\n";

fn request(handle: &str, kind: &str, extra: Value) -> Value {
    let mut request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": kind});
    for (key, value) in extra.as_object().expect("an object") {
        request[key] = value.clone();
    }
    json!({ "request": request })
}

fn body(handle: &str, replacement: &str) -> Value {
    request(handle, "body", json!({ "replacement": replacement }))
}

fn open(server: &mut Server, path: &str, symbol: &str) -> String {
    let (packet, error) = call(server, "edit_open", json!({"path": path, "symbol": symbol}));
    assert!(!error, "{}", Value::Object(packet));
    packet["handle"].as_str().expect("handle").to_string()
}

fn ledger(root: &Path) -> Vec<Value> {
    std::fs::read_to_string(root.join(".cairn/ledger.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a ledger line is JSON"))
        .collect()
}

fn code(record: &Map<String, Value>) -> &str {
    record.get("code").and_then(Value::as_str).unwrap_or("")
}

#[test]
fn a_resent_request_after_a_restart_gets_the_first_answer_and_is_never_applied_twice() {
    let scratch = Scratch::new("durable-resend");
    std::fs::write(scratch.file("p.cairn"), PROGRAM).expect("write");
    let mut first = Server::new(&scratch.0);
    let handle = open(&mut first, "p.cairn", "double");
    let edit = body(&handle, "{\n  return x + x;\n}");
    let (answer, error) = call(&mut first, "edit_request", edit.clone());
    assert!(!error, "{}", Value::Object(answer));
    assert_eq!(answer["written"], json!(["p.cairn"]));
    let written = std::fs::read_to_string(scratch.file("p.cairn")).expect("read");
    // The table is checkpointed with the write only after the answer (`settle`): a server gone
    // before that leaves a table whose session has not written, and its successor learns the
    // write from the ledger.
    let tables: Vec<String> = std::fs::read_dir(scratch.0.join(".cairn/sessions"))
        .expect("the table's directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .map(|e| std::fs::read_to_string(e.path()).expect("a table"))
        .collect();
    assert!(!tables.is_empty() && tables.iter().all(|t| !t.contains("\"written\":{")), "{tables:?}");
    drop(first);

    let mut second = Server::new(&scratch.0);
    let (again, error) = call(&mut second, "edit_request", edit.clone());
    assert!(!error, "the resend is answered, not refused: {}", Value::Object(again));
    assert_eq!(again, answer, "the first answer, word for word");
    assert_eq!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read"), written);
    // Once in the ledger: one intent, one completion.
    let records = ledger(&scratch.0);
    let kinds: Vec<&str> = records.iter().map(|r| r["kind"].as_str().unwrap_or("")).collect();
    assert_eq!(kinds, ["intent", "complete"], "{records:?}");
    // A different change of the written session is refused, naming the file.
    let (other, error) = call(&mut second, "edit_request", body(&handle, "{\n  return 2 * x;\n}"));
    assert!(error);
    assert_eq!(code(&other), "E-SESSION");
    assert_eq!(other["files"], json!(["p.cairn"]));
    // So is anything else it is asked: only the resend is answered for a session restored spent.
    let (state, error) = call(&mut second, "edit_request", request(&handle, "state", json!({})));
    assert!(error && code(&state) == "E-SESSION", "{}", Value::Object(state));
    // And the live server answers a resend the same way.
    let other_handle = open(&mut second, "p.cairn", "triple");
    let edit = body(&other_handle, "{\n  return x + x + x;\n}");
    let (first_answer, error) = call(&mut second, "edit_request", edit.clone());
    assert!(!error, "{}", Value::Object(first_answer));
    let (resent, error) = call(&mut second, "edit_request", edit);
    assert!(!error);
    assert_eq!(resent, first_answer);
    assert_eq!(ledger(&scratch.0).len(), 4, "the live resend wrote nothing either");
    // A live session that wrote is spent as well: anything but the resend is E-SESSION.
    let (state, error) = call(&mut second, "edit_request", request(&other_handle, "state", json!({})));
    assert!(error && code(&state) == "E-SESSION", "{}", Value::Object(state));
}

#[test]
fn named_handles_come_back_with_their_expansions_and_finish_their_work() {
    let scratch = Scratch::new("durable-resume");
    std::fs::write(scratch.file("p.cairn"), PROGRAM).expect("write");
    let mut first = Server::new(&scratch.0);
    let handle = open(&mut first, "p.cairn", "main");
    let (expansion, error) =
        call(&mut first, "edit_request", request(&handle, "expand", json!({"symbols": ["double"]})));
    assert!(!error, "{}", Value::Object(expansion));
    let (before, _) = call(&mut first, "edit_request", request(&handle, "state", json!({})));
    drop(first);

    let mut second = Server::new(&scratch.0);
    // A new session of the new server never reuses a handle of the old one.
    let fresh = open(&mut second, "p.cairn", "triple");
    assert_ne!(fresh, handle);
    let (after, error) = call(&mut second, "edit_request", request(&handle, "state", json!({})));
    assert!(!error, "the handle came back: {}", Value::Object(after));
    assert_eq!(after["digest"], before["digest"]);
    // The expansion was replayed: the session's digest is the one the expanded session had, so
    // an explanation of the disclosed callee works.
    let (answer, error) = call(
        &mut second,
        "edit_request",
        body(&handle, "{\n  if double(3) != 6 { return 1; }\n  return i32(triple(0));\n}"),
    );
    assert!(!error, "the restored session finishes its work: {}", Value::Object(answer));
    assert!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read").contains("double(3)"));
    drop(second);

    // A third server: the session written under the second comes back spent.
    let mut third = Server::new(&scratch.0);
    let (again, error) = call(
        &mut third,
        "edit_request",
        body(&handle, "{\n  if double(3) != 6 { return 1; }\n  return i32(triple(0));\n}"),
    );
    assert!(!error);
    assert_eq!(again, answer);
    // `fresh` pinned the file before `handle` wrote it: it cannot come back.
    let (stale, error) = call(&mut third, "edit_request", request(&fresh, "state", json!({})));
    assert!(error);
    assert_eq!(code(&stale), "E-SESSION");
    assert_eq!(stale["files"], json!(["p.cairn"]));
    assert!(stale["message"].as_str().unwrap_or("").contains("open a new session"), "{}", Value::Object(stale));
}

#[test]
fn a_session_whose_files_changed_while_the_server_was_down_is_refused_with_a_hint() {
    let scratch = Scratch::new("durable-changed");
    std::fs::write(scratch.file("p.cairn"), PROGRAM).expect("write");
    let mut first = Server::new(&scratch.0);
    let handle = open(&mut first, "p.cairn", "double");
    drop(first);
    std::fs::write(scratch.file("p.cairn"), PROGRAM.replace("x * 3", "x * 4")).expect("save");
    let mut second = Server::new(&scratch.0);
    let (refusal, error) = call(&mut second, "edit_request", body(&handle, "{\n  return x + x;\n}"));
    assert!(error);
    assert_eq!(code(&refusal), "E-SESSION");
    assert_eq!(refusal["files"], json!(["p.cairn"]));
    assert!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read").contains("x * 4"), "nothing written");
    // An unknown handle is still an unknown handle.
    let (unknown, error) = call(&mut second, "edit_request", body("e999", "{ return x; }"));
    assert!(error && code(&unknown) == "E-SESSION");
}

#[test]
fn a_live_server_keeps_its_table_and_a_second_server_does_not_adopt_it() {
    let scratch = Scratch::new("durable-two");
    std::fs::write(scratch.file("p.cairn"), PROGRAM).expect("write");
    let mut first = Server::new(&scratch.0);
    let handle = open(&mut first, "p.cairn", "double");
    let mut second = Server::new(&scratch.0);
    let (refusal, error) = call(&mut second, "edit_request", request(&handle, "state", json!({})));
    assert!(error && code(&refusal) == "E-SESSION", "the live server's session is its own");
    let other = open(&mut second, "p.cairn", "triple");
    assert_ne!(other, handle, "two live servers never issue one handle");
    let (state, error) = call(&mut first, "edit_request", request(&handle, "state", json!({})));
    assert!(!error, "{}", Value::Object(state));
    drop(first);
    drop(second);
    // Both tables are adopted by the next server.
    let mut third = Server::new(&scratch.0);
    for h in [&handle, &other] {
        let (state, error) = call(&mut third, "edit_request", request(h, "state", json!({})));
        assert!(!error, "{h}: {}", Value::Object(state));
    }
    let tables: Vec<String> = std::fs::read_dir(scratch.0.join(".cairn/sessions"))
        .expect("sessions")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(tables.len(), 1, "the adopted tables were merged into one: {tables:?}");
}

#[test]
fn a_table_not_sealed_by_this_user_is_never_adopted() {
    let scratch = Scratch::new("durable-planted");
    std::fs::write(scratch.file("p.cairn"), PROGRAM).expect("write");
    let mut first = Server::new(&scratch.0);
    let handle = open(&mut first, "p.cairn", "double");
    drop(first);
    let sessions = scratch.0.join(".cairn/sessions");
    let table = std::fs::read_dir(&sessions)
        .expect("sessions")
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .expect("a table")
        .path();
    let text = std::fs::read_to_string(&table).expect("read");
    std::fs::write(&table, text.replace("\"double\"", "\"triple\"")).expect("tamper");
    let mut second = Server::new(&scratch.0);
    let (refusal, error) = call(&mut second, "edit_request", request(&handle, "state", json!({})));
    assert!(error && code(&refusal) == "E-SESSION", "a tampered table is not trusted");
}

#[test]
fn source_sessions_are_not_checkpointed_and_leave_no_state_directory() {
    let scratch = Scratch::new("durable-source");
    let mut server = Server::new(&scratch.0);
    let (packet, error) = call(&mut server, "edit_open", json!({"source": PROGRAM, "symbol": "double"}));
    assert!(!error, "{}", Value::Object(packet));
    assert!(!scratch.0.join(".cairn").exists(), "a source session writes nothing beside the server");
}

/// A program with a parallel region (a plan's subject) and a reference to implement.
const HOSTED: &str = "fn fill(n:usize, out:rw<u64>[n]) {
  parallel i in n { out[i] = u64(i); }
}

fn total(n:usize, xs:ro<u32>[n]) -> u64 {
  let mut h:u64 = 0;
  for i in 0..n { h = h + u64(xs[i]); }
  return h;
}

fn main() -> i32 { return 0; }
";

fn plan_reply(session: &Value, items: Value) -> Value {
    json!({"reply": {"protocol": "cairn.plan/1", "session": session, "items": items}})
}

fn submission(handle: &str, source: &str) -> Value {
    json!({"request": {"protocol": "cairn.implementation/1", "handle": handle, "kind": "submit", "source": source}})
}

#[test]
fn plan_sessions_come_back_after_a_restart_and_an_answered_one_is_never_taken_twice() {
    let scratch = Scratch::new("durable-plan");
    std::fs::write(scratch.file("p.cairn"), HOSTED).expect("write");
    let mut first = Server::new(&scratch.0);
    let (packet, refused) = call(&mut first, "plan_open", json!({"path": "p.cairn", "symbol": "fill"}));
    assert!(!refused, "{}", Value::Object(packet));
    let session = packet["session"].clone();
    drop(first);

    // The session comes back under its digest, and its reply is admitted and written.
    let mut second = Server::new(&scratch.0);
    let reply = plan_reply(&session, json!({"grain": 4096}));
    let (admitted, refused) = call(&mut second, "plan_reply", reply.clone());
    assert!(!refused, "the session came back: {}", Value::Object(admitted));
    assert_eq!(admitted["written"], json!(["p.cairn"]));
    let written = std::fs::read_to_string(scratch.file("p.cairn")).expect("read");
    assert!(written.contains("grain 4096"), "{written}");
    let next = admitted["next_session"].clone();
    drop(second);

    // The successor comes back too (its digest names the written program and its generation);
    // the answered session is spent, and its reply resent changes nothing.
    let mut third = Server::new(&scratch.0);
    let (again, refused) = call(&mut third, "plan_reply", reply);
    assert!(refused && code(&again) == "E-SESSION", "{}", Value::Object(again));
    assert_eq!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read"), written, "written once");
    let (cleared, refused) = call(&mut third, "plan_reply", plan_reply(&next, json!({"grain": 0})));
    assert!(!refused, "the successor came back: {}", Value::Object(cleared));
    assert!(!std::fs::read_to_string(scratch.file("p.cairn")).expect("read").contains("grain"));
    drop(third);

    // A session whose program changed while no server ran is refused, naming the file.
    let mut fourth = Server::new(&scratch.0);
    let (packet, _) = call(&mut fourth, "plan_open", json!({"path": "p.cairn", "symbol": "fill"}));
    let session = packet["session"].clone();
    drop(fourth);
    let text = std::fs::read_to_string(scratch.file("p.cairn")).expect("read");
    std::fs::write(scratch.file("p.cairn"), format!("{text}\nfn other() -> i32 {{ return 1; }}\n")).expect("write");
    let mut fifth = Server::new(&scratch.0);
    let (stale, refused) = call(&mut fifth, "plan_reply", plan_reply(&session, json!({"grain": 64})));
    assert!(refused && code(&stale) == "E-SESSION", "{}", Value::Object(stale));
    assert_eq!(stale["files"], json!(["p.cairn"]));
}

#[test]
fn implementation_sessions_come_back_after_a_restart_with_their_handle_and_policy() {
    let scratch = Scratch::new("durable-implementation");
    std::fs::write(scratch.file("p.cairn"), HOSTED).expect("write");
    let policy = json!({"budget": 40, "seed": 7});
    let mut first = Server::with_runner(&scratch.0, Box::new(Silent));
    let edit_handle = open(&mut first, "p.cairn", "main");
    let (packet, refused) = call(
        &mut first,
        "implementation_open",
        json!({"path": "p.cairn", "reference": "total", "policy": policy, "emulate": "sm_90"}),
    );
    assert!(!refused, "{}", Value::Object(packet));
    let handle = packet["handle"].as_str().expect("a handle").to_string();
    assert!(handle.starts_with('i') && handle[1..] != edit_handle[1..], "one numbering: {handle} {edit_handle}");
    assert!(packet["emulation"].as_str().is_some_and(|e| e.contains("sm_90")), "{}", Value::Object(packet));
    let pinned = packet["pinned"].clone();
    drop(first);

    // The second server has not seen the handle; the submission brings the session back with the
    // policy it pinned and the device target it emulates, then validates and writes.
    let mut second = Server::with_runner(&scratch.0, Box::new(Silent));
    let fresh = {
        let (packet, _) = call(&mut second, "implementation_open", json!({"path": "p.cairn", "reference": "total"}));
        packet["handle"].as_str().expect("a handle").to_string()
    };
    assert_ne!(fresh, handle, "a new session never takes a kept handle");
    let source = "fn total_fast(n:usize, xs:ro<u32>[n]) -> u64 implements total {\n  let mut h:u64 = 0;\n  for i in 0..n { h = h + u64(xs[i]); }\n  return h;\n}";
    let (answer, refused) = call(&mut second, "implementation_submit", submission(&handle, source));
    assert!(!refused, "the session came back: {}", Value::Object(answer));
    assert_eq!(answer["status"], "validated");
    assert!(answer["claim"].as_str().is_some_and(|c| c.contains("sm_90")), "{}", Value::Object(answer));
    assert_eq!(answer["written"], json!(["p.cairn"]));
    assert!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read").contains("fn total_fast"));
    drop(second);

    // It stands on what it wrote: a third server takes it back again, and the same submission
    // again replaces the implementation with itself — the same program, nothing written.
    let written = std::fs::read_to_string(scratch.file("p.cairn")).expect("read");
    let mut third = Server::with_runner(&scratch.0, Box::new(Silent));
    let (again, refused) = call(&mut third, "implementation_submit", submission(&handle, source));
    assert!(!refused, "{}", Value::Object(again));
    assert_eq!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read"), written, "never applied twice");
    assert_eq!(again["candidate_sha256"], answer["candidate_sha256"], "the same program");
    assert_eq!(again["written"], json!(false), "nothing to write: {}", Value::Object(again.clone()));
    // The pins came back as they were.
    let (state, _) =
        call(&mut third, "implementation_open", json!({"path": "p.cairn", "reference": "total", "policy": policy}));
    assert_eq!(state["pinned"]["tests_sha256"], pinned["tests_sha256"]);
}
