//! Recipes (language §29), as `grammar/recipes.rs` parses them: the recipe, its body, its `where`
//! bindings, `require` (also a statement of a recipe's functions, `Stmt::Require`) and the `each`
//! item.

use super::*;

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
