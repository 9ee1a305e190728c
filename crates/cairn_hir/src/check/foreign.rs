//! The check of a foreign function (language §45, `crate::foreign`): its row.
//!
//! An extern is a function item (`ItemKind::Fn`) whose syntax is `EXTERN_FN` and whose body is
//! C's. Its "check" is its row: the declared effects (mandatory: `E-EXTERN-EFFECTS`), plus
//! `ffi:<csym>`, plus `read:`/`write:` of each borrowed parameter (`ro` reads, `rw` reads and
//! writes), which the callers' rows rename to what they lend, as for any call. Calling one is
//! legal only inside `unsafe { }` (`E-UNSAFE`, judged by the body check). In this build its
//! parameters are scalars, and views and single borrows of scalars or of plain records (scalar
//! fields, plain records, inline arrays of them: C's structs), its result a scalar
//! (`E-UNSUPPORTED` otherwise): a view travels to C as its data pointer, a borrow as its address.

use std::sync::Arc;

use cairn_syntax::{ast, ast::AstNode};

use super::result::FnCheck;
use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::foreign::extern_symbol;
use crate::input::Item;
use crate::signature::Signature;
use crate::types::{Mode, Ty};

/// A foreign function's row, as its check: see the module comment.
pub(crate) fn extern_check(db: &dyn Db, item: Item, signature: &Signature) -> FnCheck {
    let mut check = FnCheck::default();
    if signature.error.is_some() {
        return check;
    }
    let Some(node) = ast::ExternFn::cast(item.syntax(db).syntax_node()) else { return check };
    let name = node.name().map(|n| n.text()).unwrap_or_default();
    let Some(ceiling) = node.ceiling() else {
        check.error = Some(Diag::new(
            "E-EXTERN-EFFECTS",
            format!(
                "The foreign function {name} declares no effects: C's code is not checked, so its row is what you declare — write `effects(io)` (or `effects(pure)` for a function that touches nothing)."
            ),
            Anchor::Item,
        ));
        return check;
    };
    if node.launch_clause().is_some() {
        check.error = Some(Diag::new(
            "E-UNSUPPORTED",
            "A foreign kernel (`launch(...)`) is device code, which this compiler does not build yet.",
            Anchor::Item,
        ));
        return check;
    }
    for param in signature.params.iter() {
        if !passable(db, &param.ty) {
            check.error = Some(Diag::new(
                "E-UNSUPPORTED",
                format!(
                    "{name} takes {} as {}: a foreign function takes scalars, and views and single borrows of scalars or of plain records (scalar fields, plain records, arrays of them), in this build.",
                    param.ty, param.name
                ),
                Anchor::Item,
            ));
            return check;
        }
    }
    if !matches!(signature.ret, Ty::Void | Ty::Bool | Ty::Int(_) | Ty::Float(_) | Ty::Error) {
        check.error = Some(Diag::new(
            "E-UNSUPPORTED",
            format!(
                "{name} returns {}: a foreign function returns a scalar (or nothing) in this build.",
                signature.ret
            ),
            Anchor::Item,
        ));
        return check;
    }
    let mut row = std::collections::BTreeSet::new();
    for effect in ceiling.effects() {
        let effect = effect.text();
        if effect != "pure" {
            row.insert(Arc::from(effect.as_str()));
        }
    }
    if let Some(symbol) = extern_symbol(db, item) {
        row.insert(Arc::from(format!("ffi:{symbol}")));
    }
    for param in signature.params.iter() {
        let mode = match &param.ty {
            Ty::View(view) => Some(view.mode),
            Ty::Borrow(mode, _) => Some(*mode),
            _ => None,
        };
        if let Some(mode) = mode {
            row.insert(Arc::from(format!("read:{}", param.name)));
            if mode == Mode::Rw {
                row.insert(Arc::from(format!("write:{}", param.name)));
            }
        }
    }
    check.local_row = row;
    check
}

/// What crosses to C in this build: scalars, views (their data pointer) and single borrows of
/// scalars (their address).
fn passable(db: &dyn Db, ty: &Ty) -> bool {
    match ty {
        Ty::Bool | Ty::Int(_) | Ty::Float(_) | Ty::Error => true,
        // C sees the data pointer, or the address: what lies there must be laid out as C lays it.
        Ty::View(view) => plain(db, &view.elem),
        Ty::Borrow(_, inner) => plain(db, inner),
        _ => false,
    }
}

/// True for a value C reads as its own: a scalar, a record of such values (laid out in field
/// order with natural alignment — or `packed`, or `align(n)` — exactly as C lays out the struct
/// with the same members), or an inline array of them. Owners, views, borrows, function values
/// and enums are not: their words mean nothing to C.
fn plain(db: &dyn Db, ty: &Ty) -> bool {
    match ty {
        Ty::Bool | Ty::Int(_) | Ty::Float(_) => true,
        Ty::Array(elem, _) => plain(db, elem),
        Ty::Record(adt) => {
            let def = crate::decl::record_def(db, adt.item);
            !def.linear && def.lends.is_none() && crate::decl::fields_of(db, adt).iter().all(|(_, t)| plain(db, t))
        }
        _ => false,
    }
}
