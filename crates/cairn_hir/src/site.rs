//! What the checker knows at one expression site of a function (protocol §3.2 `focus`): the
//! expression's kind, its type, the type its context expects, and the bindings in scope there.
//!
//! Read from the memoized body, source map, body scopes and body check; nothing is re-checked or
//! resolved again: the bindings in scope are the body's scopes at the site, with the types the
//! check gave its binders. The expected
//! type is stated only where the context fixes one (a typed `let`, an assignment, a condition, a
//! `return`, a range bound, an argument of a declared function, an operand of `!`, `&&` or `||`); elsewhere it
//! is `None`, which the packet shows as `null`.

use cairn_syntax::TextRange;

use crate::Item;
use crate::body::{BinaryOp, Block, Body, BodySourceMap, Else, Expr, ExprId, Stmt, StmtId, UnaryOp};
use crate::check::FnCheck;
use crate::db::Db;
use crate::requested::representative_check;
use crate::scopes::{BinderKind, LocalRef};
use crate::signature::fn_signature;
use crate::types::Ty;

/// One binding in scope at a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteBinding {
    pub name: String,
    /// Its type as the checker gave it, when known.
    pub ty: Option<String>,
    pub mutable: bool,
    pub constant: bool,
}

/// The checker's record of one expression site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteFacts {
    /// The kind of expression (`call`, `binary`, `name`, `literal`, …).
    pub tag: &'static str,
    pub ty: Option<String>,
    pub expected: Option<String>,
    /// Parameters first, then locals in order of declaration; a later binding of a name hides
    /// an earlier one (only one is listed).
    pub bindings: Vec<SiteBinding>,
}

/// The facts of the expression whose range (relative to the declaration) is `range`.
pub fn site_facts(db: &dyn Db, item: Item, range: TextRange) -> Option<SiteFacts> {
    let body = crate::body::fn_body(db, item);
    let map = crate::body::fn_source_map(db, item);
    let check = representative_check(db, item);
    // The outermost expression with exactly this range.
    let id = (0..body.exprs.len()).find(|i| map.exprs.get(*i) == Some(&range)).map(|i| ExprId(i as u32))?;
    let signature = fn_signature(db, item);
    let mut walk = Walk { body, map: &map, check, target: id, range, ret: &signature.ret, found: None };
    walk.block(&body.root);
    let expected = walk.found?;
    let scopes = crate::scopes::body_scopes(db, item);
    let mut visible = scopes.scope_of(id).map(|scope| scopes.visible(scope)).unwrap_or_default();
    // Parameters first, then locals in order of declaration.
    visible.reverse();
    let bindings = visible
        .into_iter()
        .map(|(name, local)| {
            let (ty, mutable) = match local {
                LocalRef::Param(i) => (signature.params.get(i as usize).and_then(|p| shown(&p.ty)), false),
                LocalRef::Binder(binder) => match scopes.binder_kind(binder) {
                    BinderKind::Let { mutable } => (check.binder_types.get(binder.0 as usize).and_then(shown), mutable),
                    // A stack array's name is a writable view; its type is not shown (nor an
                    // arm's payload binder's), as before the scopes served this.
                    BinderKind::Stack => (None, true),
                    BinderKind::Arm => (None, false),
                    BinderKind::Loop | BinderKind::ClosureParam => {
                        (check.binder_types.get(binder.0 as usize).and_then(shown), false)
                    }
                },
            };
            SiteBinding { name: name.to_string(), ty, mutable, constant: false }
        })
        .collect();
    Some(SiteFacts { tag: tag(body.expr(id)), ty: type_of(check, id), expected, bindings })
}

fn tag(expr: &Expr) -> &'static str {
    match expr {
        Expr::Missing => "missing",
        Expr::Literal(_) => "literal",
        Expr::Name(_) => "name",
        Expr::Paren(_) => "paren",
        Expr::Call { .. } => "call",
        Expr::Field { .. } => "field",
        Expr::Index { .. } => "index",
        Expr::Part { .. } => "part",
        Expr::Unary { .. } => "unary",
        Expr::Binary { .. } => "binary",
        Expr::Try(_) => "try",
        Expr::Closure(_) => "closure",
        Expr::Spawn { .. } => "spawn",
        Expr::TypeArg(_) => "type",
        Expr::Unsupported(_) => "other",
    }
}

fn shown(ty: &Ty) -> Option<String> {
    (!ty.is_error()).then(|| ty.to_string())
}

fn type_of(check: &FnCheck, id: ExprId) -> Option<String> {
    check.expr_types.get(id.0 as usize).and_then(shown)
}

struct Walk<'a> {
    body: &'a Body,
    map: &'a BodySourceMap,
    check: &'a FnCheck,
    target: ExprId,
    range: TextRange,
    ret: &'a Ty,
    /// The expected type, once the site is reached.
    found: Option<Option<String>>,
}

impl Walk<'_> {
    fn contains(&self, stmt: StmtId) -> bool {
        self.map.stmts.get(stmt.0 as usize).is_some_and(|r| r.contains_range(self.range))
    }

    /// The type of the parameter the checker paired argument `id` with (a type parameter
    /// states no expectation).
    fn argument_expectation(&self, id: ExprId) -> Option<String> {
        self.check.argument_type(id).and_then(|ty| match ty {
            Ty::Param(_) => None,
            ty => shown(ty),
        })
    }

    fn reach(&mut self, expected: Option<String>) {
        if self.found.is_none() {
            self.found = Some(expected);
        }
    }

    fn block(&mut self, block: &Block) {
        for &stmt in block.iter() {
            if self.found.is_some() {
                break;
            }
            if self.contains(stmt) {
                self.stmt(stmt);
            }
        }
    }

    fn stmt(&mut self, stmt: StmtId) {
        let body = self.body;
        match body.stmt(stmt) {
            Stmt::Let { ty, init, .. } => {
                let expected = if ty.is_some() { type_of(self.check, *init) } else { None };
                self.expr(*init, expected);
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(*target, None);
                let expected = type_of(self.check, *target);
                self.expr(*value, expected);
            }
            Stmt::Expr(e) => self.expr(*e, None),
            Stmt::If { cond, then, els } => {
                self.expr(*cond, Some("bool".into()));
                self.block(then);
                match els {
                    Some(Else::If(next)) if self.contains(*next) => self.stmt(*next),
                    Some(Else::Block(block)) => self.block(block),
                    _ => {}
                }
            }
            Stmt::While { cond, body: inner } => {
                self.expr(*cond, Some("bool".into()));
                self.block(inner);
            }
            Stmt::ForRange { lo, hi, body: inner, .. } => {
                self.expr(*lo, Some("usize".into()));
                self.expr(*hi, Some("usize".into()));
                self.block(inner);
            }
            Stmt::ForEach { iterable, body: inner, .. } => {
                self.expr(*iterable, None);
                self.block(inner);
            }
            Stmt::Each { count, body: inner, .. } => {
                self.expr(*count, None);
                self.block(inner);
            }
            Stmt::Match { subject, arms } => {
                self.expr(*subject, None);
                for arm in arms.iter() {
                    if self.found.is_some() {
                        break;
                    }
                    self.block(&arm.body);
                }
            }
            Stmt::Return(Some(e)) => self.expr(*e, shown(self.ret)),
            Stmt::Block(block) | Stmt::Unsafe(block) => self.block(block),
            Stmt::Stack { capacity, .. } | Stmt::Buffer { capacity, .. } => self.expr(*capacity, None),
            Stmt::Unpack { value, .. } => self.expr(*value, None),
            Stmt::Defer(inner) => self.stmt(*inner),
            Stmt::Parallel { count, body: inner, .. } => {
                self.expr(*count, Some("usize".into()));
                self.block(inner);
            }
            Stmt::Collect(c) => {
                if let Some(target) = c.target {
                    self.expr(target, None);
                }
                self.expr(c.count, Some("usize".into()));
                if let Some(pred) = c.pred {
                    self.expr(pred, Some("bool".into()));
                }
                self.expr(c.value, None);
            }
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Missing | Stmt::Unsupported(_) => {}
        }
    }

    /// Looks for the site in expression `id`, whose context expects `expected`.
    fn expr(&mut self, id: ExprId, expected: Option<String>) {
        if self.found.is_some() {
            return;
        }
        let Some(range) = self.map.exprs.get(id.0 as usize) else { return };
        if !range.contains_range(self.range) {
            return;
        }
        if id == self.target {
            self.reach(expected);
            return;
        }
        match self.body.expr(id) {
            Expr::Paren(inner) => self.expr(*inner, expected),
            Expr::Call { callee, args } => {
                self.expr(*callee, None);
                // The checker paired each argument with its parameter (a method call's receiver,
                // omitted extents): its record says which type each one was checked against.
                for arg in args.iter() {
                    self.expr(*arg, self.argument_expectation(*arg));
                }
            }
            // The base of a method call's callee is its receiver, the first argument.
            Expr::Field { base, .. } => self.expr(*base, self.argument_expectation(*base)),
            Expr::Index { base, indices } => {
                self.expr(*base, None);
                for index in indices.iter() {
                    self.expr(*index, None);
                }
            }
            Expr::Part { base, lo, hi } => {
                self.expr(*base, None);
                self.expr(*lo, None);
                self.expr(*hi, None);
            }
            Expr::Unary { op, operand } => {
                let expected = matches!(op, UnaryOp::Not).then(|| "bool".to_string());
                self.expr(*operand, expected);
            }
            Expr::Binary { op, lhs, rhs } => {
                let expected = matches!(op, BinaryOp::And | BinaryOp::Or).then(|| "bool".to_string());
                self.expr(*lhs, expected.clone());
                self.expr(*rhs, expected);
            }
            Expr::Try(inner) => self.expr(*inner, None),
            Expr::Closure(closure) => self.block(&closure.body),
            Expr::Spawn { work: crate::body::SpawnWork::Call(call), .. } => self.expr(*call, None),
            Expr::Spawn { work: crate::body::SpawnWork::Region(region), .. } => self.stmt(*region),
            Expr::Missing | Expr::Literal(_) | Expr::Name(_) | Expr::TypeArg(_) | Expr::Unsupported(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{SourceText, Workspace};

    const PROGRAM: &str = "fn total(n:usize, xs:ro<u8>[n], bias:u64) -> u64 {\n  let mut s:u64 = bias;\n  for x in xs { s += u64(x); }\n  return s;\n}\n\nfn scaled(x:u32, k:u64) -> u64 {\n  return u64(x) * k;\n}\n\nfn main() -> i32 {\n  let a:u32 = 2;\n  let t = total(\"abc\", 7);\n  let m = a.scaled(5);\n  if t + m != 311 { return 1; }\n  return 0;\n}\n";

    /// The expected type at the first site of `main` whose text is `text`.
    fn expected_at(text: &str) -> Option<String> {
        let mut workspace = Workspace::new(vec![SourceText { name: "m.cairn".into(), text: PROGRAM.into() }]);
        let outcome = workspace.check();
        assert!(outcome.refusal.is_none(), "the program checks");
        let db = workspace.db();
        let item = workspace.function_named("main").expect("main");
        let declaration = item.syntax(db).syntax_node().text().to_string();
        let map = crate::body::fn_source_map(db, item);
        let range = map
            .exprs
            .iter()
            .find(|range| &declaration[usize::from(range.start())..usize::from(range.end())] == text)
            .copied()
            .expect("the site");
        super::site_facts(db, item, range).expect("facts").expected
    }

    #[test]
    fn an_argument_after_omitted_extents_expects_its_own_parameter() {
        // `total(n, xs, bias)` called as `total("abc", 7)`: 7 is `bias`, not `xs`.
        assert_eq!(expected_at("7").as_deref(), Some("u64"));
    }

    #[test]
    fn a_method_call_pairs_the_receiver_with_the_first_parameter() {
        // `a.scaled(5)` is `scaled(a, 5)`: 5 is `k`, and the receiver `a` is `x`.
        assert_eq!(expected_at("5").as_deref(), Some("u64"));
        assert_eq!(expected_at("a").as_deref(), Some("u32"));
    }
}
