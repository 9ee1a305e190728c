//! The edit host (protocol §2–§5): packets, admissions and refusals on the examples as insta
//! snapshots (under `snapshots/agent`), and one test per refusal code the host raises. The
//! incremental contract is `edit_host_differential.rs`.
//!
//! Card texts are shown in snapshots by name and length only: they belong to `cards/` and their
//! own tests, and a wording change there must not churn every packet snapshot.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use cairn_agent::edit::{EditHost, OpenRequest, Sources};
use common::{body, code, example, open, weather};
use serde_json::{Map, Value, json};

/// A record with each card's text replaced by its length.
fn shown(record: &Map<String, Value>) -> String {
    let mut record = record.clone();
    if let Some(Value::Object(cards)) = record.get_mut("rule_cards") {
        for text in cards.values_mut() {
            *text = json!(format!("<{} chars>", text.as_str().map_or(0, str::len)));
        }
    }
    serde_json::to_string_pretty(&Value::Object(record)).expect("json")
}

fn snapshot(name: &str, text: String) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/agent"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

// ----- snapshots ----------------------------------------------------------------------------

#[test]
fn packets_admissions_and_refusals_on_the_examples() {
    let mut host = EditHost::new();
    let packet = open(&mut host, example("signals.cairn"), "total_time");
    snapshot("signals_focused_packet", shown(&packet));
    // The second packet of the host: cards and terms sent before are withheld.
    let second = host.open(example("signals.cairn"), OpenRequest { symbol: "next".into(), ..OpenRequest::default() });
    snapshot("signals_second_packet", shown(&second.record));
    let admitted = host.request(&body("e1", "{\n  let per = try inspect(cycles);\n  return Ok(per + 2);\n}"));
    snapshot("signals_admission", shown(&admitted.record));
    let refused = host.request(&body("e1", "{\n  let per = inspect(cycles);\n  return Ok(per + 1);\n}"));
    snapshot("signals_refusal_in_reply", shown(&refused.record));
    let expanded = host.request(
        &json!({"protocol": "cairn.edit/2", "handle": "e1", "kind": "expand", "symbols": ["seconds", "Light"]}),
    );
    snapshot("signals_expansion", shown(&expanded.record));

    let mut host = EditHost::new();
    let component = host.open(
        weather(),
        OpenRequest {
            symbol: "weather.units.celsius_tenths".into(),
            scope: Some("component".into()),
            ..OpenRequest::default()
        },
    );
    snapshot("weather_component_packet", shown(&component.record));
    let admitted = host.request(&body("e1", "= (fahrenheit_tenths - 320) * 5 / 9 + 0;"));
    snapshot("weather_admission", shown(&admitted.record));

    let mut host = EditHost::new();
    let focus = host.open(
        example("hello.cairn"),
        OpenRequest { symbol: "odd_sum".into(), site: Some("x7".into()), ..OpenRequest::default() },
    );
    snapshot("hello_site_packet", shown(&focus.record));
    let caller = host.request(&body("e1", "{\n  println(\"summing\");\n  return n * n;\n}"));
    snapshot("hello_refusal_outside_reply", shown(&caller.record));

    let mut host = EditHost::new();
    let inspected = host.inspect(
        example("bits.cairn"),
        OpenRequest { symbol: "fnv1a".into(), ..OpenRequest::default() },
        &["percent".into()],
    );
    snapshot("bits_inspect_packet", without_toolchain(shown(&inspected.record)));
}

/// The text with the digests that hash the toolchain (its std sources included) and the session
/// id derived from them replaced: they change with every library edit, not with the packet.
fn without_toolchain(text: String) -> String {
    let mut out = Vec::new();
    for line in text.lines() {
        let key = line.trim_start().split(':').next().unwrap_or_default();
        if key == "\"implementation_sha256\"" || key == "\"session\"" {
            let indent = &line[..line.len() - line.trim_start().len()];
            let comma = if line.trim_end().ends_with(',') { "," } else { "" };
            out.push(format!("{indent}{key}: \"<digest>\"{comma}"));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

// ----- one test per code --------------------------------------------------------------------

const SMALL: &str = "\
// Adds one, saturating.
fn bump(x:u32) -> u32 {
  if x == 4294967295 { return x; }
  return x + 1;
}

fn twice(x:u32) -> u32 {
  return bump(bump(x));
}

fn quiet(x:u32) -> u32 = x;

fn noisy() {
  println(\"hi\");
}

fn calm(x:u32) -> u32 {
  return quiet(x);
}

fn main() -> i32 {
  if twice(1) != 3 { return 1; }
  if calm(2) != 2 { return 2; }
  noisy();
  return 0;
}
";

fn small() -> Sources {
    Sources::single("small.cairn", SMALL)
}

fn refusal_of_open(request: OpenRequest) -> Map<String, Value> {
    let mut host = EditHost::new();
    let answer = host.open(small(), request);
    assert!(answer.refused, "expected a refusal: {}", Value::Object(answer.record.clone()));
    answer.record
}

fn open_small(symbol: &str) -> (EditHost, String) {
    let mut host = EditHost::new();
    let packet = open(&mut host, small(), symbol);
    let handle = packet["handle"].as_str().expect("handle").to_string();
    (host, handle)
}

#[test]
fn e_request_covers_every_malformed_request() {
    let (mut host, handle) = open_small("bump");
    let cases: Vec<(&str, Value)> = vec![
        ("not an object", json!([1])),
        ("unknown kind", json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "rewrite"})),
        ("missing key", json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body"})),
        ("extra key", json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "state", "since": "x"})),
        ("wrong protocol", json!({"protocol": "cairn.edit/1", "handle": handle, "kind": "state"})),
        (
            "replacement not a string",
            json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": 7}),
        ),
        ("replacement too long", body(&handle, &format!("{{ return x; }} // {}", "x".repeat(64_000)))),
        ("expand of nothing", json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expand", "symbols": []})),
        (
            "expand of 33",
            json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expand", "symbols": vec!["twice"; 33]}),
        ),
        ("explain not offered", json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "explain"})),
        (
            "predict with no sizes",
            json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "predict", "sizes": []}),
        ),
    ];
    for (what, request) in cases {
        let answer = host.request(&request);
        assert!(answer.refused, "{what}");
        assert_eq!(code(&answer.record), "E-REQUEST", "{what}: {}", Value::Object(answer.record.clone()));
        assert_eq!(answer.record["line"], 0, "{what}: host checks carry no position");
    }
    let missing = host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "site": "x1"}));
    assert_eq!(missing.record["fields"], json!(["replacement", "site"]), "fields is the sorted symmetric difference");
    // Strict JSON text: duplicate keys, NaN, garbage.
    for text in [
        r#"{"protocol":"cairn.edit/2","handle":"e1","kind":"state","kind":"state"}"#,
        r#"{"protocol":"cairn.edit/2","handle":"e1","kind":"predict","sizes":[{"n":NaN}]}"#,
        r#"{"protocol":"cairn.edit/2","#,
    ] {
        assert_eq!(code(&host.request_text(text).record), "E-REQUEST", "{text}");
    }
    // A component session cannot expand.
    let mut host = EditHost::new();
    let answer = host.open(
        small(),
        OpenRequest { symbol: "bump".into(), scope: Some("component".into()), ..OpenRequest::default() },
    );
    assert!(!answer.refused);
    let expand =
        host.request(&json!({"protocol": "cairn.edit/2", "handle": "e1", "kind": "expand", "symbols": ["main"]}));
    assert_eq!(code(&expand.record), "E-REQUEST");
    // Scope at open.
    assert_eq!(
        code(&refusal_of_open(OpenRequest {
            symbol: "bump".into(),
            scope: Some("wide".into()),
            ..OpenRequest::default()
        })),
        "E-REQUEST"
    );
}

#[test]
fn e_session_for_unknown_handles_unsent_digests_and_stale_edit1_sessions() {
    let (mut host, handle) = open_small("twice");
    assert_eq!(code(&host.request(&body("e9", "{ return x; }")).record), "E-SESSION");
    assert_eq!(
        code(&host.request(&json!({"protocol": "cairn.edit/2", "handle": 7, "kind": "state"})).record),
        "E-SESSION"
    );
    let delta =
        host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "delta", "since": "0".repeat(64)}));
    assert_eq!(code(&delta.record), "E-SESSION");
    // A delta from a state this host sent is answered.
    let state = host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "state"}));
    let digest = state.record["digest"].as_str().expect("digest").to_string();
    let delta = host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "delta", "since": digest}));
    assert!(!delta.refused, "{}", Value::Object(delta.record));

    // cairn.edit/1: the digest is the session's until an expand discloses a new function.
    let mut host = EditHost::new();
    let packet = host.inspect(small(), OpenRequest { symbol: "twice".into(), ..OpenRequest::default() }, &[]);
    let digest = packet.record["session"].as_str().expect("session").to_string();
    let v1 = |digest: &str, replacement: &str| json!({"protocol": "cairn.edit/1", "session": digest, "kind": "body", "replacement": replacement});
    let admitted = host.request_v1(&v1(&digest, "{ return bump(x); }"));
    assert!(!admitted.refused, "{}", Value::Object(admitted.record));
    // The edit host proper takes only cairn.edit/2: an edit/1 object there is E-REQUEST.
    assert_eq!(code(&host.request(&v1(&digest, "{ return x; }")).record), "E-REQUEST");
    let session_handle = "e1";
    let expanded = host
        .request(&json!({"protocol": "cairn.edit/2", "handle": session_handle, "kind": "expand", "symbols": ["calm"]}));
    assert!(!expanded.refused);
    assert_eq!(code(&host.request_v1(&v1(&digest, "{ return x; }")).record), "E-SESSION", "the digest went stale");
    // Naming a type or an already disclosed function keeps the digest.
    let mut host = EditHost::new();
    let packet = host.inspect(small(), OpenRequest { symbol: "twice".into(), ..OpenRequest::default() }, &[]);
    let digest = packet.record["session"].as_str().expect("session").to_string();
    let again =
        host.request(&json!({"protocol": "cairn.edit/2", "handle": "e1", "kind": "expand", "symbols": ["bump"]}));
    assert!(!again.refused);
    assert!(!host.request_v1(&v1(&digest, "{ return x; }")).refused, "bump was disclosed already");
}

#[test]
fn e_symbol_for_names_that_are_not_exactly_one_function() {
    let cases = ["nothing", "pair_of", "std.core.Option"];
    for name in cases {
        assert_eq!(
            code(&refusal_of_open(OpenRequest { symbol: name.into(), ..OpenRequest::default() })),
            "E-SYMBOL",
            "{name}"
        );
    }
    let included =
        refusal_of_open(OpenRequest { symbol: "bump".into(), include: vec!["ghost".into()], ..OpenRequest::default() });
    assert_eq!(code(&included), "E-SYMBOL");
    let (mut host, handle) = open_small("twice");
    for names in [json!(["ghost"]), json!(["twice"]), json!(["calm", "ghost"])] {
        let answer =
            host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expand", "symbols": names}));
        assert_eq!(code(&answer.record), "E-SYMBOL", "{names}");
    }
    // An E-SYMBOL leaves the session unchanged: calm is still undisclosed.
    let call = host.request(&body(&handle, "{ return calm(x); }"));
    assert_eq!(code(&call.record), "E-CONTEXT-CLOSURE");
}

#[test]
fn e_site_for_sites_the_session_does_not_list() {
    let site =
        refusal_of_open(OpenRequest { symbol: "bump".into(), site: Some("x999".into()), ..OpenRequest::default() });
    assert_eq!(code(&site), "E-SITE");
    let (mut host, handle) = open_small("bump");
    for site in ["x999", "y1", ""] {
        let answer = host.request(
            &json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expr", "site": site, "replacement": "x"}),
        );
        assert_eq!(code(&answer.record), "E-SITE", "{site}");
    }
    // Sites are in source order by start, then end: x0 is the `x` that starts the first
    // condition, x1 the condition itself.
    let answer = host.request(
        &json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expr", "site": "x1", "replacement": "x == 0"}),
    );
    assert!(!answer.refused, "x1 is the first condition: {}", Value::Object(answer.record));
}

#[test]
fn an_expression_reply_cannot_escape_its_site() {
    let (mut host, handle) = open_small("bump");
    let expr = |site: &str, replacement: &str| json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expr", "site": site, "replacement": replacement});
    // x1 is `x == 4294967295`: replies that would close its parenthesis and go on are refused.
    for replacement in ["x) || (x == 0", "x == 1); let y = (2", "1 2", "x == 1;"] {
        let answer = host.request(&expr("x1", replacement));
        assert!(answer.refused, "{replacement}: {}", Value::Object(answer.record.clone()));
        // The parser names the first thing that is not an expression (a stray `;` is E-NAME).
        assert!(
            ["E-PARSE", "E-NAME"].contains(&code(&answer.record)),
            "{replacement}: {}",
            Value::Object(answer.record.clone())
        );
        assert_eq!(answer.record["in"], "reply");
    }
    // Comments and spacing around one expression are fine.
    let answer = host.request(&expr("x1", "  // the top\n  x == 0  "));
    assert!(!answer.refused, "{}", Value::Object(answer.record));
    // x01 is not how a site is written.
    assert_eq!(code(&host.request(&expr("x01", "x")).record), "E-SITE");
}

#[test]
fn an_expansion_carries_the_cards_its_text_selects() {
    let mut host = EditHost::new();
    let packet = open(&mut host, example("bits.cairn"), "rotate_left");
    assert!(packet["rule_cards"].get("views").is_none(), "nothing shown borrows yet");
    let expansion =
        host.request(&json!({"protocol": "cairn.edit/2", "handle": "e1", "kind": "expand", "symbols": ["fnv1a"]}));
    assert!(!expansion.refused);
    let cards: Vec<&String> = expansion.record["rule_cards"].as_object().expect("cards").keys().collect();
    assert!(cards.iter().any(|c| *c == "views"), "a borrow parameter selects views: {cards:?}");
}

#[test]
fn a_packet_shows_the_paragraphs_its_text_selects_and_names_the_rules_left_out() {
    let (mut host, handle) = open_small("bump");
    let mut again = EditHost::new();
    let packet = open(&mut again, small(), "bump");
    let calls = packet["rule_cards"]["calls"].as_str().expect("the core is always shown");
    assert!(!calls.contains("(E-ARITY)"), "nothing shown pairs arguments: {calls}");
    assert!(packet["rules_not_shown"]["calls"].as_array().expect("named").contains(&json!("E-ARITY")));
    // A refusal under a rule no packet showed carries the rule's sentences.
    let refused = host.request(&body(&handle, "{ return bump(x, x); }"));
    assert_eq!(code(&refused.record), "E-ARITY");
    let rule = refused.record["rule"].as_str().expect("the rule comes with the refusal");
    assert!(rule.contains("(E-ARITY)") && rule.starts_with("A call with too many"), "{rule}");
    // A refusal under a rule a packet showed does not repeat it.
    let sources = Sources::single(
        "m.cairn",
        "fn low(x:u32) -> u32 { return min(x, 3); }\nfn main() -> i32 { return i32(low(4)) - 3; }\n",
    );
    let mut shown_host = EditHost::new();
    let packet = open(&mut shown_host, sources, "low");
    assert!(packet["rule_cards"]["integers"].as_str().expect("integers").contains("(E-MINMAX)"));
    let handle = packet["handle"].as_str().expect("handle");
    let refused = shown_host.request(&body(handle, "{ return u32(min(true, false)); }"));
    assert_eq!(code(&refused.record), "E-MINMAX", "{}", Value::Object(refused.record.clone()));
    assert!(refused.record.get("rule").is_none());
}

#[test]
fn later_packets_show_only_paragraphs_not_sent_before_until_none_is_left() {
    let mut host = EditHost::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut last = Map::new();
    for _ in 0..12 {
        last = open(&mut host, example("bits.cairn"), "fnv1a");
        for (card, text) in last["rule_cards"].as_object().expect("cards") {
            for paragraph in text.as_str().expect("text").lines() {
                assert!(seen.insert(paragraph.to_string()), "{card}: a paragraph was sent twice: {paragraph}");
            }
        }
        if last["rule_cards"] == json!({}) {
            break;
        }
    }
    assert_eq!(last["rule_cards"], json!({}), "the selected paragraphs run out");
    let before: Vec<&Value> = last["sent_before"].as_array().expect("named").iter().collect();
    for card in ["base", "integers", "calls", "views"] {
        assert!(before.contains(&&json!(card)), "{card} in {before:?}");
    }
}

#[test]
fn what_a_host_said_is_heard_paragraph_by_paragraph_by_its_successor() {
    let mut first = EditHost::new();
    let packet = open(&mut first, example("bits.cairn"), "fnv1a");
    let said = first.said();
    assert!(said.cards.iter().all(|entry| entry.contains('#')), "paragraphs, not cards: {:?}", said.cards);
    // A successor that heard it sends none of those paragraphs again.
    let mut second = EditHost::new();
    second.hear_said(&said);
    let again = open(&mut second, example("bits.cairn"), "fnv1a");
    for (card, text) in again["rule_cards"].as_object().expect("cards") {
        let before = packet["rule_cards"][card].as_str().unwrap_or("");
        for paragraph in text.as_str().expect("text").lines() {
            assert!(!before.contains(paragraph), "{card}: sent again after a restart: {paragraph}");
        }
    }
    // A bare card name (a table written before paragraphs were tracked) means the whole card.
    let mut old = EditHost::new();
    old.hear_said(&cairn_agent::edit::Said { cards: vec!["base".into()], terms: vec![], terms_sent: false });
    let packet = open(&mut old, example("bits.cairn"), "fnv1a");
    assert!(packet["rule_cards"].get("base").is_none(), "{}", packet["rule_cards"]);
}

#[test]
fn expand_takes_a_path_as_the_target_s_module_writes_it() {
    let mut host = EditHost::new();
    let _ = open(&mut host, weather(), "weather.app.main");
    // `units` is main's import alias of weather.units.
    let answer = host.request(
        &json!({"protocol": "cairn.edit/2", "handle": "e1", "kind": "expand", "symbols": ["units.celsius_tenths"]}),
    );
    assert!(!answer.refused, "{}", Value::Object(answer.record));
    assert_eq!(answer.record["context"][0]["symbol"], "weather.units.celsius_tenths");
}

#[test]
fn a_body_reply_may_start_with_spacing_or_a_comment() {
    let (mut host, handle) = open_small("bump");
    for replacement in ["\n{ return x; }", "   { return x; }", "// simpler\n{ return x; }", "{ return x; }\n", "  = x;"]
    {
        let answer = host.request(&body(&handle, replacement));
        assert!(!answer.refused, "{replacement:?}: {}", Value::Object(answer.record));
    }
    // But a body is one block or one `= expr;`, and nothing after it.
    for replacement in ["{ return x; } { return x; }", "= x; fn other() {}", "return x;"] {
        let answer = host.request(&body(&handle, replacement));
        assert_eq!(code(&answer.record), "E-PARSE", "{replacement:?}: {}", Value::Object(answer.record.clone()));
    }
}

#[test]
fn e_edit_profile_for_templates() {
    // The template rule comes before the program must check (protocol §3.1 order), so it is
    // reported even while this checker refuses generic programs as a later tier.
    let mut host = EditHost::new();
    let text = format!("{SMALL}\nfn pair[T](a:T, b:T) -> T {{ return a; }}\n");
    let answer = host
        .open(Sources::single("small.cairn", text), OpenRequest { symbol: "pair".into(), ..OpenRequest::default() });
    assert_eq!(code(&answer.record), "E-EDIT-PROFILE");
}

#[test]
fn e_edit_profile_for_library_and_generated_functions() {
    // The packaged library is the toolchain's, and generated code is rewritten by its
    // derivation: neither is a session's target, and nothing in the workspace changes.
    let text = "import std.io;\nstruct P { x:u8; }\nderive wire for P;\nfn main() -> i32 { return 0; }\n";
    for symbol in ["wire_size_P", "std.io.newline"] {
        let mut host = EditHost::new();
        let answer = host.open(
            Sources::single("gen.cairn", text.to_string()),
            OpenRequest { symbol: symbol.into(), ..OpenRequest::default() },
        );
        assert_eq!(code(&answer.record), "E-EDIT-PROFILE", "{symbol}: {:?}", answer.record);
    }
}

#[test]
fn e_contract_for_malformed_or_exceeded_contracts() {
    let contract =
        |value: Value| OpenRequest { symbol: "bump".into(), contract: Some(value), ..OpenRequest::default() };
    let cases = [
        json!("not an object"),
        json!({"symbol": "twice"}),
        json!({"colour": "blue"}),
        json!({"allowed_effects": "trap"}),
        json!({"allowed_effects": [1]}),
        json!({"allowed_effects": ["teleport"]}),
        json!({"allowed_effects": ["read:x"]}),
        json!({"allowed_effects": []}),
        json!({"preserve": "similar"}),
        json!({"contracts": {"twice": 7}}),
        json!({"contracts": {"twice": "doubles"}, "tests": {"twice": {"cases": []}}}),
        json!({"task": {"symbol": "twice"}}),
    ];
    for value in cases {
        assert_eq!(code(&refusal_of_open(contract(value.clone()))), "E-CONTRACT", "{value}");
    }
    assert_eq!(code(&refusal_of_open(contract(json!({"contracts": {"ghost": "x"}})))), "E-SYMBOL");
    // A declared contract is shown as the dependency's evidence.
    let mut host = EditHost::new();
    let packet = host.open(
        small(),
        OpenRequest {
            symbol: "twice".into(),
            contract: Some(json!({"contracts": {"bump": "adds one, saturating"}})),
            ..OpenRequest::default()
        },
    );
    assert!(!packet.refused, "{}", Value::Object(packet.record));
    assert_eq!(packet.record["dependencies"]["bump"]["evidence"], "declared");
    assert_eq!(packet.record["dependencies"]["bump"]["contract"], "adds one, saturating");
    assert!(packet.record["terms"]["evidence"].get("declared").is_some());
    // A reference is decided at open: a reference that differs (bump saturates, this one
    // traps at the top) falls back to declared with the status the check reached, never a
    // pass; tests this build cannot run are `unknown`.
    let mut host = EditHost::new();
    let contract = json!({
        "references": {"bump": {"reference": "fn bump(x:u32) -> u32 = x + 1;"}},
        "tests": {"calm": {"schema": "cairn.task/1", "symbol": "calm", "cases": [{"args": {"x": 1}, "return": 1}]}}
    });
    let packet = host.open(
        small(),
        OpenRequest {
            symbol: "twice".into(),
            contract: Some(contract),
            include: vec!["calm".into()],
            ..OpenRequest::default()
        },
    );
    assert!(!packet.refused, "{}", Value::Object(packet.record));
    let bump = &packet.record["dependencies"]["bump"];
    // The reference traps on x = 4294967295, an allowed input: not a valid reference.
    assert_eq!((&bump["evidence"], &bump["check"]), (&json!("declared"), &json!("invalid-reference")));
    assert_eq!(bump["contract"], json!({"reference": "fn bump(x:u32) -> u32 = x + 1;"}));
    let calm = &packet.record["dependencies"]["calm"];
    assert_eq!(calm["contract"]["cases"], 1);
    assert_eq!(calm["check"], "unknown");
    assert_eq!(
        code(&refusal_of_open(contract_for(json!({"tests": {"bump": {"symbol": "twice", "cases": []}}})))),
        "E-CONTRACT"
    );
}

#[test]
fn a_reference_z3_finds_equivalent_is_smt_equivalent_evidence() {
    let open_with = |reference: &str, assume: Option<&str>| {
        let mut host = EditHost::new();
        let mut entry = json!({"reference": reference});
        if let Some(a) = assume {
            entry["assume"] = json!(a);
        }
        let packet = host.open(
            small(),
            OpenRequest {
                symbol: "twice".into(),
                contract: Some(json!({"references": {"bump": entry}})),
                ..OpenRequest::default()
            },
        );
        assert!(!packet.refused, "{}", Value::Object(packet.record));
        packet.record["dependencies"]["bump"].clone()
    };
    let saturating = "fn bump(x:u32) -> u32 {\n  if x < 4294967295 { return x + 1; }\n  return 4294967295;\n}";
    let bump = open_with(saturating, None);
    assert_eq!(bump["evidence"], "smt-equivalent", "{bump}");
    assert!(bump.get("check").is_none());
    assert_eq!(bump["contract"], json!({"reference": saturating}));
    // The plain increment is equivalent where it does not trap: with that assumption, decided.
    let bump = open_with("fn bump(x:u32) -> u32 = x + 1;", Some("x < 4294967295"));
    assert_eq!(bump["evidence"], "smt-equivalent", "{bump}");
    assert_eq!(bump["contract"]["assume"], "x < 4294967295");
    // A reference that computes something else: a counterexample, so only declared.
    let bump = open_with("fn bump(x:u32) -> u32 = x;", None);
    assert_eq!((&bump["evidence"], &bump["check"]), (&json!("declared"), &json!("counterexample")));
    // A reference with another signature, or that does not compile.
    assert_eq!(open_with("fn bump(x:u64) -> u64 = x;", None)["check"], "invalid-contract");
    assert_eq!(open_with("fn bump(x:u32) -> u32 = y;", None)["check"], "invalid-reference");
    assert_eq!(open_with(saturating, Some("x +"))["check"], "invalid-domain");
}

fn contract_for(value: Value) -> OpenRequest {
    OpenRequest { symbol: "twice".into(), contract: Some(value), ..OpenRequest::default() }
}

#[test]
fn e_declaration_when_a_token_outside_the_span_changes() {
    let (mut host, handle) = open_small("quiet");
    // `quiet`'s body ends its line; a trailing comment there is harmless. In `bump`, the
    // reply's last line is followed by nothing either, so build a one-line case: a function
    // whose closing text shares a line with the next declaration is not in SMALL, so check the
    // admitted comment first, then the lexer-level case through an expression site.
    let answer = host.request(&body(&handle, "= x; // fine"));
    assert!(!answer.refused, "{}", Value::Object(answer.record));
    let (mut host, handle) = open_small("bump");
    // A site's replacement is wrapped in parentheses; a trailing line comment would hide the
    // closing parenthesis and the rest of the line.
    let answer = host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expr", "site": "x1", "replacement": "x == 0 // hides"}));
    assert_eq!(code(&answer.record), "E-DECLARATION", "{}", Value::Object(answer.record.clone()));
    assert_eq!(answer.record["line"], 0);
}

#[test]
fn e_effect_expansion_names_the_added_effects_and_the_construct() {
    let (mut host, handle) = open_small("quiet");
    let answer = host.request(&body(&handle, "{\n  println(\"x\");\n  return x;\n}"));
    assert_eq!(code(&answer.record), "E-EFFECT-EXPANSION", "{}", Value::Object(answer.record.clone()));
    assert_eq!(answer.record["added_effects"], json!(["ffi:write", "io"]));
    assert!(answer.record["repair_hint"].as_str().is_some_and(|h| h.contains("io")));
    assert_eq!(answer.record["line"], 0);
}

#[test]
fn e_context_closure_until_an_expand_discloses_the_callee() {
    let (mut host, handle) = open_small("twice");
    let answer = host.request(&body(&handle, "{ return calm(x); }"));
    assert_eq!(code(&answer.record), "E-CONTEXT-CLOSURE");
    assert_eq!(answer.record["symbols"], json!(["calm"]));
    let expand =
        host.request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "expand", "symbols": ["calm"]}));
    assert!(!expand.refused);
    let answer = host.request(&body(&handle, "{ return calm(x); }"));
    assert!(!answer.refused, "{}", Value::Object(answer.record));
}

#[test]
fn e_caller_effect_when_a_caller_s_row_grows() {
    // quiet may now trap (the host allows it), which calm, its caller, then does too.
    let mut host = EditHost::new();
    let answer = host.open(
        small(),
        OpenRequest {
            symbol: "quiet".into(),
            contract: Some(json!({"allowed_effects": ["trap"]})),
            ..OpenRequest::default()
        },
    );
    assert!(!answer.refused, "{}", Value::Object(answer.record));
    let answer = host.request(&body("e1", "= x + 1;"));
    assert_eq!(code(&answer.record), "E-CALLER-EFFECT", "{}", Value::Object(answer.record.clone()));
    assert_eq!(answer.record["symbol"], "calm");
    assert_eq!(answer.record["added_effects"], json!(["trap"]));
}

#[test]
fn e_preserve_admits_only_the_contracts_class() {
    let preserve = |kind: &str| {
        let mut host = EditHost::new();
        let packet = host.open(
            small(),
            OpenRequest { symbol: "bump".into(), contract: Some(json!({"preserve": kind})), ..OpenRequest::default() },
        );
        assert!(!packet.refused, "{}", Value::Object(packet.record));
        host
    };
    let reordered = "{\n  if x != 4294967295 { return x + 1; }\n  return x;\n}";
    let changed = "{\n  if x == 4294967295 { return x; }\n  if x == 7 { return 7; }\n  return x + 1;\n}";
    for kind in ["identical", "equivalent"] {
        let mut host = preserve(kind);
        // The same code, written differently: admitted, and the answer names the class.
        let same = host.request(&body("e1", "{\n  if x == 4294967295 {\n    return x;\n  }\n  return x + 1;\n}"));
        assert!(!same.refused, "{kind}: {}", Value::Object(same.record));
        assert_eq!(same.record["equivalence"], "identical-code", "{kind}");
        // Different code computing the same: equivalent admits it as smt-equivalent,
        // identical refuses it (no witness: nothing differs).
        let other = host.request(&body("e1", reordered));
        if kind == "equivalent" {
            assert!(!other.refused, "{}", Value::Object(other.record));
            assert_eq!(other.record["equivalence"], "smt-equivalent");
        } else {
            assert_eq!(code(&other.record), "E-PRESERVE", "{}", Value::Object(other.record.clone()));
            assert!(other.record["reason"].as_str().unwrap().starts_with("not-identical-code"));
            assert!(other.record.contains_key("witness") && other.record["witness"].is_null());
            assert_eq!(other.record["line"], 0);
        }
        // A change of behaviour: refused under either, with the witness and a hint naming it.
        let bad = host.request(&body("e1", changed));
        assert_eq!(code(&bad.record), "E-PRESERVE", "{kind}: {}", Value::Object(bad.record.clone()));
        assert_eq!(bad.record["reason"], "behavior-changed");
        let witness = &bad.record["witness"];
        assert_eq!(witness["inputs"]["x"], 7, "{witness}");
        assert_eq!(witness["before"]["return"], 8);
        assert_eq!(witness["after"]["return"], 7);
        let hint = bad.record["repair_hint"].as_str().unwrap();
        assert!(hint.contains("x = 7") && hint.contains("original returns 8"), "{hint}");
    }
    // Without a contract the answer carries no equivalence class once the terms were sent.
    let (mut host, handle) = open_small("bump");
    let answer = host.request(&body(&handle, reordered));
    assert!(!answer.refused && answer.record.get("equivalence").is_none());
}

/// A closure's body is the lending function's code: under `preserve: identical` a reply that
/// changes only the closure is judged, not admitted as the same code (it was).
#[test]
fn e_preserve_judges_a_changed_closure() {
    let text = "fn apply1(x:u64, f:ro<fn(u64) -> u64>) -> u64 = f(x);\nfn user(k:u64) -> u64 {\n  let r = apply1(k, |x:u64| -> u64 { return x / 2; });\n  return r;\n}\nfn main() -> i32 {\n  let r = user(6);\n  if r != 3 { return 1; }\n  return 0;\n}\n";
    let mut host = EditHost::new();
    let packet = host.open(
        Sources::single("closure.cairn", text.to_string()),
        OpenRequest {
            symbol: "user".into(),
            contract: Some(json!({"preserve": "identical"})),
            ..OpenRequest::default()
        },
    );
    assert!(!packet.refused, "{}", Value::Object(packet.record));
    let handle = packet.record["handle"].as_str().expect("a handle").to_string();
    let same =
        host.request(&body(&handle, "{\n  let r = apply1(k, |y:u64| -> u64 { return y / 2; });\n  return r;\n}"));
    assert!(!same.refused, "{}", Value::Object(same.record));
    assert_eq!(same.record["equivalence"], "identical-code");
    let changed =
        host.request(&body(&handle, "{\n  let r = apply1(k, |x:u64| -> u64 { return x / 3; });\n  return r;\n}"));
    assert_eq!(code(&changed.record), "E-PRESERVE", "{}", Value::Object(changed.record.clone()));
    assert_eq!(changed.record["reason"], "behavior-changed");
}

#[test]
fn e_expression_body_for_a_function_returning_nothing() {
    let (mut host, handle) = open_small("noisy");
    let answer = host.request(&body(&handle, "= 1;"));
    assert_eq!(code(&answer.record), "E-EXPRESSION-BODY");
    assert_eq!(answer.record["card"], "base");
    assert_eq!(answer.record["line"], 0);
}

#[test]
fn compiler_refusals_pass_through_located_in_the_reply_or_the_candidate() {
    let (mut host, handle) = open_small("bump");
    // The missing `;` is located at the end of the reply's line 2, where it belongs.
    let answer = host.request(&body(&handle, "{\n  return x\n}"));
    assert_eq!(
        (code(&answer.record), &answer.record["in"], &answer.record["line"]),
        ("E-PARSE", &json!("reply"), &json!(2))
    );
    let answer = host.request(&body(&handle, "{\n  if x == 0 { return 1; }\n  return true;\n}"));
    assert_eq!(code(&answer.record), "E-TYPE-MISMATCH");
    assert_eq!((&answer.record["line"], &answer.record["column"]), (&json!(3), &json!(10)));
    assert_eq!(answer.record["source_line"], "  return true;");
    // The edit is judged against the pinned original each time, never an earlier candidate.
    let first = host.request(&body(&handle, "{ return x; }"));
    assert!(!first.refused);
    let second = host.request(&body(&handle, "{ return x + 2; }"));
    assert!(!second.refused);
    assert_eq!(first.record["check_sites_before"], json!({"overflow": 1}));
    // Relative to the original, whose sites the second candidate has again: no
    // check_sites_before (relative to the first candidate it would be `{}`).
    assert_eq!(second.record["check_sites"], json!({"overflow": 1}));
    assert!(second.record.get("check_sites_before").is_none(), "{}", Value::Object(second.record.clone()));
}

#[test]
fn an_unknown_callee_is_hinted_from_disclosed_names_only() {
    let (mut host, handle) = open_small("twice");
    let answer = host.request(&body(&handle, "{ return bumpp(x); }"));
    assert_eq!(code(&answer.record), "E-CALLEE");
    let hint = answer.record["repair_hint"].as_str().expect("a hint");
    assert!(hint.starts_with("Perhaps bump?") && hint.contains("expand"), "{hint}");
    // calm exists but is not disclosed: it is not suggested.
    let answer = host.request(&body(&handle, "{ return calmm(x); }"));
    let hint = answer.record["repair_hint"].as_str().expect("a hint");
    assert!(!hint.contains("calm") && hint.contains("expand"), "{hint}");
}

#[test]
fn refusals_drop_what_the_terms_said_once_sent() {
    let mut host = EditHost::new();
    let before = host.open(small(), OpenRequest { symbol: "ghost".into(), ..OpenRequest::default() });
    assert_eq!(before.record["protocol"], "cairn.diagnostic/2");
    assert_eq!(before.record["automatic_edit"], false);
    let _ = open(&mut host, small(), "bump");
    let after = host.open(small(), OpenRequest { symbol: "ghost".into(), ..OpenRequest::default() });
    for key in ["protocol", "trust", "automatic_edit", "acceptance_boundary"] {
        assert!(after.record.get(key).is_none(), "{key} is said once");
    }
}

#[test]
fn an_evicted_compile_is_rebuilt_for_its_sessions() {
    let mut host = EditHost::new();
    let packet = open(&mut host, small(), "bump");
    let handle = packet["handle"].as_str().expect("handle").to_string();
    for i in 0..20 {
        let text = format!("fn other_{i}() -> u32 = {i};\n");
        let (record, refused, _) = host.check(Sources::single("other.cairn", text));
        assert!(!refused, "{}", Value::Object(record));
    }
    assert!(host.cached_programs() <= cairn_agent::edit::PROGRAM_CACHE);
    let answer = host.request(&body(&handle, "{ return x; }"));
    assert!(!answer.refused, "{}", Value::Object(answer.record));
    assert_eq!(answer.record["effects"], json!([]));
}

#[test]
fn an_edit_that_leaks_a_linear_value_is_refused_with_the_owners_card_and_the_call_to_add() {
    let text = "linear struct Permit { id:u32; }\n\nfn grant(id:u32) -> Permit = Permit(id);\nfn end(p:Permit) { let Permit(_) = p; }\n\nfn work(k:u32) -> u32 {\n  let p = grant(k);\n  end(p);\n  return k;\n}\n\nfn main() -> i32 {\n  let r = work(2);\n  if r != 2 { return 1; }\n  return 0;\n}\n";
    let mut host = EditHost::new();
    let record = open(&mut host, Sources::single("permit.cairn", text.to_string()), "work");
    let handle = record["handle"].as_str().expect("a handle").to_string();
    // Consumed on one path only, then on none: each refused with its own code.
    let branch = host.request(&body(&handle, "{\n  let p = grant(k);\n  if k > 1 { end(p); }\n  return k;\n}"));
    assert!(branch.refused);
    assert_eq!(code(&branch.record), "E-LINEAR-BRANCH", "{}", Value::Object(branch.record.clone()));
    let leak = host.request(&body(&handle, "{\n  let p = grant(k);\n  return k;\n}"));
    assert!(leak.refused);
    assert_eq!(code(&leak.record), "E-LINEAR-LEAK", "{}", Value::Object(leak.record.clone()));
    assert_eq!(leak.record["card"], "owners", "{}", Value::Object(leak.record.clone()));
    let hint = leak.record["repair_hint"].as_str().expect("a hint");
    // The hint names the program's call that ends a permit (`end`), for now and for a defer.
    assert!(hint.contains("end(p) before this exit") && hint.contains("`defer end(p);`"), "{hint}");
    // The fix the hint names is admitted.
    let fixed = host.request(&body(&handle, "{\n  let p = grant(k);\n  defer end(p);\n  return k;\n}"));
    assert!(!fixed.refused, "{}", Value::Object(fixed.record.clone()));
}

/// A packet on a function with parallel regions lists them (stable id, binder, line), a packet on
/// one without lists none, and the race rule refuses an edit that would let lanes collide, with
/// the parallel card. (Ids surviving edits elsewhere is `crates/cairn_hir/tests/incremental.rs`'s.)
#[test]
fn a_packet_lists_the_target_s_regions_and_the_lane_rules_judge_edits() {
    let mut host = EditHost::new();
    let program = example("parallel.cairn");
    let packet = open(&mut host, program.clone(), "squares");
    let regions = packet["regions"].as_array().expect("regions in the packet");
    assert_eq!(regions.len(), 1);
    let id = regions[0]["id"].as_str().expect("an id").to_string();
    assert!(id.starts_with("squares@"), "{id}");
    assert_eq!(regions[0]["binder"], "i");
    assert_eq!(regions[0]["line"], 7);
    let packet = open(&mut host, program.clone(), "main");
    assert!(packet.get("regions").is_none(), "main has no parallel statement (collectors are not regions)");

    let packet = open(&mut host, program, "squares");
    let handle = packet["handle"].as_str().expect("a handle").to_string();
    let racy = host.request(&body(&handle, "{ parallel i in n { out[0] = u64(i); } }"));
    assert!(racy.refused, "{}", Value::Object(racy.record.clone()));
    assert_eq!(code(&racy.record), "E-PARALLEL-RACE");
    assert_eq!(racy.record["card"], "parallel");
}

#[test]
fn a_packet_shows_std_callees_with_their_rows() {
    // A function calling the library: the packet discloses the callee, its signature and its
    // row, read from the packaged source like any other function.
    let text = "import std.vec (Vec);\nfn fill(n:u64) -> usize {\n  let mut v = vec.new[u64]();\n  vec.push(v, n);\n  return v.len;\n}\nfn main() -> i32 { return 0; }\n";
    let mut host = EditHost::new();
    let packet = host.open(
        Sources::single("fill.cairn", text.to_string()),
        OpenRequest { symbol: "fill".into(), ..OpenRequest::default() },
    );
    assert!(!packet.refused, "{}", Value::Object(packet.record.clone()));
    let push = &packet.record["dependencies"]["std.vec.push"];
    assert_eq!(push["signature"], "fn push[T:affine](v:rw<Vec[T]>, item:T)", "{push}");
    assert_eq!(push["evidence"], "interface", "{push}");
    let row: Vec<&str> = push["effects"].as_array().expect("a row").iter().filter_map(Value::as_str).collect();
    assert!(row.contains(&"alloc") && row.contains(&"write:v"), "{push}");
    assert!(packet.record["dependencies"]["std.vec.new"].is_object(), "{:?}", packet.record["dependencies"]);
}
