//! Foreign functions (language §45): `extern ["csym"] fn name(params) [-> T] effects(list);`
//! declares a C symbol with a CAIRN signature and a trusted row. This module answers what every
//! layer asks of such a declaration — is it one ([`is_extern`]), and which C symbol it links to
//! ([`extern_symbol`]) — from its syntax alone. Its row, which stands in for its body's check, is
//! `check/foreign.rs`.

use std::sync::Arc;

use cairn_syntax::{SyntaxKind, ast, ast::AstNode};

use crate::db::Db;
use crate::input::Item;

/// True for a foreign function's declaration. A query of its own, so that what asks it (every
/// body's check) does not read the declaration's text: an edit of a body leaves the answer equal
/// and the asker's memo valid.
pub fn is_extern(db: &dyn Db, item: Item) -> bool {
    *extern_declaration(db, item)
}

#[salsa::tracked(returns(ref))]
fn extern_declaration(db: &dyn Db, item: Item) -> bool {
    item.syntax(db).syntax_node().kind() == SyntaxKind::EXTERN_FN
}

/// The C symbol a foreign function links to: its quoted link name, else its own name.
pub fn extern_symbol(db: &dyn Db, item: Item) -> Option<Arc<str>> {
    let node = ast::ExternFn::cast(item.syntax(db).syntax_node())?;
    if let Some(link) = node.link_name() {
        return Some(Arc::from(link.text().trim_matches('"')));
    }
    node.name().map(|n| Arc::from(n.text()))
}
