//! `expand` (protocol §3.2): a focused session discloses more — functions by name (their
//! sources, and their interfaces when new to the session) and types (their declarations) —
//! and the session's digest is sealed again over the grown disclosed set.

use serde::Serialize;
use serde_json::Value;

use super::packet::{Context, Dependency, offer_cards, signals, with_declarations};
use super::records::Named;
use super::refusal::Refusal;
use super::{Answer, EXPAND_LIMIT, EditHost};
use crate::program::{resolve_function, row_of, source_of, type_matches, types_mentioned};

/// An expansion (`cairn.expansion/1`).
#[derive(Debug, Serialize)]
pub(super) struct Expansion {
    protocol: &'static str,
    context: Vec<Context>,
    types: String,
    dependencies: Named<Dependency>,
    rule_cards: Named<String>,
}

/// What the names of an expand request name.
struct Expanded {
    functions: Vec<String>,
    types: Vec<String>,
}

impl EditHost {
    /// Answers an expand request of session `index` for `symbols` (the request's value).
    pub(super) fn expand(&mut self, index: usize, symbols: &Value) -> Answer {
        match self.try_expand(index, symbols) {
            Ok(expansion) => Answer::ok(super::records::to_map(&expansion)),
            Err(refusal) => refusal.into(),
        }
    }

    pub(super) fn try_expand(&mut self, index: usize, symbols: &Value) -> Result<Expansion, Refusal> {
        if !self.sessions[index].focused {
            return Err(
                self.rejection("E-REQUEST", "expand is for focused sessions; a component session shows everything.")
            );
        }
        let Some(names) = symbols.as_array().filter(|a| !a.is_empty() && a.len() <= EXPAND_LIMIT) else {
            return Err(self.rejection("E-REQUEST", format!("symbols is a list of 1 to {EXPAND_LIMIT} names.")));
        };
        let named = self.expand_names(index, names)?;
        let program = self.sessions[index].program;
        let workspace =
            self.programs[program].workspace.as_ref().expect("the program was loaded at the start of the request");
        let session = &self.sessions[index];
        let mut context = Vec::new();
        let mut texts = Vec::new();
        let mut dependencies = Named::default();
        let rows = workspace.last_rows();
        for name in &named.functions {
            let Some(item) = workspace.function_named(name) else { continue };
            let source = source_of(workspace, item);
            texts.push(source.clone());
            context.push(Context { symbol: name.clone(), source });
            if !session.visible.contains(name) {
                let dependency = Dependency {
                    signature: cairn_hir::render::signature_text(workspace.db(), item, true),
                    effects: row_of(rows.as_deref(), item),
                    evidence: Some("interface"),
                    contract: None,
                    check: None,
                    comment: None,
                };
                dependencies.insert(name.clone(), dependency);
            }
        }
        let text_refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let types = with_declarations(workspace, types_mentioned(workspace, &text_refs), &named.types);
        let rule_cards = offer_cards(&mut self.sent_cards, &text_refs, signals(&text_refs, &types, true)).rule_cards;
        let grew = named.functions.iter().any(|f| !session.visible.contains(f));
        let session = &mut self.sessions[index];
        for name in named.types {
            if !session.expanded_types.contains(&name) {
                session.expanded_types.push(name);
            }
        }
        for name in named.functions {
            if !session.expanded.contains(&name) {
                session.expanded.push(name.clone());
            }
            session.visible.insert(name);
        }
        if grew {
            let sealed = self.seal(&self.sessions[index]);
            self.sessions[index].digest = sealed;
        }
        Ok(Expansion { protocol: "cairn.expansion/1", context, types, dependencies, rule_cards })
    }

    /// The functions (by full name) and types an expand's names name: each a function other
    /// than the session's own (by full or module-local name, or a path as the target's module
    /// writes it), or exactly one type.
    fn expand_names(&self, index: usize, names: &[Value]) -> Result<Expanded, Refusal> {
        let workspace = self.ws(self.sessions[index].program);
        let own = &self.sessions[index].symbol;
        let mut named = Expanded { functions: Vec::new(), types: Vec::new() };
        for name in names {
            let Some(name) = name.as_str() else {
                return Err(self.rejection("E-REQUEST", "symbols is a list of names."));
            };
            let mut function = resolve_function(workspace, name);
            if function == Err(0)
                && name.contains('.')
                && let Some(target) = workspace.function_named(own)
            {
                // A path as the target's module writes it (an import alias, `prices.discounted`).
                let scope = cairn_hir::scope(workspace.db());
                let segments: Vec<std::sync::Arc<str>> = name.split('.').map(std::sync::Arc::from).collect();
                if let cairn_hir::Lookup::Found(decl) =
                    scope.resolve_path(&scope.module_of(target), &segments, |k| k == cairn_hir::ItemKind::Fn)
                {
                    function = Ok(decl.item);
                }
            }
            let symbol = || Value::from(name);
            match (function, type_matches(workspace, name)) {
                (Ok(item), 0) if workspace.full_name(item).as_ref() == own => {
                    return Err(self
                        .rejection(
                            "E-SYMBOL",
                            format!("{name} is the session's own function; its source is in the packet already."),
                        )
                        .detail("symbol", symbol()));
                }
                (Ok(item), 0) => named.functions.push(workspace.full_name(item).to_string()),
                (Err(0), 1) => named.types.push(name.to_string()),
                (Err(0), 0) => {
                    return Err(self
                        .rejection(
                            "E-SYMBOL",
                            format!(
                                "{name} names no function or type of this program; use a name from not_shown or the packet."
                            ),
                        )
                        .detail("symbol", symbol()));
                }
                _ => {
                    return Err(self
                        .rejection(
                            "E-SYMBOL",
                            format!("{name} names more than one declaration; qualify it with its module."),
                        )
                        .detail("symbol", symbol()));
                }
            }
        }
        Ok(named)
    }
}
