//! Expressions, as `grammar/exprs.rs` parses them: literals, names, calls, indexes and parts,
//! fields, operators, `try` and `spawn`, closures, and the collector forms (`fold`, `each`,
//! `reduce`, `compact`, `scan`) with their reducer.

use super::*;

ast_enum!(
    /// An expression.
    Expr {
        Literal(Literal) = LITERAL,
        Name(NameExpr) = NAME_EXPR,
        Paren(ParenExpr) = PAREN_EXPR,
        Call(CallExpr) = CALL_EXPR,
        Index(IndexExpr) = INDEX_EXPR,
        Part(PartExpr) = PART_EXPR,
        Field(FieldExpr) = FIELD_EXPR,
        Prefix(PrefixExpr) = PREFIX_EXPR,
        Bin(BinExpr) = BIN_EXPR,
        Try(TryExpr) = TRY_EXPR,
        Spawn(SpawnExpr) = SPAWN_EXPR,
        Closure(ClosureExpr) = CLOSURE_EXPR,
        Fold(FoldExpr) = FOLD_EXPR,
        Each(EachExpr) = EACH_EXPR,
        Reduce(ReduceExpr) = REDUCE_EXPR,
        Compact(CompactExpr) = COMPACT_EXPR,
        Scan(ScanExpr) = SCAN_EXPR,
        TypeArg(TypeArgExpr) = TYPE_ARG_EXPR,
    }
);

/// What kind of literal a `LITERAL` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralKind {
    Int,
    Float,
    String,
    Char,
    Bool(bool),
}

ast_node!(Literal, LITERAL);
impl Literal {
    pub fn token(&self) -> Option<SyntaxToken> {
        self.syntax.first_token()
    }
    pub fn kind(&self) -> Option<LiteralKind> {
        Some(match self.token()?.kind() {
            INT_NUMBER => LiteralKind::Int,
            FLOAT_NUMBER => LiteralKind::Float,
            STRING => LiteralKind::String,
            CHAR => LiteralKind::Char,
            TRUE_KW => LiteralKind::Bool(true),
            FALSE_KW => LiteralKind::Bool(false),
            _ => return None,
        })
    }
}

ast_node!(NameExpr, NAME_EXPR);
impl NameExpr {
    pub fn name_ref(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
}

ast_node!(ParenExpr, PAREN_EXPR);
impl ParenExpr {
    pub fn expr(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// `f(a)`, `m.f(a)`, `f[u64](a)`, `x.method(a)`.
    CallExpr,
    CALL_EXPR
);
impl CallExpr {
    pub fn callee(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn arg_list(&self) -> Option<ArgList> {
        support::child(&self.syntax)
    }
    pub fn args(&self) -> impl Iterator<Item = Expr> {
        self.arg_list().into_iter().flat_map(|l| support::children::<Expr>(&l.syntax))
    }
}

ast_node!(ArgList, ARG_LIST);
impl ArgList {
    pub fn args(&self) -> AstChildren<Expr> {
        support::children(&self.syntax)
    }
}

ast_node!(
    /// `v[i]`, or `x[a, b]` (type arguments, or an `E-INDEX` error).
    IndexExpr,
    INDEX_EXPR
);
impl IndexExpr {
    pub fn base(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn indices(&self) -> impl Iterator<Item = Expr> {
        self.syntax.children().filter_map(Expr::cast).skip(1)
    }
}

ast_node!(
    /// `x[lo..hi]`
    PartExpr,
    PART_EXPR
);
impl PartExpr {
    pub fn base(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn lo(&self) -> Option<Expr> {
        self.syntax.children().filter_map(Expr::cast).nth(1)
    }
    pub fn hi(&self) -> Option<Expr> {
        child_after(&self.syntax, T![..])
    }
}

ast_node!(
    /// A written type as a type argument in an expression: `fn(u64) -> u64` in `Buf[fn(u64) -> u64](3)`.
    TypeArgExpr,
    TYPE_ARG_EXPR
);
impl TypeArgExpr {
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
}

ast_node!(FieldExpr, FIELD_EXPR);
impl FieldExpr {
    pub fn base(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn field(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
}

ast_node!(PrefixExpr, PREFIX_EXPR);
impl PrefixExpr {
    /// `-`, `!` or `~`.
    pub fn op(&self) -> Option<SyntaxToken> {
        token_of(&self.syntax, &[T![-], T![!], T![~]])
    }
    pub fn operand(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(BinExpr, BIN_EXPR);
impl BinExpr {
    pub fn lhs(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn op(&self) -> Option<SyntaxToken> {
        self.syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| !t.kind().is_trivia() && t.kind() != ERROR_TOKEN)
    }
    pub fn rhs(&self) -> Option<Expr> {
        self.syntax.children().filter_map(Expr::cast).nth(1)
    }
}

ast_node!(TryExpr, TRY_EXPR);
impl TryExpr {
    pub fn operand(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(SpawnExpr, SPAWN_EXPR);
impl SpawnExpr {
    pub fn call(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    /// `spawn parallel … { … }`
    pub fn region(&self) -> Option<ParallelStmt> {
        support::child(&self.syntax)
    }
    pub fn after_clause(&self) -> Option<AfterClause> {
        support::child(&self.syntax)
    }
}

ast_node!(ClosureExpr, CLOSURE_EXPR);
impl ClosureExpr {
    pub fn param_list(&self) -> Option<ParamList> {
        support::child(&self.syntax)
    }
    pub fn ret_type(&self) -> Option<RetType> {
        support::child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(FoldExpr, FOLD_EXPR);
impl FoldExpr {
    pub fn combiner(&self) -> Option<Reducer> {
        support::child(&self.syntax)
    }
    pub fn each(&self) -> Option<EachExpr> {
        support::child(&self.syntax)
    }
}

ast_node!(EachExpr, EACH_EXPR);
impl EachExpr {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// The operator of a collector or `fold`.
    Reducer,
    REDUCER
);
impl Reducer {
    pub fn text(&self) -> String {
        self.syntax
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| !t.kind().is_trivia())
            .map(|t| t.text().to_string())
            .collect()
    }
}

ast_node!(ReduceExpr, REDUCE_EXPR);
impl ReduceExpr {
    pub fn reducer(&self) -> Option<Reducer> {
        support::child(&self.syntax)
    }
    pub fn is_warp(&self) -> bool {
        support::token(&self.syntax, WARP_KW).is_some()
    }
    pub fn is_parallel(&self) -> bool {
        support::token(&self.syntax, PARALLEL_KW).is_some()
    }
    /// `out[k]` of the storing form.
    pub fn target(&self) -> Option<IndexExpr> {
        crate::validation::reduce_target(&self.syntax).and_then(IndexExpr::cast)
    }
    pub fn binder(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
}

ast_node!(CompactExpr, COMPACT_EXPR);
impl CompactExpr {
    pub fn output(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
    pub fn binder(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
}

ast_node!(ScanExpr, SCAN_EXPR);
impl ScanExpr {
    pub fn reducer(&self) -> Option<Reducer> {
        support::child(&self.syntax)
    }
    pub fn is_exclusive(&self) -> bool {
        support::token(&self.syntax, EXCLUSIVE_KW).is_some()
    }
    pub fn is_parallel(&self) -> bool {
        support::token(&self.syntax, PARALLEL_KW).is_some()
    }
    pub fn output(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
    pub fn binder(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
}
