//! The analysis thread driven as an editor drives it, message by message: which documents get
//! diagnostics, which binding a local name resolves to (definition, references, highlights),
//! which enum variant a name means (definition, references, semantic tokens), and the quick fixes,
//! applied and re-checked. Hover, completion, signature help, formatting and the other features
//! an editor asks at a cursor are in `features.rs`.
//!
//! Fixtures are compact texts: `$0` marks the cursor, `«…»` the spans a request must answer.
//! A request is answered after every message before it and after the check it needs, so the
//! publications received before its answer are the ones that text produced.

mod common;

use cairn_lsp::convert::{LineMap, path_to_uri};
use common::*;
use serde_json::{Value, json};

/// Definition, references (with the declaration) and highlights at `$0` all answer exactly the
/// marked spans; the first marked span is the binder.
#[track_caller]
fn check_local(fixture: &str) {
    let (text, cursor, expected) = parse_fixture(fixture);
    let cursor = cursor.expect("a $0 cursor");
    let mut session = Session::new();
    session.open(URI, &text);
    let at = json!({"textDocument": {"uri": URI}, "position": position(&text, cursor)});
    let definition = session.request("textDocument/definition", at.clone()).expect("definition");
    assert_eq!(
        span(&text, &definition["range"]),
        expected[0],
        "definition of {:?}",
        &text[expected[0].0..expected[0].1]
    );
    let mut params = at.clone();
    params["context"] = json!({"includeDeclaration": true});
    let references = session.request("textDocument/references", params).expect("references");
    let mut found: Vec<(usize, usize)> =
        references.as_array().expect("a list").iter().map(|r| span(&text, &r["range"])).collect();
    found.sort();
    assert_eq!(found, expected, "references");
    let highlights = session.request("textDocument/documentHighlight", at).expect("highlights");
    let mut found: Vec<(usize, usize)> =
        highlights.as_array().expect("a list").iter().map(|r| span(&text, &r["range"])).collect();
    found.sort();
    assert_eq!(found, expected, "highlights");
}

#[test]
fn two_loops_binding_the_same_name_are_two_locals() {
    check_local(
        "fn f() -> u32 {\n  let mut out:u32 = 0;\n  for i in 0..3 { out += u32(i); }\n  for «i» in 0..5 { out += u32(«$0i») * 2; }\n  return out;\n}\n",
    );
    check_local(
        "fn f() -> u32 {\n  let mut out:u32 = 0;\n  for «$0i» in 0..3 { out += u32(«i»); }\n  for i in 0..5 { out += u32(i) * 2; }\n  return out;\n}\n",
    );
}

#[test]
fn an_arm_binder_is_not_a_let_of_the_same_name_in_an_earlier_block() {
    let program = "enum Box { Empty; Full(u32); }\nfn pick(b:Box) -> u32 {\n  if true {\n    let «n»:u32 = 4;\n    println(«n»);\n  }\n  let mut out:u32 = 0;\n  match b {\n    Empty => out = 0;\n    Full(n) => { out = n + 1; }\n  }\n  return out;\n}\n";
    check_local(&program.replace("println(«n»)", "println(«$0n»)"));
    let arm = "enum Box { Empty; Full(u32); }\nfn pick(b:Box) -> u32 {\n  if true {\n    let n:u32 = 4;\n    println(n);\n  }\n  let mut out:u32 = 0;\n  match b {\n    Empty => out = 0;\n    Full(«n») => { out = «$0n» + 1; }\n  }\n  return out;\n}\n";
    check_local(arm);
}

#[test]
fn binders_of_different_arms_are_different_locals() {
    check_local(
        "enum E { A(u32); B(u32); }\nfn f(e:E) -> u32 {\n  match e {\n    A(«x») => return «x»;\n    B(x) => return x + 1;\n  }\n}\n".replace("return «x»", "return «$0x»").as_str(),
    );
}

#[test]
fn parameters_and_lets_resolve_across_nested_blocks() {
    check_local("fn f(«n»:u32) -> u32 {\n  let mut t:u32 = 0;\n  if «n» > 1 { t = «$0n»; }\n  return t + «n»;\n}\n");
    check_local("fn f(n:u32) -> u32 {\n  let mut «t»:u32 = 0;\n  while «t» < n { «t» += 1; }\n  return «t$0»;\n}\n");
}

/// The E-IMMUTABLE quick fix of `fixture`'s first diagnostic: the fixed text, or `None` when no
/// fix is offered.
#[track_caller]
fn immutable_fix(text: &str) -> Option<String> {
    let mut session = Session::new();
    session.open(URI, text);
    let diagnostics = session.diagnostics(URI).expect("diagnostics");
    let diagnostic = diagnostics.iter().find(|d| d["code"] == "E-IMMUTABLE").expect("an E-IMMUTABLE refusal").clone();
    let actions = session
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": URI}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
        )
        .expect("code actions");
    let actions = actions.as_array().expect("a list");
    assert!(actions.len() <= 1, "{actions:#?}");
    actions.first().map(|action| apply(text, action["edit"]["changes"][URI].as_array().expect("edits")))
}

#[test]
fn the_let_mut_fix_edits_the_let_the_assignment_names() {
    let text = "fn f() -> u32 {\n  if true {\n    let n:u32 = 4;\n    println(n);\n  }\n  let k:u32 = 1;\n  k = 2;\n  return k;\n}\n";
    assert_eq!(immutable_fix(text).as_deref(), Some(text.replace("let k", "let mut k").as_str()));
}

#[test]
fn the_let_mut_fix_is_not_offered_for_an_arm_binder_that_shares_a_lets_name() {
    let text = "enum Box { Empty; Full(u32); }\nfn pick(b:Box) -> u32 {\n  if true {\n    let n:u32 = 4;\n    println(n);\n  }\n  let mut out:u32 = 0;\n  match b {\n    Empty => out = 0;\n    Full(n) => { n = n + 1; out = n; }\n  }\n  return out;\n}\n";
    assert_eq!(immutable_fix(text), None);
}

#[test]
fn the_let_mut_fix_is_not_offered_for_parameters_or_loop_binders() {
    assert_eq!(immutable_fix("fn f(n:u32) -> u32 {\n  n = 2;\n  return n;\n}\n"), None);
    assert_eq!(immutable_fix("fn f() {\n  for i in 0..3 {\n    i = 2;\n  }\n}\n"), None);
}

#[test]
fn the_missing_arms_fix_is_offered_and_the_program_then_passes() {
    let cases = [
        // Payload variants bind `_`; arms go in on lines of their own, indented like the others.
        "enum Light { Red; Amber; Green(u8); }\n\nfn wait(l:Light) -> u32 {\n  let mut t:u32 = 0;\n  match l {\n    Red => t = 30;\n  }\n  return t;\n}\n",
        // The closing brace shares a line with an arm: the arms go in before it.
        "enum Light { Red; Amber; Green(u8); }\nfn wait(l:Light) -> u32 {\n  let mut t:u32 = 0;\n  match l { Red => t = 30; }\n  return t;\n}\n",
        // A nested match: the inner one is fixed.
        "enum A { X; Y; }\nenum B { P; Q(u32); }\nfn f(a:A, b:B) -> u32 {\n  let mut t:u32 = 0;\n  match a {\n    X => {\n      match b {\n        P => t = 1;\n      }\n    }\n    Y => t = 2;\n  }\n  return t;\n}\n",
    ];
    let fixed = [
        "enum Light { Red; Amber; Green(u8); }\n\nfn wait(l:Light) -> u32 {\n  let mut t:u32 = 0;\n  match l {\n    Red => t = 30;\n    Amber => { }\n    Green(_) => { }\n  }\n  return t;\n}\n",
        "enum Light { Red; Amber; Green(u8); }\nfn wait(l:Light) -> u32 {\n  let mut t:u32 = 0;\n  match l { Red => t = 30; Amber => { } Green(_) => { } }\n  return t;\n}\n",
        "enum A { X; Y; }\nenum B { P; Q(u32); }\nfn f(a:A, b:B) -> u32 {\n  let mut t:u32 = 0;\n  match a {\n    X => {\n      match b {\n        P => t = 1;\n        Q(_) => { }\n      }\n    }\n    Y => t = 2;\n  }\n  return t;\n}\n",
    ];
    for (text, expected) in cases.iter().zip(fixed) {
        let mut session = Session::new();
        session.open(URI, text);
        let diagnostics = session.diagnostics(URI).expect("diagnostics");
        let [diagnostic] = diagnostics.as_slice() else { panic!("one refusal: {diagnostics:#?}") };
        assert_eq!(diagnostic["code"], "E-MATCH-COVERAGE");
        let actions = session
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": URI}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
            )
            .expect("code actions");
        let [action] = actions.as_array().expect("a list").as_slice() else { panic!("one action: {actions:#?}") };
        let result = apply(text, action["edit"]["changes"][URI].as_array().expect("edits"));
        assert_eq!(result, expected);
        // The fixed text passes the check.
        session.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": result}]}),
        );
        assert_eq!(session.diagnostics(URI), Some(Vec::new()), "{result}");
    }
}

#[test]
fn the_missing_arms_fix_names_variants_of_an_enum_in_another_module() {
    let project = Project::new(
        "coverage",
        &[
            ("src/colour.cairn", "module paint.colour;\npub enum Hue { Red; Blue(u8); }\n"),
            (
                "src/main.cairn",
                "module paint.app;\nimport paint.colour as colour;\n\npub fn main() -> i32 {\n  let h:colour.Hue = colour.Hue.Red;\n  match h {\n    Red => return 1;\n  }\n}\n",
            ),
        ],
    );
    let uri = path_to_uri(&project.path("src/main.cairn"));
    let text = project.text("src/main.cairn");
    let mut session = Session::new();
    session.open(&uri, &text);
    let diagnostics = session.diagnostics(&uri).expect("diagnostics");
    let diagnostic = diagnostics.iter().find(|d| d["code"] == "E-MATCH-COVERAGE").expect("coverage").clone();
    assert_eq!(diagnostic["data"]["details"]["missing_variants"], json!(["paint.colour.Hue.Blue"]));
    let actions = session
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
        )
        .expect("code actions");
    let result = apply(&text, actions[0]["edit"]["changes"][&uri].as_array().expect("edits"));
    assert!(result.contains("    Red => return 1;\n    Blue(_) => { }\n  }"), "{result}");
}

const BASKET: &str = "module orchard.basket;\nimport orchard.fruit as fruit;\n\npub fn weigh(n:u32) -> u32 {\n  return fruit.sugar(n, 3);\n}\n";
const FRUIT: &str = "module orchard.fruit;\npub fn sugar(n:u32) -> u32 pure {\n  return n * 9;\n}\n";
const MAIN: &str = "module orchard.app;\nimport orchard.basket as basket;\n\npub fn main() -> i32 {\n  println(basket.weigh(2));\n  return 0;\n}\n";

#[test]
fn a_project_file_opened_second_gets_the_projects_diagnostics() {
    let project =
        Project::new("orchard", &[("src/fruit.cairn", FRUIT), ("src/basket.cairn", BASKET), ("src/main.cairn", MAIN)]);
    let main = path_to_uri(&project.path("src/main.cairn"));
    let basket = path_to_uri(&project.path("src/basket.cairn"));
    let mut session = Session::new();
    session.open(&main, MAIN);
    // The refusal lies in basket.cairn: main shows it at the top.
    assert_eq!(codes(&session.diagnostics(&main).expect("main's diagnostics")), ["E-ARITY"]);
    // basket.cairn opened with its disk text, which the project already holds: it still gets
    // its diagnostics, on the refusal's own line.
    session.open(&basket, BASKET);
    let diagnostics = session.diagnostics(&basket).expect("basket's diagnostics");
    assert_eq!(codes(&diagnostics), ["E-ARITY"]);
    assert_eq!(diagnostics[0]["range"]["start"]["line"], 4);
    // Closed and opened again: published again.
    session.notify("textDocument/didClose", json!({"textDocument": {"uri": basket}}));
    session.published.clear();
    session.open(&basket, BASKET);
    assert_eq!(codes(&session.diagnostics(&basket).expect("basket's diagnostics after reopening")), ["E-ARITY"]);
}

#[test]
fn a_manifest_that_cannot_be_loaded_is_a_diagnostic_on_the_document() {
    let broken = Project::new("broken", &[("src/a.cairn", "fn main() -> i32 { return 0; }\n")]);
    std::fs::write(broken.path("cairn.toml"), "[project]\nname = \"broken\nsources = [\"src/a.cairn\"]\n")
        .expect("break the manifest");
    let missing = Project::new("missing", &[("src/a.cairn", "module m.a;\npub fn main() -> i32 { return 0; }\n")]);
    std::fs::write(
        missing.path("cairn.toml"),
        "[project]\nname = \"m\"\nsources = [\"src/a.cairn\", \"src/gone.cairn\"]\n[build]\nkind = \"exe\"\n",
    )
    .expect("name a missing source");
    for (project, message) in [(&broken, "not valid TOML"), (&missing, "`src/gone.cairn` is missing")] {
        let uri = path_to_uri(&project.path("src/a.cairn"));
        let mut session = Session::new();
        session.open(&uri, &project.text("src/a.cairn"));
        let diagnostics = session.diagnostics(&uri).expect("diagnostics");
        let [diagnostic] = diagnostics.as_slice() else { panic!("one diagnostic: {diagnostics:#?}") };
        assert_eq!(diagnostic["code"], "E-PROJECT-OR-ENVIRONMENT");
        assert!(diagnostic["message"].as_str().unwrap_or_default().contains(message), "{diagnostic:#}");
        assert_eq!(diagnostic["range"]["start"], json!({"line": 0, "character": 0}));
        let manifest = path_to_uri(&project.path("cairn.toml"));
        let related = diagnostic["relatedInformation"].as_array().expect("related information");
        assert!(related.iter().any(|r| r["location"]["uri"] == manifest), "{related:#?}");
    }
}

#[test]
fn a_manifest_fixed_on_disk_takes_effect_when_the_editor_says_it_changed() {
    let project = Project::new("fixed", &[("src/a.cairn", "fn main() -> i32 { return 0; }\n")]);
    let good = std::fs::read_to_string(project.path("cairn.toml")).expect("the manifest");
    std::fs::write(project.path("cairn.toml"), "[project]\nname = \"fixed\nsources = [\"src/a.cairn\"]\n")
        .expect("break the manifest");
    let uri = path_to_uri(&project.path("src/a.cairn"));
    let mut session = Session::new();
    session.open(&uri, &project.text("src/a.cairn"));
    assert_eq!(codes(&session.diagnostics(&uri).expect("diagnostics")), ["E-PROJECT-OR-ENVIRONMENT"]);
    std::fs::write(project.path("cairn.toml"), good).expect("fix the manifest");
    session.published.clear();
    let manifest = path_to_uri(&project.path("cairn.toml"));
    session.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": manifest, "type": 2}]}));
    assert_eq!(codes(&session.diagnostics(&uri).expect("diagnostics after the change")), Vec::<String>::new());
}

#[test]
fn a_file_a_valid_manifest_does_not_list_is_a_one_file_program() {
    let project = Project::new("listed", &[("src/a.cairn", "module l.a;\npub fn main() -> i32 { return 0; }\n")]);
    let stray = project.path("src/stray.cairn");
    std::fs::write(&stray, "fn main() -> i32 {\n  return true;\n}\n").expect("write a stray file");
    let uri = path_to_uri(&stray);
    let mut session = Session::new();
    session.open(&uri, &std::fs::read_to_string(&stray).expect("read"));
    assert_eq!(codes(&session.diagnostics(&uri).expect("diagnostics")), ["E-TYPE-MISMATCH"]);
}

#[test]
fn malformed_params_are_invalid_params() {
    let mut session = Session::new();
    session.open(URI, "fn main() -> i32 {\n  return 0;\n}\n");
    for params in [
        json!({}),
        Value::Null,
        json!({"textDocument": {"uri": 5}, "position": "x"}),
        json!({"textDocument": {"uri": URI}}),
        json!({"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}}),
        json!({"textDocument": {"uri": URI}, "position": {"line": 1, "character": 1e30}}),
    ] {
        assert_eq!(session.request("textDocument/hover", params.clone()), Err(-32602), "{params}");
    }
    assert_eq!(session.request("textDocument/codeAction", json!({"textDocument": {"uri": URI}})), Err(-32602));
    assert_eq!(session.request("workspace/symbol", json!({})), Err(-32602));
    assert_eq!(session.request("textDocument/frobnicate", json!({})), Err(-32601));
    // Well-formed requests are still answered.
    let at = json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 3}});
    assert!(session.request("textDocument/hover", at).is_ok_and(|h| !h.is_null()));
}

#[test]
fn a_did_open_without_a_text_opens_nothing() {
    let mut session = Session::new();
    session.notify("textDocument/didOpen", json!({"textDocument": {"uri": URI}}));
    assert_eq!(session.request("textDocument/documentSymbol", json!({"textDocument": {"uri": URI}})), Err(-32602));
}

#[test]
fn semantic_tokens_take_a_locals_kind_from_the_binding_it_resolves_to() {
    // `x` is a mutable `let` in the first block and a loop binder in the second: only the first
    // block's uses are mutable.
    let text =
        "fn f() {\n  if true {\n    let mut x:u32 = 1;\n    x = 2;\n  }\n  for x in 0..3 {\n    println(x);\n  }\n}\n";
    let mut session = Session::new();
    session.open(URI, text);
    let tokens = session.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": URI}})).unwrap();
    let data: Vec<u32> = tokens["data"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    let (mut line, mut start) = (0, 0);
    let mut modifiers_at = std::collections::HashMap::new();
    for token in data.chunks(5) {
        start = if token[0] == 0 { start + token[1] } else { token[1] };
        line += token[0];
        modifiers_at.insert((line, start), token[4]);
    }
    let mutable = 8;
    assert_eq!(modifiers_at[&(3, 4)] & mutable, mutable, "`x = 2` writes the `let mut x`");
    assert_eq!(modifiers_at[&(6, 12)] & mutable, 0, "`println(x)` reads the loop binder");
}

/// The code actions offered for a document's diagnostic with `code`, after checking that its
/// range marks exactly `marked`.
#[track_caller]
fn actions_for(session: &mut Session, uri: &str, text: &str, code: &str, marked: &str) -> Vec<Value> {
    let diagnostics = session.diagnostics(uri).expect("diagnostics");
    let diagnostic = diagnostics.iter().find(|d| d["code"] == code).unwrap_or_else(|| panic!("{diagnostics:#?}"));
    let (start, end) = span(text, &diagnostic["range"]);
    assert_eq!(&text[start..end], marked, "{diagnostic:#}");
    let actions = session
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
        )
        .expect("code actions");
    actions.as_array().expect("a list").clone()
}

#[test]
fn an_unknown_type_marks_its_name_and_the_import_fix_makes_the_program_pass() {
    let import = "import std.core (Option);\n";
    let cases = [
        // In a signature (the checker reports it at `fn`), in a `let` (at `let`), after a module
        // header (the import goes in under it), inside a generic argument.
        ("fn half(x:u32) -> Option[u32] {\n  if x % 2 == 0 { return Some(x / 2); }\n  return None;\n}\n", None),
        ("fn f() -> u32 {\n  let o:Option[u32] = Some(3);\n  return 1;\n}\n", None),
        (
            "module shapes.app;\n\nfn f(x:u32) -> u32 {\n  let o:Option[u32] = None;\n  return x;\n}\n",
            Some(
                "module shapes.app;\nimport std.core (Option);\n\nfn f(x:u32) -> u32 {\n  let o:Option[u32] = None;\n  return x;\n}\n",
            ),
        ),
        ("fn f(v:ro<Option[u32]>) -> u32 {\n  return 1;\n}\n", None),
    ];
    for (text, expected) in cases {
        let mut session = Session::new();
        session.open(URI, text);
        let actions = actions_for(&mut session, URI, text, "E-TYPE", "Option");
        let [action] = actions.as_slice() else { panic!("one action for {text}: {actions:#?}") };
        assert_eq!(action["title"], "Import Option from std.core");
        let result = apply(text, action["edit"]["changes"][URI].as_array().expect("edits"));
        let expected = expected.map_or_else(|| format!("{import}{text}"), str::to_string);
        assert_eq!(result, expected);
        session.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": result}]}),
        );
        assert_eq!(session.diagnostics(URI), Some(Vec::new()), "{result}");
    }
}

#[test]
fn the_import_fix_offers_a_library_name_the_program_does_not_import_yet() {
    // `std.core` is linked only when imported: its names are offered all the same.
    let text = "fn f() -> u32 {\n  return U32_MAX;\n}\n";
    let mut session = Session::new();
    session.open(URI, text);
    let actions = actions_for(&mut session, URI, text, "E-UNBOUND", "U32_MAX");
    let [action] = actions.as_slice() else { panic!("one action: {actions:#?}") };
    assert_eq!(action["title"], "Import U32_MAX from std.core");
    let result = apply(text, action["edit"]["changes"][URI].as_array().expect("edits"));
    assert_eq!(result, format!("import std.core (U32_MAX);\n{text}"));
    session.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": result}]}),
    );
    assert_eq!(session.diagnostics(URI), Some(Vec::new()), "{result}");
}

#[test]
fn an_unknown_qualified_type_marks_its_path_and_gets_no_import() {
    let text = "fn f() -> nowhere.Thing {\n  return 1;\n}\n";
    let mut session = Session::new();
    session.open(URI, text);
    assert_eq!(actions_for(&mut session, URI, text, "E-TYPE", "nowhere.Thing"), Vec::<Value>::new());
}

/// Definition at `$0` answers the one marked span of the same document.
#[track_caller]
fn check_definition(fixture: &str) {
    let (text, cursor, expected) = parse_fixture(fixture);
    let mut session = Session::new();
    session.open(URI, &text);
    let at = json!({"textDocument": {"uri": URI}, "position": position(&text, cursor.expect("a $0 cursor"))});
    let definition = session.request("textDocument/definition", at).expect("definition");
    assert_eq!(definition["uri"], URI, "{definition:#}");
    assert_eq!(span(&text, &definition["range"]), expected[0], "definition in {text}");
}

#[test]
fn definition_of_a_variant_is_its_name_in_the_enum() {
    let program =
        |body: &str| format!("enum Step {{ Walk(u32); «Jog»(u32); Rest; }}\nfn f(s:Step) -> Step {{\n{body}}}\n");
    check_definition(&program("  return Step.J$0og(3);\n"));
    check_definition(&program("  let t:Step = Jog$0(2);\n  return t;\n"));
    check_definition(&program(
        "  match s {\n    Walk(m) => return Step.Walk(m);\n    J$0og(m) => return s;\n    Rest => return s;\n  }\n",
    ));
    check_definition(&program(
        "  match s {\n    Step.Walk(m) => return s;\n    Step.$0Jog(m) => return s;\n    Step.Rest => return s;\n  }\n",
    ));
    // On the declaration itself.
    check_definition("enum Step { Walk(u32); «J$0og»(u32); Rest; }\n");
}

#[test]
fn definition_of_a_library_variant_is_in_the_written_std_file() {
    let text = "fn half(x:u32) -> Option[u32] {\n  if x % 2 == 0 { return Some(x / 2); }\n  if x == 1 { return Option[u32].None; }\n  return None;\n}\n";
    let text = format!("import std.core (Option);\n{text}");
    // Each use: the text before the variant, and the variant.
    for (before, needle) in [("return ", "Some"), ("u32].", "None"), ("return ", "None;\n}")] {
        let mut session = Session::new();
        session.open(URI, &text);
        let at = text.find(&format!("{before}{needle}")).expect("needle") + before.len() + 1;
        let at = json!({"textDocument": {"uri": URI}, "position": position(&text, at)});
        let definition = session.request("textDocument/definition", at).expect("definition");
        let uri = definition["uri"].as_str().expect("a location");
        assert!(uri.ends_with("/std/core.cairn"), "{definition:#}");
        let path = cairn_lsp::convert::uri_to_path(uri).expect("a file URI");
        let core = std::fs::read_to_string(path).expect("the written std/core.cairn");
        let (start, end) = span(&core, &definition["range"]);
        assert_eq!(&core[start..end], &needle[..4], "{before}{needle}");
        assert!(core[..start].rsplit('\n').next().unwrap_or_default().contains("enum Option"), "{definition:#}");
    }
}

#[test]
fn references_of_a_variant_are_its_declaration_and_every_use() {
    check_local(
        "enum Step { Walk(u32); «Jog»(u32); Rest; }\nenum Pace { Jog; Run; }\nfn f(s:Step, p:Pace) -> Step {\n  match p {\n    Jog => return Step.«J$0og»(1);\n    Run => return «Jog»(2);\n  }\n}\nfn g(s:Step) -> u32 {\n  match s {\n    Walk(m) => return m;\n    «Jog»(m) => return m;\n    Step.Rest => return 0;\n  }\n}\n",
    );
}

/// The semantic tokens of a text: kind and modifiers by start position.
fn semantic_tokens(text: &str) -> std::collections::HashMap<(u32, u32), (&'static str, u32)> {
    let mut session = Session::new();
    session.open(URI, text);
    let tokens = session.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": URI}})).unwrap();
    let data: Vec<u32> = tokens["data"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    let (mut line, mut start) = (0, 0);
    let mut out = std::collections::HashMap::new();
    for token in data.chunks(5) {
        start = if token[0] == 0 { start + token[1] } else { token[1] };
        line += token[0];
        out.insert((line, start), (cairn_lsp::protocol::TOKEN_TYPES[token[3] as usize], token[4]));
    }
    out
}

#[test]
fn semantic_tokens_mark_variants_as_enum_members() {
    let fixture = "import std.core (Option);\nenum Step { Walk(u32); Rest; }\nstruct P { x:u32; }\nfn f(s:Step, p:P) -> Step {\n  let o:Option[u32] = «Some»(p.«x»);\n  match s {\n    «Walk»(m) => return Step.«Walk»(m);\n    «Step».«Rest» => return Step.«Rest»;\n  }\n}\n";
    let (text, _, spans) = parse_fixture(fixture);
    let kinds = semantic_tokens(&text);
    let at = |i: usize| {
        kinds[&{
            let (line, character) = LineMap::new(&text).position(&text, spans[i].0);
            (line, character)
        }]
    };
    let default_library = 4;
    assert_eq!(at(0), ("enumMember", default_library), "`Some(…)`");
    assert_eq!(at(1).0, "property", "`p.x`");
    for i in [2, 3, 5, 6] {
        assert_eq!(at(i), ("enumMember", 0), "{:?}", &text[spans[i].0..spans[i].1]);
    }
    assert_eq!(at(4).0, "enum", "the enum qualifying an arm");
}
