//! Files and top-level declarations, as `grammar/items.rs` parses them: the `Item` enum,
//! visibility, the comment above a declaration, and one wrapper per declaration with its parts
//! (fields and `lends` clauses, variants, trait and impl members, plans). Recipes have their own
//! room (`recipes.rs`), and the parts of a head that several declarations share have
//! `signatures.rs`.

use super::*;

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
