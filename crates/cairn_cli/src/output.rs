//! How commands print: the output mode, colour, and the JSON and human renderings of records.
//!
//! Mode: `--format` if given, else `CAIRN_FORMAT`, else human when standard output is a
//! terminal and JSON otherwise (tools.md §1.2). A JSON record is one compact line, or indented by
//! two spaces when a terminal asked for JSON. Colour only on a terminal and without `NO_COLOR`.
//!
//! Invariant: every record this crate builds is a `#[derive(Serialize)]` type whose fields are
//! its keys in order (serde_json keeps insertion order in this workspace); [`to_map`] is the one
//! conversion of such a record into the JSON map the printers take. Records built elsewhere (the
//! agent's states, packets and find answers, the diagnostics crate's refusals) arrive as maps.

use std::io::{IsTerminal, Write};

use cairn_diagnostics::human::{self, Color};
use cairn_diagnostics::record;
use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatChoice {
    Human,
    Json,
}

/// Where and how a command writes.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub format: FormatChoice,
    stdout_terminal: bool,
    stderr_color: Color,
    stdout_color: Color,
}

impl Output {
    pub fn choose(flag: Option<FormatChoice>) -> Output {
        let stdout_terminal = std::io::stdout().is_terminal();
        let format = flag
            .or_else(|| match std::env::var("CAIRN_FORMAT").ok().as_deref() {
                Some("json") => Some(FormatChoice::Json),
                Some("human") => Some(FormatChoice::Human),
                _ => None,
            })
            .unwrap_or(if stdout_terminal { FormatChoice::Human } else { FormatChoice::Json });
        let no_color = std::env::var_os("NO_COLOR").is_some();
        let color = |terminal: bool| {
            if terminal && !no_color { Color::On } else { Color::Off }
        };
        Output {
            format,
            stdout_terminal,
            stderr_color: color(std::io::stderr().is_terminal()),
            stdout_color: color(stdout_terminal),
        }
    }

    /// The same mode, but every JSON record on one compact line even at a terminal (JSON Lines,
    /// for `--watch`).
    pub fn lines(self) -> Output {
        Output { stdout_terminal: false, ..self }
    }

    /// Prints a record as JSON on standard output.
    pub fn json(&self, record: &Map<String, Value>) {
        let text = record::to_json_text(record, self.stdout_terminal);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
    }

    /// Prints a refusal: the record in JSON mode, the rendering on standard error otherwise.
    pub fn refusal(&self, record: &Map<String, Value>, lines: &human::SourceLines<'_>) {
        match self.format {
            FormatChoice::Json => self.json(record),
            FormatChoice::Human => {
                let text = human::render_refusal(record, lines, self.stderr_color);
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
        }
    }

    /// Prints an environment record (exit 2 follows).
    pub fn environment(&self, message: &str) {
        let record = record::environment_record(message);
        match self.format {
            FormatChoice::Json => self.json(&record),
            FormatChoice::Human => {
                let mut text = String::new();
                human::render_one(&mut text, &record, &|_, _| None, self.stderr_color);
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
        }
    }

    /// Writes text meant for a person on standard output, as it is.
    pub fn text(&self, text: &str) {
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }

    /// `text` in bold when standard output shows colour.
    pub fn bold(&self, text: &str) -> String {
        match self.stdout_color {
            Color::On => format!("\x1b[1m{text}\x1b[0m"),
            Color::Off => text.to_string(),
        }
    }

    /// Prints a one-line summary `<status>: <detail>` (human) or the record (JSON).
    pub fn summary(&self, record: &Map<String, Value>, good: bool, detail: &str) {
        match self.format {
            FormatChoice::Json => self.json(record),
            FormatChoice::Human => {
                let status = record.get("status").and_then(Value::as_str).unwrap_or("");
                let style = if good { "1;32" } else { "1;31" };
                let status = match self.stdout_color {
                    Color::On => format!("\x1b[{style}m{status}\x1b[0m"),
                    Color::Off => status.to_string(),
                };
                let line = if detail.is_empty() { status } else { format!("{status}: {detail}") };
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
        }
    }
}

/// The JSON object of a record. Every record type of this crate serializes to an object, so the
/// empty fallback is never taken.
pub fn to_map<T: Serialize>(record: &T) -> Map<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

pub use cairn_agent::named::Named;
