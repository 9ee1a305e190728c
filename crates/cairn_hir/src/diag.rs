//! Refusals as query results: a code, a message, details, and an anchor instead of a position.
//!
//! Anchors name what the refusal is about (a body's expression, statement or binder, or the
//! declaration itself); `report` turns them into file, line and column at the boundary. Body
//! anchors hold ids, never ranges, so a body's check stays equal when text only moves.

use std::sync::Arc;

use cairn_syntax::TextRange;

use crate::body::{ArmId, BinderId, ExprId, StmtId};

/// What a refusal points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The declaration's first token (`pub` included).
    Item,
    /// A range inside the declaration, relative to its start (declarations other than bodies).
    Range(TextRange),
    Expr(ExprId),
    Stmt(StmtId),
    Binder(BinderId),
    /// A `match` arm (its variant).
    Arm(ArmId),
}

/// A second place a refusal's rule involves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Related {
    /// The declaration it lies in, when not the refused one.
    pub item: Option<crate::input::Item>,
    pub anchor: Anchor,
    pub label: &'static str,
}

/// A detail value attached to a refusal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Detail {
    Text(Arc<str>),
    List(Arc<[Arc<str>]>),
    Null,
}

/// One refusal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diag {
    pub code: &'static str,
    pub message: Arc<str>,
    pub anchor: Anchor,
    pub details: Arc<[(&'static str, Detail)]>,
    /// A hint computed where the rule was checked (it outranks the static one).
    pub hint: Option<Arc<str>>,
    /// A second place the rule involves, with what happened there ("moved here"): reported as
    /// the `related` detail, shown as a secondary label.
    pub related: Option<Related>,
}

impl Diag {
    pub fn new(code: &'static str, message: impl Into<String>, anchor: Anchor) -> Diag {
        Diag {
            code,
            message: Arc::from(message.into()),
            anchor,
            details: Arc::from(Vec::new()),
            hint: None,
            related: None,
        }
    }

    /// A second place inside the refused declaration.
    pub fn with_related(mut self, anchor: Anchor, label: &'static str) -> Diag {
        self.related = Some(Related { item: None, anchor, label });
        self
    }

    /// A second place in another declaration (`item`'s first token, or `anchor` inside it).
    pub fn with_related_in(mut self, item: crate::input::Item, anchor: Anchor, label: &'static str) -> Diag {
        self.related = Some(Related { item: Some(item), anchor, label });
        self
    }

    pub fn with_details(mut self, details: Vec<(&'static str, Detail)>) -> Diag {
        self.details = Arc::from(details);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diag {
        self.hint = Some(Arc::from(hint.into()));
        self
    }
}

/// A detail naming a type.
pub fn text(value: impl std::fmt::Display) -> Detail {
    Detail::Text(Arc::from(value.to_string()))
}

/// A detail listing names.
pub fn list<I: IntoIterator<Item = S>, S: AsRef<str>>(items: I) -> Detail {
    Detail::List(items.into_iter().map(|s| Arc::from(s.as_ref())).collect())
}

/// Names similar to `name` (at most two), for hints.
pub(crate) fn close_matches(name: &str, candidates: &[Arc<str>]) -> Vec<String> {
    let mut scored: Vec<(f64, &Arc<str>)> = candidates
        .iter()
        .filter(|c| &***c != name)
        .map(|c| (similarity(name, c), c))
        .filter(|(s, _)| *s >= 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.1.cmp(b.1)));
    // A name listed twice (a root function's full and local name are one string) counts once.
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(2).map(|(_, c)| c.to_string()).collect()
}

/// A ratio of matching characters in the spirit of difflib's: 2·M / (|a| + |b|), M from the
/// longest common subsequence.
fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in 0..a.len() {
        for j in 0..b.len() {
            table[i + 1][j + 1] = if a[i] == b[j] { table[i][j] + 1 } else { table[i][j + 1].max(table[i + 1][j]) };
        }
    }
    2.0 * table[a.len()][b.len()] as f64 / (a.len() + b.len()) as f64
}
