//! The database's inputs: one per top-level declaration, and one for the program's item list.
//!
//! Design (docs/architecture.md, "the unit of incrementality"): the workspace splits every parsed
//! file into its declarations and gives each its own input holding only that declaration's green
//! subtree. An edit inside one body therefore changes exactly one input; no query of any other
//! declaration is even re-validated. The program input lists the declarations by key (module, kind,
//! name, ordinal) and changes only when a declaration is added, removed or renamed.
//!
//! Invariant: nothing here holds a byte offset into a file. Positions inside a declaration are
//! relative to its own start; the workspace adds the declaration's offset at the boundary.

use std::fmt;
use std::sync::Arc;

use cairn_syntax::{GreenNode, SyntaxKind, SyntaxNode};

/// What kind of declaration an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Fn,
    Const,
    Struct,
    Enum,
    Test,
    Import,
    /// `family name = template[lo..hi];` (language §28): its copies are the template's instances.
    Family,
    /// `trait Name { fn member(...); ... }` (language §20).
    Trait,
    /// `impl [gparams] Trait for Type { ... }`: named by what it implements for what.
    Impl,
    /// A function defined in an impl: a function of its own (checked, given a row, compiled),
    /// keyed under its impl and never a name of its module.
    Method,
    /// A declaration of a later tier (trait, impl, extern, family, recipe, derive, plan, layout):
    /// parsed, named, and refused with `E-UNSUPPORTED` until its checker exists.
    Unsupported(SyntaxKind),
    /// `plan f { … }` (language §26): named by the function it plans (a selection, `plan f use
    /// g;`, by `f use g`).
    Plan,
    /// `recipe name[params] for R { … }` (language §29): a generator, named in its module; its
    /// body is a template, never checked as code.
    Recipe,
    /// `derive recipe[args] for Target;`: named by what it derives for what; its expansion
    /// (`recipes::derive_expansion`) becomes ordinary declarations of its module.
    Derive,
    /// A member of a trait (a bodiless signature): an item of its own, one input each, keyed
    /// under its trait (`ItemKey::parent`), so that an edit of one member changes one input. An
    /// impl's members are [`ItemKind::Method`]s, keyed the same way.
    Member,
}

impl ItemKind {
    /// True for declarations that put a name in their module's value or type namespace (a plan,
    /// a derivation or an impl names something declared elsewhere).
    pub fn declares_name(self) -> bool {
        use cairn_syntax::SyntaxKind::*;
        match self {
            ItemKind::Import
            | ItemKind::Test
            | ItemKind::Member
            | ItemKind::Method
            | ItemKind::Impl
            | ItemKind::Plan
            | ItemKind::Derive => false,
            ItemKind::Unsupported(kind) => matches!(kind, TRAIT | EXTERN_FN | RECIPE | LAYOUT),
            _ => true,
        }
    }
}

/// A declaration's identity: where it is declared and what it is called. The ordinal tells apart
/// declarations of one kind and name in one module (which are `E-DUPLICATE`, but must still be
/// distinct items) — or, under a parent, members of one name. A member of a trait or an impl
/// has its parent's key as `parent`; a top-level declaration has none.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemKey {
    pub module: Arc<str>,
    pub kind: ItemKind,
    pub name: Arc<str>,
    pub ordinal: u32,
    pub parent: Option<Arc<ItemKey>>,
}

impl fmt::Display for ItemKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = &self.parent {
            return write!(f, "{parent}::{}", self.name);
        }
        if self.module.is_empty() { write!(f, "{}", self.name) } else { write!(f, "{}.{}", self.module, self.name) }
    }
}

/// A declaration's green subtree. Equality short-cuts on pointer identity, which is what an
/// unchanged declaration keeps across a re-parse of its file.
#[derive(Debug, Clone)]
pub struct ItemSyntax {
    pub green: GreenNode,
}

impl PartialEq for ItemSyntax {
    fn eq(&self, other: &ItemSyntax) -> bool {
        std::ptr::eq(&*self.green, &*other.green) || self.green == other.green
    }
}

impl Eq for ItemSyntax {}

impl ItemSyntax {
    /// The declaration as a red tree whose offsets start at 0 (the declaration's first byte).
    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }
}

/// One declaration of the program.
#[salsa::input(debug)]
pub struct Item {
    #[returns(ref)]
    pub syntax: ItemSyntax,
}

/// An entry of the program's item list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ItemEntry {
    pub key: ItemKey,
    pub item: Item,
    /// Index of the file that declares it (in the workspace's file list).
    pub file: u32,
    /// True for the packaged standard library.
    pub library: bool,
    /// True when the declaration is written `pub`.
    pub public: bool,
    /// For a declaration a `derive` generated, that derivation (its text lives in a generated
    /// file of the workspace, not in any file of the program).
    pub origin: Option<Item>,
}

/// The program: every declaration, in load order (library modules after the program's files).
/// There is one per database.
#[salsa::input(singleton, debug)]
pub struct Program {
    #[returns(ref)]
    pub items: Arc<[ItemEntry]>,
}

/// The packaged library's declarations (a subset of the program's list), at HIGH durability: what
/// the library's own queries read, so a program edit never re-validates them.
#[salsa::input(singleton, debug)]
pub struct Library {
    #[returns(ref)]
    pub items: Arc<[ItemEntry]>,
}
