//! `cairn rules`: print rule cards offline, compiling nothing (tools.md §3.5, protocol.md §14).
//!
//! The argument is resolved in a fixed order: a card name, then a code some card owns; a string is
//! read as a path only when it is neither a card name nor shaped like a code and names something
//! that exists. Anything else is refused with `E-RULE` (exit 1); a path that exists but does not
//! load is an environment error (exit 2). Every answer is one `cairn.rules/1` record, and the
//! human rendering is computed from that record, so both modes carry the same content.
//! Card selection and the code-led text come from `cairn_diagnostics`, so a host that answers the
//! same question shares one implementation.

use std::path::Path;

use cairn_diagnostics::Diagnostic;
use cairn_diagnostics::card_text::paragraphs_led_by;
use cairn_diagnostics::record::diagnostic_record;
use cairn_diagnostics::registry::{CardEntry, card_named, card_of, cards, looks_like_code};
use cairn_diagnostics::selection::{CORE, select_for_program};
use serde::Serialize;

use crate::output::{FormatChoice, Output, to_map};

/// The schema of every record this command prints.
pub const SCHEMA: &str = "cairn.rules/1";

/// Runs `cairn rules [asked]`; with nothing asked it prints the list of every card.
pub fn run(asked: Option<&str>, out: Output) -> u8 {
    let Some(asked) = asked else {
        print(&list_record(), out);
        return 0;
    };
    let record = match resolve(asked) {
        Resolved::Card(card) => card_record(asked, card),
        Resolved::Code(card, code) => code_record(asked, card, code),
        Resolved::Path(path) => match cairn_vfs::load(path) {
            Ok(program) => {
                let texts: Vec<&str> = program.files.iter().map(|file| file.text.as_str()).collect();
                program_record(asked, &select_for_program(&texts))
            }
            Err(error) => {
                out.environment(&error.message);
                return 2;
            }
        },
        Resolved::UnownedCode => {
            let message = format!(
                "No card owns the code `{asked}`; `cairn rules --list` lists every card with the codes it owns."
            );
            return refuse(&message, out);
        }
        Resolved::Unknown => {
            let message = format!(
                "`{asked}` is neither a card name, a code some card owns, nor an existing file or directory; `cairn rules --list` lists every card with its codes."
            );
            return refuse(&message, out);
        }
    };
    print(&record, out);
    0
}

/// What the argument names, in the order of tools.md §3.5.
enum Resolved<'a> {
    Card(&'static CardEntry),
    Code(&'static CardEntry, &'a str),
    Path(&'a Path),
    /// Shaped like a code, but no card owns it (e.g. a code a recipe's `require` chose).
    UnownedCode,
    Unknown,
}

fn resolve(asked: &str) -> Resolved<'_> {
    if let Some(card) = card_named(asked) {
        return Resolved::Card(card);
    }
    if let Some(card) = card_of(asked) {
        return Resolved::Code(card, asked);
    }
    if looks_like_code(asked) {
        return Resolved::UnownedCode;
    }
    let path = Path::new(asked);
    if !asked.is_empty() && path.exists() { Resolved::Path(path) } else { Resolved::Unknown }
}

/// `--list` (or nothing asked): every card, language then tool, without text.
fn list_record() -> RulesRecord<'static> {
    let listed = cards()
        .iter()
        .map(|card| {
            let mut words = card.words.clone();
            words.sort_unstable();
            CardRecord { words: Some(words), ..CardRecord::of(card) }
        })
        .collect();
    RulesRecord { schema: SCHEMA, asked: None, code: None, always: None, cards: listed }
}

/// A card asked by name: its text as written.
fn card_record<'a>(asked: &'a str, card: &CardEntry) -> RulesRecord<'a> {
    let entry = CardRecord { text: Some(card.text()), ..CardRecord::of(card) };
    RulesRecord { schema: SCHEMA, asked: Some(asked), code: None, always: None, cards: vec![entry] }
}

/// A code: its owning card, led by the sentences that name the code.
fn code_record<'a>(asked: &'a str, card: &CardEntry, code: &'a str) -> RulesRecord<'a> {
    let entry = CardRecord { text: Some(paragraphs_led_by(card, code).join("\n")), ..CardRecord::of(card) };
    RulesRecord { schema: SCHEMA, asked: Some(asked), code: Some(code), always: None, cards: vec![entry] }
}

/// A program: the cards its tokens select beyond the core, which is named under `always`.
fn program_record<'a>(asked: &'a str, selected: &[&'static CardEntry]) -> RulesRecord<'a> {
    let beyond = selected
        .iter()
        .filter(|card| !CORE.contains(&card.name))
        .map(|card| CardRecord { text: Some(card.text()), ..CardRecord::of(card) })
        .collect();
    RulesRecord { schema: SCHEMA, asked: Some(asked), code: None, always: Some(&CORE), cards: beyond }
}

/// The `E-RULE` refusal: a diagnostic record of the tool card `commands`, with no position and,
/// outside a host, no repair hint.
fn refuse(message: &str, out: Output) -> u8 {
    out.refusal(&diagnostic_record(&Diagnostic::new("E-RULE", message)), &|_, _| None);
    1
}

fn print(record: &RulesRecord<'_>, out: Output) {
    match out.format {
        FormatChoice::Json => out.json(&to_map(record)),
        FormatChoice::Human => out.text(&human(record, out)),
    }
}

/// The human rendering of a `cairn.rules/1` record: the list as one line a card; otherwise each
/// card under a heading naming it and its codes, each paragraph after a blank line.
fn human(record: &RulesRecord<'_>, out: Output) -> String {
    let mut text = String::new();
    if let Some(always) = record.always {
        text.push_str(&format!(
            "Every program gets the {} cards; `cairn rules CARD` prints any of them.\n",
            english_list(always)
        ));
    }
    let code = record.code;
    for card in &record.cards {
        let name = card.name;
        let codes = card.codes.join(", ");
        let Some(paragraphs) = card.text.as_deref() else {
            // A line of the list: the name padded to 16, then the codes.
            let shown = if codes.is_empty() { "(no codes)".to_string() } else { codes };
            let padded = format!("{name:<15} ");
            text.push_str(&format!("{}{shown}\n", out.bold(&padded)));
            continue;
        };
        let heading = match code {
            Some(code) => format!("{code} is a rule of the {name} card"),
            None => format!("The {name} card"),
        };
        let codes = if codes.is_empty() { String::new() } else { format!(": {codes}") };
        text.push_str(&format!("\n{}{codes}\n", out.bold(&heading)));
        for paragraph in paragraphs.lines() {
            text.push_str(&format!("\n{paragraph}\n"));
        }
    }
    text
}

/// `a`, `a and b`, `a, b and c`.
fn english_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A `cairn.rules/1` record (tools.md §3.5). Which of `asked`, `code` and `always` it has says
/// what was asked: nothing (the list), a card, a code, or a program.
#[derive(Serialize)]
struct RulesRecord<'a> {
    schema: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    asked: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    /// The cards every program gets, which a program's answer leaves out of `cards`.
    #[serde(skip_serializing_if = "Option::is_none")]
    always: Option<&'static [&'static str]>,
    cards: Vec<CardRecord>,
}

/// One card of a record: in the list with its selection words, otherwise with its text.
#[derive(Serialize)]
struct CardRecord {
    name: &'static str,
    kind: &'static str,
    /// Sorted.
    codes: Vec<&'static str>,
    /// Sorted; the list only.
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

impl CardRecord {
    /// The card's name, kind and codes, with neither words nor text yet.
    fn of(card: &CardEntry) -> CardRecord {
        let mut codes = card.codes.clone();
        codes.sort_unstable();
        CardRecord { name: card.name, kind: card.kind.as_str(), codes, words: None, text: None }
    }
}
