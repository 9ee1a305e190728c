//! Opening a session (protocol §2, §3.1): resolve the target, judge the contract and its
//! evidence, disclose the scope, then pin the session and send its first packet.
//!
//! Invariant: refusals come in §3.1's order exactly — scope, contract shape and symbol, the
//! program must parse, the symbol must be one authored function, not a template, the program
//! must check, then `allowed_effects`, `preserve`, evidence requests, included names, the
//! site — so each step below returns before the next one looks.

use std::collections::BTreeSet;

use cairn_hir::{Item, Workspace};
use cairn_syntax::ast::AstNode;
use cairn_syntax::{SyntaxKind, TextRange, TextSize};
use serde_json::Value;

use super::contract::decide_evidence;
use super::packet::Packet;
use super::records::SiteCounts;
use super::refusal::Refusal;
use super::sessions::Session;
use super::sessions::site_index;
use super::{EditHost, OpenRequest, Sources};
use crate::program::{callers_of, component_of, resolve_function, row_of};

impl EditHost {
    /// Opens a session and answers with its first packet, or the first rule the open breaks.
    pub(super) fn try_open(&mut self, sources: Sources, request: OpenRequest) -> Result<Packet, Refusal> {
        let focused = self.scope_of(&request)?;
        let contract = self.contract_shape(&request)?;
        let (index, _) = self.program(sources);
        let item = self.resolve_target(index, &request.symbol)?;
        let workspace = self.ws(index);
        let rows = workspace.last_rows().ok_or_else(|| self.refuse_internal("no rows after a check"))?;
        let row = row_of(Some(rows.as_ref()), item);
        let ceiling = self.ceiling(workspace, item, &request.symbol, &contract, &row)?;
        self.preserve_shape(&contract)?;
        let requested = self.evidence_requests(workspace, &request.symbol, &contract)?;
        self.included(workspace, &request.include)?;
        let evidence = decide_evidence(workspace, &contract, &requested);
        let (visible, callers) = disclosed(workspace, item, focused, &request.include);
        let (file, body, sites) = self.spans(index, item)?;
        let sites_before = SiteCounts::of(workspace, item);
        let symbol = workspace.full_name(item).to_string();
        let handle = match &request.handle {
            Some(handle) => handle.clone(),
            None => {
                self.handles += 1;
                format!("e{}", self.handles)
            }
        };
        let mut session = Session {
            handle,
            used: self.clock,
            digest: String::new(),
            symbol,
            focused,
            contract,
            program: index,
            file,
            body,
            sites,
            ceiling,
            evidence,
            row,
            sites_before,
            visible,
            expanded: Vec::new(),
            expanded_types: Vec::new(),
            admitted: Vec::new(),
        };
        session.digest = self.seal(&session);
        if let Some(site) = &request.site
            && site_index(site).is_none_or(|i| i >= session.sites.len())
        {
            return Err(self.rejection("E-SITE", format!("{site} is not an expression site of {}.", session.symbol)));
        }
        let packet = self.packet(&session, item, &callers, request.site.as_deref());
        self.sessions.retain(|s| s.handle != session.handle);
        self.sessions.push(session);
        self.forget_old_sessions();
        Ok(packet)
    }

    /// `focused` (the default) or `component`.
    fn scope_of(&self, request: &OpenRequest) -> Result<bool, Refusal> {
        match request.scope.as_deref() {
            None | Some("focused") => Ok(true),
            Some("component") => Ok(false),
            Some(other) => {
                Err(self.rejection("E-REQUEST", format!("The scope {other:?} is neither focused nor component.")))
            }
        }
    }

    /// The one authored, concrete function `symbol` names, in a program that parses and checks.
    fn resolve_target(&mut self, index: usize, symbol: &str) -> Result<Item, Refusal> {
        if let Some(refusal) = self.ws(index).syntax_refusal() {
            return Err(self.compiler_refusal(&refusal.first, Some(index)));
        }
        // A function, or a method of a trait's impl (`Area.Rect.area`).
        let Some(item) = self.ws(index).function_named(symbol).or_else(|| self.ws(index).method_named(symbol)) else {
            return Err(self
                .rejection(
                    "E-SYMBOL",
                    format!(
                        "{symbol} is not a function of this program; name it as the program declares it (module.name)."
                    ),
                )
                .detail("symbol", Value::from(symbol)));
        };
        // Only the program's own text is editable: the packaged library is the toolchain's, and
        // generated code is rewritten by its derivation on every check.
        if let Some((file, _)) = self.ws(index).entry_of(item) {
            let state = &self.ws(index).files()[file];
            if state.library {
                return Err(self.rejection(
                    "E-EDIT-PROFILE",
                    format!("{symbol} belongs to the packaged standard library, which an edit session does not change; open a function of the program."),
                ));
            }
            if let Some(derive) = state.generated {
                let name = self.ws(index).entry_of(derive).map(|(_, e)| e.key.name.to_string()).unwrap_or_default();
                return Err(self.rejection(
                    "E-EDIT-PROFILE",
                    format!("{symbol} is generated by `derive {name}`; edit the recipe or the record it derives from instead."),
                ));
            }
        }
        // A generic function, or a method of a generic impl (its parameters are the impl's).
        if !cairn_hir::generics::fn_generics(self.ws(index).db(), item).is_empty() {
            return Err(self.rejection(
                "E-EDIT-PROFILE",
                format!("{symbol} is a template; an edit session takes a concrete function."),
            ));
        }
        if let Some(refusal) = self.ws_mut(index).check().refusal {
            return Err(self.compiler_refusal(&refusal.first, Some(index)));
        }
        Ok(item)
    }

    /// Every name of `include` names a function (by its full name, or a local name only one
    /// module declares).
    fn included(&self, workspace: &Workspace, include: &[String]) -> Result<(), Refusal> {
        match include
            .iter()
            .find(|name| workspace.function_named(name).is_none() && resolve_function(workspace, name).is_err())
        {
            Some(name) => Err(self
                .rejection("E-SYMBOL", format!("{name} names no function of this program."))
                .detail("symbol", Value::from(name.as_str()))),
            None => Ok(()),
        }
    }

    /// The target's file, the span a `body` reply replaces (the body's start to the function's
    /// end) and its expression sites, all in the file's text.
    fn spans(&self, index: usize, item: Item) -> Result<(usize, TextRange, Vec<TextRange>), Refusal> {
        let workspace = self.ws(index);
        let syntax = item.syntax(workspace.db()).syntax_node();
        let (file, entry) = workspace.entry_of(item).ok_or_else(|| self.refuse_internal("no entry for the target"))?;
        let body = syntax
            .children()
            .find(|c| matches!(c.kind(), SyntaxKind::BLOCK | SyntaxKind::EXPR_BODY))
            .ok_or_else(|| self.refuse_internal("the target has no body"))?;
        let span = TextRange::new(entry.start + body.text_range().start(), entry.start + syntax.text_range().end());
        Ok((file, span, expression_sites(&body, entry.start)))
    }
}

/// The disclosed set of a session on `item` and the target's callers: focused, the target, its
/// direct callees and callers; component, every own function connected through calls; and
/// in both the functions `include` names.
fn disclosed(workspace: &Workspace, item: Item, focused: bool, include: &[String]) -> (BTreeSet<String>, Vec<String>) {
    let mut visible: BTreeSet<String> = BTreeSet::new();
    visible.insert(workspace.full_name(item).to_string());
    let callers = callers_of(workspace, item);
    if focused {
        visible.extend(workspace.callees(item).into_iter().map(|callee| workspace.full_name(callee).to_string()));
        visible.extend(callers.iter().cloned());
    } else {
        visible.extend(component_of(workspace, item));
    }
    for name in include {
        if let Some(found) = workspace.function_named(name).or_else(|| resolve_function(workspace, name).ok()) {
            visible.insert(workspace.full_name(found).to_string());
        }
    }
    (visible, callers)
}

/// The expression sites of a body: every expression node, in source order (by start, then end).
fn expression_sites(body: &cairn_syntax::SyntaxNode, start: TextSize) -> Vec<TextRange> {
    let mut sites: Vec<TextRange> = body
        .descendants()
        .filter(|n| cairn_syntax::ast::Expr::can_cast(n.kind()))
        .map(|n| n.text_range() + start)
        .collect();
    sites.sort_by_key(|r| (r.start(), r.end()));
    sites.dedup();
    sites
}
