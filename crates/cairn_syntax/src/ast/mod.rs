//! Typed views over the syntax tree.
//!
//! Each wrapper is a `SyntaxNode` of one kind (or, for the enums, of one of several kinds).
//! Boundary: every accessor returns `Option` (or an iterator), even where the grammar says a part
//! is required, because a tree with errors may lack it. Wrappers hold no data of their own and
//! compute nothing beyond walking children; meaning belongs to `cairn_hir`.
//!
//! The wrappers live in rooms that mirror `grammar/`: `items.rs`, `signatures.rs` (the parts of a
//! declaration's head), `types.rs`, `stmts.rs`, `exprs.rs` and `recipes.rs`. This module holds
//! what they share: the two macros that declare a wrapper, the helpers that walk children, and
//! names and paths (which `grammar.rs` parses too). It re-exports every wrapper, so `ast::X` stays
//! the one path of each.

use rowan::ast::support;
pub use rowan::ast::{AstChildren, AstNode, AstPtr};

pub use self::exprs::*;
pub use self::items::*;
pub use self::recipes::*;
pub use self::signatures::*;
pub use self::stmts::*;
pub use self::types::*;
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

// The rooms come after the macros: `macro_rules!` reaches only the code that follows it.
mod exprs;
mod items;
mod recipes;
mod signatures;
mod stmts;
mod types;

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
