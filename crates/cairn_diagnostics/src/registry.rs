//! Which rule card owns which diagnostic code, and the cards' texts (protocol §14).
//!
//! The cards in `cards/` at the top of the repository are the source of truth: each file is a
//! front matter (`card`, `kind`, `codes`, `words`) and then one paragraph per line. They are
//! embedded at build time and parsed once, on first use. Invariants, kept by the tests here and in
//! `tests/cards.rs`: every code is owned by exactly one card, language and tool cards are disjoint,
//! every code a card's text names is owned by some card, and every code the toolchain can emit has
//! an owner.

use std::sync::LazyLock;

/// Whether a card describes part of the language or a kind of tool refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardKind {
    Language,
    Tool,
}

impl CardKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CardKind::Language => "language",
            CardKind::Tool => "tool",
        }
    }
}

/// One card: its name, kind, the codes it owns, the words that select it, and its paragraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardEntry {
    pub name: &'static str,
    pub kind: CardKind,
    pub codes: Vec<&'static str>,
    pub words: Vec<&'static str>,
    pub paragraphs: Vec<&'static str>,
}

impl CardEntry {
    /// The card's text: its paragraphs, one per line.
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// The card files, language cards first in the protocol's table order, then the tool cards.
const SOURCES: &[(&str, &str)] = &[
    ("base", include_str!("../../../cards/base.md")),
    ("integers", include_str!("../../../cards/integers.md")),
    ("calls", include_str!("../../../cards/calls.md")),
    ("views", include_str!("../../../cards/views.md")),
    ("compact", include_str!("../../../cards/compact.md")),
    ("scan", include_str!("../../../cards/scan.md")),
    ("floats", include_str!("../../../cards/floats.md")),
    ("math", include_str!("../../../cards/math.md")),
    ("storage", include_str!("../../../cards/storage.md")),
    ("gradients", include_str!("../../../cards/gradients.md")),
    ("records", include_str!("../../../cards/records.md")),
    ("generators", include_str!("../../../cards/generators.md")),
    ("memory", include_str!("../../../cards/memory.md")),
    ("sums", include_str!("../../../cards/sums.md")),
    ("generics", include_str!("../../../cards/generics.md")),
    ("owners", include_str!("../../../cards/owners.md")),
    ("assembly", include_str!("../../../cards/assembly.md")),
    ("foreign", include_str!("../../../cards/foreign.md")),
    ("effects", include_str!("../../../cards/effects.md")),
    ("parallel", include_str!("../../../cards/parallel.md")),
    ("wide", include_str!("../../../cards/wide.md")),
    ("atomics", include_str!("../../../cards/atomics.md")),
    ("cooperative", include_str!("../../../cards/cooperative.md")),
    ("tasks", include_str!("../../../cards/tasks.md")),
    ("rings", include_str!("../../../cards/rings.md")),
    ("closures", include_str!("../../../cards/closures.md")),
    ("tests", include_str!("../../../cards/tests.md")),
    ("implementations", include_str!("../../../cards/implementations.md")),
    ("printing", include_str!("../../../cards/printing.md")),
    ("layouts", include_str!("../../../cards/layouts.md")),
    ("fragments", include_str!("../../../cards/fragments.md")),
    ("lends", include_str!("../../../cards/lends.md")),
    ("modules", include_str!("../../../cards/modules.md")),
    ("hosts", include_str!("../../../cards/hosts.md")),
    ("migrations", include_str!("../../../cards/migrations.md")),
    ("sketches", include_str!("../../../cards/sketches.md")),
    ("validation", include_str!("../../../cards/validation.md")),
    ("commands", include_str!("../../../cards/commands.md")),
    ("harness", include_str!("../../../cards/harness.md")),
    ("limits", include_str!("../../../cards/limits.md")),
];

/// The file names of the embedded cards, for the test that compares them with `cards/`.
pub fn embedded_card_files() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(name, _)| *name)
}

static CARDS: LazyLock<Vec<CardEntry>> = LazyLock::new(|| {
    SOURCES.iter().map(|(file, text)| parse_card(text).unwrap_or_else(|why| panic!("cards/{file}.md: {why}"))).collect()
});

/// Every card, language cards first, then the tool cards.
pub fn cards() -> &'static [CardEntry] {
    &CARDS
}

/// Parses one card file. Errors name what is malformed; the embedded cards are checked by a test,
/// so a malformed card never reaches a user.
pub fn parse_card(text: &'static str) -> Result<CardEntry, String> {
    let rest = text.strip_prefix("---\n").ok_or("the file must start with a `---` line")?;
    let end = rest.find("\n---\n").ok_or("the front matter must end with a `---` line")?;
    let (front, body) = (&rest[..end], &rest[end + 5..]);
    let mut name = None;
    let mut kind = None;
    let mut codes = Vec::new();
    let mut words = Vec::new();
    for line in front.lines() {
        let (key, value) = line.split_once(':').ok_or_else(|| format!("front matter line `{line}` has no `:`"))?;
        let list = || value.split(',').map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>();
        match key.trim() {
            "card" => name = Some(value.trim()),
            "kind" => {
                kind = Some(match value.trim() {
                    "language" => CardKind::Language,
                    "tool" => CardKind::Tool,
                    other => return Err(format!("unknown kind `{other}`")),
                })
            }
            "codes" => codes = list(),
            "words" => words = list(),
            other => return Err(format!("unknown front matter key `{other}`")),
        }
    }
    let paragraphs: Vec<&str> = body.lines().map(str::trim_end).filter(|line| !line.is_empty()).collect();
    if paragraphs.is_empty() {
        return Err("the card has no text".into());
    }
    Ok(CardEntry {
        name: name.ok_or("the front matter has no `card`")?,
        kind: kind.ok_or("the front matter has no `kind`")?,
        codes,
        words,
        paragraphs,
    })
}

/// The card that owns `code`, if any card does.
pub fn card_of(code: &str) -> Option<&'static CardEntry> {
    cards().iter().find(|card| card.codes.contains(&code))
}

/// The card named `name`.
pub fn card_named(name: &str) -> Option<&'static CardEntry> {
    cards().iter().find(|card| card.name == name)
}

/// True when `code` belongs to a tool card (such codes get no repair hint outside a host).
pub fn is_tool_code(code: &str) -> bool {
    card_of(code).is_some_and(|card| card.kind == CardKind::Tool)
}

/// True when `text` has the shape of a diagnostic code: `E-` and upper-case/digit groups joined by `-`.
pub fn looks_like_code(text: &str) -> bool {
    text.strip_prefix("E-").is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .split('-')
                .all(|group| !group.is_empty() && group.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()))
    })
}

/// Every code named in `text` (`E-` followed by upper-case/digit groups), in order of appearance.
pub fn codes_named_in(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(offset) = text[i..].find("E-") {
        let start = i + offset;
        let before_ok = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-');
        let mut end = start + 2;
        while end < bytes.len()
            && (bytes[end].is_ascii_uppercase() || bytes[end].is_ascii_digit() || bytes[end] == b'-')
        {
            end += 1;
        }
        let candidate = text[start..end].trim_end_matches('-');
        if before_ok && looks_like_code(candidate) {
            found.push(candidate);
        }
        i = start + 2;
    }
    found
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn every_code_has_exactly_one_owner() {
        let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for card in cards() {
            for code in &card.codes {
                owners.entry(code).or_default().push(card.name);
            }
        }
        let shared: Vec<_> = owners.iter().filter(|(_, cards)| cards.len() > 1).collect();
        assert!(shared.is_empty(), "codes with several owners: {shared:?}");
    }

    #[test]
    fn the_table_has_the_protocols_totals_plus_our_one_code() {
        let count = |kind| cards().iter().filter(|c| c.kind == kind).count();
        let codes = |kind| cards().iter().filter(|c| c.kind == kind).map(|c| c.codes.len()).sum::<usize>();
        assert_eq!((count(CardKind::Language), count(CardKind::Tool)), (33, 7));
        // 166 and 49 are the original's; E-UNSUPPORTED (limits) is ours (docs/decisions.md).
        assert_eq!((codes(CardKind::Language), codes(CardKind::Tool)), (166, 50));
        assert_eq!(card_of("E-UNSUPPORTED").map(|c| c.name), Some("limits"));
    }

    #[test]
    fn each_file_declares_the_name_it_is_stored_under() {
        for ((file, _), card) in SOURCES.iter().zip(cards()) {
            assert_eq!(*file, card.name);
        }
        let first_tool = cards().iter().position(|c| c.kind == CardKind::Tool).expect("tool cards");
        assert!(cards()[first_tool..].iter().all(|c| c.kind == CardKind::Tool), "language cards come first");
        assert!(cards().iter().filter(|c| c.kind == CardKind::Tool).all(|c| c.words.is_empty()));
    }

    #[test]
    fn every_code_a_text_names_is_owned_and_every_owned_code_is_named_by_its_card() {
        for card in cards() {
            let text = card.text();
            let named = codes_named_in(&text);
            for code in &named {
                assert!(card_of(code).is_some(), "card {} names {code}, which no card owns", card.name);
            }
            for code in &card.codes {
                assert!(named.contains(code), "card {} owns {code} but its text never names it", card.name);
            }
        }
    }

    #[test]
    fn the_first_card_states_the_language_version() {
        assert!(cards()[0].paragraphs[0].starts_with("CAIRN 1."), "{}", cards()[0].paragraphs[0]);
    }

    #[test]
    fn every_syntax_code_is_owned() {
        for code in cairn_syntax::ErrorCode::ALL {
            assert!(card_of(code.as_str()).is_some(), "{code} has no card");
        }
    }

    #[test]
    fn code_shapes() {
        assert!(looks_like_code("E-PARSE") && looks_like_code("E-FAMILY-LIMIT") && looks_like_code("E-X2"));
        assert!(
            !looks_like_code("E-")
                && !looks_like_code("E-parse")
                && !looks_like_code("E--X")
                && !looks_like_code("views")
        );
        assert_eq!(codes_named_in("refused (E-PARSE), then E-NAME-. but not XE-FOO"), ["E-PARSE", "E-NAME"]);
    }

    #[test]
    fn malformed_cards_are_reported() {
        assert!(parse_card("card: x\n").is_err());
        assert!(parse_card("---\ncard: x\nkind: odd\n---\ntext\n").is_err());
        assert!(parse_card("---\ncard: x\nkind: tool\n---\n\n").is_err());
        let ok =
            parse_card("---\ncard: x\nkind: tool\ncodes: E-A, E-B\nwords:\n---\nOne (E-A).\nTwo (E-B).\n").expect("ok");
        assert_eq!((ok.codes, ok.words.len(), ok.paragraphs.len()), (vec!["E-A", "E-B"], 0, 2));
    }
}
