//! The parallel regions of a function as tools show them (language §24; protocol §7.3): each
//! `parallel` statement with a stable id `<function>@<8 hex>`, the first eight hex digits of the
//! SHA-256 of the region's significant tokens (`compact_text`, so the id survives edits elsewhere, comments and
//! reformatting; a second region of the same text gets `.2`, and so on), its kind (`device` when its
//! lanes are device lanes, language §36, else `host`), its binder, its count as written, and where it starts.

use std::sync::Arc;

use cairn_syntax::TextSize;
use sha2::{Digest, Sha256};

use crate::body::{Expr, Stmt, StmtId, fn_body, fn_source_map};
use crate::db::Db;
use crate::input::Item;

/// One region.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegionFact {
    pub stmt: StmtId,
    /// `<function>@<8 hex syntax digest>`.
    pub id: Arc<str>,
    /// `"device"` when its lanes are device lanes (they index `@device` memory or call a
    /// `kernel fn`), else `"host"`.
    pub kind: &'static str,
    pub binder: Arc<str>,
    /// The iteration count as written (significant tokens).
    pub count: Arc<str>,
    /// Where the statement starts, relative to the declaration.
    pub offset: TextSize,
}

/// The regions of `function`, in source order.
#[salsa::tracked(returns(ref))]
pub fn fn_regions(db: &dyn Db, function: Item) -> Arc<[RegionFact]> {
    let body = fn_body(db, function);
    let map = fn_source_map(db, function);
    let root = function.syntax(db).syntax_node();
    let name = crate::scope::Resolver::new(db).full_name(function);
    let check = crate::requested::representative_check(db, function);
    let mut out: Vec<RegionFact> = Vec::new();
    let mut bases: Vec<String> = Vec::new();
    for (index, stmt) in body.stmts.iter().enumerate() {
        let Stmt::Parallel { binder, count, .. } = stmt else { continue };
        let Some(&range) = map.stmts.get(index) else { continue };
        let text = |range: cairn_syntax::TextRange| -> String {
            let element = root.covering_element(range);
            match element.as_node() {
                Some(node) => cairn_syntax::compact_text(node),
                None => element.as_token().map(|t| t.text().to_string()).unwrap_or_default(),
            }
        };
        let hash = Sha256::digest(text(range).as_bytes());
        let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let base = format!("{name}@{hex}");
        let same = bases.iter().filter(|b| **b == base).count();
        let id = if same > 0 { format!("{base}.{}", same + 1) } else { base.clone() };
        bases.push(base);
        let count_text = match map.exprs.get(count.0 as usize) {
            Some(&r) if !matches!(body.expr(*count), Expr::Missing) => text(r),
            _ => String::new(),
        };
        out.push(RegionFact {
            stmt: StmtId(index as u32),
            id: Arc::from(id),
            kind: if check.region(StmtId(index as u32)).is_some_and(|r| r.device) { "device" } else { "host" },
            binder: body.binder(*binder).clone(),
            count: Arc::from(count_text),
            offset: range.start(),
        });
    }
    Arc::from(out)
}
