//! The terminal rendering of diagnostic records (tools.md §1.5).
//!
//! The layout is pinned by the original's terminal tests, so it is written out here rather than
//! delegated to a snippet renderer whose layout differs (annotate-snippets and codespan indent
//! `-->` by the gutter width and print label text after the carets; the CAIRN layout does
//! neither). Rendering reads only the record and a way to fetch a source line, so what a person
//! sees is exactly what the JSON says.

use serde_json::{Map, Value};

/// Fetches the text of `line` (1-based) of `file` (`None`: the program's only file).
pub type SourceLines<'a> = dyn Fn(Option<&str>, u32) -> Option<String> + 'a;

/// Keys shown in the header or nowhere.
const HEADER_KEYS: &[&str] = &["protocol", "status", "code", "message", "line", "column", "trust", "file", "module"];
/// Keys that tally the check rather than describe one refusal.
const TALLY_KEYS: &[&str] = &["further", "further_omitted", "not_judged", "further_stopped"];
/// Keys taught elsewhere (hint, card) or only meant for models.
const TAUGHT_KEYS: &[&str] = &[
    "repair_hint",
    "card",
    "source_line",
    "available_names",
    "available_variants",
    "available_fields",
    "automatic_edit",
    "acceptance_boundary",
    "in",
];

/// Colour on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    On,
    Off,
}

struct Painter(Color);

impl Painter {
    fn paint(&self, text: &str, style: &str) -> String {
        match self.0 {
            Color::On => format!("\x1b[{style}m{text}\x1b[0m"),
            Color::Off => text.to_string(),
        }
    }
}

/// Renders a whole refusal record (the first diagnostic, each `further` one, then the tally line)
/// as it is written to standard error.
pub fn render_refusal(record: &Map<String, Value>, lines: &SourceLines<'_>, color: Color) -> String {
    let mut out = String::new();
    render_one(&mut out, record, lines, color);
    let further = record.get("further").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for entry in further {
        if let Value::Object(entry) = entry {
            out.push('\n');
            render_one(&mut out, entry, lines, color);
        }
    }
    let omitted = count(record, "further_omitted");
    let not_judged = count(record, "not_judged");
    let stopped = record.get("further_stopped").and_then(Value::as_str);
    let total = 1 + further.len() as u64 + omitted;
    if total > 1 || not_judged > 0 || stopped.is_some() {
        let painter = Painter(color);
        let mut parts = vec![plural(total, "refusal")];
        if omitted > 0 {
            parts.push(format!("{omitted} not shown"));
        }
        if not_judged > 0 {
            parts.push(format!("{} not judged", plural(not_judged, "function")));
        }
        if let Some(stopped) = stopped {
            parts.push(format!("the check stopped early ({stopped})"));
        }
        out.push('\n');
        out.push_str(&painter.paint("error", "1;31"));
        out.push_str(&format!(": {}\n", parts.join(", ")));
    }
    out
}

/// Renders one diagnostic or environment record (no tally).
pub fn render_one(out: &mut String, record: &Map<String, Value>, lines: &SourceLines<'_>, color: Color) {
    let painter = Painter(color);
    let word = if record.get("status").and_then(Value::as_str) == Some("unknown") { "unknown" } else { "error" };
    let code = record.get("code").and_then(Value::as_str).unwrap_or("E-UNKNOWN");
    let message = record.get("message").and_then(Value::as_str).unwrap_or("");
    out.push_str(&painter.paint(&format!("{word}[{code}]"), "1;31"));
    out.push_str(&painter.paint(&format!(": {message}"), "1"));
    out.push('\n');

    let line = count(record, "line") as u32;
    let column = count(record, "column") as u32;
    let file = record.get("file").and_then(Value::as_str);
    // Everything below the header lines up with the gutter's bar, however wide the line number.
    let gutter = " ".repeat(if line > 0 { line.to_string().len() } else { 1 });
    let indent = format!("{gutter} ");
    if file.is_some() || line > 0 {
        let position = if line > 0 { format!(":{line}:{column}") } else { String::new() };
        out.push_str(&format!("{indent}{} {}{position}\n", painter.paint("-->", "1;34"), file.unwrap_or("")));
    }
    if line > 0
        && let Some(text) = lines(file, line)
    {
        let text = text.trim_end();
        // Tabs are shown as four spaces, and the carets placed under what the reader sees.
        let shown: String = text.chars().map(|c| if c == '\t' { "    ".to_string() } else { c.to_string() }).collect();
        let before: usize =
            text.chars().take(column.saturating_sub(1) as usize).map(|c| if c == '\t' { 4 } else { 1 }).sum();
        let marks = format!("{}{}", " ".repeat(before), "^".repeat(caret_width(text, column)));
        out.push_str(&painter.paint(&format!("{gutter} |"), "1;34"));
        out.push('\n');
        out.push_str(&painter.paint(&format!("{line} |"), "1;34"));
        out.push_str(&format!(" {shown}\n"));
        out.push_str(&painter.paint(&format!("{gutter} |"), "1;34"));
        out.push_str(&format!(" {}\n", painter.paint(&marks, "1;31")));
    }

    for (key, value) in record {
        if HEADER_KEYS.contains(&key.as_str())
            || TALLY_KEYS.contains(&key.as_str())
            || TAUGHT_KEYS.contains(&key.as_str())
        {
            continue;
        }
        let shown = match value {
            Value::Null => continue,
            Value::String(text) if text.is_empty() => continue,
            Value::Array(items) if items.is_empty() => continue,
            Value::String(text) => text.clone(),
            Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
            other => other.to_string(),
        };
        if message.contains(&shown) {
            continue;
        }
        out.push_str(&format!("{indent}{}: {}: {shown}\n", painter.paint("= note", "1;36"), key.replace('_', " ")));
    }
    if let Some(hint) = record.get("repair_hint").and_then(Value::as_str)
        && !hint.is_empty()
    {
        out.push_str(&format!("{indent}{}: {}\n", painter.paint("= help", "1;36"), lower_first(hint)));
    }
    if let Some(card) = record.get("card").and_then(Value::as_str) {
        out.push_str(&format!(
            "{indent}{}: this rule belongs to the `{card}` card; `cairn rules {code}` prints it\n",
            painter.paint("= note", "1;36")
        ));
    }
}

/// The width of the underline: the length, in characters, of the token that starts at `column`.
fn caret_width(text: &str, column: u32) -> usize {
    let skip = column.saturating_sub(1) as usize;
    let Some((byte_offset, _)) = text.char_indices().nth(skip) else {
        return 1;
    };
    match cairn_syntax::first_token(&text[byte_offset..]) {
        Some((kind, len)) if kind != cairn_syntax::SyntaxKind::WHITESPACE => {
            text[byte_offset..byte_offset + len].chars().count().max(1)
        }
        _ => 1,
    }
}

fn count(record: &Map<String, Value>, key: &str) -> u64 {
    record.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn plural(n: u64, noun: &str) -> String {
    if n == 1 { format!("{n} {noun}") } else { format!("{n} {noun}s") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{environment_record, refusal_record};
    use crate::{Diagnostic, LineColumn, Refusal};

    fn source(_file: Option<&str>, line: u32) -> Option<String> {
        let text = "fn main() -> i32 {\n  let x = 1\n  return 0;\n}\n";
        text.lines().nth(line as usize - 1).map(str::to_string)
    }

    #[test]
    fn one_refusal_renders_with_excerpt_hint_and_card() {
        let mut diagnostic = Diagnostic::new("E-PARSE", "Expected `;` here, found the reserved word `return`.")
            .at(Some("main.cairn".into()), LineColumn { line: 3, column: 3 });
        diagnostic.repair_hint = Some("Write CAIRN's grammar.".into());
        let refusal = Refusal::from_diagnostics(vec![diagnostic]).expect("one");
        let text = render_refusal(&refusal_record(&refusal), &source, Color::Off);
        insta::assert_snapshot!(text, @r"
        error[E-PARSE]: Expected `;` here, found the reserved word `return`.
          --> main.cairn:3:3
          |
        3 |   return 0;
          |   ^^^^^^
          = help: write CAIRN's grammar.
          = note: this rule belongs to the `base` card; `cairn rules E-PARSE` prints it
        ");
    }

    #[test]
    fn several_refusals_end_with_a_tally() {
        let a = Diagnostic::new("E-PARSE", "First.").at(Some("m.cairn".into()), LineColumn { line: 2, column: 12 });
        let b = Diagnostic::new("E-DEPTH", "Second.").at(Some("m.cairn".into()), LineColumn { line: 1, column: 1 });
        let refusal = Refusal::from_diagnostics(vec![a, b]).expect("two");
        let text = render_refusal(&refusal_record(&refusal), &source, Color::Off);
        insta::assert_snapshot!(text, @r"
        error[E-PARSE]: First.
          --> m.cairn:2:12
          |
        2 |   let x = 1
          |            ^
          = note: this rule belongs to the `base` card; `cairn rules E-PARSE` prints it

        error[E-DEPTH]: Second.
          --> m.cairn:1:1
          |
        1 | fn main() -> i32 {
          | ^^
          = note: this rule belongs to the `limits` card; `cairn rules E-DEPTH` prints it

        error: 2 refusals
        ");
    }

    #[test]
    fn a_wide_line_number_and_tabs_keep_every_mark_in_line() {
        let source =
            |_: Option<&str>, line: u32| -> Option<String> { (line == 12).then(|| "\tlet\ta3 = 2;".to_string()) };
        let mut diagnostic = Diagnostic::new("E-IMMUTABLE", "a3 is not a mutable local.")
            .at(Some("far.cairn".into()), LineColumn { line: 12, column: 6 });
        diagnostic.repair_hint = Some("Declare it `let mut a3`.".into());
        let refusal = Refusal::from_diagnostics(vec![diagnostic]).expect("one");
        let text = render_refusal(&refusal_record(&refusal), &source, Color::Off);
        insta::assert_snapshot!(text, @r"
        error[E-IMMUTABLE]: a3 is not a mutable local.
           --> far.cairn:12:6
           |
        12 |     let    a3 = 2;
           |            ^^
           = help: declare it `let mut a3`.
           = note: this rule belongs to the `base` card; `cairn rules E-IMMUTABLE` prints it
        ");
    }

    #[test]
    fn environment_records_render_without_position() {
        let mut out = String::new();
        render_one(&mut out, &environment_record("There is no cairn.toml in `app`."), &source, Color::Off);
        insta::assert_snapshot!(out, @r"
        unknown[E-PROJECT-OR-ENVIRONMENT]: There is no cairn.toml in `app`.
          = note: this rule belongs to the `commands` card; `cairn rules E-PROJECT-OR-ENVIRONMENT` prints it
        ");
    }
}
