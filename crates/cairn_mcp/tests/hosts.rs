//! The plan and implementation hosts behind their tools (protocol §8, §9): every refusal a reply
//! can meet before validation, judged without building anything (validation runs on a stand-in
//! runner here and natively in crates/cairn_cli/tests/implementation_sessions.rs).

mod common;

use cairn_mcp::Server;
use common::{Scratch, Silent, call};
use serde_json::{Value, json};

const PROGRAM: &str =
    "fn total(n:usize, xs:ro<u32>[n]) -> u64 effects(ffi_precondition, read:xs, trap, io, ffi:write) {
  let mut h:u64 = 0;
  for i in 0..n { h = h + u64(xs[i]); }
  return h;
}

fn report(n:usize, xs:ro<u32>[n]) -> u64 = total(n, xs);

fn fill(n:usize, out:rw<u64>[n]) {
  parallel i in n { out[i] = u64(i); }
}

fn twice(n:usize, a:rw<u64>[n], b:rw<u64>[n]) {
  parallel i in n { a[i] = 1; }
  parallel i in n { b[i] = a[i] * 2; }
}

fn main() -> i32 { return 0; }
";

const RIGHT: &str = "fn total_pairs(n:usize, xs:ro<u32>[n]) -> u64 implements total when n % 2 == 0 {
  let mut h:u64 = 0;
  for k in 0..n / 2 { h = h + u64(xs[2 * k]) + u64(xs[2 * k + 1]); }
  return h;
}";

fn server(tag: &str) -> (Scratch, Server) {
    let scratch = Scratch::new(tag);
    std::fs::write(scratch.file("p.cairn"), PROGRAM).expect("write");
    let server = Server::with_runner(&scratch.0, Box::new(Silent));
    (scratch, server)
}

fn open_implementation(server: &mut Server) -> String {
    let (packet, refused) = call(server, "implementation_open", json!({"path": "p.cairn", "reference": "total"}));
    assert!(!refused, "{packet:?}");
    packet["handle"].as_str().expect("a handle").to_string()
}

fn submit(server: &mut Server, handle: &str, source: &str) -> (serde_json::Map<String, Value>, bool) {
    call(
        server,
        "implementation_submit",
        json!({"request": {"protocol": "cairn.implementation/1", "handle": handle, "kind": "submit", "source": source}}),
    )
}

#[test]
fn a_submission_holds_one_implementation_of_the_reference_and_nothing_else() {
    let (_scratch, mut server) = server("hosts-declarations");
    let handle = open_implementation(&mut server);
    let code = |server: &mut Server, source: &str| -> String {
        let (record, refused) = submit(server, &handle, source);
        assert!(refused, "{record:?}");
        record["code"].as_str().expect("a code").to_string()
    };
    assert_eq!(code(&mut server, &format!("{RIGHT}\nstruct P {{ x:u64; }}")), "E-DECLARATION");
    assert_eq!(code(&mut server, "fn helper(x:u64) -> u64 = x;"), "E-DECLARATION");
    assert_eq!(
        code(&mut server, &format!("{RIGHT}\n{}", RIGHT.replace("total_pairs", "total_other"))),
        "E-DECLARATION"
    );
    assert_eq!(code(&mut server, "fn total(n:usize, xs:ro<u32>[n]) -> u64 { return 0; }"), "E-REFERENCE");
    assert_eq!(code(&mut server, &RIGHT.replace("implements total", "implements report")), "E-REFERENCE");
    // A helper may not replace a function of the program, nor the implementation a plain one.
    assert_eq!(code(&mut server, &format!("{RIGHT}\nfn fill(x:u64) -> u64 = x;")), "E-DECLARATION");
    assert_eq!(code(&mut server, &RIGHT.replace("total_pairs", "report")), "E-DECLARATION");
    assert_eq!(code(&mut server, "fn total_pairs(n:usize) -> u64 implements total { return 0; }"), "E-IMPL-SIGNATURE");
    assert_eq!(
        code(&mut server, "fn total_pairs(n:usize, xs:ro<u32>[n]) -> u64 implements total { return 0 }"),
        "E-PARSE"
    );
    // A request of another shape, or to another handle.
    let (record, _) = call(
        &mut server,
        "implementation_submit",
        json!({"request": {"protocol": "cairn.implementation/1", "handle": "i99", "kind": "submit", "source": RIGHT}}),
    );
    assert_eq!(record["code"], "E-SESSION");
    let (record, _) = call(
        &mut server,
        "implementation_submit",
        json!({"request": {"protocol": "cairn.implementation/1", "handle": handle, "kind": "submit", "source": RIGHT, "inputs": []}}),
    );
    assert_eq!(record["code"], "E-DOMAIN");
    let (record, _) = call(
        &mut server,
        "implementation_submit",
        json!({"request": {"protocol": "cairn.implementation/1", "handle": handle, "kind": "submit", "source": RIGHT, "reference": "x"}}),
    );
    assert_eq!(record["code"], "E-REFERENCE");
    let (record, _) = call(
        &mut server,
        "implementation_submit",
        json!({"request": {"protocol": "cairn.implementation/1", "handle": handle, "kind": "send", "source": RIGHT}}),
    );
    assert_eq!(record["code"], "E-REQUEST");
    // Then a correct one is validated (on the stand-in runner), and a resubmission of the same
    // name replaces it.
    let (record, refused) = submit(&mut server, &handle, RIGHT);
    assert!(!refused, "{record:?}");
    assert_eq!(record["select_with"], "plan total use total_pairs;");
    let (record, refused) = submit(&mut server, &handle, &RIGHT.replace("% 2 == 0", "% 4 == 0"));
    assert!(!refused, "{record:?}");
    assert_eq!(record["when"], "n % 4 == 0");
}

#[test]
fn a_submission_that_grows_another_function_s_row_is_refused() {
    let (_scratch, mut server) = server("hosts-caller");
    let handle = open_implementation(&mut server);
    // Within the reference's ceiling, beyond its own row: the reference's row, and its caller's,
    // would grow.
    let loud = RIGHT.replace("return h;", "println(h);\n  return h;");
    let (record, refused) = submit(&mut server, &handle, &loud);
    assert!(refused);
    assert_eq!(record["code"], "E-CALLER-EFFECT", "{record:?}");
    assert_eq!(record["added_effects"], json!(["ffi:write", "io"]));
}

#[test]
fn the_packet_shows_the_reference_and_pins_the_policy() {
    let (_scratch, mut server) = server("hosts-packet");
    let (packet, refused) = call(
        &mut server,
        "implementation_open",
        json!({"path": "p.cairn", "reference": "total", "policy": {"budget": 7}}),
    );
    assert!(!refused, "{packet:?}");
    assert_eq!(packet["pinned"]["tests"]["budget"], 7);
    let ceiling = packet["reference"]["ceiling"].as_array().expect("the declared ceiling");
    assert!(ceiling.contains(&json!("io")) && ceiling.contains(&json!("trap")), "{ceiling:?}");
    for digest in ["reference_sha256", "tolerance_sha256", "tests_sha256", "domain_sha256", "agreement_sha256"] {
        assert_eq!(packet["pinned"][digest].as_str().map(str::len), Some(64), "{digest}");
    }
    assert_eq!(packet["write_back"], true, "a path session writes a validated implementation");
    let (record, refused) =
        call(&mut server, "implementation_open", json!({"path": "p.cairn", "reference": "nothing"}));
    assert!(refused);
    assert_eq!(record["code"], "E-SYMBOL");
    let (record, refused) = call(
        &mut server,
        "implementation_open",
        json!({"path": "p.cairn", "reference": "total", "policy": {"cases": 3}}),
    );
    assert!(refused);
    assert_eq!(record["code"], "E-TEST-POLICY");
}

#[test]
fn a_plan_reply_sets_items_in_range_and_spends_its_session() {
    let (_scratch, mut server) = server("hosts-plan");
    let (record, refused) = call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "total"}));
    assert!(refused);
    assert_eq!(record["code"], "E-PLAN");
    // One region: grain and lanes; two: fuse too.
    let (packet, _) = call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "fill"}));
    let items: Vec<&String> = packet["items"].as_object().expect("items").keys().collect();
    assert_eq!(items, ["grain", "lanes"]);
    // With sizes, the packet predicts (cairn predict's model, uncalibrated here).
    let (sized, _) =
        call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "fill", "sizes": [{"n": 1e3}, {"n": 1e6}]}));
    let predictions = sized["predicted"]["predictions"].as_array().expect("predictions");
    assert!(predictions[1]["ns"].as_f64() > predictions[0]["ns"].as_f64(), "{sized:?}");
    let (record, refused) =
        call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "fill", "sizes": [{"n": "big"}]}));
    assert!(refused && record["code"] == "E-REQUEST", "{record:?}");
    // A size that is no parameter of the function would be priced as unknown without a word.
    let (record, refused) =
        call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "fill", "sizes": [{"m": 10}]}));
    assert!(refused && record["code"] == "E-REQUEST", "{record:?}");
    let (two, _) = call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "twice"}));
    assert_eq!(two["items"]["fuse"], json!({"region": "either", "least": 2, "most": 16}));
    let reply = |session: &Value, items: Value| json!({"reply": {"protocol": "cairn.plan/1", "session": session, "items": items}});
    let session = packet["session"].clone();
    for (items, code) in [
        (json!({"fuse": 2}), "E-PLAN"),
        (json!({"lanes": 1025}), "E-PLAN"),
        (json!({"grain": -1}), "E-REQUEST"),
        (json!({"grain": "big"}), "E-REQUEST"),
    ] {
        let (record, refused) = call(&mut server, "plan_reply", reply(&session, items.clone()));
        assert!(refused, "{items}");
        assert_eq!(record["code"], code, "{items}: {record:?}");
    }
    let (admitted, refused) = call(&mut server, "plan_reply", reply(&session, json!({"grain": 2048, "lanes": 0})));
    assert!(!refused, "{admitted:?}");
    assert_eq!(admitted["plan"], "plan fill { grain 2048; }");
    let (record, _) = call(&mut server, "plan_reply", reply(&session, json!({"grain": 1})));
    assert_eq!(record["code"], "E-SESSION", "an answered session is spent");
    // The successor holds the plan; all zeros removes it.
    let (admitted, refused) = call(&mut server, "plan_reply", reply(&admitted["next_session"], json!({"grain": 0})));
    assert!(!refused, "{admitted:?}");
    assert_eq!(admitted["plan"], "(no plan for fill)");
}

#[test]
fn the_state_of_a_function_is_its_investigation() {
    let (_scratch, mut server) = server("hosts-investigation");
    let (record, refused) = call(&mut server, "state", json!({"path": "p.cairn", "symbol": "fill"}));
    assert!(!refused, "{record:?}");
    assert_eq!(record["protocol"], "cairn.investigation/1");
    assert_eq!(record["plan"], "(no plan for fill)");
    assert_eq!(record["regions"].as_array().map(Vec::len), Some(1));
    let (record, refused) = call(&mut server, "state", json!({"source": PROGRAM, "symbol": "fill"}));
    assert!(refused && record["code"] == "E-REQUEST", "{record:?}");
}

#[test]
fn an_edit_session_answers_predictions_of_its_disclosed_functions() {
    let (_scratch, mut server) = server("hosts-predict");
    let (packet, refused) = call(&mut server, "edit_open", json!({"source": PROGRAM, "symbol": "report"}));
    assert!(!refused, "{packet:?}");
    let handle = packet["handle"].as_str().expect("a handle").to_string();
    let request = |kind: &str, extra: Value| {
        let mut request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": kind});
        for (key, value) in extra.as_object().expect("an object") {
            request[key] = value.clone();
        }
        json!({"request": request})
    };
    let (answer, refused) =
        call(&mut server, "edit_request", request("predict", json!({"sizes": [{"n": 1e3}, {"n": 1e6}]})));
    assert!(!refused, "{answer:?}");
    assert_eq!(answer["protocol"], "cairn.predict/1");
    let predictions = answer["functions"]["report"]["predictions"].as_array().expect("report's predictions");
    assert!(predictions[1]["ns"].as_f64() > predictions[0]["ns"].as_f64(), "{answer:?}");
    let (answer, refused) = call(&mut server, "edit_request", request("predict", json!({"sizes": [1]})));
    assert!(refused && answer["code"] == "E-REQUEST", "{answer:?}");
    // After an admitted edit that doubles the work, the delta says so.
    let (admitted, refused) =
        call(&mut server, "edit_request", request("body", json!({"replacement": "= total(n, xs) + total(n, xs);"})));
    assert!(!refused, "{admitted:?}");
    let (answer, _) = call(&mut server, "edit_request", request("predict", json!({"sizes": [{"n": 1e6}]})));
    let ratio = answer["delta"]["report"][0].as_f64().expect("a delta");
    assert!(ratio > 1.9 && ratio < 2.1, "{answer:?}");
}

#[test]
fn the_same_text_opened_from_a_path_and_inline_is_two_plan_sessions() {
    let (scratch, mut server) = server("hosts-plan-origin");
    let (on_disk, refused) = call(&mut server, "plan_open", json!({"path": "p.cairn", "symbol": "fill"}));
    assert!(!refused, "{on_disk:?}");
    let (inline, refused) = call(&mut server, "plan_open", json!({"source": PROGRAM, "symbol": "fill"}));
    assert!(!refused, "{inline:?}");
    assert_ne!(on_disk["session"], inline["session"], "the origin is part of the digest");
    let reply =
        |session: &Value| json!({"reply": {"protocol": "cairn.plan/1", "session": session, "items": {"grain": 1024}}});
    // The inline session is live beside the path's, and its admission writes nothing.
    let (admitted, refused) = call(&mut server, "plan_reply", reply(&inline["session"]));
    assert!(!refused, "{admitted:?}");
    assert_eq!(admitted["written"], false, "{admitted:?}");
    assert_eq!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read"), PROGRAM);
    // The path's session was not spent by the inline one, and writes its file.
    let (admitted, refused) = call(&mut server, "plan_reply", reply(&on_disk["session"]));
    assert!(!refused, "{admitted:?}");
    assert_ne!(admitted["written"], false, "{admitted:?}");
    assert!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read").contains("plan fill { grain 1024; }"));
    // A rewritten plan takes the old one's place, line for line: no blank line grows behind it.
    let (again, refused) = call(
        &mut server,
        "plan_reply",
        json!({"reply": {"protocol": "cairn.plan/1", "session": admitted["next_session"], "items": {"grain": 2048}}}),
    );
    assert!(!refused, "{again:?}");
    let expected = PROGRAM
        .replace("out[i] = u64(i); }\n}\n\nfn twice", "out[i] = u64(i); }\n}\nplan fill { grain 2048; }\n\nfn twice");
    assert_ne!(expected, PROGRAM);
    assert_eq!(std::fs::read_to_string(scratch.file("p.cairn")).expect("read"), expected);
}
