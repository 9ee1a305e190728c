//! Which language cards a piece of source selects (protocol §14.2).
//!
//! Selection reads only lexical tokens: a word token (an identifier or a reserved word) whose text
//! equals one of a card's `words` selects that card, and a few token shapes select `generics`,
//! `foreign`, `cooperative` and `closures`. Comments and whitespace are trivia and never select; a
//! string literal is a single `STRING` token, so words inside it never select either, and spacing
//! can never hide a shape because shapes are matched on the token sequence. What a token scan cannot
//! see (a shown borrow parameter, record, sum or lending type) arrives as [`Signals`] from the
//! caller; for a whole program [`select_for_program`] derives them from the tokens.
//! Invariants: the core (`base`, `integers`, `calls`) always comes first, in that order; the other
//! selected cards follow in [`SELECTION_ORDER`], never in the registry's table order; a tool card
//! is never selected.
//! Which paragraphs of the selected cards a packet shows is `trim.rs`'s.

use std::collections::BTreeSet;

use cairn_syntax::SyntaxKind;

use crate::registry::{CardEntry, card_named};

/// The three cards every packet and every program gets, first and in this order.
pub const CORE: [&str; 3] = ["base", "integers", "calls"];

/// The order selected cards come in after the core (protocol §14.2). It is observable as the key
/// order of a packet's `rule_cards`, and it differs from the table order of `cards/`.
pub const SELECTION_ORDER: [&str; 30] = [
    "views",
    "compact",
    "scan",
    "floats",
    "math",
    "storage",
    "gradients",
    "records",
    "generators",
    "memory",
    "sums",
    "generics",
    "owners",
    "effects",
    "assembly",
    "foreign",
    "parallel",
    "wide",
    "atomics",
    "cooperative",
    "tasks",
    "rings",
    "tests",
    "implementations",
    "printing",
    "layouts",
    "fragments",
    "lends",
    "closures",
    "modules",
];

/// What a packet shows beyond its tokens, each selecting one card (protocol §14.2). Deliberately
/// without `Default`: a host states every signal it computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    /// A shown function (the target or a dependency) has a borrow parameter (`ro`/`rw`): `views`.
    pub borrow_parameter: bool,
    /// A shown type is a record or a tag-only enum (component scope: the program declares one):
    /// `records`.
    pub record_type: bool,
    /// A shown type is a sum (component scope: the program declares one): `sums`.
    pub sum_type: bool,
    /// A shown type lends a part (focused scope only): `lends`.
    pub lending_type: bool,
}

impl Signals {
    /// No signal beyond the tokens.
    pub const NONE: Signals =
        Signals { borrow_parameter: false, record_type: false, sum_type: false, lending_type: false };
}

/// The cards `texts` select together with `signals`: the core first, then the selected language
/// cards in [`SELECTION_ORDER`]. Each text is lexed on its own, so a shape never spans two texts.
pub fn select_cards(texts: &[&str], signals: Signals) -> Vec<&'static CardEntry> {
    selected(&Scan::of(texts), signals)
}

/// The cards a whole program selects (`cairn rules PATH`): as [`select_cards`], with the signals
/// read from the tokens: `views` for `ro`/`rw`, `records` for `struct`, `sums` for `enum`. No
/// program text shows whether a type lends, so `lends` comes from its word alone.
pub fn select_for_program(texts: &[&str]) -> Vec<&'static CardEntry> {
    let scan = Scan::of(texts);
    let signals = Signals {
        borrow_parameter: scan.has("ro") || scan.has("rw"),
        record_type: scan.has("struct"),
        sum_type: scan.has("enum"),
        lending_type: false,
    };
    selected(&scan, signals)
}

/// What one pass over the tokens found: every word, every operator, and the token shapes that
/// select a card.
pub(crate) struct Scan {
    words: BTreeSet<String>,
    operators: BTreeSet<String>,
    /// `fn`, `struct` or `enum`, then a name, then `[`: a generic declaration.
    generic_declaration: bool,
    /// `(` or `,` followed by `|` or `||`: a closure written as an argument.
    closure: bool,
    /// `fn` followed by `(`: a function type.
    function_type: bool,
}

impl Scan {
    pub(crate) fn of(texts: &[&str]) -> Scan {
        let mut scan = Scan {
            words: BTreeSet::new(),
            operators: BTreeSet::new(),
            generic_declaration: false,
            closure: false,
            function_type: false,
        };
        for text in texts {
            scan.add(text);
        }
        scan
    }

    fn add(&mut self, text: &str) {
        let lexed = cairn_syntax::lex(text);
        // The significant tokens of this text, each with its text; trivia never selects.
        let mut tokens: Vec<(SyntaxKind, &str)> = Vec::with_capacity(lexed.tokens.len());
        let mut offset = 0usize;
        for token in &lexed.tokens {
            let end = offset + usize::from(token.len);
            if !token.kind.is_trivia() {
                tokens.push((token.kind, &text[offset..end]));
            }
            offset = end;
        }
        for (kind, word) in &tokens {
            if kind.is_word() && !self.words.contains(*word) {
                self.words.insert((*word).to_string());
            }
            if kind.is_punct() && !self.operators.contains(*word) {
                self.operators.insert((*word).to_string());
            }
        }
        for window in tokens.windows(2) {
            let (first, second) = (window[0].0, window[1].0);
            if matches!(first, SyntaxKind::L_PAREN | SyntaxKind::COMMA)
                && matches!(second, SyntaxKind::PIPE | SyntaxKind::PIPE2)
            {
                self.closure = true;
            }
            if first == SyntaxKind::FN_KW && second == SyntaxKind::L_PAREN {
                self.function_type = true;
            }
        }
        for window in tokens.windows(3) {
            if matches!(window[0].0, SyntaxKind::FN_KW | SyntaxKind::STRUCT_KW | SyntaxKind::ENUM_KW)
                && window[1].0.is_word()
                && window[2].0 == SyntaxKind::L_BRACK
            {
                self.generic_declaration = true;
            }
        }
    }

    fn has(&self, word: &str) -> bool {
        self.words.contains(word)
    }

    /// Whether the text holds `key`, a word or an operator.
    pub(crate) fn holds(&self, key: &str) -> bool {
        self.words.contains(key) || self.operators.contains(key)
    }

    /// Whether the card named `name` is selected by these tokens and `signals`.
    fn selects(&self, card: &CardEntry, signals: Signals) -> bool {
        if card.words.iter().any(|word| self.has(word)) {
            return true;
        }
        match card.name {
            "views" => signals.borrow_parameter,
            "records" => signals.record_type,
            "sums" => signals.sum_type,
            "lends" => signals.lending_type,
            "generics" => self.generic_declaration,
            "foreign" => self.has("extern") && self.has("implements"),
            "cooperative" => self.has("blocks") && self.has("threads"),
            "closures" => self.closure || self.function_type,
            _ => false,
        }
    }
}

/// What selects the card named `name` besides its words, in words (the skill's index says it);
/// kept beside [`Scan::selects`], whose cases it describes.
pub fn also_selected_by(name: &str) -> Option<&'static str> {
    Some(match name {
        "views" => "a shown function with a borrow parameter (`ro`/`rw`)",
        "records" => "a shown record or tag-only enum type",
        "sums" => "a shown sum type",
        "lends" => "a shown type that lends a part",
        "generics" => "a generic declaration (`fn`, `struct` or `enum`, a name, then `[`)",
        "foreign" => "`extern` together with `implements`",
        "cooperative" => "`blocks` together with `threads`",
        "closures" => "a closure argument (`(` or `,` then `|`) or a function type (`fn (`)",
        _ => return None,
    })
}

pub(crate) fn selected(scan: &Scan, signals: Signals) -> Vec<&'static CardEntry> {
    let core = CORE.iter().filter_map(|name| card_named(name));
    let chosen = SELECTION_ORDER.iter().filter_map(|name| card_named(name)).filter(|card| scan.selects(card, signals));
    core.chain(chosen).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{CardKind, cards};

    #[track_caller]
    fn check(texts: &[&str], signals: Signals, expected: &[&str]) {
        let names: Vec<&str> = select_cards(texts, signals).iter().map(|card| card.name).collect();
        assert_eq!(names[..3], CORE, "the core comes first");
        assert_eq!(&names[3..], expected);
    }

    #[track_caller]
    fn check_program(text: &str, expected: &[&str]) {
        let names: Vec<&str> = select_for_program(&[text]).iter().map(|card| card.name).collect();
        assert_eq!(names[..3], CORE, "the core comes first");
        assert_eq!(&names[3..], expected);
    }

    #[test]
    fn the_selection_order_names_every_language_card_outside_the_core_once() {
        let mut ordered: Vec<&str> = SELECTION_ORDER.to_vec();
        ordered.sort_unstable();
        ordered.dedup();
        let mut language: Vec<&str> = cards()
            .iter()
            .filter(|card| card.kind == CardKind::Language && !CORE.contains(&card.name))
            .map(|card| card.name)
            .collect();
        language.sort_unstable();
        assert_eq!(ordered, language);
    }

    #[test]
    fn every_selection_word_is_one_word_token() {
        for card in cards() {
            for word in &card.words {
                let lexed = cairn_syntax::lex(word);
                assert!(
                    lexed.tokens.len() == 1 && lexed.tokens[0].kind.is_word(),
                    "card {}: `{word}` is not one word token",
                    card.name
                );
            }
        }
    }

    #[test]
    fn nothing_but_the_core_for_plain_code() {
        check(&["fn add(a:u32, b:u32) -> u32 { return a + b; }"], Signals::NONE, &[]);
        check(&[], Signals::NONE, &[]);
    }

    #[test]
    fn comments_never_select() {
        check(&["// spawn a task, match it, print it: f32 and buffer\nfn f() {}"], Signals::NONE, &[]);
        check(&["fn f() {} // |x| fn( struct S[ dyn"], Signals::NONE, &[]);
    }

    #[test]
    fn words_inside_strings_never_select() {
        check(&[r#"fn f() { let s = "spawn match f32 buffer dyn"; }"#], Signals::NONE, &[]);
        check(&[r#"fn f() { g(", |"); }"#], Signals::NONE, &[]);
    }

    #[test]
    fn spacing_never_hides_a_word_or_a_shape() {
        check(&["fn f(){let x=f32(1);g(  ,\n|| {});}"], Signals::NONE, &["floats", "closures"]);
    }

    #[test]
    fn words_are_whole_tokens_and_case_sensitive() {
        check(&["fn f() { let spawned = buf; let lens = 1; }"], Signals::NONE, &[]);
        check(&["fn f(b: Buf[u8]) {}"], Signals::NONE, &["owners"]);
    }

    #[test]
    fn selected_cards_follow_the_selection_order_not_the_table_order() {
        // Table order puts closures before modules and lends, and effects after foreign; the
        // selection order puts effects before foreign and closures after lends.
        check(
            &["import m; fn f() { dyn; lends; launch; unsafe; println(); f32; match; spawn; }"],
            Signals::NONE,
            &["floats", "sums", "effects", "foreign", "tasks", "printing", "lends", "closures", "modules"],
        );
    }

    #[test]
    fn signals_select_their_cards() {
        let only = |signals: Signals, expected: &[&str]| check(&["fn f() {}"], signals, expected);
        only(Signals { borrow_parameter: true, ..Signals::NONE }, &["views"]);
        only(Signals { record_type: true, ..Signals::NONE }, &["records"]);
        only(Signals { sum_type: true, ..Signals::NONE }, &["sums"]);
        only(Signals { lending_type: true, ..Signals::NONE }, &["lends"]);
        only(
            Signals { borrow_parameter: true, record_type: true, sum_type: true, lending_type: true },
            &["views", "records", "sums", "lends"],
        );
    }

    #[test]
    fn a_packet_does_not_read_borrows_records_or_sums_from_tokens() {
        // In a packet these come from the signals; `enum` is a word of `sums`, `struct` of `records`.
        check(&["fn f(x: ro<u32>) {}"], Signals::NONE, &[]);
        check(&["struct P { x: u32 }"], Signals::NONE, &["records"]);
        check(&["enum E { A, B }"], Signals::NONE, &["sums"]);
    }

    #[test]
    fn a_whole_program_reads_borrows_records_and_sums_from_tokens() {
        check_program("fn f(x: ro<u32>) {}", &["views"]);
        check_program("fn f(x: rw<u32>) {}", &["views"]);
        check_program("struct P { x: u32 }", &["records"]);
        check_program("enum E { A, B }", &["sums"]);
        check_program("fn f(v: Vec) { v.lends(); }", &["lends"]);
    }

    #[test]
    fn generic_declarations_select_generics() {
        check(&["fn id[T](x:T) -> T { return x; }"], Signals::NONE, &["generics"]);
        check(&["struct Pair[T] { a: T, b: T }"], Signals::NONE, &["records", "generics"]);
        check(&["enum Opt[T] { None, Some(T) }"], Signals::NONE, &["sums", "generics"]);
        check(&["trait Shape { }"], Signals::NONE, &["generics"]);
        check(&["impl Shape for Sq { }"], Signals::NONE, &["generics"]);
        // An instance such as `ascending[u64]` is not a declaration.
        check(&["fn f() { g(ascending[u64]); }"], Signals::NONE, &[]);
    }

    #[test]
    fn launch_or_extern_with_implements_selects_foreign() {
        check(&["fn f() { launch k(); }"], Signals::NONE, &["foreign"]);
        check(&["extern fn g();"], Signals::NONE, &["effects"]);
        check(&["fn h() implements g {}"], Signals::NONE, &["implementations"]);
        check(&["extern fn g();", "fn h() implements g {}"], Signals::NONE, &["effects", "foreign", "implementations"]);
    }

    #[test]
    fn blocks_with_threads_selects_cooperative() {
        check(&["fn f() { blocks; }"], Signals::NONE, &[]);
        check(&["fn f() { threads; }"], Signals::NONE, &[]);
        check(&["fn f() { blocks; threads; }"], Signals::NONE, &["cooperative"]);
        check(&["fn f() { barrier(); }"], Signals::NONE, &["cooperative"]);
    }

    #[test]
    fn closures_function_types_and_dyn_select_closures() {
        check(&["fn f() { sort(xs, |a:u32| -> bool { return true; }); }"], Signals::NONE, &["closures"]);
        check(&["fn f() { each(|| { }); }"], Signals::NONE, &["closures"]);
        check(&["fn f(g: fn(u32) -> u32) {}"], Signals::NONE, &["closures"]);
        check(&["fn f(g: ro<dyn Shape>) {}"], Signals::NONE, &["closures"]);
        // A bitwise or is not a closure.
        check(&["fn f() { let x = a | b; g(a || b); }"], Signals::NONE, &[]);
    }

    #[test]
    fn a_shape_never_spans_two_texts() {
        check(&["fn f() { g(", "|x| x); }"], Signals::NONE, &[]);
        check(&["fn id", "[T](x:T) {}"], Signals::NONE, &[]);
    }

    #[test]
    fn tool_cards_are_never_selected() {
        let every_word = "hosts migrations sketches validation commands harness limits E-RULE rules";
        let names: Vec<&str> = select_for_program(&[every_word]).iter().map(|card| card.name).collect();
        assert_eq!(names, CORE);
        for card in select_cards(&["fn f() { spawn; }"], Signals::NONE) {
            assert_eq!(card.kind, CardKind::Language);
        }
    }
}
