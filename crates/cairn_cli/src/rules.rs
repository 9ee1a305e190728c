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
use serde_json::{Map, Value, json};

use crate::output::{FormatChoice, Output};

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
fn list_record() -> Map<String, Value> {
    let listed: Vec<Value> = cards()
        .iter()
        .map(|card| {
            let mut words = card.words.clone();
            words.sort_unstable();
            let mut entry = Map::new();
            entry.insert("name".into(), json!(card.name));
            entry.insert("kind".into(), json!(card.kind.as_str()));
            entry.insert("codes".into(), json!(sorted_codes(card)));
            entry.insert("words".into(), json!(words));
            Value::Object(entry)
        })
        .collect();
    let mut record = Map::new();
    record.insert("schema".into(), json!(SCHEMA));
    record.insert("cards".into(), Value::Array(listed));
    record
}

/// A card asked by name: its text as written.
fn card_record(asked: &str, card: &CardEntry) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("schema".into(), json!(SCHEMA));
    record.insert("asked".into(), json!(asked));
    record.insert("cards".into(), json!([card_entry(card, &card.text())]));
    record
}

/// A code: its owning card, led by the sentences that name the code.
fn code_record(asked: &str, card: &CardEntry, code: &str) -> Map<String, Value> {
    let text = paragraphs_led_by(card, code).join("\n");
    let mut record = Map::new();
    record.insert("schema".into(), json!(SCHEMA));
    record.insert("asked".into(), json!(asked));
    record.insert("code".into(), json!(code));
    record.insert("cards".into(), json!([card_entry(card, &text)]));
    record
}

/// A program: the cards its tokens select beyond the core, which is named under `always`.
fn program_record(asked: &str, selected: &[&'static CardEntry]) -> Map<String, Value> {
    let beyond: Vec<Value> =
        selected.iter().filter(|card| !CORE.contains(&card.name)).map(|card| card_entry(card, &card.text())).collect();
    let mut record = Map::new();
    record.insert("schema".into(), json!(SCHEMA));
    record.insert("asked".into(), json!(asked));
    record.insert("always".into(), json!(CORE));
    record.insert("cards".into(), Value::Array(beyond));
    record
}

fn card_entry(card: &CardEntry, text: &str) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(card.name));
    entry.insert("kind".into(), json!(card.kind.as_str()));
    entry.insert("codes".into(), json!(sorted_codes(card)));
    entry.insert("text".into(), json!(text));
    Value::Object(entry)
}

fn sorted_codes(card: &CardEntry) -> Vec<&'static str> {
    let mut codes = card.codes.clone();
    codes.sort_unstable();
    codes
}

/// The `E-RULE` refusal: a diagnostic record of the tool card `commands`, with no position and,
/// outside a host, no repair hint.
fn refuse(message: &str, out: Output) -> u8 {
    out.refusal(&diagnostic_record(&Diagnostic::new("E-RULE", message)), &|_, _| None);
    1
}

fn print(record: &Map<String, Value>, out: Output) {
    match out.format {
        FormatChoice::Json => out.json(record),
        FormatChoice::Human => out.text(&human(record, out)),
    }
}

/// The human rendering of a `cairn.rules/1` record: the list as one line a card; otherwise each
/// card under a heading naming it and its codes, each paragraph after a blank line.
fn human(record: &Map<String, Value>, out: Output) -> String {
    let strings = |value: Option<&Value>| -> Vec<String> {
        value.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
    };
    let mut text = String::new();
    if record.contains_key("always") {
        let always = strings(record.get("always"));
        text.push_str(&format!(
            "Every program gets the {} cards; `cairn rules CARD` prints any of them.\n",
            english_list(&always)
        ));
    }
    let code = record.get("code").and_then(Value::as_str);
    for card in record.get("cards").and_then(Value::as_array).into_iter().flatten() {
        let name = card.get("name").and_then(Value::as_str).unwrap_or("");
        let codes = strings(card.get("codes")).join(", ");
        let Some(paragraphs) = card.get("text").and_then(Value::as_str) else {
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
fn english_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
