//! The CAIRN semantic core: a salsa database whose queries compute, per declaration and for the
//! whole program, what `cairn check` reports.
//!
//! Layers: `workspace` turns files into inputs (one per declaration); `scope` resolves names;
//! `types`, `decl` and `signature` give declarations their meaning; `body` lowers function bodies
//! into arenas without positions; `check` types a body and finds its refusals, guard sites and
//! effect summary; `effects` computes rows per strongly connected component of the call graph and
//! judges ceilings and operand order; `report` assembles the every-refusal check. Analysis does no
//! IO.

// The public face (issue 12). Modules that are API — each a page: the arena of a body, the
// types, the check's result, the scopes, instances, builtins, the packaged library, renderings,
// expression sites and the analysis stack — are public; everything else is internal and reached
// only through the re-exports below.
pub mod body;
pub mod builtins;
pub mod check;
pub mod generics;
pub mod instance;
pub mod library;
pub mod render;
pub mod requested;
pub mod scopes;
pub mod site;
pub mod stack;
pub mod types;

mod certify;
mod consts;
mod db;
mod decl;
mod diag;
mod effects;
mod family;
pub mod foreign;
mod impl_rules;
pub mod implementations;
mod input;
mod lanes;
mod order;
mod params;
pub mod plans;
pub mod recipes;
pub mod regions;
mod report;
mod scope;
mod signature;
mod traits;
mod workspace;

pub use consts::{ConstValue, Value, constant_value};
pub use db::Db;
pub use decl::{EnumDef, LendBound, Lends, enum_def, fields_of, record_lends, variants_of};
pub use diag::Anchor;
pub use effects::{Row, Rows};
pub use input::{Item, ItemEntry, ItemKey, ItemKind, Library, Program};
pub use requested::representative_check;
pub use scope::{Lookup, ProgramScope, Resolver, scope};
pub use signature::{Ceiling, Param, Signature, deciding_view, fn_signature, instance_signature, receiver_index};
pub use traits::{impl_trait, member_family, member_named, table_members, table_methods};
pub use workspace::{
    CheckKind, CheckOutcome, DeclarationKind, DeclarationView, FileState, FunctionFacts, OwnFunction, RegionView,
    SourceText, StateView, Workspace, member_name, precompute,
};
