//! The edit host's incremental contract as a differential: every answer to a random body edit
//! of a generated program (admission with its row and guard sites, or the refusal's code) equals
//! what a fresh, full check of the spliced program says, recomputed here independently.

mod common;

use std::collections::BTreeSet;

use cairn_agent::edit::{EditHost, OpenRequest, SourceText, Sources};
use cairn_testgen::{Config, Rng};
use common::{body, code};
use serde_json::{Map, Value, json};

/// What a fresh, full check says the host must answer for `candidate`.
fn expected_answer(
    candidate: &str,
    target: &str,
    ceiling: &BTreeSet<String>,
    visible: &BTreeSet<String>,
    original_rows: &[(String, Vec<String>)],
) -> Result<(Vec<String>, Value), String> {
    let mut fresh =
        cairn_hir::Workspace::new(vec![SourceText { name: "main.cairn".into(), text: candidate.to_string() }]);
    let outcome = fresh.check();
    if let Some(refusal) = outcome.refusal {
        return Err(format!("{} {}", refusal.first.code, refusal.first.message));
    }
    let rows = fresh.last_rows().expect("rows");
    let row_of = |name: &str| -> Vec<String> {
        let item = fresh.function_named(name).expect("function");
        rows.row(item).map(|r| r.iter().map(|e| e.to_string()).collect()).unwrap_or_default()
    };
    let row = row_of(target);
    if row.iter().any(|e| !ceiling.contains(e)) {
        return Err("E-EFFECT-EXPANSION".into());
    }
    let item = fresh.function_named(target).expect("target");
    if fresh.callees(item).iter().any(|c| !visible.contains(fresh.full_name(*c).as_ref())) {
        return Err("E-CONTEXT-CLOSURE".into());
    }
    for (name, before) in original_rows {
        if name != target && row_of(name).iter().any(|e| !before.contains(e)) {
            return Err("E-CALLER-EFFECT".into());
        }
    }
    let sites: Map<String, Value> =
        fresh.function_sites(item).into_iter().map(|(k, n)| (k.to_string(), json!(n))).collect();
    Ok((row, Value::Object(sites)))
}

const INSERTS: &[&str] = &[
    "let zz_a:u64 = 7;",
    "println(\"edited\");",
    "let zz_c:u32 = true;",
    "zz_undefined = 3;",
    "assert(1 == 1);",
    "let zz_d = 5",
    "if true { let zz_e = 1; }",
    "// a comment",
    "let zz_f:u8 = 300;",
    "let zz_g = add_wrap(1, 2);",
    "while false { }",
];

#[test]
fn every_answer_equals_a_full_check_of_the_spliced_program() {
    differential(cairn_testgen::program(Config::with_lines(11, 1500)));
}

/// The same over the second generator's shape: many small functions in deep call chains.
#[test]
fn every_answer_equals_a_full_check_on_a_program_of_call_chains() {
    differential(cairn_testgen::program_chains(Config::chains_with_lines(11, 1500)));
}

fn differential(text: String) {
    let sources = Sources::single("main.cairn", text.clone());
    let mut host = EditHost::new();
    let mut original = cairn_hir::Workspace::new(vec![SourceText { name: "main.cairn".into(), text: text.clone() }]);
    assert!(original.check().refusal.is_none(), "the generated program is accepted");
    let rows = original.last_rows().expect("rows");
    let functions: Vec<(String, Vec<String>)> = original.files()[0]
        .items
        .iter()
        .filter(|e| e.key.kind == cairn_hir::ItemKind::Fn)
        .map(|e| {
            (
                original.full_name(e.item).to_string(),
                rows.row(e.item).map(|r| r.iter().map(|x| x.to_string()).collect()).unwrap_or_default(),
            )
        })
        .collect();
    let mut rng = Rng::new(5);
    let (mut admitted, mut refused) = (0, 0);
    for round in 0..120 {
        let (target, _) = rng.pick(&functions).clone();
        let packet = host.open(sources.clone(), OpenRequest { symbol: target.clone(), ..OpenRequest::default() });
        assert!(!packet.refused, "open {target}");
        let handle = packet.record["handle"].as_str().expect("handle").to_string();
        let ceiling: BTreeSet<String> = packet.record["allowed_effects"]
            .as_array()
            .expect("ceiling")
            .iter()
            .map(|e| e.as_str().unwrap_or("").to_string())
            .collect();
        let mut visible: BTreeSet<String> =
            packet.record["dependencies"].as_object().expect("deps").keys().cloned().collect();
        visible.insert(target.clone());
        // The body as written, with one statement inserted after a random line.
        let source = packet.record["context"][0]["source"].as_str().expect("source");
        let open_brace = source.find('{').expect("a block body");
        let old_body = &source[open_brace..];
        let lines: Vec<&str> = old_body.lines().collect();
        let at = 1 + rng.below(lines.len().saturating_sub(1).max(1) as u64) as usize;
        let mut new_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        new_lines.insert(at.min(new_lines.len() - 1), format!("  {}", rng.pick(INSERTS)));
        let replacement = new_lines.join("\n");
        let answer = host.request(&body(&handle, &replacement));
        // The candidate as the spec splices it: from the body's start to the function's end.
        let start = text.find(source).expect("the source is in the program") + open_brace;
        let candidate = format!("{}{}{}", &text[..start], replacement, &text[start + old_body.len()..]);
        let expected = expected_answer(&candidate, &target, &ceiling, &visible, &functions);
        match (&expected, answer.refused) {
            (Ok((row, sites)), false) => {
                admitted += 1;
                assert_eq!(answer.record["effects"], json!(row), "round {round}: row of {target}");
                assert_eq!(&answer.record["check_sites"], sites, "round {round}: sites of {target}");
                assert_eq!(answer.admitted.as_ref().map(|a| a.apply(&text)), Some(candidate.clone()));
            }
            (Err(want), true) => {
                refused += 1;
                let got = format!("{} {}", code(&answer.record), answer.record["message"].as_str().unwrap_or(""));
                let want_code = want.split(' ').next().unwrap_or("");
                assert_eq!(code(&answer.record), want_code, "round {round}: {got} vs {want}");
                if want.contains(' ') {
                    assert_eq!(&got, want, "round {round}: the compiler's refusal passes through unchanged");
                }
            }
            _ => panic!(
                "round {round} ({target}): expected {expected:?}, host answered {}",
                Value::Object(answer.record)
            ),
        }
    }
    assert!(admitted > 20 && refused > 20, "both outcomes were exercised: {admitted} admitted, {refused} refused");
}
