//! Word queries: the stems words are compared by, the stop words and the alias table, and the
//! score of each entry.
//!
//! Word queries compare stems: a query word matches a stem of an entry's name (weight 3), module
//! (2) or the first sentence of its comment (1) that it equals or, from three letters on, begins,
//! directly or through the alias table; only the entries matching the most words are listed.

use std::collections::{BTreeMap, BTreeSet};

/// The stem a word is compared by: one suffix of `ing ed es s e` left out when three letters remain.
pub fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s", "e"] {
        if let Some(rest) = word.strip_suffix(suffix)
            && rest.len() >= 3
        {
            return rest;
        }
    }
    word
}

/// Words an agent brings from other languages, and the words of CAIRN's names and comments each
/// stands for (the query word itself always counts too).
pub const ALIASES: &[(&str, &str)] = &[
    ("integer", "i64 u64 usize decimal"),
    ("int", "i64 u64 usize"),
    ("number", "i64 u64 f64 integer float"),
    ("string", "text"),
    ("str", "text"),
    ("dict", "map"),
    ("dictionary", "map"),
    ("hashmap", "map"),
    ("thread", "spawn task group"),
    ("concurrent", "spawn task group"),
    ("parallel", "spawn group"),
    ("array", "buf vec view"),
    ("list", "vec"),
    ("vector", "vec"),
    ("slice", "view"),
    ("length", "len"),
    ("size", "len count"),
    ("minimum", "min"),
    ("smallest", "min"),
    ("maximum", "max"),
    ("largest", "max"),
    ("cast", "convert u64 i64 usize f64"),
    ("overflow", "wrap"),
    ("modular", "wrap"),
    ("square", "sqrt"),
    ("root", "sqrt"),
    ("absolute", "abs"),
    ("magnitude", "abs"),
    ("round", "floor ceil trunc"),
    ("stdout", "print println"),
    ("console", "print println"),
    ("stderr", "eprint eprintln"),
    ("output", "print write"),
    ("check", "assert"),
    ("verify", "assert"),
    ("optional", "option"),
    ("maybe", "option"),
    ("error", "result err fault"),
    ("exception", "result err fault"),
    ("shift", "shl shr"),
];

/// Words a query and a comment leave out.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "into", "is", "it", "its", "of",
    "on", "one", "or", "the", "this", "that", "to", "what", "which", "with",
];

/// The lower-case words of a text (`[a-z][a-z0-9]*`), without stop words and not yet stemmed.
pub(super) fn raw_words(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut current = String::new();
    for c in lower.chars() {
        if c.is_ascii_lowercase() || (c.is_ascii_digit() && !current.is_empty()) {
            current.push(c);
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.retain(|w| !STOP_WORDS.contains(&w.as_str()));
    out
}

/// Each stem of each text, weighed as the heaviest text that holds it.
pub(super) fn weighed(parts: &[(&str, u32)]) -> BTreeMap<String, u32> {
    let mut words: BTreeMap<String, u32> = BTreeMap::new();
    for (text, weight) in parts {
        for word in raw_words(text) {
            let slot = words.entry(stem(&word).to_string()).or_insert(*weight);
            *slot = (*slot).max(*weight);
        }
    }
    words
}

/// Whether an entry's stem matches one of the forms a query word stands for.
pub(super) fn matches(term: &str, forms: &BTreeSet<String>) -> bool {
    forms.iter().any(|w| term == w || (w.len() >= 3 && term.starts_with(w.as_str())))
}

/// By entry index, (how many query words it matches, how much those matches weigh), for the
/// entries that match the most words; `entries` gives each entry's weighed stems ([`weighed`]). Each query word takes the heaviest stem that no earlier
/// word took, so one stem never counts twice.
pub(super) fn worded<'a>(
    entries: impl Iterator<Item = &'a BTreeMap<String, u32>>,
    words: &str,
) -> BTreeMap<usize, (usize, u32)> {
    let wanted: Vec<BTreeSet<String>> = raw_words(words)
        .into_iter()
        .map(|word| {
            let mut forms: BTreeSet<String> = BTreeSet::new();
            forms.insert(stem(&word).to_string());
            if let Some((_, more)) = ALIASES.iter().find(|(key, _)| *key == word) {
                forms.extend(more.split_whitespace().map(|w| stem(w).to_string()));
            }
            forms
        })
        .collect();
    let mut scores: BTreeMap<usize, (usize, u32)> = BTreeMap::new();
    for (index, stems) in entries.enumerate() {
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        let mut weight = 0;
        for forms in &wanted {
            let found = stems
                .iter()
                .filter(|(term, _)| !taken.contains(term.as_str()) && matches(term, forms))
                .max_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)));
            if let Some((term, w)) = found {
                taken.insert(term.as_str());
                weight += w;
            }
        }
        if !taken.is_empty() {
            scores.insert(index, (taken.len(), weight));
        }
    }
    let most = scores.values().map(|(matched, _)| *matched).max().unwrap_or(0);
    scores.retain(|_, (matched, _)| *matched == most);
    scores
}
