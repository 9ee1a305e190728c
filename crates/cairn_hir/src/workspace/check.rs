//! `cairn check` over the workspace: the fast path that brings the last record up to date from
//! the edited bodies alone, the whole pass, syntax refusals first, and where a diagnostic lands.

use std::sync::Arc;

use cairn_syntax::{TextRange, TextSize};

use super::{LastCheck, Pending, Workspace};
use crate::effects::{fn_summary, is_function};
use crate::input::Item;
use crate::order::order_refusal;
use crate::signature::fn_signature;

/// The outcome of `cairn check` on a workspace.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    pub refusal: Option<cairn_diagnostics::Refusal>,
    /// Functions of the program, library ones included.
    pub functions: usize,
    pub library_functions: usize,
}

impl Workspace {
    /// Checks the whole program with every-refusal semantics (syntax errors first: a program
    /// that does not parse gets only its syntax refusals).
    ///
    /// After edits inside function bodies only, the last check's record is brought up to date
    /// from those functions alone when their summaries (refusal, own effects, call edges) and
    /// signatures are unchanged: then no row moved, so no other function's verdict can have
    /// changed. Otherwise the whole pass runs again over memoized queries. Both give the same
    /// answer; the differential test holds them to it.
    pub fn check(&mut self) -> CheckOutcome {
        if let Some(refusal) = self.syntax_refusal() {
            self.last_kind = CheckKind::Syntax;
            return CheckOutcome { refusal: Some(refusal), functions: 0, library_functions: 0 };
        }
        self.last_kind = CheckKind::Incremental;
        if !self.update_record() {
            self.last_kind = CheckKind::Whole;
            if self.last.is_none() {
                // The first check: every body is yet to be checked.
                self.warm_bodies();
            }
            let record = crate::report::program_record(&self.db).clone();
            let rows = crate::effects::rows(&self.db).clone();
            let requested = crate::requested::requested_instances(&self.db, self.program).clone();
            self.last = Some(LastCheck { record, rows, requested });
        }
        self.pending = Pending::Bodies(Vec::new());
        let Some(last) = &self.last else { unreachable!("set above") };
        let result = last.record.compose();
        let mut located: Vec<(bool, Arc<str>, usize, TextSize, cairn_diagnostics::Diagnostic)> = result
            .refusals
            .iter()
            .map(|(item, diag)| {
                let (library, module, file, offset, diagnostic) = self.locate_diag(*item, diag);
                (library, module, file, offset, diagnostic)
            })
            .collect();
        let refusal = if located.is_empty() {
            None
        } else {
            let first = located.remove(0).4;
            located.sort_by(|a, b| (a.0, &a.1, a.2, a.3).cmp(&(b.0, &b.1, b.2, b.3)));
            let mut diagnostics = vec![first];
            diagnostics.extend(located.into_iter().map(|l| l.4));
            cairn_diagnostics::Refusal::from_diagnostics(diagnostics).map(|mut r| {
                r.not_judged = result.not_judged;
                r
            })
        };
        CheckOutcome { refusal, functions: result.functions, library_functions: result.library_functions }
    }

    /// True when the next [`Workspace::check`] runs the whole-program pass over more than memos
    /// of a few bodies: the first check, or an edit outside function bodies. A server runs
    /// [`precompute`] on a clone of the database first, on another thread, where a later edit
    /// cancels it (salsa cancellation), so the check that follows reads memoized answers.
    pub fn needs_whole_pass(&self) -> bool {
        self.last.is_none() || matches!(self.pending, Pending::Everything)
    }

    /// Brings the last record up to date after body edits; false when the whole pass must run.
    fn update_record(&mut self) -> bool {
        let (Some(last), Pending::Bodies(changed)) = (&mut self.last, &self.pending) else { return false };
        // A template's summary and verdicts are its instances', which stand while no summary
        // moves (the instances of the last check are read, not the whole program walked again).
        for (item, summary, signature) in changed {
            if fn_signature(&self.db, *item) != signature || summary_now(&self.db, &last.requested, *item) != *summary {
                return false;
            }
        }
        if !last.record.bodies_checked {
            // Nothing the pass reported depends on a body.
            return true;
        }
        for (item, _, _) in changed {
            let Some(&key) = last.rows.index.get(item) else { return false };
            // A template's refusal is its first instance's (`body_refusal`).
            let instances = saved_instances(&self.db, &last.requested, *item);
            // A template without instances is judged by the whole pass (`E-UNINSTANTIATED`
            // depends on every other body).
            if instances.as_ref().is_some_and(Vec::is_empty) {
                return false;
            }
            let refusal = match &instances {
                Some(instances) => crate::requested::instances_refusal(&self.db, instances),
                None => crate::check::check_fn(&self.db, *item).error.clone(),
            };
            let refused = refusal.is_some();
            match refusal {
                Some(diag) => last.record.bodies.insert(key, (*item, diag)),
                None => last.record.bodies.remove(&key),
            };
            let audited = !refused && !last.record.ceilings.contains_key(&key) && last.rows.row(*item).is_some();
            let rows = &last.rows;
            let row_of = |callee: Item| rows.row(callee).cloned();
            let order = audited
                .then(|| match &instances {
                    Some(instances) => crate::order::instances_order_refusal(&self.db, &row_of, *item, instances),
                    None => order_refusal(&self.db, &row_of, *item),
                })
                .flatten();
            // Whether a function is refused decides knock-ons elsewhere: a change needs the pass.
            if order.is_some() != last.record.orders.contains_key(&key) {
                return false;
            }
            if let Some(diag) = order {
                last.record.orders.insert(key, (*item, diag));
            }
        }
        true
    }

    /// Checks every function body on all cores before the whole-program pass reads them, so that
    /// the pass finds them memoized. Bodies are independent of each other (a check reads only
    /// signatures), so the order does not matter and the answers are the same.
    fn warm_bodies(&self) {
        use rayon::prelude::*;
        let functions: Vec<Item> =
            self.program.items(&self.db).iter().filter(|e| is_function(e.key.kind)).map(|e| e.item).collect();
        if functions.len() < 64 || rayon::current_num_threads() < 2 {
            return;
        }
        functions.par_iter().for_each_with(self.db.clone(), |db, &item| {
            let _ = crate::check::check_fn(db, item);
        });
    }

    /// The program's syntax errors as one refusal (first as the original reports it).
    pub fn syntax_refusal(&self) -> Option<cairn_diagnostics::Refusal> {
        let mut first_hard: Option<cairn_diagnostics::Diagnostic> = None;
        let mut diagnostics = Vec::new();
        for file in self.files.iter().take(self.own_files) {
            let stop = file.lexer_stop().cloned();
            for error in file.errors() {
                let diagnostic =
                    cairn_diagnostics::syntax_diagnostic(Some(&file.name), file.text(), file.line_index(), error);
                if stop.as_ref() == Some(error) && first_hard.is_none() {
                    first_hard = Some(diagnostic);
                } else {
                    diagnostics.push(diagnostic);
                }
            }
        }
        if let Some(hard) = first_hard {
            diagnostics.insert(0, hard);
        }
        cairn_diagnostics::Refusal::from_diagnostics(diagnostics)
    }

    /// A refusal's position and its diagnostic.
    fn locate_diag(
        &self,
        item: Item,
        diag: &crate::diag::Diag,
    ) -> (bool, Arc<str>, usize, TextSize, cairn_diagnostics::Diagnostic) {
        let scope = crate::scope::scope(&self.db);
        let module = scope.module_of(item);
        let mut relative = self.anchor_range(item, diag.anchor);
        let mut message = diag.message.to_string();
        let mut generated_line = None;
        // A refusal inside generated code is reported at its `derive` (the line a person or an
        // agent can change), naming the derivation, with the generated line as a detail.
        let mut at = item;
        if let Some((file, _)) = self.locate(item)
            && let Some(derive) = self.files[file].generated
        {
            if let Some((_, _, position)) = self.position(item, relative) {
                let text = self.files[file].text();
                generated_line =
                    text.lines().nth(position.line.saturating_sub(1) as usize).map(|l| l.trim().to_string());
            }
            let name = scope.info(derive).map(|i| i.key.name.to_string()).unwrap_or_default();
            message = format!("In the code `derive {name}` generates: {message}");
            at = derive;
            relative = self.anchor_range(derive, crate::diag::Anchor::Item);
        }
        let mut diagnostic = cairn_diagnostics::Diagnostic::new(diag.code, message);
        let (library, file, offset) = match self.position(at, relative) {
            Some((file, range, position)) => {
                let state = &self.files[file];
                diagnostic = diagnostic.at(Some(state.name.clone()), position);
                (state.library, file, range.start())
            }
            None => (false, usize::MAX, TextSize::from(0)),
        };
        if !module.is_empty() {
            diagnostic.module = Some(module.to_string());
        }
        diagnostic.repair_hint = diag
            .hint
            .as_ref()
            .map(|h| h.to_string())
            .or_else(|| cairn_diagnostics::hints::static_hint(diag.code).map(str::to_string));
        diagnostic.details = diag
            .details
            .iter()
            .map(|(key, value)| {
                let value = match value {
                    crate::diag::Detail::Text(t) => serde_json::Value::String(t.to_string()),
                    crate::diag::Detail::List(items) => serde_json::Value::Array(
                        items.iter().map(|i| serde_json::Value::String(i.to_string())).collect(),
                    ),
                    crate::diag::Detail::Null => serde_json::Value::Null,
                };
                (key.to_string(), value)
            })
            .collect();
        if let Some(line) = generated_line {
            diagnostic.details.push(("generated_line".to_string(), serde_json::Value::String(line)));
        } else if let Some(related) = diag.related {
            let there = related.item.unwrap_or(item);
            if let Some((file, _, position)) = self.position(there, self.anchor_range(there, related.anchor)) {
                // A place in another file names it.
                let other =
                    (Some(&self.files[file].name) != diagnostic.file.as_ref()).then(|| self.files[file].name.clone());
                diagnostic = diagnostic.with_related_in(other, position, related.label);
            }
        }
        (library, module, file, offset, diagnostic)
    }

    /// The range an anchor names, relative to its declaration.
    pub fn anchor_range(&self, item: Item, anchor: crate::diag::Anchor) -> TextRange {
        use crate::diag::Anchor;
        let map = || crate::body::fn_source_map(&self.db, item);
        let first_token = || {
            let node = item.syntax(&self.db).syntax_node();
            cairn_syntax::first_significant_token(&node).map_or(node.text_range(), |t| t.text_range())
        };
        match anchor {
            Anchor::Item => first_token(),
            Anchor::Range(range) => range,
            Anchor::Expr(id) => map().exprs.get(id.0 as usize).copied().unwrap_or_else(first_token),
            Anchor::Stmt(id) => map().stmts.get(id.0 as usize).copied().unwrap_or_else(first_token),
            Anchor::Binder(id) => map().binders.get(id.0 as usize).copied().unwrap_or_else(first_token),
            Anchor::Arm(id) => map().arms.get(id.0 as usize).copied().unwrap_or_else(first_token),
        }
    }
}

/// How a check was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// From the syntax errors alone.
    Syntax,
    /// By updating the last record from the edited bodies.
    Incremental,
    /// By the whole-program pass (over memoized queries).
    Whole,
}

/// A template's instances as the last whole pass found them; `None` for an ordinary function.
fn saved_instances<'db>(
    db: &'db crate::db::RootDatabase,
    requested: &crate::requested::Requested,
    item: Item,
) -> Option<Vec<crate::instance::Instance<'db>>> {
    if crate::generics::fn_generics(db, item).is_empty() {
        return None;
    }
    let at = requested.of.get(&item).map(Vec::as_slice).unwrap_or_default();
    Some(
        at.iter()
            .map(|&i| {
                let (template, args) = &requested.order[i as usize];
                crate::instance::Instance::new(db, *template, args.clone())
            })
            .collect(),
    )
}

/// A function's summary as the fast path compares it: a template's from the instances of the
/// last whole pass (see [`saved_instances`]).
pub(super) fn summary_now(
    db: &crate::db::RootDatabase,
    requested: &crate::requested::Requested,
    item: Item,
) -> crate::effects::Summary {
    match saved_instances(db, requested, item) {
        Some(instances) => crate::effects::joined_summary(db, item, &instances),
        None => fn_summary(db, item).clone(),
    }
}
