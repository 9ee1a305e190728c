//! The parts of a declaration's head: generic parameters and their bounds, parameters, the result
//! type, the effect ceiling, and the `implements` clause with its `when`, `tune` and `needs`.
//! `grammar/items.rs` parses them; they have a room of their own because functions, externs, trait
//! members, recipes, closures and function types share them.

use super::*;

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
