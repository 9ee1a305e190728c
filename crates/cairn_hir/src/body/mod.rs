//! Function bodies as arenas without positions, and the source maps that place them.
//!
//! [`fn_body`] lowers a declaration's syntax into a [`Body`]: expressions, statements and binders
//! in arenas indexed by ids, with no text ranges. [`fn_source_map`] gives each id its range,
//! relative to the declaration's start. Because the body holds no positions, an edit that only
//! moves text (whitespace, comments) yields an equal body, and nothing that reads the body re-runs.
//!
//! Invariant: ids are assigned in one left-to-right walk, so the same text always gets the same
//! ids; `Body` and every part of it are `Eq`. The walk itself is `lower.rs`.

use std::sync::Arc;

use cairn_syntax::{SyntaxKind, TextRange};

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
    Closure(Arc<ClosureExpr>),
    /// `spawn transfer(dst, src) [after a, b]` or `spawn parallel i in n [after a, b] { … }`
    /// (language §32, §37): the work, and the tickets it is queued after (name expressions).
    Spawn {
        work: SpawnWork,
        after: Arc<[ExprId]>,
    },
    /// A written type standing as a type argument (`fn(u64) -> u64` in `Buf[fn(u64) -> u64](3)`):
    /// read only as a type (`expr_as_type`); as a value it is a refusal.
    TypeArg(Arc<TypeRef>),
    /// A construct of a later tier (`spawn`, collector, …), by its syntax kind.
    Unsupported(SyntaxKind),
}

/// A closure's parts (`Expr::Closure`, behind one pointer: closures are rare, and inline
/// they made every expression of every body 96 bytes where the others need 32).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClosureExpr {
    pub params: Arc<[(BinderId, TypeRef)]>,
    pub ret: Option<TypeRef>,
    pub body: Block,
}

/// What a `spawn` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpawnWork {
    /// A call: `spawn f(args)`, `spawn transfer(dst, src)`.
    Call(ExprId),
    /// A region: the `parallel` statement, allocated in the body but in no block.
    Region(StmtId),
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
        /// Where the elements live (`@device`, …; `@host` when none is written).
        place: crate::types::Place,
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
    /// An implementation's `when` condition (language §27), over the parameters; checked and
    /// lowered with the body, never run by it (the reference's entry tests it).
    pub when: Option<ExprId>,
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
    lower::lower(item.syntax(db).syntax_node())
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

mod lower;

pub use lower::{lower_type, unescape};
