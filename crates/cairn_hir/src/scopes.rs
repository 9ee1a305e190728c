//! The scopes of one body: which parameter or binder each bare name means (like
//! rust-analyzer's `ExprScopes`), position-free, computed from the body alone.
//!
//! [`body_scopes`] walks the body once, in the language's scoping rules (language §7): a
//! parameter is visible in the whole body; a `let`, `stack`, `buffer` or unpacking binder from the statement after
//! it to the end of its block; a loop binder in the loop's body; a `match` arm's binder in that
//! arm. Every `Expr::Name` that a local binding answers gets a [`LocalRef`]; the rest are names
//! of declarations (constants, variants, functions), which the body check resolves and records
//! in its `Resolution`s (`check::Resolution`). Nothing else in the toolchain resolves a local
//! again: the checker's record of resolutions, MIR lowering, the expression sites of the edit
//! host and the language server all read these scopes.
//!
//! The body check asks these scopes which binding a name means where it stands (`lookup`, at
//! the statement's or expression's scope) and whether a binder would shadow one
//! (`binder_parent`); it keeps only what it learned of each binding (type, mutability).
//!
//! Invariant: the result depends only on the body (`fn_body`), so an edit that leaves the body
//! equal leaves it equal; scopes are numbered in walk order, which the body's ids fix.

use std::sync::Arc;

use cairn_syntax::{SyntaxKind, SyntaxNode, TextRange};

use crate::body::{Arm, BinderId, Block, Body, Else, Expr, ExprId, Stmt, fn_body};
use crate::db::Db;
use crate::input::Item;

/// What a bare name means when a local binding answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LocalRef {
    /// The function's parameter at this index.
    Param(u32),
    /// A binder of the body (`let`, `stack`, a loop, a `match` arm).
    Binder(BinderId),
}

/// Index of a scope in [`BodyScopes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeId(pub u32);

/// One scope: the bindings it adds, and the scope it is nested in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScopeData {
    pub parent: Option<ScopeId>,
    pub entries: Box<[(Arc<str>, LocalRef)]>,
}

/// What kind of statement introduced a binder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinderKind {
    Let {
        mutable: bool,
    },
    /// A `stack` array (an `rw` view whose name is not assignable).
    Stack,
    /// A loop's binder (`for`, `each`).
    Loop,
    /// A `match` arm's payload binder.
    Arm,
    /// A closure's parameter.
    ClosureParam,
}

/// The scopes of a body and what its names mean.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct BodyScopes {
    scopes: Box<[ScopeData]>,
    /// Per binder: what introduced it.
    binder_kinds: Box<[BinderKind]>,
    /// Per expression: the scope it is written in.
    expr_scopes: Box<[ScopeId]>,
    /// Per expression: for a bare name a local binding answers, that binding.
    names: Box<[Option<LocalRef>]>,
    /// Per statement: the scope it is written in (before any binder it introduces).
    stmt_scopes: Box<[ScopeId]>,
    /// Per binder: the scope its own scope hangs from (what it could shadow).
    binder_parents: Box<[ScopeId]>,
}

impl BodyScopes {
    /// What introduced a binder.
    pub fn binder_kind(&self, binder: BinderId) -> BinderKind {
        self.binder_kinds.get(binder.0 as usize).copied().unwrap_or(BinderKind::Loop)
    }

    /// The local binding a name expression means (`None`: not a local, or not a name).
    pub fn resolve(&self, expr: ExprId) -> Option<LocalRef> {
        self.names.get(expr.0 as usize).copied().flatten()
    }

    /// The scope an expression is written in.
    pub fn scope_of(&self, expr: ExprId) -> Option<ScopeId> {
        self.expr_scopes.get(expr.0 as usize).copied()
    }

    /// The scope a statement is written in (a binder it introduces is not in it).
    pub fn stmt_scope(&self, stmt: crate::body::StmtId) -> Option<ScopeId> {
        self.stmt_scopes.get(stmt.0 as usize).copied()
    }

    /// The scope a binder is introduced into: a name visible there is one it would shadow.
    pub fn binder_parent(&self, binder: BinderId) -> Option<ScopeId> {
        self.binder_parents.get(binder.0 as usize).copied()
    }

    /// The binding `name` means in `scope` (the innermost visible one).
    pub fn lookup(&self, scope: ScopeId, name: &str) -> Option<LocalRef> {
        lookup_in(&self.scopes, scope, name)
    }

    /// The bindings visible in `scope`, innermost first; a name hidden by a later binding of
    /// the same name is listed once, as the later one.
    pub fn visible(&self, scope: ScopeId) -> Vec<(Arc<str>, LocalRef)> {
        let mut out: Vec<(Arc<str>, LocalRef)> = Vec::new();
        let mut at = Some(scope);
        while let Some(id) = at {
            let data = &self.scopes[id.0 as usize];
            for (name, local) in data.entries.iter().rev() {
                if !out.iter().any(|(n, _)| n == name) {
                    out.push((name.clone(), *local));
                }
            }
            at = data.parent;
        }
        out
    }

    /// Every name expression that means `local`, in id order.
    pub fn uses_of(&self, local: LocalRef) -> Vec<ExprId> {
        self.names.iter().enumerate().filter(|(_, r)| **r == Some(local)).map(|(i, _)| ExprId(i as u32)).collect()
    }
}

#[salsa::tracked(returns(ref))]
pub fn body_scopes(db: &dyn Db, item: Item) -> BodyScopes {
    scopes_of(fn_body(db, item))
}

/// The scopes of a body (see the module comment).
pub(crate) fn scopes_of(body: &Body) -> BodyScopes {
    let mut walk = Walk {
        body,
        binder_kinds: vec![BinderKind::Loop; body.binders.len()],
        scopes: Vec::new(),
        expr_scopes: vec![ScopeId(0); body.exprs.len()],
        names: vec![None; body.exprs.len()],
        stmt_scopes: vec![ScopeId(0); body.stmts.len()],
        binder_parents: vec![ScopeId(0); body.binders.len()],
    };
    let params: Vec<(Arc<str>, LocalRef)> =
        body.params.iter().enumerate().map(|(i, name)| (name.clone(), LocalRef::Param(i as u32))).collect();
    let root = walk.push(None, params);
    walk.block(&body.root, root);
    if let Some(when) = body.when {
        walk.expr(when, root);
    }
    BodyScopes {
        binder_kinds: walk.binder_kinds.into_boxed_slice(),
        scopes: walk.scopes.into_boxed_slice(),
        expr_scopes: walk.expr_scopes.into_boxed_slice(),
        names: walk.names.into_boxed_slice(),
        stmt_scopes: walk.stmt_scopes.into_boxed_slice(),
        binder_parents: walk.binder_parents.into_boxed_slice(),
    }
}

/// The binding `name` means in `scope` of `scopes`: the innermost entry of that name on the
/// way out (the one rule of visibility, for the walk and for its readers).
fn lookup_in(scopes: &[ScopeData], scope: ScopeId, name: &str) -> Option<LocalRef> {
    let mut at = Some(scope);
    while let Some(id) = at {
        let data = scopes.get(id.0 as usize)?;
        if let Some((_, local)) = data.entries.iter().rev().find(|(n, _)| &**n == name) {
            return Some(*local);
        }
        at = data.parent;
    }
    None
}

struct Walk<'a> {
    body: &'a Body,
    binder_kinds: Vec<BinderKind>,
    scopes: Vec<ScopeData>,
    expr_scopes: Vec<ScopeId>,
    names: Vec<Option<LocalRef>>,
    stmt_scopes: Vec<ScopeId>,
    binder_parents: Vec<ScopeId>,
}

impl Walk<'_> {
    fn push(&mut self, parent: Option<ScopeId>, entries: Vec<(Arc<str>, LocalRef)>) -> ScopeId {
        let entries: Vec<(Arc<str>, LocalRef)> = entries.into_iter().filter(|(n, _)| &**n != "_").collect();
        self.scopes.push(ScopeData { parent, entries: entries.into_boxed_slice() });
        ScopeId(self.scopes.len() as u32 - 1)
    }

    fn binder(&mut self, parent: ScopeId, binder: BinderId) -> ScopeId {
        if let Some(slot) = self.binder_parents.get_mut(binder.0 as usize) {
            *slot = parent;
        }
        let name = self.body.binder(binder).clone();
        self.push(Some(parent), vec![(name, LocalRef::Binder(binder))])
    }

    fn lookup(&self, scope: ScopeId, name: &str) -> Option<LocalRef> {
        lookup_in(&self.scopes, scope, name)
    }

    /// A block in its own scope; bindings of its statements reach to its end.
    fn block(&mut self, block: &Block, parent: ScopeId) {
        let mut scope = self.push(Some(parent), Vec::new());
        for &stmt in block.iter() {
            scope = self.stmt(stmt, scope);
        }
    }

    /// One statement in `scope`; returns the scope the next statement of its block is in.
    fn stmt(&mut self, id: crate::body::StmtId, scope: ScopeId) -> ScopeId {
        if let Some(slot) = self.stmt_scopes.get_mut(id.0 as usize) {
            *slot = scope;
        }
        let body = self.body;
        match body.stmt(id) {
            Stmt::Missing | Stmt::Break | Stmt::Continue | Stmt::Unsupported(_) => scope,
            Stmt::Let { binder, init, mutable, .. } => {
                self.expr(*init, scope);
                self.binder_kinds[binder.0 as usize] = BinderKind::Let { mutable: *mutable };
                self.binder(scope, *binder)
            }
            Stmt::Stack { binder, capacity, .. } | Stmt::Buffer { binder, capacity, .. } => {
                self.expr(*capacity, scope);
                self.binder_kinds[binder.0 as usize] = BinderKind::Stack;
                self.binder(scope, *binder)
            }
            Stmt::Unpack { binders, mutable, value, .. } => {
                self.expr(*value, scope);
                let mut scope = scope;
                for binder in binders.iter() {
                    self.binder_kinds[binder.0 as usize] = BinderKind::Let { mutable: *mutable };
                    scope = self.binder(scope, *binder);
                }
                scope
            }
            Stmt::Defer(inner) => {
                self.stmt(*inner, scope);
                scope
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(*target, scope);
                self.expr(*value, scope);
                scope
            }
            Stmt::Expr(e) => {
                self.expr(*e, scope);
                scope
            }
            Stmt::Return(value) => {
                if let Some(e) = value {
                    self.expr(*e, scope);
                }
                scope
            }
            Stmt::If { cond, then, els } => {
                self.expr(*cond, scope);
                self.block(then, scope);
                match els {
                    None => {}
                    Some(Else::Block(block)) => self.block(block, scope),
                    Some(Else::If(nested)) => {
                        self.stmt(*nested, scope);
                    }
                }
                scope
            }
            Stmt::While { cond, body: block } => {
                self.expr(*cond, scope);
                self.block(block, scope);
                scope
            }
            Stmt::ForRange { binder, lo, hi, body: block } => {
                self.expr(*lo, scope);
                self.expr(*hi, scope);
                let inner = self.binder(scope, *binder);
                self.block(block, inner);
                scope
            }
            Stmt::Each { binder, count, body: block } => {
                self.expr(*count, scope);
                let inner = self.binder(scope, *binder);
                self.block(block, inner);
                scope
            }
            Stmt::Parallel { binder, count, body: block } => {
                self.expr(*count, scope);
                let inner = self.binder(scope, *binder);
                self.block(block, inner);
                scope
            }
            Stmt::Collect(c) => {
                if let Some(target) = c.target {
                    self.expr(target, scope);
                }
                self.expr(c.count, scope);
                let inner = self.binder(scope, c.binder);
                if let Some(pred) = c.pred {
                    self.expr(pred, inner);
                }
                self.expr(c.value, inner);
                match c.name {
                    Some(name) => {
                        self.binder_kinds[name.0 as usize] = BinderKind::Let { mutable: false };
                        self.binder(scope, name)
                    }
                    None => scope,
                }
            }
            Stmt::ForEach { index, element, iterable, body: block } => {
                self.expr(*iterable, scope);
                let mut inner = scope;
                if let Some(index) = index {
                    inner = self.binder(inner, *index);
                }
                inner = self.binder(inner, *element);
                self.block(block, inner);
                scope
            }
            Stmt::Match { subject, arms } => {
                self.expr(*subject, scope);
                for arm in arms.iter() {
                    self.arm(arm, scope);
                }
                scope
            }
            Stmt::Block(block) | Stmt::Unsafe(block) => {
                self.block(block, scope);
                scope
            }
        }
    }

    fn arm(&mut self, arm: &Arm, scope: ScopeId) {
        let inner = match arm.binder {
            Some(binder) => {
                self.binder_kinds[binder.0 as usize] = BinderKind::Arm;
                self.binder(scope, binder)
            }
            None => scope,
        };
        self.block(&arm.body, inner);
    }

    fn expr(&mut self, id: ExprId, scope: ScopeId) {
        self.expr_scopes[id.0 as usize] = scope;
        let body = self.body;
        match body.expr(id) {
            Expr::Missing | Expr::Literal(_) | Expr::TypeArg(_) | Expr::Unsupported(_) => {}
            Expr::Name(name) => self.names[id.0 as usize] = self.lookup(scope, name),
            Expr::Spawn { work, after } => {
                for &ticket in after.iter() {
                    self.expr(ticket, scope);
                }
                match work {
                    crate::body::SpawnWork::Call(call) => self.expr(*call, scope),
                    crate::body::SpawnWork::Region(region) => {
                        self.stmt(*region, scope);
                    }
                }
            }
            Expr::Paren(inner) | Expr::Try(inner) => self.expr(*inner, scope),
            Expr::Call { callee, args } => {
                self.expr(*callee, scope);
                for &arg in args.iter() {
                    self.expr(arg, scope);
                }
            }
            Expr::Field { base, .. } => self.expr(*base, scope),
            Expr::Index { base, indices } => {
                self.expr(*base, scope);
                for &index in indices.iter() {
                    self.expr(index, scope);
                }
            }
            Expr::Part { base, lo, hi } => {
                self.expr(*base, scope);
                self.expr(*lo, scope);
                self.expr(*hi, scope);
            }
            Expr::Unary { operand, .. } => self.expr(*operand, scope),
            Expr::Binary { lhs, rhs, .. } => {
                self.expr(*lhs, scope);
                self.expr(*rhs, scope);
            }
            // A closure's parameters are visible in its body, which sees the enclosing scope.
            Expr::Closure(closure) => {
                let (params, block) = (&closure.params, &closure.body);
                let mut inner = scope;
                for (binder, _) in params.iter() {
                    self.binder_kinds[binder.0 as usize] = BinderKind::ClosureParam;
                    inner = self.binder(inner, *binder);
                }
                self.block(block, inner);
            }
        }
    }
}

/// What kind of binder introduced a local, as an editor shows it.
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

/// One local of a function, where its binder is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub name: Arc<str>,
    /// The binder's identifier, relative to the declaration's start.
    pub range: TextRange,
    pub kind: BindingKind,
    pub local: LocalRef,
}

/// One name that refers to a local.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// The identifier, relative to the declaration's start.
    pub range: TextRange,
    /// Its index in [`Locals::bindings`].
    pub binding: usize,
    /// True for an assignment's target (or the root of one: `p` in `p.x = 1`).
    pub written: bool,
}

/// A function's locals and every use of them, with their places: the body's scopes
/// ([`body_scopes`]) laid over its source map, for the language server's navigation, highlights,
/// tokens and fixes. A broken body is resolved as far as it lowers.
///
/// Deliberately absent: names inside written types (extents) and the callee of a call, which name
/// parameters or functions by rules of their own.
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

/// The locals of `item` (a function or test; any other item has none), with their places.
pub fn locals(db: &dyn Db, item: Item) -> Locals {
    let node = item.syntax(db).syntax_node();
    if !matches!(node.kind(), SyntaxKind::FN | SyntaxKind::TEST) {
        return Locals::default();
    }
    let body = fn_body(db, item);
    let map = crate::body::fn_source_map(db, item);
    let scopes = body_scopes(db, item);
    let ident = |range: TextRange| identifier_in(&node, range);
    let mut out = Locals::default();
    let mut index_of: std::collections::HashMap<LocalRef, usize> = std::collections::HashMap::new();
    let mut push = |out: &mut Locals, name: &Arc<str>, range: Option<&TextRange>, kind, local| {
        // The check binds neither `_` nor a name the parser could not read.
        let Some(range) = range else { return };
        if name.is_empty() || &**name == "_" {
            return;
        }
        index_of.insert(local, out.bindings.len());
        out.bindings.push(Binding { name: name.clone(), range: ident(*range), kind, local });
    };
    for (i, name) in body.params.iter().enumerate() {
        push(&mut out, name, map.params.get(i), BindingKind::Param, LocalRef::Param(i as u32));
    }
    let mut inits: std::collections::HashMap<BinderId, ExprId> = std::collections::HashMap::new();
    let mut written: Vec<ExprId> = Vec::new();
    for stmt in &body.stmts {
        match stmt {
            Stmt::Let { binder, init, .. } => {
                inits.insert(*binder, *init);
            }
            Stmt::Assign { target, .. } => written.push(root_of(body, *target)),
            _ => {}
        }
    }
    for (i, name) in body.binders.iter().enumerate() {
        let binder = BinderId(i as u32);
        let kind = match scopes.binder_kind(binder) {
            BinderKind::Let { mutable } => {
                let string = inits.get(&binder).is_some_and(|init| {
                    matches!(body.expr(body.unparen(*init)), Expr::Literal(crate::body::Literal::String(_)))
                });
                BindingKind::Let { mutable, string }
            }
            BinderKind::Stack => BindingKind::Stack,
            BinderKind::Loop => BindingKind::LoopBinder,
            BinderKind::Arm => BindingKind::MatchBinder,
            BinderKind::ClosureParam => BindingKind::Param,
        };
        push(&mut out, name, map.binders.get(i), kind, LocalRef::Binder(binder));
    }
    let callees: Vec<ExprId> = body
        .exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Call { callee, .. } if matches!(body.expr(*callee), Expr::Name(_)) => Some(*callee),
            _ => None,
        })
        .collect();
    for i in 0..body.exprs.len() {
        let id = ExprId(i as u32);
        let (Some(local), Some(range)) = (scopes.resolve(id), map.exprs.get(i)) else { continue };
        if callees.contains(&id) {
            continue;
        }
        let Some(&binding) = index_of.get(&local) else { continue };
        out.uses.push(Use { range: ident(*range), binding, written: written.contains(&id) });
    }
    out
}

/// The name at the root of an assignment target (`p` in `p.x[i] = …`).
fn root_of(body: &Body, e: ExprId) -> ExprId {
    match body.expr(e) {
        Expr::Paren(inner) => root_of(body, *inner),
        Expr::Field { base, .. } | Expr::Index { base, .. } | Expr::Part { base, .. } => root_of(body, *base),
        _ => e,
    }
}

/// The identifier token within `range` of the declaration `node` (a node's range may carry
/// trivia).
fn identifier_in(node: &SyntaxNode, range: TextRange) -> TextRange {
    if !node.text_range().contains_range(range) {
        return range;
    }
    let element = node.covering_element(range);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SourceText, Workspace};

    fn scopes(text: &str, function: &str) -> (Arc<Body>, BodyScopes) {
        let workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.to_string() }]);
        let item = workspace.files()[0].items.iter().find(|i| &*i.key.name == function).expect("declared").item;
        (fn_body(workspace.db(), item).clone(), body_scopes(workspace.db(), item).clone())
    }

    fn meaning(body: &Body, scopes: &BodyScopes) -> Vec<(String, Option<String>)> {
        (0..body.exprs.len())
            .filter_map(|i| match body.expr(ExprId(i as u32)) {
                Expr::Name(name) => Some((
                    name.to_string(),
                    scopes.resolve(ExprId(i as u32)).map(|r| match r {
                        LocalRef::Param(p) => format!("param {p}"),
                        LocalRef::Binder(b) => format!("binder {}", b.0),
                    }),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn names_mean_the_binding_in_scope_where_they_are_written() {
        let text = "const K:u32 = 2;\nfn f(n:u32) -> u32 {\n  let a = n + K;\n  if a > 1 { let b = a; return b; }\n  for i in 0..3 { let c = i; }\n  return a;\n}\n";
        let (body, scopes) = scopes(text, "f");
        let meaning = meaning(&body, &scopes);
        let shown: Vec<String> = meaning.iter().map(|(n, m)| format!("{n}:{}", m.as_deref().unwrap_or("-"))).collect();
        // `K` is a constant (the checker resolves it), `n` the parameter, `a` the first let,
        // `b` the let in the branch, `i` the loop binder.
        assert_eq!(shown, ["n:param 0", "K:-", "a:binder 0", "a:binder 0", "b:binder 1", "i:binder 2", "a:binder 0"]);
    }

    #[test]
    fn a_let_is_not_visible_in_its_own_initializer_nor_after_its_block() {
        let text = "fn f(x:u32) -> u32 {\n  { let y = 1; }\n  let x2 = y;\n  return x2;\n}\n";
        let (body, scopes) = scopes(text, "f");
        let meaning = meaning(&body, &scopes);
        assert_eq!(meaning[0], ("y".to_string(), None), "y is out of scope after its block");
        let visible: Vec<String> = scopes
            .visible(scopes.scope_of(ExprId(body.exprs.len() as u32 - 1)).expect("a scope"))
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(visible, ["x2", "x"]);
    }
}
