//! The rules of implementations and selections (language §27) that read more than declarations,
//! run by the report: [`implementation_refusal`] (an implementation's declaration rules —
//! `E-IMPLEMENTS`, `E-IMPL-SIGNATURE`, `E-IMPL-PARAM`, [`super::declaration_refusal`] — then a
//! `needs(...)` on a function without device code, which reads its body's check);
//! [`second_selection`] (two plans selecting for one reference); and what needs the rows — an
//! implementation reaching its reference (`E-IMPL-CALL`) and a row beyond the reference's ceiling
//! or own row (`E-IMPL-EFFECT`): [`row_refusal`]. A selection's own rules (`E-IMPL-USE`, and
//! `E-IMPL-PARAM` for the values it gives) are [`super::selection_refusal`], beside the
//! declaration facts, because the list of selections depends on them.
//!
//! These sit above the checker and the rows; the facts they judge are the parent module's, which
//! reads declarations only (so the instance walk and the checker can ask them).

use std::collections::BTreeSet;

use super::{declaration_refusal, implementation_def, implementation_reference, refuse, selection_def};

use crate::db::Db;
use crate::diag::{Anchor, Diag, list};
use crate::effects::Row;
use crate::input::{Item, ItemKind, Program};
use crate::scope::Resolver;
use crate::signature::fn_signature;

/// The first refusal of implementation `item`: its declaration's ([`declaration_refusal`]), then
/// a `needs(...)` on a function without device code (`needs` names what an implementation's
/// device regions use; it is judged against the device target when a plan selects it,
/// `selected_needs`).
pub(crate) fn implementation_refusal(db: &dyn Db, item: Item) -> Option<Diag> {
    if let Some(diag) = declaration_refusal(db, item) {
        return Some(diag);
    }
    let def = implementation_def(db, item).as_ref()?;
    if def.needs.is_some() && !crate::requested::representative_check(db, item).regions.iter().any(|r| r.device) {
        let name = Resolver::new(db).full_name(item);
        return Some(Diag::new(
            "E-IMPLEMENTS",
            format!(
                "{name} declares `needs(...)` and has no device code: `needs` names the device features an implementation's device regions use; remove it."
            ),
            Anchor::Item,
        ));
    }
    None
}

/// A second selection of one reference (`E-IMPL-USE`), with the plan that makes it.
pub(crate) fn second_selection(db: &dyn Db) -> Option<(Item, Diag)> {
    let mut seen: Vec<Item> = Vec::new();
    for entry in Program::get(db).items(db).iter().filter(|e| e.key.kind == ItemKind::Plan) {
        let Some(reference) = selection_def(db, entry.item).as_ref().and_then(|s| s.reference) else { continue };
        if seen.contains(&reference) {
            let name = Resolver::new(db).full_name(reference);
            return Some((
                entry.item,
                Diag::new(
                    "E-IMPL-USE",
                    format!("{name} is selected twice: a reference takes at most one `plan {name} use …;`; keep one."),
                    Anchor::Item,
                ),
            ));
        }
        seen.push(reference);
    }
    None
}

/// What needs the rows: `E-IMPL-CALL` when the implementation reaches its reference, and
/// `E-IMPL-EFFECT` when its row exceeds the reference's ceiling, or the reference's own row when
/// it declares none.
pub(crate) fn row_refusal(db: &dyn Db, item: Item) -> Option<Diag> {
    let reference = implementation_reference(db, item)?;
    let scope = Resolver::new(db);
    let (name, reference_name) = (scope.full_name(item), scope.full_name(reference));
    let rows = crate::effects::rows(db);
    // Reaching the reference: over the calls the checks recorded (instances' included).
    let mut stack = vec![item];
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    while let Some(function) = stack.pop() {
        let summary = crate::effects::fn_summary(db, function);
        for edge in summary.calls.iter() {
            if edge.callee == reference {
                return refuse(
                    "E-IMPL-CALL",
                    format!(
                        "{name} reaches its reference {reference_name}{}: an implementation must compute the result without it.",
                        if function == item {
                            String::new()
                        } else {
                            format!(" (through {})", scope.full_name(function))
                        }
                    ),
                );
            }
            if let Some(&index) = rows.index.get(&edge.callee)
                && seen.insert(index)
            {
                stack.push(edge.callee);
            }
        }
    }
    let own = rows.row(item)?;
    let signature = fn_signature(db, reference);
    let (bound, what): (Box<dyn Fn(&str) -> bool>, &str) = match &signature.ceiling {
        Some(ceiling) => (Box::new(move |e: &str| ceiling.admits(e)), "declared ceiling"),
        None => {
            let row = own_row(db, reference)?;
            (Box::new(move |e: &str| row.contains(e)), "row (it declares no ceiling)")
        }
    };
    let excess: Vec<&str> = own.iter().map(|e| &**e).filter(|e| !bound(e)).collect();
    if excess.is_empty() {
        return None;
    }
    Some(
        Diag::new(
            "E-IMPL-EFFECT",
            format!(
                "{name} does {} beyond its reference {reference_name}'s {what}: an implementation may do only what its reference may. Remove it, or widen {reference_name}'s ceiling.",
                excess.join(", ")
            ),
            Anchor::Item,
        )
        .with_details(vec![("added_effects", list(&excess))]),
    )
}

/// The reference's own row: what its body does and what its callees' rows add, without its
/// implementations'.
fn own_row(db: &dyn Db, reference: Item) -> Option<Row> {
    let rows = crate::effects::rows(db);
    let summary = crate::effects::fn_summary(db, reference);
    let mut row = summary.local_row.clone();
    for edge in summary.calls.iter() {
        let callee_row = rows.row(edge.callee)?;
        row.extend(crate::effects::rename(callee_row, fn_signature(db, edge.callee), &edge.mapping));
    }
    Some(row)
}
