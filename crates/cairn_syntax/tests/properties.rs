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

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1usize..80).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

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
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

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
