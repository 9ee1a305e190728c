//! The diagnostic model shared by every CAIRN tool, and its two renderings.
//!
//! A [`Diagnostic`] is a refusal located in a file (line and column already computed: this
//! crate sits at the boundary where ids and byte ranges become positions). [`record`] turns one
//! into the `cairn.diagnostic/2` JSON record of tools.md §1.4, [`human`] renders records the way
//! tools.md §1.5 pins for a terminal, and [`registry`] says which rule card owns each code;
//! [`selection`] says which cards a piece of source selects and [`card_text`] leads a card with
//! the sentences that name one code.
//! Invariant: the human rendering is computed from the JSON record, so both modes always carry
//! the same content.

pub mod card_text;
pub mod hints;
pub mod human;
pub mod line_index;
pub mod record;
pub mod registry;
pub mod selection;
pub mod skill;
pub mod trim;

use serde_json::Value;

pub use line_index::{LineColumn, LineIndex};
pub use registry::{CardEntry, CardKind, card_named, card_of, cards};

/// The constant `trust` of every diagnostic record: acceptance is not a proof.
pub const TRUST: &str = "prototype-not-verified";

/// The protocol string of a diagnostic record.
pub const DIAGNOSTIC_PROTOCOL: &str = "cairn.diagnostic/2";

/// One refusal, located.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The stable code, e.g. `E-PARSE`.
    pub code: String,
    /// One sentence saying which rule broke and, where possible, where the fix goes.
    pub message: String,
    /// The file as the manifest names it.
    pub file: Option<String>,
    /// The module the position is in.
    pub module: Option<String>,
    /// 1-based; 0 when there is no position.
    pub line: u32,
    /// 1-based; 0 when there is no position.
    pub column: u32,
    /// The smallest fix the compiler can state without guessing.
    pub repair_hint: Option<String>,
    /// Rule-specific details (`expected_type`, `available_names`, …), in the order they are shown.
    pub details: Vec<(String, Value)>,
}

/// A second place a rule involves (the `related` detail: a list of these), in the diagnostic's
/// own file: where the value moved, where the name was first bound. Shown as a secondary label.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RelatedPlace {
    /// The file, when it is not the diagnostic's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    pub label: String,
}

impl RelatedPlace {
    /// The places a diagnostic's `related` detail lists (none when it has no such detail).
    pub fn of(diagnostic: &Diagnostic) -> Vec<RelatedPlace> {
        let value = diagnostic.details.iter().find(|(key, _)| key == "related").map(|(_, v)| v.clone());
        value.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()
    }
}

impl Diagnostic {
    /// Adds a second place (the `related` detail) at `position` of the diagnostic's file.
    pub fn with_related(self, position: LineColumn, label: &str) -> Diagnostic {
        self.with_related_in(None, position, label)
    }

    /// Adds a second place at `position` of `file` (`None`: the diagnostic's own file).
    pub fn with_related_in(mut self, file: Option<String>, position: LineColumn, label: &str) -> Diagnostic {
        let place = RelatedPlace { file, line: position.line, column: position.column, label: label.to_string() };
        let value = serde_json::to_value(vec![place]).unwrap_or(Value::Null);
        self.details.push(("related".to_string(), value));
        self
    }

    /// A diagnostic with a code and message and nothing else yet.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code: code.into(),
            message: message.into(),
            file: None,
            module: None,
            line: 0,
            column: 0,
            repair_hint: None,
            details: Vec::new(),
        }
    }

    /// Places the diagnostic at `file`, `line`, `column`.
    pub fn at(mut self, file: Option<String>, position: LineColumn) -> Diagnostic {
        self.file = file;
        self.line = position.line;
        self.column = position.column;
        self
    }

    /// The owning card's name, if a card owns the code.
    pub fn card(&self) -> Option<&'static str> {
        card_of(&self.code).map(|card| card.name)
    }
}

/// The outcome of a check that refused: the first refusal and what else was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// Exactly what a check stopping at the first refusal would report.
    pub first: Diagnostic,
    /// Further independent refusals, in source order, at most [`MAX_FURTHER`].
    pub further: Vec<Diagnostic>,
    /// How many further refusals were left out beyond [`MAX_FURTHER`].
    pub further_omitted: usize,
    /// Functions that got no verdict because of a refusal.
    pub not_judged: usize,
    /// Why the check stopped early, when it did.
    pub further_stopped: Option<String>,
}

/// How many further refusals a record lists.
pub const MAX_FURTHER: usize = 20;

impl Refusal {
    /// Builds a refusal from diagnostics in report order: the first is the main one, the next
    /// [`MAX_FURTHER`] are listed, the rest counted.
    pub fn from_diagnostics(mut diagnostics: Vec<Diagnostic>) -> Option<Refusal> {
        if diagnostics.is_empty() {
            return None;
        }
        let first = diagnostics.remove(0);
        let further_omitted = diagnostics.len().saturating_sub(MAX_FURTHER);
        diagnostics.truncate(MAX_FURTHER);
        Some(Refusal { first, further: diagnostics, further_omitted, not_judged: 0, further_stopped: None })
    }

    /// How many refusals were found in all.
    pub fn total(&self) -> usize {
        1 + self.further.len() + self.further_omitted
    }
}

/// A syntax error of `file` (whose text is `text`) as a located diagnostic with its static hint.
pub fn syntax_diagnostic(
    file: Option<&str>,
    text: &str,
    index: &LineIndex,
    error: &cairn_syntax::SyntaxError,
) -> Diagnostic {
    let position = index.line_column(text, error.range.start());
    let mut diagnostic =
        Diagnostic::new(error.code.as_str(), error.message.clone()).at(file.map(str::to_string), position);
    diagnostic.repair_hint = hints::static_hint(error.code.as_str()).map(str::to_string);
    diagnostic
}
