//! The features an editor asks at a cursor, answered by the analysis thread: hover, definition
//! into std and derived code, formatting, completion, signature help, rename, inlay hints, the
//! second place of a refusal as related information, references of a trait's member, and names
//! past a body's first refusal.

mod common;

use common::*;
use serde_json::json;

/// The hover text at `$0`.
#[track_caller]
fn hover(fixture: &str) -> String {
    let (text, cursor, _) = parse_fixture(fixture);
    let mut session = Session::new();
    session.open(URI, &text);
    let at = json!({"textDocument": {"uri": URI}, "position": position(&text, cursor.expect("a $0 cursor"))});
    let hover = session.request("textDocument/hover", at).expect("hover");
    hover["contents"]["value"].as_str().unwrap_or_else(|| panic!("a hover: {hover:#}")).to_string()
}

#[test]
fn hover_on_a_binder_shows_what_hover_on_a_use_shows() {
    let program = "enum Box { Empty; Full(u32); }\nfn pick(b:Box) -> u32 {\n  let mut out:u32 = 0;\n  match b {\n    Empty => out = 0;\n    Full(n) => { out = n + 1; }\n  }\n  return out;\n}\n";
    let at = |needle: &str, offset: usize| {
        let index = program.find(needle).expect("needle") + offset;
        hover(&format!("{}$0{}", &program[..index], &program[index..]))
    };
    assert_eq!(at("b:Box", 0), "`Box`, an immutable binding");
    assert_eq!(at("b:Box", 0), at("match b", 6));
    assert_eq!(at("mut out", 4), "`u32`, a mutable binding");
    assert_eq!(at("mut out", 4), at("out = n", 0));
    assert_eq!(at("Full(n)", 5), at("n + 1", 0));
    // A `let` never used: its initializer's type.
    assert_eq!(hover("fn f() {\n  let u$0nused:u64 = 3;\n}\n"), "`u64`, an immutable binding");
}

#[test]
fn hover_on_a_test_names_it_as_written() {
    let shown = hover(
        "fn add(a:u32, b:u32) -> u32 {\n  return a + b;\n}\ntest metres_$0add_up {\n  assert(add(1, 2) == 3);\n}\n",
    );
    assert!(shown.starts_with("```cairn\ntest metres_add_up\n```"), "{shown}");
    assert!(!shown.contains('$'), "{shown}");
}

#[test]
fn hover_on_a_variant_shows_it_and_its_enum() {
    let shown = hover(&format!("{STEPS}fn f() -> Step {{\n  return Step.J$0og(3);\n}}\n"));
    assert!(shown.starts_with("```cairn\nStep.Jog(u32)\n```\n\na variant of `Step`"), "{shown}");
}

#[test]
fn hover_inside_a_template_shows_its_first_instance() {
    // A template's body is checked per instance; hover reads the first instance requested.
    let program = "fn bigger[T:integer](a:T, b:T) -> T {\n  let m$0ost = max(a, b);\n  return most;\n}\nfn main() -> i32 {\n  let x = bigger(u16(3), u16(4));\n  let y = bigger(i8(1), i8(2));\n  return 0;\n}\n";
    assert_eq!(hover(program), "`u16`, an immutable binding");
}

#[test]
fn definition_of_a_trait_member_call_is_the_impl_s_method() {
    let (text, cursor, _) = parse_fixture(
        "trait Area { fn area(self:ro<Self>) -> u64; }\nstruct Sq { s:u32; }\nimpl Area for Sq { fn area(self:ro<Sq>) -> u64 = u64(self.s); }\nfn main() -> i32 {\n  let q = Sq(2);\n  let a = ar$0ea(q);\n  return 0;\n}\n",
    );
    let mut session = Session::new();
    session.open(URI, &text);
    let at = json!({"textDocument": {"uri": URI}, "position": position(&text, cursor.expect("a $0 cursor"))});
    let found = session.request("textDocument/definition", at).expect("definition");
    let line = found["range"]["start"]["line"].as_u64().or_else(|| found[0]["range"]["start"]["line"].as_u64());
    assert_eq!(line, Some(2), "the method in the impl, on line 3: {found:#}");
}

#[test]
fn names_past_a_body_s_first_refusal_are_the_check_s() {
    // The body is refused at its first statement; the check still resolves and types the rest
    // (its recovering pass), so definition follows the dispatch to the impl's method and hover
    // shows the binding's type, as in an accepted body.
    let program = "trait Area { fn area(self:ro<Self>) -> u64; }\nstruct Sq { s:u32; }\nimpl Area for Sq { fn area(self:ro<Sq>) -> u64 = u64(self.s); }\nfn main() -> i32 {\n  let bad:u8 = 300;\n  let q = Sq(2);\n  let got = area(q);\n  return 0;\n}\n";
    let mut session = Session::new();
    session.open(URI, program);
    let call = program.find("area(q)").expect("the call") + 1;
    let at = json!({"textDocument": {"uri": URI}, "position": position(program, call)});
    let found = session.request("textDocument/definition", at).expect("definition");
    let line = found["range"]["start"]["line"].as_u64().or_else(|| found[0]["range"]["start"]["line"].as_u64());
    assert_eq!(line, Some(2), "the method in the impl, on line 3: {found:#}");
    let index = program.find("got =").expect("the binding") + 1;
    assert_eq!(hover(&format!("{}$0{}", &program[..index], &program[index..])), "`u64`, an immutable binding");
}

#[test]
fn definition_and_hover_reach_into_std_functions_and_derived_code() {
    // A library function: its definition is its name in the written std file, and its hover
    // shows its signature with its row.
    let text = "import std.vec (Vec);\nfn fill() -> usize {\n  let mut v = vec.new[u64]();\n  vec.push(v, 3);\n  return v.len;\n}\n";
    let mut session = Session::new();
    session.open(URI, text);
    let at = text.find("push(v").expect("the call") + 1;
    let at = json!({"textDocument": {"uri": URI}, "position": position(text, at)});
    let definition = session.request("textDocument/definition", at.clone()).expect("definition");
    let uri = definition["uri"].as_str().expect("a location");
    assert!(uri.ends_with("/std/vec.cairn"), "{definition:#}");
    let path = cairn_lsp::convert::uri_to_path(uri).expect("a file URI");
    let written = std::fs::read_to_string(path).expect("the written std/vec.cairn");
    let (start, end) = span(&written, &definition["range"]);
    assert_eq!(&written[start..end], "push");
    assert!(written[..start].rsplit('\n').next().unwrap_or_default().starts_with("pub fn "), "{definition:#}");
    let shown = session.request("textDocument/hover", at).expect("hover");
    let shown = shown["contents"]["value"].as_str().expect("a hover").to_string();
    assert!(shown.contains("fn push[T:affine](v:rw<Vec[T]>, item:T)") && shown.contains("effects: `alloc"), "{shown}");
    // A function a derivation generated: hover shows it like any other.
    let derived = "struct P { x:u8; y:u16; }\nderive wire for P;\nfn size() -> usize = wire_size_$0P();\n";
    let shown = hover(derived);
    assert!(shown.contains("wire_size_P() -> usize"), "{shown}");
    // Its definition is the `derive` that generates it.
    let text = derived.replace("$0", "");
    let mut session = Session::new();
    session.open(URI, &text);
    let at =
        json!({"textDocument": {"uri": URI}, "position": position(&text, text.find("wire_size_P").expect("call") + 2)});
    let definition = session.request("textDocument/definition", at).expect("definition");
    assert_eq!(definition["uri"], URI, "{definition:#}");
    let (start, _) = span(&text, &definition["range"]);
    assert!(text[start..].starts_with("derive wire for P"), "{definition:#}");
}

#[test]
fn formatting_answers_the_cairn_fmt_layout_as_one_edit() {
    let text = "fn f( a : u32 )->u32{let b=a+1; return b;}\n";
    let mut session = Session::new();
    session.open(URI, text);
    let edits = session
        .request(
            "textDocument/formatting",
            json!({"textDocument": {"uri": URI}, "options": {"tabSize": 2, "insertSpaces": true}}),
        )
        .expect("edits");
    let edits = edits.as_array().expect("a list");
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0]["newText"], "fn f(a:u32) -> u32 {\n  let b = a + 1;\n  return b;\n}\n");
    assert_eq!(edits[0]["range"]["start"], json!({"line": 0, "character": 0}));
    // Already formatted, or not parsing: no edit.
    for text in ["fn f(a:u32) -> u32 { return a; }\n", "fn f( {\n"] {
        let mut session = Session::new();
        session.open(URI, text);
        let edits = session
            .request("textDocument/formatting", json!({"textDocument": {"uri": URI}, "options": {}}))
            .expect("edits");
        assert_eq!(edits, json!([]), "{text}");
    }
}

/// The labels completion offers at `$0`.
fn completions(fixture: &str) -> Vec<String> {
    let (text, cursor, _) = parse_fixture(fixture);
    let mut session = Session::new();
    session.open(URI, &text);
    let at = json!({"textDocument": {"uri": URI}, "position": position(&text, cursor.expect("a $0 cursor"))});
    let items = session.request("textDocument/completion", at).expect("completion");
    items.as_array().expect("a list").iter().map(|i| i["label"].as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn completion_offers_locals_declarations_modules_fields_and_variants() {
    let program = |body: &str| {
        format!(
            "import std.vec (Vec);\nstruct Point {{ x:i64; y:i64; }}\nenum Mode {{ Fast; Slow; }}\nfn twice(v:u64) -> u64 = v * 2;\nfn main() -> i32 {{\n  let total:u64 = 3;\n  let p = Point(1, 2);\n{body}\n  return 0;\n}}\n"
        )
    };
    // Unqualified: locals before the cursor, the module's declarations, builtins, keywords.
    let got = completions(&program("  let t = to$0"));
    assert!(got.contains(&"total".to_string()), "{got:?}");
    let got = completions(&program("  let t = tw$0"));
    assert_eq!(got, ["twice"], "only what starts with the typed word");
    let got = completions(&program("  let t = u6$0"));
    assert!(got.contains(&"u64".to_string()), "a builtin conversion: {got:?}");
    let got = completions(&program("  ma$0"));
    assert!(got.contains(&"match".to_string()) && got.contains(&"max".to_string()), "{got:?}");
    // Fields of a local's record, variants of an enum, a module's public functions.
    assert_eq!(completions(&program("  let a = p.$0")), ["x", "y"]);
    // And the functions callable on it as methods: its module's functions whose first parameter
    // is of its type, and its trait impls' methods.
    let methods = "trait Area { fn area(s:ro<Self>) -> u64; }\nstruct Sq { n:u64; }\nimpl Area for Sq { fn area(s:ro<Sq>) -> u64 = s.n * s.n; }\nfn grow(s:rw<Sq>) { s.n += 1; }\nfn other(x:u64) -> u64 = x;\nfn main() -> i32 {\n  let mut q = Sq(2);\n  q.$0\n  return 0;\n}\n";
    assert_eq!(completions(methods), ["area", "grow", "n"], "fields and methods, not other");
    assert_eq!(completions(&program("  let m = Mode.$0")), ["Fast", "Slow"]);
    let got = completions(&program("  let v = vec.pu$0"));
    assert_eq!(got, ["push"], "{got:?}");
    let got = completions(&program("  let v = vec.$0"));
    assert!(got.contains(&"new".to_string()) && !got.contains(&"move_all".to_string()), "public only: {got:?}");
    // After `import`: the packaged modules, segment by segment, and the program's own.
    let got = completions("module geo.units;\npub fn f() -> u32 = 1;\nmodule app;\nimport std.$0\n");
    assert!(["vec", "map", "text", "io"].iter().all(|m| got.contains(&m.to_string())), "{got:?}");
    assert!(!got.contains(&"core.Option".to_string()) && !got.contains(&"push".to_string()), "{got:?}");
    assert_eq!(completions("module geo.units;\npub fn f() -> u32 = 1;\nmodule app;\nimport std.ve$0\n"), ["vec"]);
    let got = completions("module geo.units;\npub fn f() -> u32 = 1;\nmodule app;\nimport g$0\n");
    assert_eq!(got, ["geo"]);
    assert_eq!(completions("module geo.units;\npub fn f() -> u32 = 1;\nmodule app;\nimport geo.$0\n"), ["units"]);
}

#[test]
fn signature_help_rename_and_inlay_hints() {
    let text = "fn scale(x:u64, factor:u64) -> u64 = x * factor;\nfn main() -> i32 {\n  let base = 3;\n  let total:u64 = scale(base, 2);\n  return 0;\n}\n";
    let mut session = Session::new();
    session.open(URI, text);
    // Signature help at the second argument.
    let at = text.find("2);").expect("the call");
    let help = session
        .request("textDocument/signatureHelp", json!({"textDocument": {"uri": URI}, "position": position(text, at)}))
        .expect("help");
    assert_eq!(help["signatures"][0]["label"], "fn scale(x:u64, factor:u64) -> u64", "{help}");
    assert_eq!(help["activeParameter"], 1);
    assert_eq!(help["signatures"][0]["parameters"][1]["label"], "factor:u64");
    // Method syntax counts the receiver (protocol §17); a template's parameters read as written.
    let method_text = "fn bump[T:integer](x:T, by:T) -> T = x + by;\nfn main() -> i32 {\n  let v:u32 = 1;\n  let w = v.bump(2);\n  return 0;\n}\n";
    let mut methods = Session::new();
    methods.open(URI, method_text);
    let at = method_text.find("2);").expect("the call");
    let help = methods
        .request(
            "textDocument/signatureHelp",
            json!({"textDocument": {"uri": URI}, "position": position(method_text, at)}),
        )
        .expect("help");
    assert_eq!(help["signatures"][0]["label"], "fn bump[T:integer](x:T, by:T) -> T", "{help}");
    assert_eq!(help["activeParameter"], 1, "{help}");
    assert_eq!(help["signatures"][0]["parameters"][0]["label"], "x:T", "{help}");
    // Inlay hints: the inferred type of `base`, none for `total` (written); the row of the call.
    let hints = session
        .request("textDocument/inlayHint", json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 6, "character": 0}}}))
        .expect("hints");
    assert_eq!(hints.as_array().map(Vec::len), Some(2), "{hints}");
    assert_eq!(hints[0]["label"], ":u64");
    assert_eq!(hints[0]["position"], json!({"line": 2, "character": 10}));
    assert_eq!(hints[1]["label"], " effects(trap)", "{hints}");
    assert_eq!(hints[1]["position"], json!({"line": 3, "character": 32}));
    // Rename a local: its binder and its use; a declaration: across the file.
    let at = text.find("base, 2").expect("use");
    let edit = session
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": position(text, at), "newName": "start"}),
        )
        .expect("edit");
    let edits = edit["changes"][URI].as_array().expect("edits");
    let renamed = apply(text, edits);
    assert!(renamed.contains("let start = 3;") && renamed.contains("scale(start, 2)"), "{renamed}");
    let at = text.find("scale(x").expect("decl");
    let edit = session
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": position(text, at), "newName": "times"}),
        )
        .expect("edit");
    let renamed = apply(text, edit["changes"][URI].as_array().expect("edits"));
    assert!(renamed.starts_with("fn times(") && renamed.contains("= times(base, 2)"), "{renamed}");
    // Refused: a name that would change meaning, a reserved word, a builtin.
    let at = text.find("base, 2").expect("use");
    for name in ["total", "return", "9lives"] {
        let answer = session.request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": position(text, at), "newName": name}),
        );
        assert!(answer.is_err(), "{name}: {answer:?}");
    }
}

#[test]
fn the_place_a_value_moved_is_related_information_of_its_refusal() {
    let text = "fn consume(b:Buf[u32]) -> u32 { return b[0]; }\n\nfn main() -> i32 {\n  let b = Buf[u32](4);\n  let total = consume(b);\n  println(len(b));\n  return 0;\n}\n";
    let mut session = Session::new();
    session.open(URI, text);
    let diagnostics = session.diagnostics(URI).expect("diagnostics");
    assert_eq!(codes(&diagnostics), ["E-MOVED"]);
    assert_eq!(diagnostics[0]["range"]["start"], json!({"line": 5, "character": 14}));
    let related = diagnostics[0]["relatedInformation"].as_array().expect("related information");
    let moved = related.iter().find(|r| r["message"] == "moved here").expect("the move");
    assert_eq!(moved["location"]["uri"], URI);
    assert_eq!(
        moved["location"]["range"],
        json!({"start": {"line": 4, "character": 22}, "end": {"line": 4, "character": 23}})
    );
}

/// References of a trait's member gather its family: the trait's declaration, every impl's
/// method, and every call dispatched through the trait, statically or by `dyn` — from any of
/// them. A member of another trait with the same name is not of the family.
#[test]
fn references_of_a_trait_member_are_its_impls_and_every_call_through_the_trait() {
    let fixture = "trait Area { fn «area»(self:ro<Self>) -> u64; }\ntrait Other { fn area(self:ro<Self>) -> u64; }\nstruct Sq { s:u64; }\nstruct Rect { w:u64; h:u64; }\nstruct Disc { r:u64; }\nimpl Area for Sq { fn «area»(self:ro<Sq>) -> u64 = self.s * self.s; }\nimpl Area for Rect { fn «area»(self:ro<Rect>) -> u64 = self.w * self.h; }\nimpl Other for Disc { fn area(self:ro<Disc>) -> u64 = self.r; }\nfn dynamic(s:ro<dyn Area>) -> u64 = «area»(s);\nfn total(a:ro<Sq>, b:ro<Rect>, c:ro<Disc>) -> u64 {\n  let x = «area»(a);\n  let y = b.«ar$0ea»();\n  let z = area(c);\n  return x + y + z;\n}\n";
    let (text, cursor, expected) = parse_fixture(fixture);
    let mut session = Session::new();
    session.open(URI, &text);
    assert!(session.diagnostics(URI).expect("diagnostics").is_empty(), "the program checks");
    let mut from = |offset: usize| {
        let mut params = json!({"textDocument": {"uri": URI}, "position": position(&text, offset)});
        params["context"] = json!({"includeDeclaration": true});
        let references = session.request("textDocument/references", params).expect("references");
        let mut found: Vec<(usize, usize)> =
            references.as_array().expect("a list").iter().map(|r| span(&text, &r["range"])).collect();
        found.sort();
        found
    };
    // From a method call, from the trait's declaration, from an impl's method: the same family.
    assert_eq!(from(cursor.expect("a $0 cursor")), expected, "from the call");
    assert_eq!(from(expected[0].0), expected, "from the trait's member");
    assert_eq!(from(expected[1].0), expected, "from an impl's method");
    // The other trait's member keeps its own.
    let other = text.find("fn area(self:ro<Disc>)").expect("Disc's area") + 3;
    assert_eq!(from(other).len(), 3, "Other's declaration, Disc's method and area(c)");
    // Renaming the member renames the family, and only it.
    let rename = json!({"textDocument": {"uri": URI}, "position": position(&text, expected[0].0), "newName": "size"});
    let edit = session.request("textDocument/rename", rename).expect("a rename");
    let renamed = apply(&text, edit["changes"][URI].as_array().expect("edits"));
    assert_eq!(renamed.matches("size").count(), 6, "{renamed}");
    assert_eq!(renamed.matches("area").count(), 3, "{renamed}");
}

#[test]
fn hover_on_a_parallel_keyword_says_where_its_lanes_run() {
    // A host region runs on the lane pool; a device region's lanes are device lanes, shaped by
    // the function's plan when built for a GPU.
    let host = hover("fn fill(n:usize, out:rw<u32>[n]) {\n  p$0arallel i in n { out[i] = u32(i); }\n}\n");
    assert!(host.contains("(host)") && host.contains("on the lane pool"), "{host}");
    let device = hover(
        "fn fill(n:usize, out:rw<u32>[n]@device) {\n  p$0arallel i in n { out[i] = u32(i); }\n}\nplan fill { block 128; per_lane 4; }\n",
    );
    assert!(device.contains("(device, `par:device`)"), "{device}");
    assert!(device.contains("128 threads a block and 4 consecutive indices a thread (the plan's)"), "{device}");
    let plain = hover("fn fill(n:usize, out:rw<u32>[n]@device) {\n  p$0arallel i in n { out[i] = u32(i); }\n}\n");
    assert!(plain.contains("256 threads a block and one index a thread (no plan)"), "{plain}");
}
