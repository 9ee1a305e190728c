//! Properties that must hold on every input: the tree is lossless, parsing terminates without
//! panicking, and every generated valid program parses without error.
//!
//! Inputs: programs from `cairn_testgen`, the accepted test cases, random text, and mutations of
//! valid programs (deleted ranges, duplicated ranges, inserted tokens, swapped bytes) that stay on
//! character boundaries.

use std::path::Path;

use proptest::prelude::*;

fn valid_corpus() -> Vec<String> {
    let mut texts = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/ok");
    for entry in std::fs::read_dir(dir).expect("test data") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "cairn") {
            texts.push(std::fs::read_to_string(path).expect("text"));
        }
    }
    texts.sort();
    for seed in 0..4 {
        texts.push(cairn_testgen::program(cairn_testgen::Config { seed, functions: 12, expression_depth: 3 }));
    }
    texts
}

#[track_caller]
fn check_lossless(text: &str) -> cairn_syntax::Parse {
    let parse = cairn_syntax::parse(text);
    assert_eq!(parse.syntax_node().to_string(), text);
    for error in parse.errors() {
        assert!(usize::from(error.range.end()) <= text.len());
    }
    parse
}

/// Tokens that mutations insert: the punctuation, keywords and literals most likely to confuse a
/// parser.
const INSERTIONS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    ".",
    "..",
    "=",
    "==",
    "=>",
    "->",
    "<",
    ">",
    "|",
    "||",
    "-",
    "fn ",
    "let ",
    "if ",
    "else ",
    "match ",
    "for ",
    "in ",
    "return ",
    "struct ",
    "enum ",
    "pub ",
    "test ",
    "recipe ",
    "plan ",
    "blocks ",
    "asm ",
    "spawn ",
    "parallel ",
    "reduce ",
    "scan ",
    "compact ",
    "try ",
    "\"",
    "'",
    "//",
    "$x",
    "0x",
    "1.5e",
    "@",
    "#",
    "?",
    "\n",
    "é",
    "\u{2028}",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Insert { at: usize, token: usize },
    Truncate { at: usize },
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let boundary = |at: usize| {
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    match *mutation {
        Mutation::Delete { at, len } => {
            let start = boundary(at);
            let end = boundary((start + len).min(text.len()));
            let end = end.max(start);
            format!("{}{}", &text[..start], &text[end..])
        }
        Mutation::Duplicate { at, len } => {
            let start = boundary(at);
            let end = boundary((start + len).min(text.len())).max(start);
            format!("{}{}{}", &text[..end], &text[start..end], &text[end..])
        }
        Mutation::Insert { at, token } => {
            let at = boundary(at);
            format!("{}{}{}", &text[..at], INSERTIONS[token % INSERTIONS.len()], &text[at..])
        }
        Mutation::Truncate { at } => text[..boundary(at)].to_string(),
    }
}

/// The configuration of a property: `cases` unless `PROPTEST_CASES` asks for a longer run; the
/// seed is pinned by `.cargo/config.toml` (`PROPTEST_RNG_SEED`, read by `ProptestConfig::default`).
fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1usize..80).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn generated_programs_parse_without_errors(seed in any::<u64>(), functions in 1usize..30, depth in 0u32..5) {
        let text = cairn_testgen::program(cairn_testgen::Config { seed, functions, expression_depth: depth });
        let parse = check_lossless(&text);
        prop_assert!(parse.ok(), "errors {:?} in\n{}", parse.errors(), text);
    }

    #[test]
    fn arbitrary_text_is_lossless_and_never_panics(text in any::<String>()) {
        check_lossless(&text);
    }

    #[test]
    fn token_soup_is_lossless_and_never_panics(tokens in proptest::collection::vec(0usize..INSERTIONS.len(), 0..200)) {
        let text: String = tokens.iter().map(|&i| INSERTIONS[i]).collect();
        check_lossless(&text);
    }
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn mutated_programs_are_lossless_and_never_panic(
        index in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let corpus = valid_corpus();
        let mut text = corpus[index % corpus.len()].clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        check_lossless(&text);
    }
}

/// An edit inside one function body of a generated program: a random byte range of the body
/// replaced by a random insertion (which may break the body's braces: then the full parse runs).
fn body_edit(text: &str, pick: usize, at: usize, len: usize, token: usize) -> Option<cairn_syntax::TextEdit> {
    let bodies: Vec<(usize, usize)> = text
        .match_indices("\n}\n")
        .map(|(end, _)| end + 2)
        .filter_map(|end| text[..end].rfind(") {").map(|open| (open + 2, end)))
        .filter(|(open, end)| open < end)
        .collect();
    let &(open, close) = bodies.get(pick % bodies.len().max(1))?;
    let inner = close - open;
    if inner < 3 {
        return None;
    }
    let mut start = open + 1 + at % (inner - 2);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + len % 12).min(close - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let insert = if token.is_multiple_of(3) { String::new() } else { INSERTIONS[token % INSERTIONS.len()].to_string() };
    Some(cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new((start as u32).into(), (end.max(start) as u32).into()),
        insert,
    })
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn reparsing_one_body_equals_a_full_parse(
        seed in any::<u64>(),
        edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<usize>(), any::<usize>()), 1..8),
    ) {
        let mut text = cairn_testgen::program(cairn_testgen::Config { seed, functions: 8, expression_depth: 2 });
        let mut current = cairn_syntax::parse(&text);
        for (pick, at, len, token) in edits {
            let Some(edit) = body_edit(&text, pick, at, len, token) else { continue };
            let new_text = edit.apply(&text);
            let incremental = current.reparse(&edit, &new_text);
            let full = cairn_syntax::parse(&new_text);
            prop_assert_eq!(incremental.syntax_node().to_string(), new_text.clone());
            prop_assert_eq!(incremental.green(), full.green());
            prop_assert_eq!(incremental.errors(), full.errors());
            prop_assert_eq!(incremental.first_error(), full.first_error());
            text = new_text;
            current = incremental;
        }
    }
}

/// A program of expression-bodied functions (`fn f(a:u32, b:u32) -> u32 = expr;`), each body
/// picked by `seed` from shapes with calls, closures, braces and nesting.
fn expression_program(seed: u64) -> String {
    const SHAPES: &[&str] = &[
        "a + b",
        "a * (b + 1) - min(a, b)",
        "add_wrap(a, b) ^ (a << 1)",
        "apply(a, |x:u32| -> u32 { return x + b; })",
        "[a, b][0] + len(\"ab;c\")",
        "if_zero(a, b) // a comment; with a semicolon\n  + 1",
        "u32(u64(a) * 3) + b",
    ];
    let mut state = seed | 1;
    let mut out = String::new();
    for k in 0..6 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let shape = SHAPES[(state % SHAPES.len() as u64) as usize];
        out.push_str(&format!("fn f{k}(a:u32, b:u32) -> u32 = {shape};\n\n"));
    }
    out.push_str("fn main() -> i32 {\n  return 0;\n}\n");
    out
}

/// An edit inside one expression body: a byte range between its `=` and its `;` replaced by a
/// random insertion (which may break the body: then the full parse runs).
fn expression_body_edit(
    text: &str,
    pick: usize,
    at: usize,
    len: usize,
    token: usize,
) -> Option<cairn_syntax::TextEdit> {
    let bodies: Vec<(usize, usize)> = text
        .match_indices(") -> u32 = ")
        .filter_map(|(start, found)| {
            let open = start + found.len() - 2;
            text[open..].find(";\n\n").map(|end| (open, open + end))
        })
        .collect();
    let &(open, close) = bodies.get(pick % bodies.len().max(1))?;
    let inner = close - open;
    if inner < 3 {
        return None;
    }
    let mut start = open + 1 + at % (inner - 1);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + len % 12).min(close);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let insert = if token.is_multiple_of(3) { String::new() } else { INSERTIONS[token % INSERTIONS.len()].to_string() };
    Some(cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new((start as u32).into(), (end.max(start) as u32).into()),
        insert,
    })
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn reparsing_one_expression_body_equals_a_full_parse(
        seed in any::<u64>(),
        edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<usize>(), any::<usize>()), 1..8),
    ) {
        let mut text = expression_program(seed);
        let mut current = cairn_syntax::parse(&text);
        for (pick, at, len, token) in edits {
            let Some(edit) = expression_body_edit(&text, pick, at, len, token) else { continue };
            let new_text = edit.apply(&text);
            let incremental = current.reparse(&edit, &new_text);
            let full = cairn_syntax::parse(&new_text);
            prop_assert_eq!(incremental.syntax_node().to_string(), new_text.clone());
            prop_assert_eq!(incremental.green(), full.green());
            prop_assert_eq!(incremental.errors(), full.errors());
            prop_assert_eq!(incremental.first_error(), full.first_error());
            text = new_text;
            current = incremental;
        }
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// The workspace's patched file (`cairn_hir`'s `source.rs`): declarations re-parsed alone
    /// (`reparse_declaration`) and spliced into the unchanged base (`splice_declarations`), over
    /// several edits of several bodies, give the text and tree a full parse of the edited text
    /// gives, whenever every step parsed without error.
    #[test]
    fn declarations_reparsed_alone_and_spliced_equal_a_full_parse(
        seed in any::<u64>(),
        edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<usize>(), any::<usize>()), 1..8),
    ) {
        // Without the shapes that are syntax errors (an array literal, `<<`): patches need a
        // clean file.
        let base_text = expression_program(seed).replace("[a, b][0] + ", "").replace("(a << 1)", "shl_wrap(a, 1)");
        let base = cairn_syntax::parse(&base_text);
        prop_assert!(base.ok(), "{:?}", base.errors());
        let mut patches: std::collections::BTreeMap<usize, cairn_syntax::GreenNode> = Default::default();
        let mut text = base_text.clone();
        for (pick, at, len, token) in edits {
            let Some(edit) = expression_body_edit(&text, pick, at, len, token) else { continue };
            let replaced: Vec<_> = patches.iter().map(|(i, g)| (*i, g.clone())).collect();
            let current = cairn_syntax::splice_declarations(&base, &replaced);
            prop_assert_eq!(&current.syntax_node().to_string(), &text);
            let root = current.syntax_node();
            let Some((child, top)) = root
                .children_with_tokens()
                .enumerate()
                .filter_map(|(i, c)| c.into_node().map(|n| (i, n)))
                .find(|(_, n)| n.text_range().contains_range(edit.delete))
            else {
                continue;
            };
            let start = top.text_range().start();
            let relative = cairn_syntax::TextEdit { delete: edit.delete - start, insert: edit.insert.clone() };
            let Some(reparsed) = cairn_syntax::reparse_declaration(&top.green().to_owned(), &relative) else { continue };
            if !reparsed.errors.is_empty() {
                continue;
            }
            let new_text = edit.apply(&text);
            let full = cairn_syntax::parse(&new_text);
            patches.insert(child, reparsed.green);
            let replaced: Vec<_> = patches.iter().map(|(i, g)| (*i, g.clone())).collect();
            let made = cairn_syntax::splice_declarations(&base, &replaced);
            prop_assert_eq!(&made.syntax_node().to_string(), &new_text);
            prop_assert_eq!(made.green(), full.green());
            prop_assert_eq!(made.errors(), full.errors());
            text = new_text;
        }
    }
}

#[test]
fn an_edit_inside_an_expression_body_reparses_only_it() {
    let text = "fn a(x:u32) -> u32 = x + 1;\n\nfn b(x:u32) -> u32 = x * 2;\n";
    let parse = cairn_syntax::parse(text);
    let at = text.find("2;").expect("literal") as u32;
    let edit = cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new(at.into(), (at + 1).into()),
        insert: "(40 + x)".into(),
    };
    let new_text = edit.apply(text);
    let (reparsed, how) = parse.reparse_traced(&edit, &new_text);
    let cairn_syntax::Reparsed::Block { item } = how else { panic!("expected a body reparse, got {how:?}") };
    let holder = reparsed.syntax_node().children_with_tokens().nth(item).expect("the item");
    assert!(holder.to_string().starts_with("fn b("), "{holder}");
    assert_eq!(reparsed.green(), cairn_syntax::parse(&new_text).green());
    // A second `;` ends the body early: the whole file decides what follows.
    let edit = cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new(at.into(), (at + 1).into()),
        insert: "2; fn c() -> u32 = 3".into(),
    };
    let (full, how) = parse.reparse_traced(&edit, &edit.apply(text));
    assert_eq!(how, cairn_syntax::Reparsed::Full);
    assert!(full.errors().is_empty(), "{:?}", full.errors());
}

#[test]
fn an_edit_inside_a_body_reparses_only_the_block() {
    let text = "fn a() -> u32 {\n  return 1;\n}\n\nfn b() -> u32 {\n  return 2;\n}\n";
    let parse = cairn_syntax::parse(text);
    let at = text.find("2;").expect("literal") as u32;
    let edit = cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new(at.into(), (at + 1).into()),
        insert: "40 + x".into(),
    };
    let new_text = edit.apply(text);
    let (reparsed, how) = parse.reparse_traced(&edit, &new_text);
    let cairn_syntax::Reparsed::Block { item } = how else { panic!("expected a block reparse, got {how:?}") };
    let holder = reparsed.syntax_node().children_with_tokens().nth(item).expect("the item");
    assert!(holder.to_string().starts_with("fn b()"), "{holder}");
    assert_eq!(reparsed.green(), cairn_syntax::parse(&new_text).green());
    // Removing the body's closing brace needs the whole file.
    let close = text.rfind('}').expect("brace") as u32;
    let edit = cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new(close.into(), (close + 1).into()),
        insert: String::new(),
    };
    let (_, how) = parse.reparse_traced(&edit, &edit.apply(text));
    assert_eq!(how, cairn_syntax::Reparsed::Full);
}

/// A large program (past the threshold for parsing on several threads) with comments, blank
/// lines and `pub` declarations between the items, as generated from `seed`.
fn large_program(seed: u64) -> String {
    let base = cairn_testgen::program(cairn_testgen::Config::with_lines(seed, 12_000));
    base.replace("\nfn calc_", "\n// a comment that belongs to the next function\nfn calc_")
        .replace("\nstruct Rec_", "\npub struct Rec_")
}

#[test]
fn parsing_on_several_threads_equals_parsing_on_one() {
    for seed in [1, 2, 3] {
        let text = large_program(seed);
        assert!(text.len() > 256 * 1024, "the program must pass the threshold: {} bytes", text.len());
        let sequential = cairn_syntax::parse_on_one_thread(&text);
        for pieces in [2, 3, 4] {
            let parallel = cairn_syntax::parse_in_pieces(&text, pieces).expect("a valid program can be cut");
            assert_eq!(parallel.green(), sequential.green(), "seed {seed}, {pieces} pieces");
            assert_eq!(parallel.errors(), sequential.errors());
        }
        assert_eq!(cairn_syntax::parse(&text).green(), sequential.green());
        assert!(sequential.ok());
    }
}

#[test]
fn a_broken_large_program_is_parsed_like_on_one_thread() {
    let text = large_program(4);
    let breaks = [
        text.replacen("return", "retur n", 1),
        text.replacen("{", "", 1),
        format!("{}\nfn tail( {{", text),
        text.replacen("fn ", "fn fn ", 40),
        text.replacen("\n}\n", "\n}\n\"open string\n", 7),
    ];
    for broken in breaks {
        assert!(cairn_syntax::parse_in_pieces(&broken, 2).is_none(), "a broken text is parsed on one thread");
        let parallel = cairn_syntax::parse(&broken);
        let sequential = cairn_syntax::parse_on_one_thread(&broken);
        assert_eq!(parallel.green(), sequential.green());
        assert_eq!(parallel.errors(), sequential.errors());
        assert!(!parallel.ok());
    }
}
