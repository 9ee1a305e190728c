//! Blocks and statements, as `grammar/stmts.rs` parses them: bindings and collectors, storage
//! (`stack`, `buffer`, `shared`, `pipeline`), control flow, regions (`parallel`, cooperative
//! blocks, `unsafe`, `defer`), inline `asm`, expression statements and assignments.

use super::*;

ast_node!(Block, BLOCK);
impl Block {
    pub fn statements(&self) -> AstChildren<Stmt> {
        support::children(&self.syntax)
    }
}

ast_enum!(
    /// A statement.
    Stmt {
        Let(LetStmt) = LET_STMT,
        Unpack(UnpackStmt) = UNPACK_STMT,
        Collect(CollectStmt) = COLLECT_STMT,
        Stack(StackStmt) = STACK_STMT,
        Buffer(BufferStmt) = BUFFER_STMT,
        Shared(SharedStmt) = SHARED_STMT,
        Pipeline(PipelineStmt) = PIPELINE_STMT,
        If(IfStmt) = IF_STMT,
        While(WhileStmt) = WHILE_STMT,
        For(ForStmt) = FOR_STMT,
        Each(EachStmt) = EACH_STMT,
        Match(MatchStmt) = MATCH_STMT,
        Break(BreakStmt) = BREAK_STMT,
        Continue(ContinueStmt) = CONTINUE_STMT,
        Return(ReturnStmt) = RETURN_STMT,
        Defer(DeferStmt) = DEFER_STMT,
        Unsafe(UnsafeStmt) = UNSAFE_STMT,
        Parallel(ParallelStmt) = PARALLEL_STMT,
        Coop(CoopStmt) = COOP_STMT,
        Barrier(BarrierStmt) = BARRIER_STMT,
        Asm(AsmStmt) = ASM_STMT,
        Expr(ExprStmt) = EXPR_STMT,
        Assign(AssignStmt) = ASSIGN_STMT,
        Block(Block) = BLOCK,
        Require(Require) = REQUIRE,
    }
);

ast_node!(LetStmt, LET_STMT);
impl LetStmt {
    /// `let mut` or `reg`.
    pub fn is_mut(&self) -> bool {
        support::token(&self.syntax, MUT_KW).is_some() || support::token(&self.syntax, REG_KW).is_some()
    }
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn initializer(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// `let Name(a, b) = value;`
    UnpackStmt,
    UNPACK_STMT
);
impl UnpackStmt {
    pub fn is_mut(&self) -> bool {
        support::token(&self.syntax, MUT_KW).is_some() || support::token(&self.syntax, REG_KW).is_some()
    }
    pub fn record(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn names(&self) -> impl Iterator<Item = Name> {
        support::child::<UnpackList>(&self.syntax).into_iter().flat_map(|l| support::children::<Name>(&l.syntax))
    }
    pub fn value(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(UnpackList, UNPACK_LIST);

ast_node!(
    /// A collector: `let x = reduce …;`, `let n = compact …;`, `scan …;`, `reduce op out[k] …;`.
    CollectStmt,
    COLLECT_STMT
);
impl CollectStmt {
    /// `let mut` or `reg` (refused for collectors, but parsed).
    pub fn is_mut(&self) -> bool {
        support::token(&self.syntax, MUT_KW).is_some() || support::token(&self.syntax, REG_KW).is_some()
    }
    /// The bound name, for the `let` forms.
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn collector(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(StackStmt, STACK_STMT);
impl StackStmt {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn element(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn capacity(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn placement(&self) -> Option<Placement> {
        support::child(&self.syntax)
    }
}

ast_node!(BufferStmt, BUFFER_STMT);
impl BufferStmt {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn element(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn capacity(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn placement(&self) -> Option<Placement> {
        support::child(&self.syntax)
    }
}

ast_node!(SharedStmt, SHARED_STMT);
impl SharedStmt {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn element(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn capacity(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn is_zeroed(&self) -> bool {
        support::token(&self.syntax, ZEROED_KW).is_some()
    }
}

ast_node!(PipelineStmt, PIPELINE_STMT);
impl PipelineStmt {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn element(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    /// The capacity, then the depth.
    pub fn exprs(&self) -> AstChildren<Expr> {
        support::children(&self.syntax)
    }
}

ast_node!(IfStmt, IF_STMT);
impl IfStmt {
    pub fn condition(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn then_block(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
    pub fn else_branch(&self) -> Option<ElseBranch> {
        support::child(&self.syntax)
    }
}

ast_node!(ElseBranch, ELSE_BRANCH);
impl ElseBranch {
    pub fn if_stmt(&self) -> Option<IfStmt> {
        support::child(&self.syntax)
    }
    pub fn block(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(WhileStmt, WHILE_STMT);
impl WhileStmt {
    pub fn condition(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// `for i in lo..hi`, `for x in xs`, `for i, x in xs`.
    ForStmt,
    FOR_STMT
);
impl ForStmt {
    /// The binders: one name, or the index then the element.
    pub fn names(&self) -> AstChildren<Name> {
        support::children(&self.syntax)
    }
    /// True for `lo..hi`.
    pub fn is_range(&self) -> bool {
        support::token(&self.syntax, T![..]).is_some()
    }
    /// The iterated expression, or the range's `lo`.
    pub fn iterable(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    /// The range's `hi`.
    pub fn range_end(&self) -> Option<Expr> {
        child_after(&self.syntax, T![..])
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// `each i in n { … }`, and in recipes `each f in R { … }` / `each k in lo..hi { … }`.
    EachStmt,
    EACH_STMT
);
impl EachStmt {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn iterable(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(MatchStmt, MATCH_STMT);
impl MatchStmt {
    pub fn subject(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn arms(&self) -> impl Iterator<Item = MatchArm> {
        support::child::<MatchArmList>(&self.syntax).into_iter().flat_map(|l| support::children::<MatchArm>(&l.syntax))
    }
}

ast_node!(MatchArmList, MATCH_ARM_LIST);

ast_node!(MatchArm, MATCH_ARM);
impl MatchArm {
    /// The variant, possibly qualified (`Some`, `Option.Some`).
    pub fn variant(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn binder(&self) -> Option<Name> {
        support::child::<ArmBinder>(&self.syntax).and_then(|b| support::child(&b.syntax))
    }
    /// The arm's body: a block or one statement.
    pub fn body(&self) -> Option<Stmt> {
        support::child(&self.syntax)
    }
}

ast_node!(ArmBinder, ARM_BINDER);
ast_node!(BreakStmt, BREAK_STMT);
ast_node!(ContinueStmt, CONTINUE_STMT);

ast_node!(ReturnStmt, RETURN_STMT);
impl ReturnStmt {
    pub fn value(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(DeferStmt, DEFER_STMT);
impl DeferStmt {
    pub fn stmt(&self) -> Option<Stmt> {
        support::child(&self.syntax)
    }
}

ast_node!(UnsafeStmt, UNSAFE_STMT);
impl UnsafeStmt {
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(ParallelStmt, PARALLEL_STMT);
impl ParallelStmt {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn count(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn after_clause(&self) -> Option<AfterClause> {
        support::child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(AfterClause, AFTER_CLAUSE);
impl AfterClause {
    pub fn tickets(&self) -> AstChildren<NameRef> {
        support::children(&self.syntax)
    }
}

ast_node!(
    /// `blocks b in G threads t in T { … } [then threads u in U { … }]`
    CoopStmt,
    COOP_STMT
);
impl CoopStmt {
    /// The block axes, then the thread axes.
    pub fn axes(&self) -> AstChildren<CoopAxes> {
        support::children(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
    pub fn then_clause(&self) -> Option<ThenClause> {
        support::child(&self.syntax)
    }
}

ast_node!(CoopAxes, COOP_AXES);
impl CoopAxes {
    pub fn names(&self) -> AstChildren<Name> {
        support::children(&self.syntax)
    }
    pub fn extents(&self) -> AstChildren<Expr> {
        support::children(&self.syntax)
    }
}

ast_node!(ThenClause, THEN_CLAUSE);
impl ThenClause {
    pub fn axes(&self) -> Option<CoopAxes> {
        support::child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(BarrierStmt, BARRIER_STMT);

ast_node!(AsmStmt, ASM_STMT);
impl AsmStmt {
    pub fn is_volatile(&self) -> bool {
        support::token(&self.syntax, VOLATILE_KW).is_some()
    }
    /// The target, then the optional architecture.
    pub fn words(&self) -> AstChildren<NameRef> {
        support::children(&self.syntax)
    }
    pub fn template(&self) -> Option<SyntaxToken> {
        support::token(&self.syntax, STRING)
    }
    pub fn operands(&self) -> impl Iterator<Item = AsmOperand> {
        support::child::<AsmOperandList>(&self.syntax)
            .into_iter()
            .flat_map(|l| support::children::<AsmOperand>(&l.syntax))
    }
}

ast_node!(AsmOperandList, ASM_OPERAND_LIST);

ast_node!(AsmOperand, ASM_OPERAND);
impl AsmOperand {
    pub fn is_output(&self) -> bool {
        support::token(&self.syntax, OUT_KW).is_some()
    }
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn expr(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(ExprStmt, EXPR_STMT);
impl ExprStmt {
    pub fn expr(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    /// `into g` of a submitted task.
    pub fn into_clause(&self) -> Option<IntoClause> {
        support::child(&self.syntax)
    }
}

ast_node!(IntoClause, INTO_CLAUSE);
impl IntoClause {
    pub fn group(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// `place = value;` or `place op= value;`
    AssignStmt,
    ASSIGN_STMT
);
impl AssignStmt {
    pub fn target(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    /// `=`, `+=`, `-=`, …
    pub fn op(&self) -> Option<SyntaxToken> {
        token_of(&self.syntax, &[T![=], T![+=], T![-=], T![*=], T![/=], T![%=], T![&=], T![|=], T![^=]])
    }
    pub fn value(&self) -> Option<Expr> {
        self.syntax.children().filter_map(Expr::cast).nth(1)
    }
}
