//! Function bodies as arenas without positions, and the source maps that place them.
//!
//! [`fn_body`] lowers a declaration's syntax into a [`Body`]: expressions, statements and binders
//! in arenas indexed by ids, with no text ranges. [`fn_source_map`] gives each id its range,
//! relative to the declaration's start. Because the body holds no positions, an edit that only
//! moves text (whitespace, comments) yields an equal body, and nothing that reads the body re-runs.
//!
//! Invariant: ids are assigned in one left-to-right walk, so the same text always gets the same
//! ids; `Body` and every part of it are `Eq`.

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};
use cairn_syntax::{SyntaxKind, SyntaxNode, TextRange};

use crate::db::Db;
use crate::input::Item;

/// Index of an expression in its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// Index of a statement in its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StmtId(pub u32);

/// Index of a binder (a name a statement introduces) in its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BinderId(pub u32);

/// Index of a `match` arm in its body (for anchoring refusals at the arm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArmId(pub u32);

/// A syntactic type written in a body (`let x: T`, `stack a: T[N]`), resolved by the checker.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeRef {
    Path {
        path: Arc<[Arc<str>]>,
        args: Arc<[TypeArg]>,
    },
    Borrow {
        rw: bool,
        inner: Arc<TypeRef>,
        extent: Option<ExtentRef>,
        place: Option<Arc<str>>,
    },
    /// `fn(A, B) -> R` (the result `None` when omitted: void).
    Fn {
        params: Arc<[TypeRef]>,
        ret: Option<Arc<TypeRef>>,
    },
    /// `dyn Trait` (only under a single borrow: `ro<dyn Trait>`).
    Dyn(Arc<[Arc<str>]>),
    Missing,
}

/// A type argument: a natural or a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeArg {
    Nat(Arc<str>),
    Type(TypeRef),
}

/// A written extent: a decimal literal or a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ExtentRef {
    Literal(Arc<str>),
    Name(Arc<str>),
}

/// A literal as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Literal {
    /// An integer (decimal or hex), with its value; `None` when it exceeds 128 bits.
    Int {
        value: Option<u128>,
        text: Arc<str>,
    },
    /// A character literal: its value after escapes (a code point).
    Char(u32),
    Float {
        text: Arc<str>,
    },
    Bool(bool),
    /// A string literal's bytes after escapes (each code point one Latin-1 byte; above U+00FF: `?`).
    String(Arc<[u8]>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    pub fn text(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    pub fn is_arithmetic(self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem)
    }

    pub fn is_bitwise(self) -> bool {
        matches!(self, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor)
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }
}

/// An expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// Syntax too broken to lower (the parser reported it).
    Missing,
    Literal(Literal),
    Name(Arc<str>),
    Paren(ExprId),
    /// `callee(args)`; the callee is an expression (a name, a field chain, an index carrying
    /// type arguments, …).
    Call {
        callee: ExprId,
        args: Arc<[ExprId]>,
    },
    Field {
        base: ExprId,
        name: Arc<str>,
    },
    Index {
        base: ExprId,
        indices: Arc<[ExprId]>,
    },
    Part {
        base: ExprId,
        lo: ExprId,
        hi: ExprId,
    },
    Unary {
        op: UnaryOp,
        operand: ExprId,
    },
    Binary {
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    Try(ExprId),
    /// `|a:A, b:B| -> R { body }` (language §21): its parameters are binders of the body.
    Closure {
        params: Arc<[(BinderId, TypeRef)]>,
        ret: Option<TypeRef>,
        body: Block,
    },
    /// A construct of a later tier (`spawn`, collector, …), by its syntax kind.
    Unsupported(SyntaxKind),
}

/// A block: its statements.
pub type Block = Arc<[StmtId]>;

/// One arm of a `match`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Arm {
    pub id: ArmId,
    /// The variant as written, possibly qualified (`Some`, `Option.Some`).
    pub variant: Arc<[Arc<str>]>,
    pub binder: Option<BinderId>,
    /// The arm's body: a block, or one statement (wrapped as a block of one).
    pub body: Block,
    /// True when the body was written in braces.
    pub braced: bool,
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Stmt {
    Missing,
    Let {
        binder: BinderId,
        mutable: bool,
        ty: Option<TypeRef>,
        init: ExprId,
    },
    Assign {
        target: ExprId,
        op: Option<BinaryOp>,
        value: ExprId,
    },
    Expr(ExprId),
    If {
        cond: ExprId,
        then: Block,
        els: Option<Else>,
    },
    While {
        cond: ExprId,
        body: Block,
    },
    /// `for i in lo..hi`
    ForRange {
        binder: BinderId,
        lo: ExprId,
        hi: ExprId,
        body: Block,
    },
    /// `for x in xs` / `for i, x in xs`
    ForEach {
        index: Option<BinderId>,
        element: BinderId,
        iterable: ExprId,
        body: Block,
    },
    /// `each i in n`
    Each {
        binder: BinderId,
        count: ExprId,
        body: Block,
    },
    Match {
        subject: ExprId,
        arms: Arc<[Arm]>,
    },
    Return(Option<ExprId>),
    Break,
    Continue,
    Block(Block),
    Stack {
        binder: BinderId,
        element: TypeRef,
        capacity: ExprId,
        placed: bool,
    },
    /// `buffer name:T[n] = zeroed;` (language §22.1): heap storage released at the block's end,
    /// bound as an `rw` view.
    Buffer {
        binder: BinderId,
        element: TypeRef,
        capacity: ExprId,
        placed: bool,
    },
    /// `let Name(a, b) = value;` (language §22.2): the record taken apart, one binder per field.
    Unpack {
        record: Arc<[Arc<str>]>,
        binders: Arc<[BinderId]>,
        mutable: bool,
        value: ExprId,
    },
    /// `defer call(args);` (language §22.4): the statement, run at every normal exit of the block.
    Defer(StmtId),
    /// `unsafe { … }` (language §45): a block in which foreign functions may be called.
    Unsafe(Block),
    /// `parallel i in n { … }` (language §24): one lane per index, race-free by the lane rules.
    Parallel {
        binder: BinderId,
        count: ExprId,
        body: Block,
    },
    /// A collector (language §25): `reduce`, `compact` or `scan`, bound or stored.
    Collect(Arc<Collector>),
    /// A statement of a later tier, by its syntax kind.
    Unsupported(SyntaxKind),
}

/// What a collector computes (language §25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectKind {
    Reduce,
    Compact,
    Scan { exclusive: bool },
}

/// A collector's operator, as written; `None` when the parser already refused the word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Add,
    Mul,
    And,
    Or,
    Xor,
    AddWrap,
    MulWrap,
    Min,
    Max,
}

impl ReduceOp {
    pub fn from_text(text: &str) -> Option<ReduceOp> {
        Some(match text {
            "+" => ReduceOp::Add,
            "*" => ReduceOp::Mul,
            "&" => ReduceOp::And,
            "|" => ReduceOp::Or,
            "^" => ReduceOp::Xor,
            "add_wrap" => ReduceOp::AddWrap,
            "mul_wrap" => ReduceOp::MulWrap,
            "min" => ReduceOp::Min,
            "max" => ReduceOp::Max,
            _ => return None,
        })
    }

    pub fn text(self) -> &'static str {
        match self {
            ReduceOp::Add => "+",
            ReduceOp::Mul => "*",
            ReduceOp::And => "&",
            ReduceOp::Or => "|",
            ReduceOp::Xor => "^",
            ReduceOp::AddWrap => "add_wrap",
            ReduceOp::MulWrap => "mul_wrap",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }
}

/// One collector statement: `let s = reduce + for i in n yield e;`, `reduce max out[k] parallel
/// i in n yield e;`, `let m = compact out for i in n where p yield e;`, `scan + out for i in n
/// yield e;`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Collector {
    pub kind: CollectKind,
    pub op: Option<ReduceOp>,
    /// `parallel` instead of `for`.
    pub parallel: bool,
    /// The bound result (`let name [: T] = …`), with `mut`/`reg` and the annotation.
    pub name: Option<BinderId>,
    pub mutable: bool,
    pub ty: Option<TypeRef>,
    /// `out[k]` of a storing `reduce` (an `Index` expression), or the output named by `compact`
    /// and `scan` (a `Name` expression).
    pub target: Option<ExprId>,
    /// The iteration's binder and count.
    pub binder: BinderId,
    pub count: ExprId,
    /// `compact`'s predicate.
    pub pred: Option<ExprId>,
    /// What each index yields.
    pub value: ExprId,
}

/// What follows `else`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Else {
    If(StmtId),
    Block(Block),
}

/// A lowered function body (or test body).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Body {
    pub exprs: Vec<Expr>,
    pub stmts: Vec<Stmt>,
    /// Binder names (`_` included).
    pub binders: Vec<Arc<str>>,
    /// The parameters' names, in order (what `LocalRef::Param` indexes).
    pub params: Arc<[Arc<str>]>,
    /// The body's statements; for `= expr;` a single `Return`.
    pub root: Block,
    /// True for an `= expr;` body.
    pub expression_body: bool,
    /// False when the function has no body at all (syntax error).
    pub present: bool,
}

impl Body {
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    pub fn stmt(&self, id: StmtId) -> &Stmt {
        &self.stmts[id.0 as usize]
    }

    pub fn binder(&self, id: BinderId) -> &Arc<str> {
        &self.binders[id.0 as usize]
    }

    /// Looks through parentheses.
    pub fn unparen(&self, mut id: ExprId) -> ExprId {
        while let Expr::Paren(inner) = self.expr(id) {
            id = *inner;
        }
        id
    }
}

/// Where each id of a body was written, relative to the declaration's start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodySourceMap {
    /// Each parameter's name.
    pub params: Vec<TextRange>,
    pub exprs: Vec<TextRange>,
    pub stmts: Vec<TextRange>,
    pub binders: Vec<TextRange>,
    pub arms: Vec<TextRange>,
}

/// The body and its source map, computed together; queries read the halves separately.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyWithSourceMap {
    pub body: Arc<Body>,
    pub source_map: Arc<BodySourceMap>,
}

#[salsa::tracked(returns(ref), no_eq)]
pub fn body_with_source_map(db: &dyn Db, item: Item) -> BodyWithSourceMap {
    let root = item.syntax(db).syntax_node();
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

/// The body, compared by value: unchanged by edits that only move text.
#[salsa::tracked(returns(ref))]
pub fn fn_body(db: &dyn Db, item: Item) -> Arc<Body> {
    body_with_source_map(db, item).body.clone()
}

/// The source map of the body.
pub fn fn_source_map(db: &dyn Db, item: Item) -> Arc<BodySourceMap> {
    body_with_source_map(db, item).source_map.clone()
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
                Stmt::Buffer { binder, element, capacity, placed: it.placement().is_some() }
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
                Expr::Closure { params: Arc::from(params), ret, body }
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
