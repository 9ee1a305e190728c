//! Writing a recipe's expansion: the recipe's declarations as source text of the deriving module,
//! with every static construct carried out.
//!
//! The emitter walks the recipe's syntax tree and copies it token by token, except that
//! - an identifier holding `$` is spliced (`encode_$R` → `encode_Packet`; a whole `$n` is that
//!   natural, type, field name or function path), and the bare `for` parameter is the target type;
//! - `each` repeats its content once per step (declarations, fields, statements, or arguments
//!   joined by commas), with the step's binder and `where` names in scope;
//! - `fold OP each … { e }` writes the steps joined by the operator, or nested calls of the named
//!   function;
//! - `require` writes nothing, and refuses the derivation when its condition is false.
//!
//! Invariant: the output is plain CAIRN — no `$`, `each`, `fold` or `require` survives — so what
//! the derivation generates is checked exactly like written code.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cairn_syntax::{SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken};

use super::statics::{EachHeader, Env, Eval, Schema, each_header, expr_children, fold_combiner, refuse, snippet};
use crate::diag::Diag;

/// The most declarations one derivation may generate (language §29).
pub(crate) const DECLARATION_LIMIT: usize = 2048;

/// The most text one derivation may generate (the node budget, in bytes of source).
pub(crate) const TEXT_LIMIT: usize = 4 << 20;

/// How names the recipe writes are spelled out in full (language §29, hygiene): a name that
/// means a declaration where the recipe is declared becomes that declaration's full name, and an
/// import alias of the recipe's module becomes the module's full name — so the generated code
/// means what the recipe meant, from whichever module derives it.
pub(crate) struct Qualifier {
    /// The recipe's module.
    pub module: Arc<str>,
    /// Per function of the recipe (by its node's start), the names it binds (parameters, `let`s,
    /// loop, arm and `each` binders): never qualified inside that function.
    pub locals: HashMap<cairn_syntax::TextSize, HashSet<String>>,
}

impl Qualifier {
    /// True when `token` names something the function it stands in binds itself.
    fn binds(&self, token: &SyntaxToken) -> bool {
        let Some(function) = token.parent_ancestors().find(|n| n.kind() == SyntaxKind::FN) else { return false };
        self.locals.get(&function.text_range().start()).is_some_and(|names| names.contains(token.text()))
    }
}

pub(crate) struct Emitter<'a, 'db> {
    pub schema: &'a Schema<'db>,
    pub qualifier: Qualifier,
    pub env: Env,
    pub recipe: Arc<str>,
    /// The recipe's `for` parameter and how the deriving module spells the target.
    pub for_param: Option<(Arc<str>, Arc<str>)>,
    pub out: String,
    pub declarations: usize,
}

impl Emitter<'_, '_> {
    fn eval(&mut self) -> Eval<'_, '_> {
        Eval { schema: self.schema, env: &mut self.env, recipe: &self.recipe }
    }

    fn limit(&self) -> Result<(), Diag> {
        if self.out.len() > TEXT_LIMIT {
            return Err(refuse(
                "E-EXPANSION-LIMIT",
                format!(
                    "Recipe {} generates more than {} MiB of code for this derivation; generate less (fewer steps, smaller bodies).",
                    self.recipe,
                    TEXT_LIMIT >> 20
                ),
            ));
        }
        Ok(())
    }

    /// The declarations of a recipe body (or of an item-level `each`'s body).
    pub fn items(&mut self, body: &SyntaxNode) -> Result<(), Diag> {
        use SyntaxKind::*;
        for child in body.children() {
            match child.kind() {
                REQUIRE => self.require(&child)?,
                EACH_ITEM => {
                    let header = self.header(&child)?;
                    let content = header.content.clone();
                    self.repeat(&header, |this| match &content {
                        Some(body) => this.items(body),
                        None => Ok(()),
                    })?;
                }
                FN | STRUCT | IMPL => {
                    self.declarations += 1;
                    if self.declarations > DECLARATION_LIMIT {
                        return Err(refuse(
                            "E-EXPANSION-LIMIT",
                            format!(
                                "Recipe {} generates more than {DECLARATION_LIMIT} declarations for this derivation.",
                                self.recipe
                            ),
                        ));
                    }
                    self.node(&child)?;
                    self.out.push('\n');
                    self.limit()?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn header(&self, node: &SyntaxNode) -> Result<EachHeader, Diag> {
        each_header(node).ok_or_else(|| {
            refuse(
                "E-RECIPE-STATIC",
                format!("In recipe {}, `{}` is an incomplete `each`.", self.recipe, snippet(node)),
            )
        })
    }

    /// Runs `body` once per step of `header`, with the step's names in scope.
    fn repeat(&mut self, header: &EachHeader, mut body: impl FnMut(&mut Self) -> Result<(), Diag>) -> Result<(), Diag> {
        let steps = self.eval().steps(header)?;
        for step in steps {
            let mark = self.env.mark();
            for (name, value) in step {
                self.env.push(name, value);
            }
            let done = body(self);
            self.env.reset(mark);
            done?;
            self.limit()?;
        }
        Ok(())
    }

    /// Copies a node, carrying out the static constructs inside it.
    fn node(&mut self, node: &SyntaxNode) -> Result<(), Diag> {
        for element in node.children_with_tokens() {
            match element {
                SyntaxElement::Token(token) => self.token(&token)?,
                SyntaxElement::Node(child) => self.child(&child)?,
            }
        }
        Ok(())
    }

    /// One child node: `each` among a record's fields or a body's statements (its content
    /// without braces, once per step), `require`, argument lists and folds; anything else copied.
    fn child(&mut self, child: &SyntaxNode) -> Result<(), Diag> {
        use SyntaxKind::*;
        match child.kind() {
            EACH_ITEM | EACH_STMT => {
                let header = self.header(child)?;
                let content = header.content.clone();
                self.repeat(&header, |this| match &content {
                    Some(inner) => this.inner(inner),
                    None => Ok(()),
                })
            }
            REQUIRE => self.require(child),
            ARG_LIST => self.args(child),
            FOLD_EXPR => self.fold(child),
            EACH_EXPR => Err(refuse(
                "E-RECIPE-STATIC",
                format!(
                    "In recipe {}, `{}` splices expressions, so it stands among a call's arguments or after `fold`.",
                    self.recipe,
                    snippet(child)
                ),
            )),
            _ => self.node(child),
        }
    }

    /// A node's content without its opening and closing brace.
    fn inner(&mut self, node: &SyntaxNode) -> Result<(), Diag> {
        use SyntaxKind::*;
        let elements: Vec<_> = node.children_with_tokens().collect();
        let open = elements.iter().position(|e| e.kind() == L_CURLY).map_or(0, |i| i + 1);
        let close = elements.iter().rposition(|e| e.kind() == R_CURLY).unwrap_or(elements.len());
        self.out.push(' ');
        for element in &elements[open..close.max(open)] {
            match element {
                SyntaxElement::Token(token) => self.token(token)?,
                SyntaxElement::Node(child) => self.child(child)?,
            }
        }
        self.out.push(' ');
        Ok(())
    }

    /// The text `node` emits.
    fn capture(&mut self, node: &SyntaxNode) -> Result<String, Diag> {
        let saved = std::mem::take(&mut self.out);
        let done = self.child(node);
        let text = std::mem::replace(&mut self.out, saved);
        done.map(|()| text.trim().to_string())
    }

    /// The expressions an argument stands for: itself, or each step of an `each` splice.
    fn spliced(&mut self, node: &SyntaxNode) -> Result<Vec<String>, Diag> {
        if node.kind() != SyntaxKind::EACH_EXPR {
            return Ok(vec![self.capture(node)?]);
        }
        let header = self.header(node)?;
        let exprs = header.content_exprs();
        let mut parts = Vec::new();
        self.repeat(&header, |this| {
            for expr in &exprs {
                parts.extend(this.spliced(expr)?);
            }
            Ok(())
        })?;
        Ok(parts)
    }

    /// An argument list, `each` splices expanded in place.
    fn args(&mut self, list: &SyntaxNode) -> Result<(), Diag> {
        let mut parts = Vec::new();
        for expr in expr_children(list) {
            parts.extend(self.spliced(&expr)?);
        }
        self.out.push('(');
        self.out.push_str(&parts.join(", "));
        self.out.push(')');
        self.limit()
    }

    /// `fold OP each … { e }` as the steps joined, `fold f each …` as nested calls.
    fn fold(&mut self, node: &SyntaxNode) -> Result<(), Diag> {
        let combiner = fold_combiner(node);
        let Some(each) = node.children().find(|c| c.kind() == SyntaxKind::EACH_EXPR) else {
            return Err(refuse("E-RECIPE-STATIC", format!("In recipe {}, a fold joins an `each`.", self.recipe)));
        };
        let parts = self.spliced(&each)?;
        if parts.is_empty() || combiner.is_empty() {
            let why = if combiner.is_empty() { "names no operator or function to join with" } else { "has no steps" };
            return Err(refuse(
                "E-RECIPE-STATIC",
                format!("In recipe {}, `{}` {why}; a fold joins one or more steps.", self.recipe, snippet(node)),
            ));
        }
        let operator = combiner.chars().all(|c| "+-*/%&|^<>=!".contains(c));
        let text = if operator {
            // Each step in parentheses: `fold * each … { x + 1 }` is `((a + 1) * (b + 1))`.
            let parts: Vec<String> = parts
                .into_iter()
                .map(|p| if p.contains(' ') || p.starts_with(['-', '!']) { format!("({p})") } else { p })
                .collect();
            format!("({})", parts.join(&format!(" {combiner} ")))
        } else {
            // The function is named as the recipe's module means it (hygiene), unless spliced.
            let first = node.children().find(|c| c.kind() == SyntaxKind::REDUCER).and_then(|r| {
                r.descendants_with_tokens().filter_map(|e| e.into_token()).find(|t| t.kind() == SyntaxKind::IDENT)
            });
            let function = match first.as_ref().and_then(|t| self.qualified(t).map(|full| (t.text().to_string(), full)))
            {
                Some((written, full)) => format!("{full}{}", &combiner[written.len()..]),
                None => self.splice(&combiner)?,
            };
            let mut parts = parts.into_iter();
            let mut acc = parts.next().expect("not empty");
            for part in parts {
                acc = format!("{function}({acc}, {part})");
            }
            acc
        };
        self.out.push_str(&text);
        self.limit()
    }

    fn token(&mut self, token: &SyntaxToken) -> Result<(), Diag> {
        match token.kind() {
            SyntaxKind::COMMENT => self.out.push(' '),
            SyntaxKind::IDENT => {
                let text = match self.qualified(token) {
                    Some(full) => full,
                    None => self.splice(token.text())?,
                };
                self.out.push_str(&text);
            }
            _ => self.out.push_str(token.text()),
        }
        Ok(())
    }

    /// The full spelling of a name the recipe wrote, when it is the root of a name expression or
    /// the first segment of a path and means a declaration (or a module) where the recipe lives.
    fn qualified(&self, token: &SyntaxToken) -> Option<String> {
        use SyntaxKind::*;
        let text = token.text();
        if text.contains('$') || self.qualifier.binds(token) {
            return None;
        }
        if self.for_param.as_ref().is_some_and(|(p, _)| &**p == text) {
            return None;
        }
        let name_ref = token.parent().filter(|p| p.kind() == NAME_REF)?;
        let parent = name_ref.parent()?;
        let root = match parent.kind() {
            NAME_EXPR => true,
            PATH => parent.children().next().is_some_and(|first| first == name_ref),
            _ => false,
        };
        if !root {
            return None;
        }
        let scope = crate::scope::Resolver::new(self.schema.db);
        if let Some(module) = scope.alias_target(&self.qualifier.module, text) {
            return Some(module.to_string());
        }
        let segments = [Arc::<str>::from(text)];
        match scope.resolve_path(&self.qualifier.module, &segments, |_| true) {
            crate::scope::Lookup::Found(decl) => {
                let full = scope.full_name(decl.item);
                (&*full != text).then(|| full.to_string())
            }
            crate::scope::Lookup::None => None,
        }
    }

    /// An identifier with its `$` splices carried out (and the bare `for` parameter as the
    /// target type).
    fn splice(&self, text: &str) -> Result<String, Diag> {
        if !text.contains('$') {
            if let Some((param, target)) = &self.for_param
                && text == &**param
            {
                return Ok(target.to_string());
            }
            return Ok(text.to_string());
        }
        if let Some(name) = text.strip_prefix('$')
            && !name.contains('$')
            && let Some(value) = self.env.get(name)
        {
            return Ok(value.whole_text());
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let Some((name, value)) = self.env.longest_prefix(after) else {
                return Err(refuse(
                    "E-RECIPE-STATIC",
                    format!(
                        "In recipe {}, the splice in `{text}` names no static value (known: {}).",
                        self.recipe,
                        self.env.names().join(", ")
                    ),
                ));
            };
            out.push_str(&value.part_text());
            rest = &after[name.len()..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// `require cond, "message";`: nothing, or the derivation's refusal.
    fn require(&mut self, node: &SyntaxNode) -> Result<(), Diag> {
        let Some(condition) = expr_children(node).next() else { return Ok(()) };
        if self.eval().boolean(&condition)? {
            return Ok(());
        }
        let message = node
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| t.kind() == SyntaxKind::STRING)
            .map(|t| unquote(t.text()))
            .unwrap_or_else(|| format!("recipe {} does not accept this input", self.recipe));
        // A code the message starts with is reported if a rule card owns it (never E-INTERNAL, which
        // is the toolchain's own); any other message is the recipe's domain.
        let carded = |code: &str| -> Option<&'static str> {
            let card = cairn_diagnostics::registry::card_of(code).filter(|_| code != "E-INTERNAL")?;
            card.codes.iter().copied().find(|c| *c == code)
        };
        let (code, text) = match message.split_once(':').and_then(|(c, rest)| Some((carded(c.trim())?, rest))) {
            Some((code, rest)) => (code, rest.trim().to_string()),
            None => ("E-DERIVE-DOMAIN", message.clone()),
        };
        Err(refuse(code, format!("Recipe {} refuses this derivation: {text}", self.recipe)))
    }
}

/// A string literal's text without quotes and with its escapes read.
fn unquote(text: &str) -> String {
    let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}
