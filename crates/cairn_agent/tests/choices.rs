//! Named choices (protocol §11): building a sketch and every refusal of its rules, the packet,
//! fills judged as body replies, the semantic check against a reference with a replayed
//! counterexample, and the finite search.

use cairn_agent::choices::{SemanticContract, Sketch};
use cairn_agent::edit::Sources;
use serde_json::{Value, json};

const CLAMP: &str = "\
fn clamp(v:i32, lo:i32, hi:i32) -> i32 {
  let low_side:i32 = max(v, lo);
  return min(low_side, hi);
}

fn main() -> i32 {
  if clamp(5, 0, 3) != 3 { return 1; }
  return 0;
}
";

const REFERENCE: &str = "\
fn clamp(v:i32, lo:i32, hi:i32) -> i32 {
  if v < lo { return lo; }
  if v > hi { return hi; }
  return v;
}
";

fn contract() -> SemanticContract {
    SemanticContract {
        reference_source: REFERENCE.into(),
        symbol: "clamp".into(),
        assume: "lo <= hi".into(),
        allow_reference_traps: false,
    }
}

fn sketch(with_contract: bool) -> Sketch {
    let mut s = Sketch::new(Sources::single("clamp.cairn", CLAMP), "clamp", None, vec![], with_contract.then(contract))
        .unwrap_or_else(|r| panic!("{}", Value::Object(r)));
    s.options.timeout_ms = 120_000;
    s
}

fn code(r: &serde_json::Map<String, Value>) -> &str {
    r["code"].as_str().unwrap_or("?")
}

#[test]
fn slots_follow_the_rules() {
    let mut s = sketch(true);
    assert_eq!(code(&s.add_slot("if", "max(v, lo)", None).unwrap_err()), "E-SKETCH-NAME");
    assert_eq!(code(&s.add_slot("2x", "max(v, lo)", None).unwrap_err()), "E-SKETCH-NAME");
    assert_eq!(code(&s.add_slot("nothing", "max(lo, v)", None).unwrap_err()), "E-SKETCH-SITE");
    s.add_slot("low_side", "max(v, lo)", None).unwrap();
    assert_eq!(code(&s.add_slot("low_side", "min(low_side, hi)", None).unwrap_err()), "E-SKETCH-NAME");
    // `lo` inside max(v, lo) nests in the first slot.
    let nested = s.add_slot("inner", "lo", None).unwrap_err();
    assert_eq!(code(&nested), "E-SKETCH-OVERLAP", "{}", Value::Object(nested.clone()));
    // `hi` occurs once; `v` once inside the slot, so with an index out of range: E-SKETCH-SITE.
    let site = s.add_slot("which", "v", Some(3)).unwrap_err();
    assert_eq!(code(&site), "E-SKETCH-SITE");
    assert!(site.contains_key("matches"));
    s.add_slot("high_side", "min(low_side, hi)", None).unwrap();
    let packet = s.packet().unwrap();
    assert_eq!(packet["protocol"], "cairn.choices/1");
    assert_eq!(packet["reply"], json!({"low_side": "max(v, lo)", "high_side": "min(low_side, hi)"}));
    assert_eq!(packet["slots"]["low_side"]["expected_type"], "i32");
    assert!(packet["slots"]["high_side"]["bindings"].to_string().contains("low_side"));
    assert_eq!(packet["semantic_contract"]["runtime_precondition_guard"], "not-inserted-by-builder");
    assert!(packet["source"].as_str().unwrap().contains("fn clamp"));
    assert!(!Value::Object(packet.clone()).to_string().contains("sha256"), "no hash in the packet");
    // Sealed by the packet.
    assert_eq!(code(&s.add_slot("late", "hi", None).unwrap_err()), "E-SKETCH-SEALED");
    // An empty sketch cannot be sealed; a contract for another function is refused.
    let mut empty = sketch(false);
    assert_eq!(code(&empty.packet().unwrap_err()), "E-SKETCH-EMPTY");
    let other = Sketch::new(
        Sources::single("clamp.cairn", CLAMP),
        "clamp",
        None,
        vec![],
        Some(SemanticContract { symbol: "main".into(), ..contract() }),
    );
    assert_eq!(code(&other.err().unwrap()), "E-SKETCH-CONTRACT");
}

#[test]
fn fills_are_judged_and_checked_against_the_reference() {
    let mut s = sketch(true);
    s.add_slot("low_side", "max(v, lo)", None).unwrap();
    s.add_slot("high_side", "min(low_side, hi)", None).unwrap();
    // Malformed replies.
    for reply in [
        r#"{"low_side": "max(v, lo)"}"#,
        r#"{"low_side": "max(v, lo)", "high_side": "hi", "extra": "1"}"#,
        r#"{"low_side": 3, "high_side": "hi"}"#,
        r#"{"low_side": "v /* x */", "high_side": "hi"}"#,
        r#"["max(v, lo)"]"#,
        r#"{"low_side": "v) + (lo", "high_side": "hi"}"#,
        "{not json",
    ] {
        let refusal = s.fill_json(reply).unwrap_err();
        assert_eq!(code(&refusal), "E-SKETCH-CHOICES", "{reply}: {}", Value::Object(refusal.clone()));
    }
    // A fill the checker refuses comes back as the checker's refusal.
    let refusal = s.fill_json(r#"{"low_side": "true", "high_side": "hi"}"#).unwrap_err();
    assert_eq!(code(&refusal), "E-TYPE-MISMATCH", "{}", Value::Object(refusal.clone()));
    // The example reply of the protocol: typed, then equivalent to the reference.
    let receipt = s.fill_json(r#"{"low_side":"max(v, lo)","high_side":"min(low_side, hi)"}"#).unwrap();
    assert_eq!(receipt["status"], "typed");
    assert_eq!(receipt["only_declared_expressions_changed"], true);
    assert_eq!(receipt["semantic_status"], "not-run");
    let (sketch_sha, candidate) = (
        receipt["sketch_sha256"].as_str().unwrap().to_string(),
        receipt["candidate_sha256"].as_str().unwrap().to_string(),
    );
    let result = s.check_semantics(&sketch_sha, &candidate).unwrap();
    assert_eq!(result["status"], "smt-equivalent", "{}", Value::Object(result.clone()));
    // The host's receipt: hashes, the domain, every query, the solver.
    assert_eq!(result["receipt"]["candidate_sha256"], candidate.as_str());
    assert_eq!(result["receipt"]["domain"], "lo <= hi");
    assert!(!result["receipt"]["queries"].as_array().unwrap().is_empty());
    assert!(!result["receipt"]["z3"].as_str().unwrap().is_empty());
    // A wrong choice: a counterexample, replayed, with what the reference and the candidate do.
    let receipt = s.fill_json(r#"{"low_side":"min(v, lo)","high_side":"min(low_side, hi)"}"#).unwrap();
    let wrong = receipt["candidate_sha256"].as_str().unwrap().to_string();
    let result = s.check_semantics(&sketch_sha, &wrong).unwrap();
    assert_eq!(result["status"], "counterexample", "{}", Value::Object(result.clone()));
    assert_eq!(result["concrete_replay"], true);
    assert_ne!(result["expected"], result["actual"]);
    let lo = result["counterexample"]["lo"].as_i64().unwrap();
    let hi = result["counterexample"]["hi"].as_i64().unwrap();
    assert!(lo <= hi, "the counterexample respects the assumption");
    // A candidate this sketch did not issue, or another sketch digest: E-SESSION.
    assert_eq!(code(&s.check_semantics(&sketch_sha, "0000").unwrap_err()), "E-SESSION");
    assert_eq!(code(&s.check_semantics("0000", &wrong).unwrap_err()), "E-SESSION");
    // Without a reference the check does not run.
    let mut plain = sketch(false);
    plain.add_slot("low_side", "max(v, lo)", None).unwrap();
    let receipt = plain.fill_json(r#"{"low_side":"max(lo, v)"}"#).unwrap();
    let result = plain
        .check_semantics(receipt["sketch_sha256"].as_str().unwrap(), receipt["candidate_sha256"].as_str().unwrap())
        .unwrap();
    assert_eq!(result["status"], "not-run");
}

#[test]
fn finite_search_finds_a_certified_candidate() {
    let mut s = sketch(true);
    s.add_slot("low_side", "max(v, lo)", None).unwrap();
    s.add_slot("high_side", "min(low_side, hi)", None).unwrap();
    let dims = json!({
        "low_side": ["min(v, lo)", "v", "max(v, lo)"],
        "high_side": ["max(low_side, hi)", "true", "min(low_side, hi)"],
    });
    assert_eq!(code(&s.solve_finite(&dims, 8).unwrap_err()), "E-SKETCH-BUDGET");
    assert_eq!(code(&s.solve_finite(&dims, 0).unwrap_err()), "E-SKETCH-BUDGET");
    assert_eq!(code(&s.solve_finite(&json!({"low_side": []}), 10).unwrap_err()), "E-SKETCH-CHOICES");
    let result = s.solve_finite(&dims, 9).unwrap();
    assert_eq!(result["status"], "smt-equivalent", "{}", Value::Object(result.clone()));
    assert_eq!(result["choices"], json!({"low_side": "max(v, lo)", "high_side": "min(low_side, hi)"}));
    assert_eq!(result["candidate_product"], 9);
    assert!(result["front_end_refusals"].as_u64().unwrap() >= 3, "the `true` choices are refused by the checker");
    assert!(result["cache_rejections"].as_u64().unwrap() >= 1, "an earlier counterexample rejected a later candidate");
    // No reference: no search.
    let mut plain = sketch(false);
    plain.add_slot("low_side", "max(v, lo)", None).unwrap();
    assert_eq!(code(&plain.solve_finite(&json!({"low_side": ["v"]}), 1).unwrap_err()), "E-SKETCH-CONTRACT");
}
