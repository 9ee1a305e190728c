//! The effect ceiling a query may give: read from `pure`, `effects(pure, alloc)` or `trap, alloc`,
//! and applied to a hit's row as `E-EFFECT-CEILING` judges it, less the footprints of what the call
//! is passed.

use std::collections::BTreeSet;
use std::sync::Arc;

use cairn_diagnostics::Diagnostic;
use cairn_hir::Ceiling;
use cairn_hir::Row;

use super::request;

/// `pure`, `effects(pure, alloc)` or `trap, alloc` as a ceiling.
pub(super) fn parse_ceiling(text: &str) -> Result<Ceiling, Diagnostic> {
    let mut ceiling = Ceiling { pure: false, effects: BTreeSet::new() };
    let mut named = 0;
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.'))) {
        match word {
            "" | "effects" => {}
            "pure" => {
                ceiling.pure = true;
                named += 1;
            }
            other => {
                ceiling.effects.insert(Arc::from(other));
                named += 1;
            }
        }
    }
    if named == 0 {
        return Err(request(format!(
            "The ceiling {text:?} names no effect: write pure, effects(pure, alloc) or a list such as trap, alloc."
        )));
    }
    Ok(ceiling)
}

/// Whether a row stays within a ceiling as `E-EFFECT-CEILING` judges it, less the footprints of
/// what the call is passed; an unknown row never does.
pub(super) fn within(row: Option<&Row>, ceiling: &Ceiling) -> bool {
    row.is_some_and(|row| row.iter().all(|e| ceiling.admits(e) || FOOTPRINTS.iter().any(|p| e.starts_with(p))))
}

/// What a row holds beyond what `pure` admits, sorted.
pub(super) fn beyond(row: Option<&Row>) -> Vec<Arc<str>> {
    let pure = pure_ceiling();
    row.map(|row| row.iter().filter(|e| !pure.admits(e)).cloned().collect()).unwrap_or_default()
}

/// Effects a `pure` row may hold.
fn pure_ceiling() -> Ceiling {
    Ceiling { pure: true, effects: BTreeSet::new() }
}

/// Footprints a ceiling judgement leaves out: reads and writes of what the call is passed.
const FOOTPRINTS: &[&str] = &["read:", "write:", "lane:", "bound:"];
