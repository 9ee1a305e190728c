//! Lowering a declaration's syntax into a [`Body`](super::Body) and its source map: one
//! left-to-right walk that gives every expression, statement and binder its id (the same text
//! always gets the same ids) and records each one's range; and the small syntax readers the rest
//! of the crate shares (`lower_type`, `unescape`).

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};
use cairn_syntax::{SyntaxKind, SyntaxNode, TextRange};

use super::*;

/// The body and source map of a declaration (a function's block or `= expr;` body, a constant's
/// initializer).
pub(super) fn lower(root: SyntaxNode) -> BodyWithSourceMap {
    let mut lower = Lower::default();
    if let Some(list) = ast::Fn::cast(root.clone()).and_then(|f| f.param_list()) {
        let mut names = Vec::new();
        for param in list.params() {
            let name = param.name();
            names.push(Arc::from(name.as_ref().map(|n| n.text()).unwrap_or_default()));
            lower.map.params.push(name.map_or(param.syntax().text_range(), |n| n.syntax().text_range()));
        }
        lower.body.params = Arc::from(names);
    }
    if let Some(when) =
        ast::Fn::cast(root.clone()).and_then(|f| f.implements_clause()).and_then(|clause| clause.when_clause())
    {
        lower.body.when = Some(lower.expr_opt(when.condition(), when.syntax()));
    }
    let block = root.children().find(|c| c.kind() == SyntaxKind::BLOCK);
    let expression = root.children().find(|c| c.kind() == SyntaxKind::EXPR_BODY);
    if root.kind() == SyntaxKind::CONST {
        // A constant's initializer, lowered as an expression body.
        let value = ast::Const::cast(root.clone()).and_then(|c| c.value());
        let id = lower.expr_opt(value, &root);
        let stmt = lower.alloc_stmt(Stmt::Return(Some(id)), root.text_range());
        lower.body.root = Arc::from(vec![stmt]);
        lower.body.expression_body = true;
        lower.body.present = true;
    } else if let Some(block) = block.and_then(ast::Block::cast) {
        lower.body.root = lower.block(&block);
        lower.body.present = true;
    } else if let Some(body) = expression.and_then(ast::ExprBody::cast) {
        let value = lower.expr_opt(body.expr(), body.syntax());
        let stmt = lower.alloc_stmt(Stmt::Return(Some(value)), body.syntax().text_range());
        lower.body.root = Arc::from(vec![stmt]);
        lower.body.expression_body = true;
        lower.body.present = true;
    }
    BodyWithSourceMap { body: Arc::new(lower.body), source_map: Arc::new(lower.map) }
}

#[derive(Default)]
struct Lower {
    body: Body,
    map: BodySourceMap,
}

impl Lower {
    fn alloc_expr(&mut self, expr: Expr, range: TextRange) -> ExprId {
        let id = ExprId(self.body.exprs.len() as u32);
        self.body.exprs.push(expr);
        self.map.exprs.push(range);
        id
    }

    fn alloc_stmt(&mut self, stmt: Stmt, range: TextRange) -> StmtId {
        let id = StmtId(self.body.stmts.len() as u32);
        self.body.stmts.push(stmt);
        self.map.stmts.push(range);
        id
    }

    fn alloc_binder(&mut self, name: Option<ast::Name>, fallback: &SyntaxNode) -> BinderId {
        let id = BinderId(self.body.binders.len() as u32);
        let (text, range) = match name {
            Some(name) => (ident(name.ident()), name.syntax().text_range()),
            None => (Arc::from(""), fallback.text_range()),
        };
        self.body.binders.push(text);
        self.map.binders.push(range);
        id
    }

    fn block(&mut self, block: &ast::Block) -> Block {
        let mut statements = Vec::new();
        for stmt in block.statements() {
            statements.push(self.stmt(&stmt));
        }
        Arc::from(statements)
    }

    fn block_opt(&mut self, block: Option<ast::Block>) -> Block {
        match block {
            Some(block) => self.block(&block),
            None => Arc::from(Vec::new()),
        }
    }

    fn stmt(&mut self, stmt: &ast::Stmt) -> StmtId {
        let syntax = stmt.syntax().clone();
        let range = syntax.text_range();
        let lowered = match stmt {
            ast::Stmt::Let(it) => {
                let binder = self.alloc_binder(it.name(), &syntax);
                let ty = it.ty().map(|t| lower_type(&t));
                let init = self.expr_opt(it.initializer(), &syntax);
                Stmt::Let { binder, mutable: it.is_mut(), ty, init }
            }
            ast::Stmt::Assign(it) => {
                let target = self.expr_opt(it.target(), &syntax);
                let op = it.op().and_then(|t| compound_op(t.kind()));
                let value = self.expr_opt(it.value(), &syntax);
                Stmt::Assign { target, op, value }
            }
            ast::Stmt::Expr(it) => {
                if it.into_clause().is_some() {
                    Stmt::Unsupported(SyntaxKind::INTO_CLAUSE)
                } else {
                    Stmt::Expr(self.expr_opt(it.expr(), &syntax))
                }
            }
            ast::Stmt::If(it) => self.if_stmt(it),
            ast::Stmt::While(it) => {
                let cond = self.expr_opt(it.condition(), &syntax);
                let body = self.block_opt(it.body());
                Stmt::While { cond, body }
            }
            ast::Stmt::For(it) => {
                let names: Vec<ast::Name> = it.names().collect();
                if it.is_range() {
                    let binder = self.alloc_binder(names.first().cloned(), &syntax);
                    let lo = self.expr_opt(it.iterable(), &syntax);
                    let hi = self.expr_opt(it.range_end(), &syntax);
                    let body = self.block_opt(it.body());
                    Stmt::ForRange { binder, lo, hi, body }
                } else {
                    let (index, element) = match names.len() {
                        2 => {
                            let index = self.alloc_binder(names.first().cloned(), &syntax);
                            (Some(index), self.alloc_binder(names.get(1).cloned(), &syntax))
                        }
                        _ => (None, self.alloc_binder(names.first().cloned(), &syntax)),
                    };
                    let iterable = self.expr_opt(it.iterable(), &syntax);
                    let body = self.block_opt(it.body());
                    Stmt::ForEach { index, element, iterable, body }
                }
            }
            ast::Stmt::Each(it) => {
                let binder = self.alloc_binder(it.name(), &syntax);
                let count = self.expr_opt(it.iterable(), &syntax);
                let body = self.block_opt(it.body());
                Stmt::Each { binder, count, body }
            }
            ast::Stmt::Match(it) => {
                let subject = self.expr_opt(it.subject(), &syntax);
                let mut arms = Vec::new();
                for arm in it.arms() {
                    let variant: Arc<[Arc<str>]> = arm
                        .variant()
                        .map(|p| p.segments().map(|s| ident(s.ident())).collect())
                        .unwrap_or_else(|| Arc::from(Vec::new()));
                    let binder = arm
                        .syntax()
                        .children()
                        .find(|c| c.kind() == SyntaxKind::ARM_BINDER)
                        .map(|b| self.alloc_binder(arm.binder(), &b));
                    let (body, braced) = match arm.body() {
                        Some(ast::Stmt::Block(block)) => (self.block(&block), true),
                        Some(other) => (Arc::from(vec![self.stmt(&other)]), false),
                        None => (Arc::from(Vec::new()), true),
                    };
                    let id = ArmId(self.map.arms.len() as u32);
                    self.map.arms.push(arm.syntax().text_range());
                    arms.push(Arm { id, variant, binder, body, braced });
                }
                Stmt::Match { subject, arms: Arc::from(arms) }
            }
            ast::Stmt::Return(it) => {
                let value = it.value().map(|e| self.expr(&e));
                Stmt::Return(value)
            }
            ast::Stmt::Break(_) => Stmt::Break,
            ast::Stmt::Continue(_) => Stmt::Continue,
            ast::Stmt::Block(it) => Stmt::Block(self.block(it)),
            ast::Stmt::Stack(it) => {
                let binder = self.alloc_binder(it.name(), &syntax);
                let element = it.element().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
                let capacity = self.expr_opt(it.capacity(), &syntax);
                Stmt::Stack { binder, element, capacity, placed: it.placement().is_some() }
            }
            ast::Stmt::Buffer(it) => {
                // The capacity is lowered before the binder, as it is evaluated before it exists.
                let element = it.element().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
                let capacity = self.expr_opt(it.capacity(), &syntax);
                let binder = self.alloc_binder(it.name(), &syntax);
                let place = it.placement().map(|p| match p.word().as_ref().map(|w| w.text()) {
                    Some("device") => crate::types::Place::Device,
                    Some("pinned") => crate::types::Place::Pinned,
                    Some("unified") => crate::types::Place::Unified,
                    _ => crate::types::Place::Host,
                });
                Stmt::Buffer { binder, element, capacity, place: place.unwrap_or(crate::types::Place::Host) }
            }
            ast::Stmt::Unpack(it) => {
                let record: Arc<[Arc<str>]> =
                    it.record().map(|p| p.segments().map(|s| ident(s.ident())).collect()).unwrap_or_default();
                let value = self.expr_opt(it.value(), &syntax);
                let binders: Vec<BinderId> = it.names().map(|n| self.alloc_binder(Some(n), &syntax)).collect();
                Stmt::Unpack { record, binders: Arc::from(binders), mutable: it.is_mut(), value }
            }
            ast::Stmt::Unsafe(it) => Stmt::Unsafe(self.block_opt(it.body())),
            ast::Stmt::Parallel(it) if it.after_clause().is_none() => {
                let count = self.expr_opt(it.count(), &syntax);
                let binder = self.alloc_binder(it.name(), &syntax);
                let body = self.block_opt(it.body());
                Stmt::Parallel { binder, count, body }
            }
            ast::Stmt::Collect(it) => match self.collector(it) {
                Some(collector) => Stmt::Collect(Arc::new(collector)),
                None => Stmt::Unsupported(SyntaxKind::COLLECT_STMT),
            },
            ast::Stmt::Defer(it) => match it.stmt() {
                Some(inner) => Stmt::Defer(self.stmt(&inner)),
                None => Stmt::Missing,
            },
            other => Stmt::Unsupported(other.syntax().kind()),
        };
        self.alloc_stmt(lowered, range)
    }

    /// A collector statement; `None` for the `warp` form (tier 2).
    fn collector(&mut self, it: &ast::CollectStmt) -> Option<Collector> {
        let syntax = it.syntax().clone();
        let node = it.collector()?;
        let node = node.syntax().clone();
        let reducer = node.children().find_map(ast::Reducer::cast);
        let op = reducer.as_ref().and_then(|r| ReduceOp::from_text(&r.text()));
        let parallel = node.children_with_tokens().any(|t| t.kind() == SyntaxKind::PARALLEL_KW);
        let binder_name = node.children().find_map(ast::Name::cast);
        let output = node.children().find_map(ast::NameRef::cast);
        let exprs: Vec<ast::Expr> = node.children().filter_map(ast::Expr::cast).collect();
        let kind = match node.kind() {
            SyntaxKind::REDUCE_EXPR => {
                if node.children_with_tokens().any(|t| t.kind() == SyntaxKind::WARP_KW) {
                    return None;
                }
                CollectKind::Reduce
            }
            SyntaxKind::COMPACT_EXPR => CollectKind::Compact,
            SyntaxKind::SCAN_EXPR => CollectKind::Scan {
                exclusive: node.children_with_tokens().any(|t| t.kind() == SyntaxKind::EXCLUSIVE_KW),
            },
            _ => return None,
        };
        // Evaluation order: the target (`out[k]`'s index is evaluated once, before the lanes),
        // the count, then the binder and what each index runs.
        let mut rest = exprs.into_iter();
        let target = match kind {
            CollectKind::Reduce => match ast::ReduceExpr::cast(node.clone()).and_then(|r| r.target()) {
                // `out[k]`: the parser writes the stored view as a bare name, not an expression.
                Some(index) => {
                    let index = index.syntax().clone();
                    rest.next();
                    let base = match index.children().find_map(ast::NameRef::cast) {
                        Some(name) => {
                            let text = ident(name.ident());
                            self.alloc_expr(Expr::Name(text), name.syntax().text_range())
                        }
                        None => self.alloc_expr(Expr::Missing, index.text_range()),
                    };
                    let k = self.expr_opt(index.children().find_map(ast::Expr::cast), &index);
                    Some(self.alloc_expr(Expr::Index { base, indices: Arc::from(vec![k]) }, index.text_range()))
                }
                None => None,
            },
            _ => output.map(|name| {
                let text = ident(name.ident());
                self.alloc_expr(Expr::Name(text), name.syntax().text_range())
            }),
        };
        let count = self.expr_opt(rest.next(), &node);
        let binder = self.alloc_binder(binder_name, &node);
        let pred = match kind {
            CollectKind::Compact => Some(self.expr_opt(rest.next(), &node)),
            _ => None,
        };
        let value = self.expr_opt(rest.next(), &node);
        let name = it.name().map(|n| self.alloc_binder(Some(n), &syntax));
        let ty = it.ty().map(|t| lower_type(&t));
        Some(Collector { kind, op, parallel, name, mutable: it.is_mut(), ty, target, binder, count, pred, value })
    }

    fn if_stmt(&mut self, it: &ast::IfStmt) -> Stmt {
        let syntax = it.syntax().clone();
        let cond = self.expr_opt(it.condition(), &syntax);
        let then = self.block_opt(it.then_block());
        let els = it.else_branch().map(|branch| match branch.if_stmt() {
            Some(nested) => {
                let range = nested.syntax().text_range();
                let lowered = self.if_stmt(&nested);
                Else::If(self.alloc_stmt(lowered, range))
            }
            None => Else::Block(self.block_opt(branch.block())),
        });
        Stmt::If { cond, then, els }
    }

    fn expr_opt(&mut self, expr: Option<ast::Expr>, fallback: &SyntaxNode) -> ExprId {
        match expr {
            Some(expr) => self.expr(&expr),
            None => self.alloc_expr(Expr::Missing, fallback.text_range()),
        }
    }

    fn expr(&mut self, expr: &ast::Expr) -> ExprId {
        let syntax = expr.syntax().clone();
        let range = syntax.text_range();
        let lowered = match expr {
            ast::Expr::Literal(it) => match lower_literal(it) {
                Some(literal) => Expr::Literal(literal),
                None => Expr::Missing,
            },
            ast::Expr::Name(it) => match it.name_ref() {
                Some(name) => Expr::Name(ident(name.ident())),
                None => Expr::Missing,
            },
            ast::Expr::Paren(it) => Expr::Paren(self.expr_opt(it.expr(), &syntax)),
            ast::Expr::TypeArg(it) => {
                Expr::TypeArg(Arc::new(it.ty().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing)))
            }
            ast::Expr::Call(it) => {
                let callee = self.expr_opt(it.callee(), &syntax);
                let args: Vec<ExprId> = it.args().map(|a| self.expr(&a)).collect();
                Expr::Call { callee, args: Arc::from(args) }
            }
            ast::Expr::Field(it) => {
                let base = self.expr_opt(it.base(), &syntax);
                let name = it.field().map(|f| ident(f.ident())).unwrap_or_else(|| Arc::from(""));
                Expr::Field { base, name }
            }
            ast::Expr::Index(it) => {
                let base = self.expr_opt(it.base(), &syntax);
                let indices: Vec<ExprId> = it.indices().map(|i| self.expr(&i)).collect();
                Expr::Index { base, indices: Arc::from(indices) }
            }
            ast::Expr::Part(it) => {
                let base = self.expr_opt(it.base(), &syntax);
                let lo = self.expr_opt(it.lo(), &syntax);
                let hi = self.expr_opt(it.hi(), &syntax);
                Expr::Part { base, lo, hi }
            }
            ast::Expr::Prefix(it) => {
                let op = match it.op().map(|t| t.kind()) {
                    Some(SyntaxKind::MINUS) => UnaryOp::Neg,
                    Some(SyntaxKind::BANG) => UnaryOp::Not,
                    _ => UnaryOp::BitNot,
                };
                let operand = self.expr_opt(it.operand(), &syntax);
                Expr::Unary { op, operand }
            }
            ast::Expr::Bin(it) => {
                let op = it.op().and_then(|t| binary_op(t.kind()));
                let lhs = self.expr_opt(it.lhs(), &syntax);
                let rhs = self.expr_opt(it.rhs(), &syntax);
                match op {
                    Some(op) => Expr::Binary { op, lhs, rhs },
                    None => Expr::Missing,
                }
            }
            ast::Expr::Try(it) => Expr::Try(self.expr_opt(it.operand(), &syntax)),
            ast::Expr::Closure(it) => {
                let params: Vec<(BinderId, TypeRef)> = it
                    .param_list()
                    .map(|list| {
                        list.params()
                            .map(|p| {
                                let ty = p.ty().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
                                (self.alloc_binder(p.name(), p.syntax()), ty)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let ret = it.ret_type().and_then(|r| r.ty()).map(|t| lower_type(&t));
                let body = self.block_opt(it.body());
                Expr::Closure(Arc::new(ClosureExpr { params: Arc::from(params), ret, body }))
            }
            ast::Expr::Spawn(it) => {
                let work = match (it.region(), it.call()) {
                    (Some(region), _) => {
                        let count = self.expr_opt(region.count(), &syntax);
                        let binder = self.alloc_binder(region.name(), region.syntax());
                        let body = self.block_opt(region.body());
                        let range = region.syntax().text_range();
                        SpawnWork::Region(self.alloc_stmt(Stmt::Parallel { binder, count, body }, range))
                    }
                    (None, call) => SpawnWork::Call(self.expr_opt(call, &syntax)),
                };
                let clause = it.after_clause().or_else(|| it.region().and_then(|r| r.after_clause()));
                let after: Vec<ExprId> = clause
                    .map(|c| {
                        c.tickets()
                            .map(|t| {
                                let range = t.syntax().text_range();
                                self.alloc_expr(Expr::Name(ident(t.ident())), range)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Expr::Spawn { work, after: Arc::from(after) }
            }
            other => Expr::Unsupported(other.syntax().kind()),
        };
        self.alloc_expr(lowered, range)
    }
}

/// A name's text as one allocation (not a `String` copied into an `Arc`).
fn ident(token: Option<cairn_syntax::SyntaxToken>) -> Arc<str> {
    token.map_or_else(|| Arc::from(""), |t| Arc::from(t.text()))
}

fn compound_op(kind: SyntaxKind) -> Option<BinaryOp> {
    use SyntaxKind::*;
    Some(match kind {
        PLUSEQ => BinaryOp::Add,
        MINUSEQ => BinaryOp::Sub,
        STAREQ => BinaryOp::Mul,
        SLASHEQ => BinaryOp::Div,
        PERCENTEQ => BinaryOp::Rem,
        AMPEQ => BinaryOp::BitAnd,
        PIPEEQ => BinaryOp::BitOr,
        CARETEQ => BinaryOp::BitXor,
        _ => return None,
    })
}

fn binary_op(kind: SyntaxKind) -> Option<BinaryOp> {
    use SyntaxKind::*;
    Some(match kind {
        PLUS => BinaryOp::Add,
        MINUS => BinaryOp::Sub,
        STAR => BinaryOp::Mul,
        SLASH => BinaryOp::Div,
        PERCENT => BinaryOp::Rem,
        AMP => BinaryOp::BitAnd,
        PIPE => BinaryOp::BitOr,
        CARET => BinaryOp::BitXor,
        EQ2 => BinaryOp::Eq,
        NEQ => BinaryOp::Ne,
        LT => BinaryOp::Lt,
        LTEQ => BinaryOp::Le,
        GT => BinaryOp::Gt,
        GTEQ => BinaryOp::Ge,
        AMP2 => BinaryOp::And,
        PIPE2 => BinaryOp::Or,
        _ => return None,
    })
}

/// Lowers a written type to a position-free reference.
pub fn lower_type(ty: &ast::Type) -> TypeRef {
    match ty {
        ast::Type::Path(it) => {
            let path: Arc<[Arc<str>]> = it
                .path()
                .map(|p| p.segments().map(|s| ident(s.ident())).collect())
                .unwrap_or_else(|| Arc::from(Vec::new()));
            let args: Arc<[TypeArg]> = it
                .generic_arg_list()
                .map(|list| {
                    list.args()
                        .map(|arg| match arg {
                            ast::GenericArg::Nat(n) => {
                                TypeArg::Nat(Arc::from(n.value().map(|t| t.text().to_string()).unwrap_or_default()))
                            }
                            ast::GenericArg::Path(p) => TypeArg::Type(lower_type(&ast::Type::Path(p))),
                            ast::GenericArg::Borrow(b) => TypeArg::Type(lower_type(&ast::Type::Borrow(b))),
                            ast::GenericArg::Fn(f) => TypeArg::Type(lower_type(&ast::Type::Fn(f))),
                            ast::GenericArg::Dyn(d) => TypeArg::Type(lower_type(&ast::Type::Dyn(d))),
                        })
                        .collect()
                })
                .unwrap_or_else(|| Arc::from(Vec::new()));
            TypeRef::Path { path, args }
        }
        ast::Type::Borrow(it) => {
            let inner = it.inner().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
            let extent = it.extent().map(|e| match (e.literal(), e.name_ref()) {
                (Some(lit), _) => ExtentRef::Literal(Arc::from(lit.syntax().text().to_string().trim())),
                (None, Some(name)) => ExtentRef::Name(ident(name.ident())),
                (None, None) => ExtentRef::Literal(Arc::from("")),
            });
            let place = it.placement().and_then(|p| p.word()).map(|w| Arc::from(w.text()));
            TypeRef::Borrow { rw: it.is_rw(), inner: Arc::new(inner), extent, place }
        }
        ast::Type::Fn(f) => TypeRef::Fn {
            params: f.params().map(|p| p.types().map(|t| lower_type(&t)).collect()).unwrap_or_default(),
            ret: f.ret_type().and_then(|r| r.ty()).map(|t| Arc::new(lower_type(&t))),
        },
        ast::Type::Dyn(d) => TypeRef::Dyn(
            d.path().map(|p| p.segments().map(|s| ident(s.ident())).collect()).unwrap_or_else(|| Arc::from(Vec::new())),
        ),
    }
}

/// A literal's value: escapes resolved, numbers parsed.
fn lower_literal(literal: &ast::Literal) -> Option<Literal> {
    let token = literal.token()?;
    let text = token.text();
    Some(match token.kind() {
        SyntaxKind::INT_NUMBER => {
            let value = match text.strip_prefix("0x") {
                Some(hex) => u128::from_str_radix(hex, 16).ok(),
                None => text.parse::<u128>().ok(),
            };
            Literal::Int { value, text: Arc::from(text) }
        }
        SyntaxKind::FLOAT_NUMBER => Literal::Float { text: Arc::from(text) },
        SyntaxKind::TRUE_KW => Literal::Bool(true),
        SyntaxKind::FALSE_KW => Literal::Bool(false),
        SyntaxKind::CHAR => {
            let inner = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')).unwrap_or(text);
            let code_points = unescape(inner);
            Literal::Char(code_points.first().copied().unwrap_or(0))
        }
        SyntaxKind::STRING => {
            let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
            let bytes: Vec<u8> = unescape(inner).into_iter().map(|c| if c <= 0xFF { c as u8 } else { b'?' }).collect();
            Literal::String(Arc::from(bytes))
        }
        _ => return None,
    })
}

/// The code points of a literal's contents after escapes (the lexer reported bad escapes).
pub fn unescape(text: &str) -> Vec<u32> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c as u32);
            continue;
        }
        match chars.next() {
            Some('n') => out.push(10),
            Some('t') => out.push(9),
            Some('r') => out.push(13),
            Some('0') => out.push(0),
            Some('\\') => out.push(92),
            Some('"') => out.push(34),
            Some('\'') => out.push(39),
            Some('x') => {
                let hex: String = [chars.next(), chars.next()].into_iter().flatten().collect();
                out.push(u32::from_str_radix(&hex, 16).unwrap_or(0));
            }
            Some(other) => out.push(other as u32),
            None => {}
        }
    }
    out
}
