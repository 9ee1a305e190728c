//! Which binding each local name of a function refers to: parameters, `let`s, loop binders,
//! match-arm binders and `stack` names, resolved by scope the way the body check scopes them.
//!
//! Definition, references, highlights, semantic tokens and the `let mut` quick fix all read this
//! one resolution, so two locals that share a name (two `for i` loops, binders of different arms, a
//! `let` in an `if` block and a later arm binder) are never merged. It walks the memoized lowered
//! body and its source map; nothing is re-checked. Unlike the check, it does not stop at the first
//! refusal: a broken body is still resolved as far as it lowers.
//!
//! Invariant: every range is the identifier token's, relative to the declaration's start (the
//! offsets of the item's own syntax tree).
//! Deliberately absent: names inside written types (extents) and the callee of a call, which name
//! parameters or functions by rules of their own.

use std::sync::Arc;

use cairn_hir::Item;
use cairn_hir::body::{Block, Body, BodySourceMap, Else, Expr, ExprId, Stmt, StmtId};
use cairn_syntax::{SyntaxKind, SyntaxNode, TextRange};

/// What kind of binder introduced a local.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    Param,
    /// A `let`; `string` when it holds a string literal (a view, which `let mut` cannot make
    /// assignable).
    Let {
        mutable: bool,
        string: bool,
    },
    /// `for`, `for … in`, `each`.
    LoopBinder,
    MatchBinder,
    Stack,
}

/// One local of a function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub name: Arc<str>,
    /// The binder's name.
    pub range: TextRange,
    pub kind: BindingKind,
}

/// One name that refers to a local.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    pub range: TextRange,
    /// Its index in [`Locals::bindings`].
    pub binding: usize,
    /// True for an assignment's target (or the root of one: `p` in `p.x = 1`).
    pub written: bool,
}

/// A function's locals and every use of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locals {
    /// Parameters first, then binders in source order.
    pub bindings: Vec<Binding>,
    pub uses: Vec<Use>,
}

impl Locals {
    /// The binding whose binder or one of whose uses is exactly `range`.
    pub fn binding_at(&self, range: TextRange) -> Option<usize> {
        if let Some(binding) = self.bindings.iter().position(|b| b.range == range) {
            return Some(binding);
        }
        self.uses.iter().find(|u| u.range == range).map(|u| u.binding)
    }

    /// The use at `range`, if a local name is written there.
    pub fn use_at(&self, range: TextRange) -> Option<&Use> {
        self.uses.iter().find(|u| u.range == range)
    }
}

/// Resolves the locals of `item` (a function or test; any other item has none).
pub fn locals(db: &dyn cairn_hir::Db, item: Item) -> Locals {
    let node = item.syntax(db).syntax_node();
    if !matches!(node.kind(), SyntaxKind::FN | SyntaxKind::TEST) {
        return Locals::default();
    }
    let body = cairn_hir::body::fn_body(db, item);
    let map = cairn_hir::body::fn_source_map(db, item);
    let mut walk = Walk { body, map: &map, node: &node, scope: Vec::new(), out: Locals::default() };
    let params = node
        .children()
        .filter(|c| c.kind() == SyntaxKind::PARAM_LIST)
        .flat_map(|list| list.children().filter(|c| c.kind() == SyntaxKind::PARAM))
        .filter_map(|param| param.children().find(|c| c.kind() == SyntaxKind::NAME));
    for name in params {
        let text: Arc<str> = Arc::from(name.text().to_string().trim());
        let range = walk.ident(name.text_range());
        walk.bind(text, range, BindingKind::Param);
    }
    let root = walk.body.root.clone();
    walk.block(&root);
    walk.out
}

struct Walk<'a> {
    body: &'a Body,
    map: &'a BodySourceMap,
    node: &'a SyntaxNode,
    /// Indices of the bindings in scope, innermost last.
    scope: Vec<usize>,
    out: Locals,
}

impl Walk<'_> {
    /// The identifier token within `range` (a node's range may carry trivia).
    fn ident(&self, range: TextRange) -> TextRange {
        if !self.node.text_range().contains_range(range) {
            return range;
        }
        let element = self.node.covering_element(range);
        if let Some(token) = element.as_token() {
            return token.text_range();
        }
        element
            .as_node()
            .and_then(|node| {
                node.descendants_with_tokens().filter_map(|e| e.into_token()).find(|t| t.kind() == SyntaxKind::IDENT)
            })
            .map_or(range, |t| t.text_range())
    }

    fn bind(&mut self, name: Arc<str>, range: TextRange, kind: BindingKind) {
        // The check binds neither `_` nor a name the parser could not read.
        if name.is_empty() || &*name == "_" {
            return;
        }
        self.out.bindings.push(Binding { name, range, kind });
        self.scope.push(self.out.bindings.len() - 1);
    }

    fn bind_binder(&mut self, binder: cairn_hir::body::BinderId, kind: BindingKind) {
        let name = self.body.binder(binder).clone();
        let Some(range) = self.map.binders.get(binder.0 as usize) else { return };
        let range = self.ident(*range);
        self.bind(name, range, kind);
    }

    fn block(&mut self, block: &Block) {
        let mark = self.scope.len();
        for &stmt in block.iter() {
            self.stmt(stmt);
        }
        self.scope.truncate(mark);
    }

    /// A statement in a scope of its own (an `else if`), or the binders of a loop or arm and
    /// their block.
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        let mark = self.scope.len();
        f(self);
        self.scope.truncate(mark);
    }

    fn stmt(&mut self, id: StmtId) {
        let body = self.body;
        match body.stmt(id) {
            Stmt::Let { binder, mutable, init, .. } => {
                // The initializer is read before the name is bound.
                self.expr(*init, false);
                let string =
                    matches!(body.expr(body.unparen(*init)), Expr::Literal(cairn_hir::body::Literal::String(_)));
                self.bind_binder(*binder, BindingKind::Let { mutable: *mutable, string });
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(*target, true);
                self.expr(*value, false);
            }
            Stmt::Expr(e) => self.expr(*e, false),
            Stmt::If { cond, then, els } => {
                self.expr(*cond, false);
                self.block(then);
                match els {
                    Some(Else::Block(block)) => self.block(block),
                    Some(Else::If(nested)) => self.scoped(|walk| walk.stmt(*nested)),
                    None => {}
                }
            }
            Stmt::While { cond, body: block } => {
                self.expr(*cond, false);
                self.block(block);
            }
            Stmt::ForRange { binder, lo, hi, body: block } => {
                self.expr(*lo, false);
                self.expr(*hi, false);
                self.scoped(|walk| {
                    walk.bind_binder(*binder, BindingKind::LoopBinder);
                    walk.block(block);
                });
            }
            Stmt::Each { binder, count, body: block } => {
                self.expr(*count, false);
                self.scoped(|walk| {
                    walk.bind_binder(*binder, BindingKind::LoopBinder);
                    walk.block(block);
                });
            }
            Stmt::ForEach { index, element, iterable, body: block } => {
                self.expr(*iterable, false);
                self.scoped(|walk| {
                    if let Some(index) = index {
                        walk.bind_binder(*index, BindingKind::LoopBinder);
                    }
                    walk.bind_binder(*element, BindingKind::LoopBinder);
                    walk.block(block);
                });
            }
            Stmt::Match { subject, arms } => {
                self.expr(*subject, false);
                for arm in arms.iter() {
                    self.scoped(|walk| {
                        if let Some(binder) = arm.binder {
                            walk.bind_binder(binder, BindingKind::MatchBinder);
                        }
                        walk.block(&arm.body);
                    });
                }
            }
            Stmt::Return(Some(value)) => self.expr(*value, false),
            Stmt::Block(block) => self.block(block),
            Stmt::Stack { binder, capacity, .. } => {
                self.expr(*capacity, false);
                self.bind_binder(*binder, BindingKind::Stack);
            }
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Missing | Stmt::Unsupported(_) => {}
        }
    }

    fn expr(&mut self, id: ExprId, written: bool) {
        let body = self.body;
        match body.expr(id) {
            Expr::Name(name) => {
                let Some(&binding) = self.scope.iter().rev().find(|&&b| self.out.bindings[b].name == *name) else {
                    return;
                };
                let Some(range) = self.map.exprs.get(id.0 as usize) else { return };
                let range = self.ident(*range);
                self.out.uses.push(Use { range, binding, written });
            }
            Expr::Paren(inner) => self.expr(*inner, written),
            Expr::Call { callee, args } => {
                if !matches!(body.expr(*callee), Expr::Name(_)) {
                    self.expr(*callee, false);
                }
                for arg in args.iter() {
                    self.expr(*arg, false);
                }
            }
            Expr::Field { base, .. } => self.expr(*base, written),
            Expr::Index { base, indices } => {
                self.expr(*base, written);
                for index in indices.iter() {
                    self.expr(*index, false);
                }
            }
            Expr::Part { base, lo, hi } => {
                self.expr(*base, written);
                self.expr(*lo, false);
                self.expr(*hi, false);
            }
            Expr::Unary { operand, .. } => self.expr(*operand, false),
            Expr::Binary { lhs, rhs, .. } => {
                self.expr(*lhs, false);
                self.expr(*rhs, false);
            }
            Expr::Try(inner) => self.expr(*inner, false),
            Expr::Missing | Expr::Literal(_) | Expr::Unsupported(_) => {}
        }
    }
}
