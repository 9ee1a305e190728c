//! The agent skill (protocol §14.5): `skills/cairn/SKILL.md` and one file per other card under
//! `skills/cairn/cards/`, rendered from the card tables (`cards/`) and the hand-written template
//! `skill/SKILL.template.md` (the loop, the example, the costliest mistakes).
//!
//! The committed `skills/cairn/` is this render: `crates/cairn_cli/tests/skill.rs` fails while a
//! committed file differs from a fresh one (`CAIRN_RENDER_SKILL=1` on that test writes it).
//! The language server materializes the same files, so a diagnostic's link opens the text an
//! agent's skill holds. Invariants: every card has exactly one home in the render (a core card in
//! `SKILL.md`'s core rules, any other in `cards/<name>.md`); the render depends on nothing but
//! the embedded cards, the template and the version.

use crate::registry::{CardEntry, CardKind, cards};
use crate::selection::{CORE, also_selected_by};

/// Where the skill lives, relative to the repository (and to a plugin's root).
pub const SKILL_DIR: &str = "skills/cairn";

/// The anchor of the core rules in `SKILL.md` (the heading "The core rules").
pub const CORE_ANCHOR: &str = "the-core-rules";

const TEMPLATE: &str = include_str!("../skill/SKILL.template.md");

/// Every file of the skill: its path under [`SKILL_DIR`] and its text, `SKILL.md` first.
pub fn render() -> Vec<(String, String)> {
    let mut files = vec![("SKILL.md".to_string(), skill_md())];
    for card in cards().iter().filter(|card| !CORE.contains(&card.name)) {
        files.push((card_path(card), card_file(card)));
    }
    files
}

/// Where `card` is rendered, relative to [`SKILL_DIR`]: `cards/<name>.md`, or `SKILL.md` with
/// the core-rules anchor for a core card.
pub fn card_path(card: &CardEntry) -> String {
    if CORE.contains(&card.name) { format!("SKILL.md#{CORE_ANCHOR}") } else { format!("cards/{}.md", card.name) }
}

/// The file of one card: its name, codes, what selects it, and its paragraphs.
pub fn card_file(card: &CardEntry) -> String {
    let mut out = format!("# {}\n\n{}\n\n", card.name, heading(card));
    out.push_str(&card.paragraphs.join("\n\n"));
    out.push('\n');
    out
}

/// A card's codes and what selects it (a tool card: who names it).
fn heading(card: &CardEntry) -> String {
    let codes = if card.codes.is_empty() { "none".to_string() } else { card.codes.join(", ") };
    format!("Codes: {codes}.\n{}", selected_by(card))
}

fn selected_by(card: &CardEntry) -> String {
    if card.kind == CardKind::Tool {
        return "No source selects this card: a host or the command line names it in a refusal.".to_string();
    }
    if CORE.contains(&card.name) {
        return "Every packet carries it.".to_string();
    }
    let words: Vec<String> = card.words.iter().map(|word| format!("`{word}`")).collect();
    match (words.is_empty(), also_selected_by(card.name)) {
        (false, Some(also)) => format!("Selected by {}, or by {also}.", words.join(" ")),
        (false, None) => format!("Selected by {}.", words.join(" ")),
        (true, Some(also)) => format!("Selected by {also}."),
        (true, None) => "Selected by nothing in a source.".to_string(),
    }
}

/// `SKILL.md`: the template with the version, the core cards and the index filled in.
pub fn skill_md() -> String {
    let core: Vec<String> = CORE
        .iter()
        .filter_map(|name| crate::registry::card_named(name))
        .map(|card| format!("### {}\n\n{}\n\n{}", card.name, heading(card), card.paragraphs.join("\n\n")))
        .collect();
    let mut index = String::from("| card | codes | selected by |\n| --- | --- | --- |\n");
    for card in cards().iter().filter(|card| !CORE.contains(&card.name)) {
        let codes = if card.codes.is_empty() { "—".to_string() } else { card.codes.join(" ") };
        let by = selected_by(card).replace('|', "\\|");
        index.push_str(&format!("| [{}]({}) | {codes} | {by} |\n", card.name, card_path(card)));
    }
    let version = format!(
        "This skill describes CAIRN 1.x as cairn-rs {} implements it (`cairn --version`).",
        env!("CARGO_PKG_VERSION")
    );
    TEMPLATE
        .replace("{{version}}", &version)
        .replace("{{core}}", &core.join("\n\n"))
        .replace("{{index}}", index.trim_end())
}

/// The skill's description (its front matter), the only text an agent always loads.
pub fn description() -> &'static str {
    TEMPLATE
        .split_once("\ndescription: ")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map_or("", |(description, _)| description)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_has_one_home_and_every_placeholder_is_filled() {
        let files = render();
        assert_eq!(files[0].0, "SKILL.md");
        let skill = &files[0].1;
        assert!(!skill.contains("{{"), "a placeholder is left");
        for card in cards() {
            let path = card_path(card);
            if CORE.contains(&card.name) {
                assert!(skill.contains(&format!("### {}\n", card.name)), "{} is in the core rules", card.name);
            } else {
                assert!(files.iter().any(|(p, _)| *p == path), "{path}");
                assert!(skill.contains(&format!("]({path})")), "the index links {path}");
            }
            for paragraph in &card.paragraphs {
                let homes = files.iter().filter(|(_, text)| text.contains(paragraph)).count();
                assert_eq!(homes, 1, "{}: a paragraph lives in {homes} files", card.name);
            }
        }
        assert_eq!(files.len(), cards().len() - CORE.len() + 1);
    }

    #[test]
    fn the_description_is_about_180_tokens() {
        let description = description();
        // About four bytes a token for English prose.
        let tokens = description.len() / 4;
        assert!((140..=220).contains(&tokens), "{tokens} tokens: {description}");
    }

    #[test]
    fn a_tool_card_says_who_names_it_and_a_language_card_what_selects_it() {
        let hosts = crate::registry::card_named("hosts").expect("hosts");
        assert!(card_file(hosts).contains("names it in a refusal"));
        let views = crate::registry::card_named("views").expect("views");
        let text = card_file(views);
        assert!(text.contains("`buffer`") && text.contains("borrow parameter"), "{text}");
    }
}
