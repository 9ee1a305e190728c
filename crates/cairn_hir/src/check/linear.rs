//! The statements that consume values (language §22.2, §22.4): `let Name(a, b) = v;` takes a
//! record apart, one binder per field, and `defer call(args);` schedules one call for every
//! normal exit of its block. This file checks what each is written as; which values they
//! consume, and the linear rules (`E-LINEAR-LEAK`, `E-LINEAR-BRANCH`, `E-LEASED`), are the
//! ownership walk's (`moves.rs`).

use std::sync::Arc;

use crate::body::{BinderId, Expr, ExprId, Stmt, StmtId};
use crate::diag::{Anchor, Diag};
use crate::types::Ty;

use super::cx::{Cx, Local, LocalKind, R};
use crate::ItemKind;
use crate::scope::Lookup;

impl Cx<'_> {
    /// `let Name(a, b, …) = value;` (or `let mut`): the value is a `Name` record taken by value,
    /// and every field is bound in declaration order, one name (or `_`) each (`E-UNPACK`). A
    /// record of another module must be public, and a linear one may be taken apart only by its
    /// own module (`E-PRIVATE`).
    pub(crate) fn unpack(
        &mut self,
        id: StmtId,
        record: &[Arc<str>],
        binders: &[BinderId],
        mutable: bool,
        value: ExprId,
    ) -> R<()> {
        let written = record.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
        let Lookup::Found(decl) = self.scope.resolve_path(&self.module, record, |k| k == ItemKind::Struct) else {
            return Err(Diag::new(
                "E-UNPACK",
                format!(
                    "{written} names no record here: `let Name(a, b) = v;` takes apart a record by its type's name."
                ),
                Anchor::Stmt(id),
            ));
        };
        let item = decl.item;
        let full = self.scope.full_name(item);
        if !self.scope.visible_from(item, &self.module) {
            let owner = self.scope.module_of(item);
            return Err(Diag::new("E-PRIVATE", format!("{full} is private to module {owner}."), Anchor::Stmt(id)));
        }
        if crate::decl::declared_linear(self.db, item) && self.scope.module_of(item) != self.module {
            let owner = self.scope.module_of(item);
            return Err(Diag::new(
                "E-PRIVATE",
                format!(
                    "{full} is linear, and only its own module ({owner}) may take it apart: call a function of {owner} that consumes it."
                ),
                Anchor::Stmt(id),
            ));
        }
        let ty = self.check(value, None)?;
        let adt = match &ty {
            Ty::Record(adt) if adt.item == item => adt.clone(),
            Ty::Error => return Ok(()),
            Ty::Borrow(..) => {
                return Err(Diag::new(
                    "E-UNPACK",
                    format!(
                        "Unpacking consumes a {full} by value, and this is a borrow of one: read its fields (`v.field`) instead."
                    ),
                    Anchor::Expr(value),
                ));
            }
            other => {
                return Err(Diag::new(
                    "E-UNPACK",
                    format!("This value is a {other}, not a {full}: unpack it with its own record's name."),
                    Anchor::Expr(value),
                ));
            }
        };
        let fields = crate::decl::fields_of(self.db, &adt);
        if fields.len() != binders.len() {
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_ref()).collect();
            return Err(Diag::new(
                "E-UNPACK",
                format!(
                    "{full} has {} fields ({}): write one name, or `_`, per field in declaration order; {} given.",
                    fields.len(),
                    names.join(", "),
                    binders.len()
                ),
                Anchor::Stmt(id),
            ));
        }
        for (&binder, (_, field_ty)) in binders.iter().zip(fields.iter()) {
            self.fresh(binder, |n| format!("{n} is already bound; CAIRN has no shadowing, so pick a fresh name."))?;
            let name = self.body.binder(binder).clone();
            self.bind(binder, Local { name, ty: field_ty.clone(), mutable, kind: LocalKind::Let, literal: None });
        }
        Ok(())
    }

    /// `defer call(args);`: exactly one call statement (`E-DEFER`), checked where it is written.
    pub(crate) fn defer(&mut self, id: StmtId, inner: StmtId) -> R<()> {
        let call = match self.body.stmt(inner) {
            Stmt::Expr(e) if matches!(self.body.expr(self.body.unparen(*e)), Expr::Call { .. }) => *e,
            _ => {
                return Err(Diag::new(
                    "E-DEFER",
                    "defer schedules exactly one call statement, run at every normal exit of its block: write `defer close(f);`.",
                    Anchor::Stmt(id),
                ));
            }
        };
        self.check(call, None)?;
        Ok(())
    }
}
