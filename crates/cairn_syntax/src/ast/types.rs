//! Written types, as `grammar/types.rs` parses them: paths with type arguments (a natural or a
//! type), borrows with their extent and placement, function types and `dyn` types.

use super::*;

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
