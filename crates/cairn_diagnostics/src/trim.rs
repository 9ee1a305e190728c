//! Which paragraphs of the selected cards a packet shows (docs/decisions.md "Trimmed cards").
//!
//! A card is one paragraph per line: the first is the card's overview, each other states a rule
//! or two. A packet shows each selected card's overview and, within a budget of bytes, the
//! paragraphs its text selects, the most telling first:
//!
//! - A paragraph's *keys* are the tokens of its code spans (text between backticks) — words of
//!   two letters or more (single letters are the cards' placeholders, `x`, `e`, `T`) and
//!   operators; delimiters and `=` never key a paragraph.
//! - A paragraph is selected when one of its keys is a token of the shown text (comments and
//!   strings are trivia or one token, so they never select), or when it has no key at all (a rule
//!   of the whole card).
//! - Its weight is the sum, over the keys the text holds, of the key's weight: 1 for the tokens
//!   nearly every function holds ([`UBIQUITOUS`]: `fn`, `let`, `return`, the scalar types, the
//!   arithmetic and comparison operators), else how rare the key is among the language cards'
//!   paragraphs (the inverse document frequency, in thousandths, at least 2): `try` or
//!   `add_wrap` tell what a function is about, `let` does not. A keyless paragraph weighs 1.
//! - [`trim`] takes the overviews not yet sent, then the heaviest selected paragraphs not yet sent
//!   while they fit [`CARD_BUDGET`]; ties go to the card order, then the paragraph order.
//!
//! Invariants: the same texts, signals and sent set always give the same paragraphs; nothing sent
//! is shown again; an overview is never left out; apart from overviews the shown card text never
//! exceeds the budget.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use crate::registry::{CardEntry, CardKind, cards};
use crate::selection::{Scan, Signals, selected};

/// The bytes of card text (paragraphs and their newlines) a packet shows beyond the overviews.
pub const CARD_BUDGET: usize = 2048;

/// One selected card and its selected paragraphs, in card order, each with its weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub card: &'static CardEntry,
    /// `(index, weight)`; the overview (index 0) is always first.
    pub paragraphs: Vec<(usize, u32)>,
}

/// The cards `texts` select with `signals` (as `selection::select_cards`), each with the
/// paragraphs the tokens of `texts` select and their weights.
pub fn select_paragraphs(texts: &[&str], signals: Signals) -> Vec<Selected> {
    let scan = Scan::of(texts);
    selected(&scan, signals)
        .into_iter()
        .map(|card| {
            let keys = keys_of(card);
            let mut paragraphs = Vec::new();
            for (index, keys) in keys.iter().enumerate() {
                let held: Vec<&String> = keys.iter().filter(|key| scan.holds(key)).collect();
                if index == 0 {
                    paragraphs.push((0, u32::MAX));
                } else if keys.is_empty() {
                    paragraphs.push((index, 1));
                } else if !held.is_empty() {
                    paragraphs.push((index, held.iter().map(|key| weight(key)).sum::<u32>().max(1)));
                }
            }
            Selected { card, paragraphs }
        })
        .collect()
}

/// The paragraphs to show of `selection`, per card in its order (cards with none left out):
/// the overviews `sent` does not hold, then the heaviest others it does not hold while their
/// bytes fit `budget`. `sent(card, index)` says whether a paragraph was sent before.
pub fn trim(
    selection: &[Selected],
    sent: impl Fn(&str, usize) -> bool,
    budget: usize,
) -> Vec<(&'static CardEntry, Vec<usize>)> {
    let mut chosen: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut candidates: Vec<(u32, usize, usize)> = Vec::new();
    for (position, entry) in selection.iter().enumerate() {
        for &(index, weight) in &entry.paragraphs {
            if sent(entry.card.name, index) {
                continue;
            }
            if index == 0 {
                chosen.insert((position, 0));
            } else {
                candidates.push((weight, position, index));
            }
        }
    }
    // Heaviest first; ties in card order, then paragraph order.
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut spent = 0usize;
    for (_, position, index) in candidates {
        let bytes = selection[position].card.paragraphs[index].len() + 1;
        if spent + bytes <= budget {
            spent += bytes;
            chosen.insert((position, index));
        }
    }
    let mut out: Vec<(&'static CardEntry, Vec<usize>)> = Vec::new();
    for (position, index) in chosen {
        let card = selection[position].card;
        match out.last_mut() {
            Some((last, indexes)) if last.name == card.name => indexes.push(index),
            _ => out.push((card, vec![index])),
        }
    }
    out
}

/// Tokens that never key a paragraph: every function has them.
const UNKEYED: [&str; 12] = ["(", ")", "{", "}", "[", "]", ",", ";", ":", ".", "=", "->"];

/// The keys of each paragraph of `card`: the tokens of its code spans that can key it — words
/// of two letters or more, and operators outside [`UNKEYED`].
pub fn paragraph_keys(card: &CardEntry) -> Vec<BTreeSet<String>> {
    card.paragraphs
        .iter()
        .map(|paragraph| {
            let mut keys = BTreeSet::new();
            for span in paragraph.split('`').skip(1).step_by(2) {
                let lexed = cairn_syntax::lex(span);
                let mut offset = 0usize;
                for token in &lexed.tokens {
                    let end = offset + usize::from(token.len);
                    let text = &span[offset..end];
                    offset = end;
                    let word = token.kind.is_word() && text.len() >= 2;
                    let operator = token.kind.is_punct() && !UNKEYED.contains(&text);
                    if word || operator {
                        keys.insert(text.to_string());
                    }
                }
            }
            keys
        })
        .collect()
}

/// The keys of every card's paragraphs, computed once, in the registry's order.
static KEYS: LazyLock<Vec<Vec<BTreeSet<String>>>> = LazyLock::new(|| cards().iter().map(paragraph_keys).collect());

fn keys_of(card: &CardEntry) -> &'static [BTreeSet<String>] {
    let index = cards().iter().position(|entry| entry.name == card.name).unwrap_or(usize::MAX);
    KEYS.get(index).map_or(&[], Vec::as_slice)
}

/// Tokens nearly every function holds: each weighs 1, so a paragraph they alone select comes
/// after every paragraph a telling token selects.
pub const UBIQUITOUS: [&str; 37] = [
    "fn", "let", "mut", "return", "if", "else", "for", "in", "while", "true", "false", "bool", "u8", "u16", "u32",
    "u64", "usize", "i8", "i16", "i32", "i64", "f32", "f64", "+", "-", "*", "/", "<", ">", "<=", ">=", "==", "!=",
    "+=", "&&", "||", "!",
];

/// The weight of a held key: 1 when it is [`UBIQUITOUS`], else its rarity (at least 2).
fn weight(key: &str) -> u32 {
    if UBIQUITOUS.contains(&key) { 1 } else { rarity(key).max(2) }
}

/// How rare `key` is among the language cards' paragraphs: `ln(N / df)` in thousandths, where `N`
/// counts the paragraphs and `df` those keyed by `key` (at least one, so a key of a tool card
/// alone weighs the most).
fn rarity(key: &str) -> u32 {
    static TABLE: LazyLock<(usize, std::collections::HashMap<&'static str, usize>)> = LazyLock::new(|| {
        let mut total = 0usize;
        let mut counts: std::collections::HashMap<&'static str, usize> = std::collections::HashMap::new();
        for (card, keys) in cards().iter().zip(KEYS.iter()) {
            if card.kind != CardKind::Language {
                continue;
            }
            for paragraph in keys {
                total += 1;
                for key in paragraph {
                    // The key's text lives as long as KEYS (static); find it there once.
                    let key: &'static str = key.as_str();
                    *counts.entry(key).or_default() += 1;
                }
            }
        }
        (total, counts)
    });
    let (total, counts) = &*TABLE;
    let df = counts.get(key).copied().unwrap_or(1).max(1);
    let ratio = (*total).max(1) as f64 / df as f64;
    (ratio.ln().max(0.0) * 1000.0).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::card_named;

    fn shown(texts: &[&str], card: &str) -> Vec<usize> {
        select_paragraphs(texts, Signals::NONE)
            .into_iter()
            .find(|selected| selected.card.name == card)
            .map(|selected| selected.paragraphs.into_iter().map(|(index, _)| index).collect())
            .unwrap_or_default()
    }

    fn wrapping_paragraph() -> usize {
        card_named("integers")
            .expect("integers")
            .paragraphs
            .iter()
            .position(|p| p.contains("`add_wrap`"))
            .expect("a paragraph on add_wrap")
    }

    #[test]
    fn a_paragraph_is_selected_when_its_code_spans_hold_a_token_of_the_text() {
        let wrapping = wrapping_paragraph();
        assert!(wrapping > 0);
        let plain = shown(&["fn f(a:u32) -> u32 { return a; }"], "integers");
        assert_eq!(plain[0], 0);
        assert!(!plain.contains(&wrapping), "{plain:?}");
        let wraps = shown(&["fn f(a:u32) -> u32 { return add_wrap(a, 1); }"], "integers");
        assert!(wraps.contains(&wrapping), "{wraps:?}");
        // A word in a comment or a string never selects a paragraph.
        let quoted = shown(&["// add_wrap\nfn f() { let s = \"add_wrap\"; }"], "integers");
        assert_eq!(quoted, shown(&["fn f() { let s = \"\"; }"], "integers"));
        assert!(!quoted.contains(&wrapping));
    }

    #[test]
    fn single_letters_and_delimiters_never_key_a_paragraph() {
        for card in cards() {
            for keys in paragraph_keys(card) {
                for key in keys {
                    assert!(key.len() >= 2 || !key.chars().all(char::is_alphanumeric), "{}: {key}", card.name);
                    assert!(!UNKEYED.contains(&key.as_str()), "{}: {key}", card.name);
                }
            }
        }
    }

    #[test]
    fn the_same_cards_are_selected_with_or_without_paragraphs() {
        let text = "fn f(x: ro<u32>[n]) -> f32 { match v { } spawn g(); return sqrt(1.0); }";
        let names: Vec<&str> = crate::selection::select_cards(&[text], Signals::NONE).iter().map(|c| c.name).collect();
        let with: Vec<&str> = select_paragraphs(&[text], Signals::NONE).iter().map(|s| s.card.name).collect();
        assert_eq!(names, with);
    }

    #[test]
    fn telling_keys_weigh_more_than_ubiquitous_ones() {
        for key in UBIQUITOUS {
            assert_eq!(weight(key), 1);
        }
        assert!(weight("add_wrap") > 1 && weight("try") > 1);
        assert!(rarity("shl_wrap") > rarity("let"), "a key of many paragraphs is less rare");
    }

    #[test]
    fn a_telling_token_outranks_any_number_of_ubiquitous_ones() {
        // `try` selects paragraphs of sums and calls; they come before the `let`/`return` ones.
        let text = "fn f(c:u32) -> Result[u32, E] { let per = try g(c); return Ok(per + 1); }";
        let selection = select_paragraphs(&[text], Signals::NONE);
        let sums = selection.iter().find(|s| s.card.name == "sums").expect("try selects sums");
        let telling = sums.paragraphs.iter().filter(|(index, _)| *index > 0).map(|p| p.1).max().expect("paragraphs");
        let base = selection.iter().find(|s| s.card.name == "base").expect("base");
        let plain = base
            .paragraphs
            .iter()
            .filter(|(index, _)| *index > 0 && !base.card.paragraphs[*index].contains("`try`"))
            .map(|p| p.1)
            .max()
            .expect("paragraphs");
        assert!(telling > plain, "{telling} <= {plain}");
    }

    #[test]
    fn trimming_keeps_overviews_spends_the_budget_heaviest_first_and_never_resends() {
        let text =
            "fn f(a:u32, k:usize) -> u32 { let mut h:u32 = add_wrap(a, 1); h += shl_wrap(h, k); return min(h, 7); }";
        let selection = select_paragraphs(&[text], Signals::NONE);
        let nothing = |_: &str, _: usize| false;
        // A budget of nothing still shows every overview.
        let bare = trim(&selection, nothing, 0);
        assert_eq!(bare.len(), selection.len());
        assert!(bare.iter().all(|(_, indexes)| indexes == &[0]));
        // Within the budget, the paragraph on the wrapping builtins (rare keys) comes first.
        let wrapping = wrapping_paragraph();
        let bytes = card_named("integers").expect("integers").paragraphs[wrapping].len() + 1;
        let tight = trim(&selection, nothing, bytes);
        let integers = tight.iter().find(|(card, _)| card.name == "integers").expect("integers");
        assert_eq!(integers.1, [0, wrapping]);
        // The shown text beyond overviews never exceeds the budget.
        for budget in [0, 100, 1000, CARD_BUDGET] {
            let spent: usize = trim(&selection, nothing, budget)
                .iter()
                .flat_map(|(card, indexes)| indexes.iter().filter(|&&i| i > 0).map(|&i| card.paragraphs[i].len() + 1))
                .sum();
            assert!(spent <= budget, "{spent} > {budget}");
        }
        // What was sent is not shown again.
        let first = trim(&selection, nothing, CARD_BUDGET);
        let sent: BTreeSet<(String, usize)> =
            first.iter().flat_map(|(card, indexes)| indexes.iter().map(|&i| (card.name.to_string(), i))).collect();
        let again = trim(&selection, |card, index| sent.contains(&(card.to_string(), index)), CARD_BUDGET);
        for (card, indexes) in &again {
            for index in indexes {
                assert!(!sent.contains(&(card.name.to_string(), *index)), "{} #{index} sent twice", card.name);
            }
        }
    }
}
