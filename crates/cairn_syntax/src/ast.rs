//! Typed views over the syntax tree.
//!
//! Each wrapper is a `SyntaxNode` of one kind (or, for the enums, of one of several kinds).
//! Boundary: every accessor returns `Option` (or an iterator), even where the grammar says a part
//! is required, because a tree with errors may lack it. Wrappers hold no data of their own and
//! compute nothing beyond walking children; meaning belongs to `cairn_hir`.

use rowan::ast::support;
pub use rowan::ast::{AstChildren, AstNode, AstPtr};

use crate::SyntaxKind::{self, *};
use crate::{CairnLanguage, SyntaxNode, SyntaxToken};

macro_rules! ast_node {
    ($(#[$meta:meta])* $name:ident, $kind:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) syntax: SyntaxNode,
        }

        impl AstNode for $name {
            type Language = CairnLanguage;

            fn can_cast(kind: SyntaxKind) -> bool {
                kind == $kind
            }

            fn cast(syntax: SyntaxNode) -> Option<Self> {
                (syntax.kind() == $kind).then(|| $name { syntax })
            }

            fn syntax(&self) -> &SyntaxNode {
                &self.syntax
            }
        }
    };
}

macro_rules! ast_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident($node:ident) = $kind:ident,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant($node),)*
        }

        impl AstNode for $name {
            type Language = CairnLanguage;

            fn can_cast(kind: SyntaxKind) -> bool {
                matches!(kind, $($kind)|*)
            }

            fn cast(syntax: SyntaxNode) -> Option<Self> {
                match syntax.kind() {
                    $($kind => Some($name::$variant($node { syntax })),)*
                    _ => None,
                }
            }

            fn syntax(&self) -> &SyntaxNode {
                match self {
                    $($name::$variant(it) => &it.syntax,)*
                }
            }
        }
    };
}

/// The first direct token child of `node` with one of `kinds`.
fn token_of(node: &SyntaxNode, kinds: &[SyntaxKind]) -> Option<SyntaxToken> {
    node.children_with_tokens().filter_map(|it| it.into_token()).find(|t| kinds.contains(&t.kind()))
}

/// Direct children of kind `N` after the first token of kind `after` (used where two children of
/// one type sit on either side of a separator).
fn child_after<N: AstNode<Language = CairnLanguage>>(node: &SyntaxNode, after: SyntaxKind) -> Option<N> {
    let mut seen = false;
    for element in node.children_with_tokens() {
        match element {
            rowan::NodeOrToken::Token(token) if token.kind() == after => seen = true,
            rowan::NodeOrToken::Node(child) if seen => {
                if let Some(it) = N::cast(child) {
                    return Some(it);
                }
            }
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Files and items.

ast_node!(
    /// A whole file.
    SourceFile,
    SOURCE_FILE
);

impl SourceFile {
    pub fn items(&self) -> AstChildren<Item> {
        support::children(&self.syntax)
    }
}

ast_enum!(
    /// A top-level declaration.
    Item {
        Module(ModuleDecl) = MODULE_DECL,
        Import(Import) = IMPORT,
        Const(Const) = CONST,
        Struct(Struct) = STRUCT,
        Enum(Enum) = ENUM,
        Fn(Fn) = FN,
        ExternFn(ExternFn) = EXTERN_FN,
        Trait(Trait) = TRAIT,
        Impl(Impl) = IMPL,
        Family(Family) = FAMILY,
        Recipe(Recipe) = RECIPE,
        Derive(Derive) = DERIVE,
        Plan(Plan) = PLAN,
        Test(Test) = TEST,
        Layout(Layout) = LAYOUT,
    }
);

impl Item {
    /// `pub`, when written.
    pub fn visibility(&self) -> Option<Visibility> {
        support::child(self.syntax())
    }

    /// The consecutive `//` lines directly above the declaration, without the `//`.
    pub fn doc_comment(&self) -> Option<String> {
        doc_comment(self.syntax())
    }
}

/// The text of the comments a declaration node starts with (the builder puts them inside), one
/// line each, read by the one rule for the comment above a declaration
/// ([`crate::trivia::comment_lines_above`]).
pub fn doc_comment(node: &SyntaxNode) -> Option<String> {
    let text = node.text().to_string();
    let start = crate::trivia::first_significant_token(node)
        .map_or(text.len(), |t| usize::from(t.text_range().start() - node.text_range().start()));
    let lines = crate::trivia::comment_lines_above(&text, start);
    (!lines.is_empty()).then(|| lines.join("\n"))
}

ast_node!(Visibility, VISIBILITY);
ast_node!(
    /// A declared name.
    Name,
    NAME
);
ast_node!(
    /// A use of a name.
    NameRef,
    NAME_REF
);
ast_node!(
    /// `a.b.c`
    Path,
    PATH
);

impl Name {
    pub fn ident(&self) -> Option<SyntaxToken> {
        self.syntax.first_token()
    }

    pub fn text(&self) -> String {
        self.ident().map(|t| t.text().to_string()).unwrap_or_default()
    }
}

impl NameRef {
    pub fn ident(&self) -> Option<SyntaxToken> {
        self.syntax.first_token()
    }

    pub fn text(&self) -> String {
        self.ident().map(|t| t.text().to_string()).unwrap_or_default()
    }
}

impl Path {
    pub fn segments(&self) -> AstChildren<NameRef> {
        support::children(&self.syntax)
    }

    /// The segments joined by `.`.
    pub fn text(&self) -> String {
        self.segments().map(|s| s.text()).collect::<Vec<_>>().join(".")
    }
}

ast_node!(ModuleDecl, MODULE_DECL);
impl ModuleDecl {
    pub fn path(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
}

ast_node!(Import, IMPORT);
impl Import {
    pub fn path(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    /// The name after `as`.
    pub fn alias(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn import_list(&self) -> Option<ImportList> {
        support::child(&self.syntax)
    }
}

ast_node!(ImportList, IMPORT_LIST);
impl ImportList {
    pub fn names(&self) -> AstChildren<NameRef> {
        support::children(&self.syntax)
    }
}

ast_node!(Const, CONST);
impl Const {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(Struct, STRUCT);
impl Struct {
    pub fn is_linear(&self) -> bool {
        support::token(&self.syntax, LINEAR_KW).is_some()
    }
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    pub fn is_packed(&self) -> bool {
        support::token(&self.syntax, PACKED_KW).is_some()
    }
    pub fn align_clause(&self) -> Option<AlignClause> {
        support::child(&self.syntax)
    }
    pub fn field_list(&self) -> Option<FieldList> {
        support::child(&self.syntax)
    }
}

ast_node!(AlignClause, ALIGN_CLAUSE);
impl AlignClause {
    pub fn value(&self) -> Option<SyntaxToken> {
        support::token(&self.syntax, INT_NUMBER)
    }
}

ast_node!(FieldList, FIELD_LIST);
impl FieldList {
    pub fn fields(&self) -> AstChildren<Field> {
        support::children(&self.syntax)
    }
    pub fn lends_clauses(&self) -> AstChildren<LendsClause> {
        support::children(&self.syntax)
    }
}

ast_node!(Field, FIELD);
impl Field {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    /// `[n]` naming the field that holds this field's length.
    pub fn extent(&self) -> Option<FieldExtent> {
        support::child(&self.syntax)
    }
}

ast_node!(FieldExtent, FIELD_EXTENT);
impl FieldExtent {
    pub fn name_ref(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
}

ast_node!(LendsClause, LENDS_CLAUSE);
impl LendsClause {
    /// The field lent.
    pub fn carrier(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
    /// The bounds, `lo` then `hi`: each a `LITERAL` or a `NAME_REF` node.
    pub fn bounds(&self) -> impl Iterator<Item = SyntaxNode> + '_ {
        self.syntax.children().filter(|n| matches!(n.kind(), LITERAL | NAME_REF)).skip(1)
    }
}

ast_node!(Enum, ENUM);
impl Enum {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    pub fn variant_list(&self) -> Option<VariantList> {
        support::child(&self.syntax)
    }
}

ast_node!(VariantList, VARIANT_LIST);
impl VariantList {
    pub fn variants(&self) -> AstChildren<Variant> {
        support::children(&self.syntax)
    }
}

ast_node!(Variant, VARIANT);
impl Variant {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn payload(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// A function with a body (`fn`, `kernel fn`, an impl member, a recipe's function).
    Fn,
    FN
);
impl Fn {
    pub fn is_kernel(&self) -> bool {
        support::token(&self.syntax, KERNEL_KW).is_some()
    }
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    pub fn param_list(&self) -> Option<ParamList> {
        support::child(&self.syntax)
    }
    pub fn ret_type(&self) -> Option<RetType> {
        support::child(&self.syntax)
    }
    pub fn ceiling(&self) -> Option<Ceiling> {
        support::child(&self.syntax)
    }
    pub fn implements_clause(&self) -> Option<ImplementsClause> {
        support::child(&self.syntax)
    }
    /// The block body, when the function has one.
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
    /// The `= expr;` body, when the function has one.
    pub fn expr_body(&self) -> Option<ExprBody> {
        support::child(&self.syntax)
    }
}

ast_node!(ExprBody, EXPR_BODY);
impl ExprBody {
    pub fn expr(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(ExternFn, EXTERN_FN);
impl ExternFn {
    /// The quoted C symbol, when given.
    pub fn link_name(&self) -> Option<SyntaxToken> {
        support::token(&self.syntax, STRING)
    }
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    pub fn param_list(&self) -> Option<ParamList> {
        support::child(&self.syntax)
    }
    pub fn ret_type(&self) -> Option<RetType> {
        support::child(&self.syntax)
    }
    pub fn launch_clause(&self) -> Option<LaunchClause> {
        support::child(&self.syntax)
    }
    pub fn ceiling(&self) -> Option<Ceiling> {
        support::child(&self.syntax)
    }
}

ast_node!(LaunchClause, LAUNCH_CLAUSE);

ast_node!(Trait, TRAIT);
impl Trait {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn members(&self) -> AstChildren<TraitMember> {
        support::children(&self.syntax)
    }
}

ast_node!(
    /// A bodiless member signature of a trait.
    TraitMember,
    TRAIT_MEMBER
);
impl TraitMember {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    pub fn param_list(&self) -> Option<ParamList> {
        support::child(&self.syntax)
    }
    pub fn ret_type(&self) -> Option<RetType> {
        support::child(&self.syntax)
    }
    pub fn ceiling(&self) -> Option<Ceiling> {
        support::child(&self.syntax)
    }
}

ast_node!(Impl, IMPL);
impl Impl {
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    /// The trait implemented.
    pub fn trait_path(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    /// The type it is implemented for.
    pub fn self_ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn members(&self) -> AstChildren<Fn> {
        support::children(&self.syntax)
    }
}

ast_node!(Family, FAMILY);
impl Family {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn template(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    /// The range's bounds, `lo` then `hi`.
    pub fn bounds(&self) -> impl Iterator<Item = SyntaxToken> + '_ {
        self.syntax.children_with_tokens().filter_map(|e| e.into_token()).filter(|t| t.kind() == INT_NUMBER)
    }
}

ast_node!(Derive, DERIVE);
impl Derive {
    pub fn recipe(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn arg_list(&self) -> Option<DeriveArgList> {
        support::child(&self.syntax)
    }
    /// The path after `for`.
    pub fn target(&self) -> Option<Path> {
        child_after(&self.syntax, FOR_KW)
    }
}

ast_node!(DeriveArgList, DERIVE_ARG_LIST);

ast_node!(Plan, PLAN);
impl Plan {
    pub fn target(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn plan_use(&self) -> Option<PlanUse> {
        support::child(&self.syntax)
    }
    pub fn items(&self) -> AstChildren<PlanItem> {
        support::children(&self.syntax)
    }
}

ast_node!(PlanUse, PLAN_USE);
impl PlanUse {
    pub fn implementation(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn values(&self) -> impl Iterator<Item = SyntaxToken> + '_ {
        self.syntax.children_with_tokens().filter_map(|e| e.into_token()).filter(|t| t.kind() == INT_NUMBER)
    }
}

ast_node!(PlanItem, PLAN_ITEM);
impl PlanItem {
    /// The item's word (`grain`, `lanes`, …).
    pub fn word(&self) -> Option<SyntaxToken> {
        self.syntax.first_token()
    }
    pub fn value(&self) -> Option<SyntaxToken> {
        support::token(&self.syntax, INT_NUMBER)
    }
}

ast_node!(Test, TEST);
impl Test {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        support::child(&self.syntax)
    }
}

ast_node!(Layout, LAYOUT);
impl Layout {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(Recipe, RECIPE);
impl Recipe {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn generic_param_list(&self) -> Option<GenericParamList> {
        support::child(&self.syntax)
    }
    /// The record parameter after `for`.
    pub fn for_param(&self) -> Option<Name> {
        child_after(&self.syntax, FOR_KW)
    }
    pub fn where_clauses(&self) -> AstChildren<RecipeWhere> {
        support::children(&self.syntax)
    }
    pub fn body(&self) -> Option<RecipeBody> {
        support::child(&self.syntax)
    }
}

ast_node!(RecipeBody, RECIPE_BODY);
impl RecipeBody {
    /// Every node of the body: functions, records, impls, `each` items and `require`s.
    pub fn items(&self) -> impl Iterator<Item = SyntaxNode> + '_ {
        self.syntax.children()
    }
}

ast_node!(RecipeWhere, RECIPE_WHERE);
impl RecipeWhere {
    pub fn bindings(&self) -> AstChildren<WhereBinding> {
        support::children(&self.syntax)
    }
}

ast_node!(WhereBinding, WHERE_BINDING);
impl WhereBinding {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(Require, REQUIRE);
impl Require {
    pub fn condition(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
    pub fn message(&self) -> Option<SyntaxToken> {
        support::token(&self.syntax, STRING)
    }
}

ast_node!(EachItem, EACH_ITEM);

// ---------------------------------------------------------------------------------------------
// Signatures.

ast_node!(GenericParamList, GENERIC_PARAM_LIST);
impl GenericParamList {
    pub fn params(&self) -> AstChildren<GenericParam> {
        support::children(&self.syntax)
    }
}

ast_node!(GenericParam, GENERIC_PARAM);
impl GenericParam {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    /// `nat`, `type` or `fn`, when that is the kind written.
    pub fn kind_keyword(&self) -> Option<SyntaxToken> {
        token_of(&self.syntax, &[NAT_KW, TYPE_KW, FN_KW])
    }
    pub fn bound_list(&self) -> Option<BoundList> {
        support::child(&self.syntax)
    }
}

ast_node!(BoundList, BOUND_LIST);
impl BoundList {
    pub fn bounds(&self) -> AstChildren<Path> {
        support::children(&self.syntax)
    }
}

ast_node!(ParamList, PARAM_LIST);
impl ParamList {
    pub fn params(&self) -> AstChildren<Param> {
        support::children(&self.syntax)
    }
}

ast_node!(Param, PARAM);
impl Param {
    pub fn name(&self) -> Option<Name> {
        support::child(&self.syntax)
    }
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
}

ast_node!(RetType, RET_TYPE);
impl RetType {
    pub fn ty(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
}

ast_node!(
    /// `pure` or `effects(…)`.
    Ceiling,
    CEILING
);
impl Ceiling {
    pub fn is_pure(&self) -> bool {
        support::token(&self.syntax, PURE_KW).is_some()
    }
    pub fn effects(&self) -> AstChildren<Effect> {
        support::children(&self.syntax)
    }
}

ast_node!(Effect, EFFECT);
impl Effect {
    /// The effect as written, without spaces: `read:xs`, `io`.
    pub fn text(&self) -> String {
        self.syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| !t.kind().is_trivia())
            .map(|t| t.text().to_string())
            .collect()
    }
}

ast_node!(ImplementsClause, IMPLEMENTS_CLAUSE);
impl ImplementsClause {
    pub fn reference(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn when_clause(&self) -> Option<WhenClause> {
        support::child(&self.syntax)
    }
    pub fn tune_clause(&self) -> Option<TuneClause> {
        support::child(&self.syntax)
    }
    pub fn needs_clause(&self) -> Option<NeedsClause> {
        support::child(&self.syntax)
    }
}

ast_node!(WhenClause, WHEN_CLAUSE);
impl WhenClause {
    pub fn condition(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

ast_node!(TuneClause, TUNE_CLAUSE);
impl TuneClause {
    pub fn params(&self) -> AstChildren<TuneParam> {
        support::children(&self.syntax)
    }
}

ast_node!(TuneParam, TUNE_PARAM);
impl TuneParam {
    pub fn name_ref(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
    pub fn values(&self) -> impl Iterator<Item = SyntaxToken> + '_ {
        self.syntax.children_with_tokens().filter_map(|e| e.into_token()).filter(|t| t.kind() == INT_NUMBER)
    }
}

ast_node!(NeedsClause, NEEDS_CLAUSE);
impl NeedsClause {
    pub fn features(&self) -> AstChildren<Effect> {
        support::children(&self.syntax)
    }
}

// ---------------------------------------------------------------------------------------------
// Types.

ast_enum!(
    /// A written type.
    Type {
        Path(PathType) = PATH_TYPE,
        Borrow(BorrowType) = BORROW_TYPE,
        Fn(FnType) = FN_TYPE,
        Dyn(DynType) = DYN_TYPE,
    }
);

ast_node!(PathType, PATH_TYPE);
impl PathType {
    pub fn path(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
    pub fn generic_arg_list(&self) -> Option<GenericArgList> {
        support::child(&self.syntax)
    }
}

ast_node!(GenericArgList, GENERIC_ARG_LIST);
impl GenericArgList {
    pub fn args(&self) -> AstChildren<GenericArg> {
        support::children(&self.syntax)
    }
}

ast_enum!(
    /// A type argument: a natural or a type.
    GenericArg {
        Nat(NatArg) = NAT_ARG,
        Path(PathType) = PATH_TYPE,
        Borrow(BorrowType) = BORROW_TYPE,
        Fn(FnType) = FN_TYPE,
        Dyn(DynType) = DYN_TYPE,
    }
);

ast_node!(NatArg, NAT_ARG);
impl NatArg {
    pub fn value(&self) -> Option<SyntaxToken> {
        support::token(&self.syntax, INT_NUMBER)
    }
}

ast_node!(
    /// `ro<T>`, `rw<T>[n]@device`.
    BorrowType,
    BORROW_TYPE
);
impl BorrowType {
    /// The `ro` or `rw` token.
    pub fn mode(&self) -> Option<SyntaxToken> {
        token_of(&self.syntax, &[RO_KW, RW_KW])
    }
    pub fn is_rw(&self) -> bool {
        support::token(&self.syntax, RW_KW).is_some()
    }
    pub fn inner(&self) -> Option<Type> {
        support::child(&self.syntax)
    }
    pub fn extent(&self) -> Option<Extent> {
        support::child(&self.syntax)
    }
    pub fn placement(&self) -> Option<Placement> {
        support::child(&self.syntax)
    }
}

ast_node!(Extent, EXTENT);
impl Extent {
    pub fn literal(&self) -> Option<Literal> {
        support::child(&self.syntax)
    }
    pub fn name_ref(&self) -> Option<NameRef> {
        support::child(&self.syntax)
    }
}

ast_node!(Placement, PLACEMENT);
impl Placement {
    /// The word after `@`.
    pub fn word(&self) -> Option<SyntaxToken> {
        self.syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| t.kind() != T![@] && !t.kind().is_trivia())
    }
}

ast_node!(FnType, FN_TYPE);
impl FnType {
    pub fn params(&self) -> Option<FnTypeParams> {
        support::child(&self.syntax)
    }
    pub fn ret_type(&self) -> Option<RetType> {
        support::child(&self.syntax)
    }
}

ast_node!(FnTypeParams, FN_TYPE_PARAMS);
impl FnTypeParams {
    pub fn types(&self) -> AstChildren<Type> {
        support::children(&self.syntax)
    }
}

ast_node!(DynType, DYN_TYPE);
impl DynType {
    pub fn path(&self) -> Option<Path> {
        support::child(&self.syntax)
    }
}

// ---------------------------------------------------------------------------------------------
// Statements.

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

// ---------------------------------------------------------------------------------------------
// Expressions.

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
