//! Hostile variants of well-formed text, for the servers' robustness tests and fuzz targets:
//! a seed and a valid message (JSON-RPC, a CAIRN program) give one mutated text, forever.
//!
//! The mutations are the review's (issue 11): truncation, junk bytes, duplicated keys, deep
//! nesting of brackets, long postfix chains, huge strings, numbers and types swapped, and
//! pieces of other messages spliced in. Output is not always UTF-8-clean JSON; that is the
//! point.

use crate::Rng;

/// One mutation of `text`, picked by `rng`; `others` are texts whose pieces may be spliced in.
pub fn mutate(rng: &mut Rng, text: &str, others: &[&str]) -> String {
    let mut text = text.to_string();
    for _ in 0..=rng.below(3) {
        text = match rng.below(12) {
            0 => {
                let cut = rng.below(text.len() as u64 + 1) as usize;
                let cut = floor_boundary(&text, cut);
                text[..cut].to_string()
            }
            1 => insert(rng, &text, &["\u{0}", "\u{feff}", "\\", "\"", "}", "]", ",", "\u{10ffff}", "\n"]),
            2 => duplicate_key(rng, &text),
            3 => {
                let depth = rng.below(5000) as usize;
                insert_owned(rng, &text, format!("{}1{}", "[".repeat(depth), "]".repeat(depth)))
            }
            4 => {
                let chain = *rng.pick(&["[0]", ".a", ".f()", "(0)"]);
                let links = rng.below(8000) as usize;
                insert_owned(rng, &text, format!("x{}", chain.repeat(links)))
            }
            5 => {
                let length = rng.below(200_000) as usize;
                insert_owned(rng, &text, "a".repeat(length))
            }
            6 => {
                replace_value(rng, &text, &["null", "true", "-1", "1e309", "18446744073709551616", "{}", "[]", "\"\""])
            }
            7 => match others.is_empty() {
                true => text,
                false => {
                    let other = *rng.pick(others);
                    let at = floor_boundary(other, rng.below(other.len() as u64 + 1) as usize);
                    insert_owned(rng, &text, other[at..].to_string())
                }
            },
            8 => text.replace("\"id\":", "\"id\":{\"a\":").replacen('}', "}}", 1),
            9 => {
                let depth = rng.below(3000) as usize;
                insert_owned(rng, &text, "(".repeat(depth))
            }
            10 => text.replace("cairn.edit/2", "cairn.edit/1"),
            _ => insert(rng, &text, &["fn", "{", "}", ";", "=", "let", "return", "match", "'", "\"\\u00"]),
        };
    }
    text
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn insert(rng: &mut Rng, text: &str, pieces: &[&str]) -> String {
    let piece = (*rng.pick(pieces)).to_string();
    insert_owned(rng, text, piece)
}

fn insert_owned(rng: &mut Rng, text: &str, piece: String) -> String {
    let at = floor_boundary(text, rng.below(text.len() as u64 + 1) as usize);
    format!("{}{piece}{}", &text[..at], &text[at..])
}

/// Repeats the first `"key":value` pair found after a random point (a duplicate key).
fn duplicate_key(rng: &mut Rng, text: &str) -> String {
    let from = floor_boundary(text, rng.below(text.len() as u64 + 1) as usize);
    let Some(start) = text[from..].find('"').map(|i| i + from) else { return text.to_string() };
    let Some(end) = text[start..].find([',', '}']).map(|i| i + start) else { return text.to_string() };
    if !text[start..end].contains(':') {
        return text.to_string();
    }
    format!("{},{}", &text[..end], &text[start..])
}

/// Replaces the value after a random `:` with one of `values`.
fn replace_value(rng: &mut Rng, text: &str, values: &[&str]) -> String {
    let colons: Vec<usize> = text.match_indices(':').map(|(i, _)| i).collect();
    if colons.is_empty() {
        return text.to_string();
    }
    let at = colons[rng.below(colons.len() as u64) as usize] + 1;
    let end = text[at..].find([',', '}', ']']).map_or(text.len(), |i| i + at);
    format!("{}{}{}", &text[..at], rng.pick(values), &text[end..])
}
