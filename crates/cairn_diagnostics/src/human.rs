//! The terminal rendering of diagnostic records (tools.md §1.5), through annotate-snippets: the
//! header `error[E-CODE]: message`, the position, the source line with the carets under the
//! culprit token (tabs shown as four spaces, the gutter as wide as the line number), then the
//! record's other details as `= note` lines, the hint as `= help` and the owning card. Rendering
//! reads only the record and a way to fetch a source line, so what a person sees is exactly what
//! the JSON says.

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use serde_json::{Map, Value};

/// Fetches the text of `line` (1-based) of `file` (`None`: the program's only file).
pub type SourceLines<'a> = dyn Fn(Option<&str>, u32) -> Option<String> + 'a;

/// Keys shown in the header or nowhere.
const HEADER_KEYS: &[&str] =
    &["protocol", "status", "code", "message", "line", "column", "trust", "file", "module", "related"];
/// How many lines apart a related place may be and still share the culprit's excerpt.
const EXCERPT_SPAN: u32 = 12;
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

impl Color {
    fn renderer(self) -> Renderer {
        match self {
            Color::On => Renderer::styled(),
            Color::Off => Renderer::plain(),
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
        let tally = [Group::with_title(Level::ERROR.primary_title(parts.join(", ")))];
        out.push_str(&color.renderer().render(&tally));
        out.push('\n');
    }
    out
}

/// Renders one diagnostic or environment record (no tally).
pub fn render_one(out: &mut String, record: &Map<String, Value>, lines: &SourceLines<'_>, color: Color) {
    let unknown = record.get("status").and_then(Value::as_str) == Some("unknown");
    let code = record.get("code").and_then(Value::as_str).unwrap_or("E-UNKNOWN");
    let message = record.get("message").and_then(Value::as_str).unwrap_or("");
    let level = if unknown { Level::ERROR.with_name("unknown") } else { Level::ERROR };
    let mut group = Group::with_title(level.primary_title(message).id(code));

    let line = count(record, "line") as u32;
    let column = count(record, "column") as u32;
    let file = record.get("file").and_then(Value::as_str);
    let text = if line > 0 { lines(file, line).map(|t| t.trim_end().to_string()) } else { None };
    match &text {
        // The source from the first place to the last: carets under the culprit token, and a
        // secondary label under each related place (a place far away gets its own excerpt).
        Some(_) => {
            // The `related` detail (see `RelatedPlace`), read in place so the labels borrow the record.
            let related = record.get("related").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            let mut places = vec![(line, column, None)];
            let mut elsewhere = Vec::new();
            for r in related {
                let (Some(place), Some(label)) = (r.as_object(), r.get("label").and_then(Value::as_str)) else {
                    continue;
                };
                let at = count(place, "line") as u32;
                let there = place.get("file").and_then(Value::as_str);
                match there {
                    _ if at == 0 => {}
                    Some(other) if Some(other) != file => {
                        elsewhere.push((other, (at, count(place, "column") as u32, Some(label))))
                    }
                    _ => places.push((at, count(place, "column") as u32, Some(label))),
                }
            }
            let near: Vec<_> = places.iter().copied().filter(|(l, ..)| l.abs_diff(line) <= EXCERPT_SPAN).collect();
            group = group.element(excerpt(&near, file, lines));
            for place in places.iter().filter(|(l, ..)| l.abs_diff(line) > EXCERPT_SPAN) {
                group = group.element(excerpt(&[*place], file, lines));
            }
            // A place in another file: an excerpt of that file.
            for (other, place) in elsewhere {
                group = group.element(excerpt(&[place], Some(other), lines));
            }
        }
        // A position without its text: where, only.
        None if file.is_some() => {
            let mut origin = Origin::path(file.unwrap_or_default());
            if line > 0 {
                origin = origin.line(line as usize).char_column(column.max(1) as usize);
            }
            group = group.element(origin);
        }
        None => {}
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
        group = group.element(Level::NOTE.message(format!("{}: {shown}", key.replace('_', " "))));
    }
    if let Some(hint) = record.get("repair_hint").and_then(Value::as_str)
        && !hint.is_empty()
    {
        group = group.element(Level::HELP.message(lower_first(hint)));
    }
    if let Some(card) = record.get("card").and_then(Value::as_str) {
        group = group.element(
            Level::NOTE.message(format!("this rule belongs to the `{card}` card; `cairn rules {code}` prints it")),
        );
    }
    out.push_str(&color.renderer().render(&[group]));
    out.push('\n');
}

/// The width of the underline: the length, in characters, of the token that starts at `column`.
/// One excerpt of `file` covering `places` (line, column, label: `None` for the culprit, whose
/// carets are primary), the lines between them included (the renderer folds long stretches).
fn excerpt<'a>(
    places: &[(u32, u32, Option<&'a str>)],
    file: Option<&'a str>,
    lines: &SourceLines<'_>,
) -> Snippet<'a, annotate_snippets::Annotation<'a>> {
    let first = places.iter().map(|p| p.0).min().unwrap_or(1);
    let last = places.iter().map(|p| p.0).max().unwrap_or(first);
    let mut source = String::new();
    let mut starts = Vec::new();
    for number in first..=last {
        starts.push(source.len());
        source.push_str(lines(file, number).unwrap_or_default().trim_end());
        source.push('\n');
    }
    let mut annotations = Vec::new();
    for &(number, column, label) in places {
        let base = starts[(number - first) as usize];
        let text = source[base..].lines().next().unwrap_or("");
        let start = text.char_indices().nth(column.saturating_sub(1) as usize).map_or(text.len(), |(at, _)| at);
        let width: usize = text[start..].chars().take(caret_width(text, column)).map(char::len_utf8).sum();
        let span = base + start..base + start + width;
        annotations.push(match label {
            None => AnnotationKind::Primary.span(span),
            Some(label) => AnnotationKind::Context.span(span).label(label),
        });
    }
    let mut snippet = Snippet::source(source).line_start(first as usize).fold(true).annotations(annotations);
    if let Some(file) = file {
        snippet = snippet.path(file);
    }
    snippet
}

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
          |
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
          |
          = note: this rule belongs to the `base` card; `cairn rules E-PARSE` prints it

        error[E-DEPTH]: Second.
         --> m.cairn:1:1
          |
        1 | fn main() -> i32 {
          | ^^
          |
          = note: this rule belongs to the `limits` card; `cairn rules E-DEPTH` prints it

        error: 2 refusals
        ");
    }

    #[test]
    fn a_related_place_is_a_secondary_label_near_by_or_in_an_excerpt_of_its_own() {
        let source = |_: Option<&str>, line: u32| -> Option<String> {
            Some(match line {
                2 => "  let total = consume(b);".to_string(),
                3 => "  println(total);".to_string(),
                4 => "  println(len(b));".to_string(),
                40 => "  let late = b;".to_string(),
                n => format!("  // line {n}"),
            })
        };
        let near = Diagnostic::new("E-MOVED", "b was moved before this use.")
            .at(Some("m.cairn".into()), LineColumn { line: 4, column: 15 })
            .with_related(LineColumn { line: 2, column: 23 }, "moved here");
        let far = Diagnostic::new("E-MOVED", "b was moved before this use.")
            .at(Some("m.cairn".into()), LineColumn { line: 4, column: 15 })
            .with_related(LineColumn { line: 40, column: 14 }, "moved here");
        let refusal = Refusal::from_diagnostics(vec![near, far]).expect("two");
        let text = render_refusal(&refusal_record(&refusal), &source, Color::Off);
        insta::assert_snapshot!(text, @r"
        error[E-MOVED]: b was moved before this use.
         --> m.cairn:4:15
          |
        2 |   let total = consume(b);
          |                       - moved here
        3 |   println(total);
        4 |   println(len(b));
          |               ^
          |
          = note: this rule belongs to the `owners` card; `cairn rules E-MOVED` prints it

        error[E-MOVED]: b was moved before this use.
          --> m.cairn:4:15
           |
         4 |   println(len(b));
           |               ^
           |
          ::: m.cairn:40:14
           |
        40 |   let late = b;
           |              - moved here
           |
           = note: this rule belongs to the `owners` card; `cairn rules E-MOVED` prints it

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
           |
           = help: declare it `let mut a3`.
           = note: this rule belongs to the `base` card; `cairn rules E-IMMUTABLE` prints it
        ");
    }

    #[test]
    fn a_position_without_its_text_and_wide_characters_before_the_culprit() {
        // The file cannot be read any more: the position alone.
        let none = |_: Option<&str>, _: u32| -> Option<String> { None };
        let diagnostic =
            Diagnostic::new("E-PARSE", "Gone.").at(Some("gone.cairn".into()), LineColumn { line: 7, column: 2 });
        let refusal = Refusal::from_diagnostics(vec![diagnostic]).expect("one");
        let text = render_refusal(&refusal_record(&refusal), &none, Color::Off);
        insta::assert_snapshot!(text, @r"
        error[E-PARSE]: Gone.
        --> gone.cairn:7:2
         = note: this rule belongs to the `base` card; `cairn rules E-PARSE` prints it
        ");
        // Characters of several bytes before the culprit: the carets stay under it.
        let wide = |_: Option<&str>, _: u32| -> Option<String> { Some("  println(\"é€\", badname);".to_string()) };
        let diagnostic =
            Diagnostic::new("E-NAME", "Unknown name.").at(Some("w.cairn".into()), LineColumn { line: 1, column: 17 });
        let refusal = Refusal::from_diagnostics(vec![diagnostic]).expect("one");
        let text = render_refusal(&refusal_record(&refusal), &wide, Color::Off);
        insta::assert_snapshot!(text, @r#"
        error[E-NAME]: Unknown name.
         --> w.cairn:1:17
          |
        1 |   println("é€", badname);
          |                 ^^^^^^^
          |
          = note: this rule belongs to the `base` card; `cairn rules E-NAME` prints it
        "#);
    }

    #[test]
    fn environment_records_render_without_position() {
        let mut out = String::new();
        render_one(&mut out, &environment_record("There is no cairn.toml in `app`."), &source, Color::Off);
        insta::assert_snapshot!(out, @r"
        unknown[E-PROJECT-OR-ENVIRONMENT]: There is no cairn.toml in `app`.
         |
         = note: this rule belongs to the `commands` card; `cairn rules E-PROJECT-OR-ENVIRONMENT` prints it
        ");
    }
}
