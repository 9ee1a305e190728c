//! A card's text cut into sentences, and the same text led by the sentences that name one code
//! (what `cairn rules CODE` prints, tools.md §3.5).
//!
//! A sentence ends at `.`, `?` or `!` followed by a space or by the end of the paragraph, except
//! inside a backtick span (so `x.y` or `` `a. b` `` never ends one) and except for the
//! abbreviations `e.g.` and `i.e.`. Invariant of [`paragraphs_led_by`]: every sentence of the card
//! appears exactly once in the result; the sentences naming the code form the first paragraph and
//! no later paragraph names it; paragraphs that name it nowhere are kept as written.

use crate::registry::{CardEntry, codes_named_in};

/// Abbreviations whose final `.` never ends a sentence.
const ABBREVIATIONS: &[&str] = &["e.g.", "i.e."];

/// The sentences of one paragraph, in order, each without the spaces that separate it from the
/// next. Text after the last terminator (a paragraph that does not end in one) is a sentence too.
pub fn sentences(paragraph: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut start = 0;
    let mut in_code = false;
    let mut chars = paragraph.char_indices().peekable();
    while let Some((index, ch)) = chars.next() {
        match ch {
            '`' => in_code = !in_code,
            '.' | '?' | '!' if !in_code => {
                let end = index + ch.len_utf8();
                let at_break = chars.peek().is_none_or(|(_, next)| *next == ' ');
                let abbreviation = ch == '.' && ends_with_abbreviation(&paragraph[start..end]);
                if at_break && !abbreviation {
                    found.push(&paragraph[start..end]);
                    while chars.next_if(|(_, next)| *next == ' ').is_some() {}
                    start = chars.peek().map_or(paragraph.len(), |(next, _)| *next);
                }
            }
            _ => {}
        }
    }
    let rest = paragraph[start..].trim_end();
    if !rest.is_empty() {
        found.push(rest);
    }
    found
}

/// The card's paragraphs led by the sentences that name `code`: those sentences, in the card's
/// order, joined into the first paragraph, then every paragraph without them (a paragraph left
/// empty is dropped). A card whose text never names `code` comes back as written.
pub fn paragraphs_led_by(card: &CardEntry, code: &str) -> Vec<String> {
    let names_code = |sentence: &str| codes_named_in(sentence).contains(&code);
    let mut lead: Vec<&str> = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    for paragraph in &card.paragraphs {
        let cut = sentences(paragraph);
        if !cut.iter().any(|sentence| names_code(sentence)) {
            rest.push((*paragraph).to_string());
            continue;
        }
        let (naming, others): (Vec<&str>, Vec<&str>) = cut.into_iter().partition(|sentence| names_code(sentence));
        lead.extend(naming);
        if !others.is_empty() {
            rest.push(others.join(" "));
        }
    }
    if lead.is_empty() {
        return card.paragraphs.iter().map(|paragraph| (*paragraph).to_string()).collect();
    }
    let mut paragraphs = vec![lead.join(" ")];
    paragraphs.extend(rest);
    paragraphs
}

fn ends_with_abbreviation(text: &str) -> bool {
    ABBREVIATIONS.iter().any(|abbreviation| {
        text.strip_suffix(abbreviation).is_some_and(|before| !before.ends_with(|c: char| c.is_alphanumeric()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{CardKind, cards, parse_card};

    #[track_caller]
    fn check_sentences(paragraph: &str, expected: &[&str]) {
        assert_eq!(sentences(paragraph), expected);
    }

    fn sorted_sentences(paragraphs: &[impl AsRef<str>]) -> Vec<String> {
        let mut all: Vec<String> = paragraphs.iter().flat_map(|p| sentences(p.as_ref())).map(str::to_string).collect();
        all.sort();
        all
    }

    #[test]
    fn sentences_end_at_a_terminator_before_a_space_or_the_end() {
        check_sentences("One. Two? Three! Four.", &["One.", "Two?", "Three!", "Four."]);
        check_sentences("One.  Two", &["One.", "Two"]);
        check_sentences("", &[]);
    }

    #[test]
    fn code_spans_decimals_and_abbreviations_do_not_end_a_sentence() {
        check_sentences(
            "Write `a. b` or `x.y()` here. Then 2.5 is fine.",
            &["Write `a. b` or `x.y()` here.", "Then 2.5 is fine."],
        );
        check_sentences(
            "Some forms, e.g. `u32(x)`, trap. Others, i.e. the rest, do not.",
            &["Some forms, e.g. `u32(x)`, trap.", "Others, i.e. the rest, do not."],
        );
    }

    #[test]
    fn the_code_leads_and_no_later_paragraph_names_it() {
        let card = parse_card(
            "---\ncard: x\nkind: tool\ncodes: E-A, E-B\nwords:\n---\nIntro. First rule (E-A). Between.\nOther rule (E-B).\nAgain (E-A). Tail.\n",
        )
        .expect("card");
        assert_eq!(
            paragraphs_led_by(&card, "E-A"),
            ["First rule (E-A). Again (E-A).", "Intro. Between.", "Other rule (E-B).", "Tail."]
        );
        assert_eq!(
            paragraphs_led_by(&card, "E-B"),
            ["Other rule (E-B).", "Intro. First rule (E-A). Between.", "Again (E-A). Tail."]
        );
    }

    #[test]
    fn a_card_that_never_names_the_code_reads_as_written() {
        let card =
            parse_card("---\ncard: x\nkind: tool\ncodes: E-A\nwords:\n---\nOne (E-AB). Two.\nThree.\n").expect("card");
        assert_eq!(paragraphs_led_by(&card, "E-A"), ["One (E-AB). Two.", "Three."]);
    }

    #[test]
    fn every_owned_code_leads_its_card_and_keeps_every_sentence_once() {
        for card in cards() {
            let original = sorted_sentences(&card.paragraphs);
            for code in &card.codes {
                let led = paragraphs_led_by(card, code);
                assert!(codes_named_in(&led[0]).contains(code), "{}: {code} does not lead", card.name);
                for later in &led[1..] {
                    assert!(!codes_named_in(later).contains(code), "{}: {code} named again in `{later}`", card.name);
                }
                assert_eq!(sorted_sentences(&led), original, "{}: {code} changed the sentences", card.name);
            }
        }
        assert!(cards().iter().any(|card| card.kind == CardKind::Tool));
    }
}
