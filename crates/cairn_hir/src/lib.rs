//! The CAIRN semantic core: a salsa database whose queries compute, per declaration and for the
//! whole program, what `cairn check` reports.
//!
//! Layers: `workspace` turns files into inputs (one per declaration); `scope` resolves names;
//! `types`, `decl` and `signature` give declarations their meaning; `body` lowers function bodies
//! into arenas without positions; `check` types a body and finds its refusals, guard sites and
//! effect summary; `effects` computes rows per strongly connected component of the call graph and
//! judges ceilings and operand order; `report` assembles the every-refusal check. Analysis does no
//! IO.

pub mod body;
pub mod builtins;
pub mod check;
pub mod consts;
pub mod db;
pub mod decl;
pub mod diag;
pub mod effects;
pub mod input;
pub mod instance;
pub mod library;
pub mod render;
pub mod report;
pub mod scope;
pub mod scopes;
pub mod signature;
pub mod site;
pub mod stack;
pub mod types;
pub mod workspace;

pub use db::{Db, RootDatabase};
pub use input::{Item, ItemEntry, ItemKey, ItemKind, ItemSyntax, Program};
pub use workspace::{
    CheckKind, CheckOutcome, DeclarationKind, DeclarationView, FileState, FunctionFacts, SourceText, StateView,
    Workspace,
};
