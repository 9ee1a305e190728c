//! The check of one function body (language §3–§16, tier 0).
//!
//! [`check_fn`] reads the body (`fn_body`, position-free), the function's signature, the scope,
//! the folded constants and the signatures of what it calls — never another body — and returns a
//! [`FnCheck`]: the first refusal of the body (a body reports one, as the original's does), or the
//! body's local effect row, its call edges with their argument mapping, its guard sites, and the
//! facts the operand-order audit needs. Rules run left to right, depth first, in the order the
//! original applies them, so the first refusal is the one it reports.
//!
//! Layout: `mod.rs` is the face (it only declares and re-exports: no sibling imports it);
//! `result.rs` is what a check answers; `cx.rs` the checker's state and bookkeeping; `query.rs`
//! the queries; `stmt.rs` statements; `assign.rs` assignments; `expr.rs` expressions; `call.rs`
//! calls, records and variants; `builtin.rs` the builtins; `foreign.rs` a foreign function's
//! row; the others one rule family each.

mod alias;
mod assign;
mod atomic;
mod builtin;
pub(crate) mod call;
pub(crate) mod closure;
mod collect;
mod cx;
pub(crate) mod device;
mod dispatch;
mod dynamic;
mod expr;
mod extents;
mod foreign;
mod generic;
mod implements;
mod linear;
mod moves;
mod owner;
mod parallel;
mod query;
mod queued;
mod result;
mod stmt;
mod value;

pub use crate::builtins::{close_callables, is_builtin};
pub use query::{check_fn, instance_check};
pub use result::{
    ArrayAccess, CallEdge, CallTarget, FnArgument, FnCheck, GuardKind, Mapped, Region, Resolution, TypeTable,
};
