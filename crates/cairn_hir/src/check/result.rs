//! What the check of one body says ([`FnCheck`]) and the records inside it: guard sites, call
//! edges and targets, each name's resolution, regions and their arrays. Every pass after the
//! check (rows, guard sites, the instance walk, the lowering, the tools) reads these; the
//! checker's working state is `cx.rs`.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::body::{ExprId, StmtId};
use crate::diag::Diag;
use crate::input::Item;
use crate::scopes::LocalRef;
use crate::types::Ty;

/// The kinds of guard sites (language §15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GuardKind {
    ViewEntry,
    EnumEntry,
    Bounds,
    Overflow,
    Division,
    Conversion,
    Shift,
    Tag,
    Assert,
    /// A call through a function value: the value is not the zero value (language §21).
    Callable,
    /// Heap storage made (`Buf(n)`, `buffer`, `Dyn(v)`): the machine had room (language §15,
    /// §22.1).
    Allocation,
    /// A `Dyn` lent or called through holds a value (not moved-from or zeroed; language §20).
    DynLent,
}

impl GuardKind {
    pub fn name(self) -> &'static str {
        match self {
            GuardKind::ViewEntry => "view_entry",
            GuardKind::EnumEntry => "enum_entry",
            GuardKind::Bounds => "bounds",
            GuardKind::Overflow => "overflow",
            GuardKind::Division => "division",
            GuardKind::Conversion => "conversion",
            GuardKind::Shift => "shift",
            GuardKind::Tag => "tag",
            GuardKind::Assert => "assert",
            GuardKind::Callable => "callable",
            GuardKind::Allocation => "allocation",
            GuardKind::DynLent => "dyn",
        }
    }
}

/// How a callee's borrowed parameter maps to the caller, for renaming footprints.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Mapped {
    /// A borrowed parameter of the caller: `read:p` becomes `read:<name>`.
    Borrow(Arc<str>),
    /// The caller's own storage (a local, or a by-value parameter): `local_read`/`local_write`.
    Local,
    /// A temporary, literal or constant: the footprint is dropped.
    Dropped,
}

/// One call of a declared function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallEdge {
    pub callee: Item,
    /// The instance's arguments when the callee is a template (empty otherwise).
    pub args: Arc<[crate::instance::InstanceArg]>,
    /// Per callee parameter (after extents were filled in).
    pub mapping: Arc<[Mapped]>,
}

/// What a call expression calls (read by the operand-order audit).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CallTarget {
    /// A declared function, with the instance's arguments when it is a template.
    Function(Item, Arc<[crate::instance::InstanceArg]>),
    /// A builtin (its row is empty for the audit).
    Builtin(crate::builtins::Builtin),
    /// A record or variant constructor (never "beside" for the audit).
    Constructor,
    /// A call through a function value or a borrowed callable (`indirect_call`).
    Indirect,
    /// A call of a trait's member through a `dyn` reference: the member, and its position in
    /// the trait's table.
    Dynamic { member: Item, index: u32 },
}

/// What an expression names, as the body check resolved it. The checker is the only resolver
/// (issue 12): MIR lowering, expression sites, the edit host and the language server read these
/// (with `call_targets` for what a call calls) and never look a name up again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Not a name, or not reached by the check.
    Unresolved,
    /// A parameter or a binder of the body (`crate::scopes`).
    Local(crate::scopes::LocalRef),
    /// A constant.
    Const(Item),
    /// A variant of a sum or tag-only enum: a bare or qualified variant, or (on a call) the
    /// variant a call constructs.
    Variant { adt: Item, index: u32 },
    /// A field of a record (the record's declaration), by position.
    Field { adt: Item, index: u32 },
    /// A natural parameter of the instance checked, with its value (a `usize` constant).
    Natural(u64),
    /// A declared function used as a value (its address taken).
    Function(Item),
}

/// The result of checking one body. For a refused body, `resolutions`, `expr_types`,
/// `binder_types`, `call_targets` and `arm_variants` cover every statement, past the refusal too
/// (the recovering pass, `query.rs`); the other records stop where the refusal was met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FnCheck {
    /// The body's first refusal.
    pub error: Option<Diag>,
    /// Effects the body performs itself (footprints of locals already made `local_*`).
    pub local_row: BTreeSet<Arc<str>>,
    pub calls: Arc<[CallEdge]>,
    /// Guard sites by kind, in order of first occurrence.
    pub sites: Arc<[(GuardKind, u32)]>,
    /// What each call expression calls, sorted by expression.
    pub call_targets: Arc<[(ExprId, CallTarget)]>,
    /// The type of every expression that was checked (`Ty::Error` for the rest).
    pub expr_types: TypeTable,
    /// What every name, field and variant expression means (`Unresolved` for the rest).
    pub resolutions: Arc<[Resolution]>,
    /// The type of every binder the check bound (`Ty::Error` for the rest), by `BinderId`.
    pub binder_types: Arc<[Ty]>,
    /// Each argument of a call of a declared function (the receiver of a method call included)
    /// with the type of the parameter it was paired with, after omitted extents were filled in;
    /// sorted by expression.
    pub arguments: Arc<[(ExprId, Ty)]>,
    /// View arguments whose length the check could not compare with the extent their parameter
    /// declares (a record's lent part, an owner without a field extent): the lowering compares
    /// it at run time, a `bounds` site each; sorted.
    pub length_checks: Arc<[ExprId]>,
    /// The variant (its index in the subject's type) each match arm names, once the match
    /// passed its coverage rules; sorted by arm.
    pub arm_variants: Arc<[(crate::body::ArmId, u32)]>,
    /// The declared functions this body uses as values (their addresses taken), each once.
    pub address_taken: Arc<[Item]>,
    /// Each closure of the body with the outer bindings it captures, in first-use order;
    /// sorted by closure.
    pub captures: Arc<[(ExprId, Arc<[crate::scopes::LocalRef]>)]>,
    /// Each closure with the captured bindings it writes — by assignment, or by lending them to
    /// be written (an `rw` argument, `take`, `swap`, `format`); sorted by closure.
    pub closure_writes: Arc<[(ExprId, Arc<[crate::scopes::LocalRef]>)]>,
    /// Each argument lent to a `dyn` parameter (or boxed in a `Dyn`) with the impl its table is
    /// made of and, for a generic impl, the impl's arguments; sorted.
    pub dyn_lends: Arc<[(ExprId, Item, Arc<[crate::instance::InstanceArg]>)]>,
    /// The instances of templates used as values (`twice[u64]`), by expression, sorted: their
    /// expressions resolve to the template (`Resolution::Function`), and these are the
    /// instance's arguments (language §21).
    pub value_instances: Arc<[(ExprId, Arc<[crate::instance::InstanceArg]>)]>,
    /// Each closure with the call expressions its body makes (what a lane calling it reaches);
    /// sorted by closure.
    pub closure_calls: Arc<[(ExprId, Arc<[ExprId]>)]>,
    /// Each parallel region and collector, in statement order (language §24, §25).
    pub regions: Arc<[Region]>,
    /// Each `fn`-typed argument of a call of a declared function (judged where written when the
    /// callee's lanes call it).
    pub fn_arguments: Arc<[FnArgument]>,
}

impl FnCheck {
    /// What expression `id` names.
    pub fn resolution(&self, id: ExprId) -> Resolution {
        self.resolutions.get(id.0 as usize).copied().unwrap_or(Resolution::Unresolved)
    }

    /// The parameter type argument `id` was paired with, when it is an argument of a call of a
    /// declared function.
    pub fn argument_type(&self, id: ExprId) -> Option<&Ty> {
        let at = self.arguments.binary_search_by_key(&id, |(e, _)| *e).ok()?;
        Some(&self.arguments[at].1)
    }

    /// The variant index match arm `arm` names.
    pub fn arm_variant(&self, arm: crate::body::ArmId) -> Option<u32> {
        let at = self.arm_variants.binary_search_by_key(&arm, |(a, _)| *a).ok()?;
        Some(self.arm_variants[at].1)
    }

    /// The impl whose table argument `id` is lent to a `dyn` parameter with, and its arguments
    /// (empty for an impl that is no template).
    pub fn dyn_lend(&self, id: ExprId) -> Option<(Item, &Arc<[crate::instance::InstanceArg]>)> {
        let at = self.dyn_lends.binary_search_by_key(&id, |(e, _, _)| *e).ok()?;
        Some((self.dyn_lends[at].1, &self.dyn_lends[at].2))
    }

    /// The arguments of the template instance expression `id` takes as a value (`twice[u64]`).
    pub fn value_instance(&self, id: ExprId) -> Option<&Arc<[crate::instance::InstanceArg]>> {
        let at = self.value_instances.binary_search_by_key(&id, |(e, _)| *e).ok()?;
        Some(&self.value_instances[at].1)
    }

    /// The region (or collector) of statement `stmt`.
    pub fn region(&self, stmt: StmtId) -> Option<&Region> {
        self.regions.iter().find(|r| r.stmt == stmt)
    }

    /// The call expressions closure `id`'s body makes.
    pub fn closure_calls_of(&self, id: ExprId) -> &[ExprId] {
        match self.closure_calls.binary_search_by_key(&id, |(e, _)| *e) {
            Ok(at) => &self.closure_calls[at].1,
            Err(_) => &[],
        }
    }

    /// The captured bindings closure `id` writes.
    pub fn closure_writes_of(&self, id: ExprId) -> &[crate::scopes::LocalRef] {
        match self.closure_writes.binary_search_by_key(&id, |(e, _)| *e) {
            Ok(at) => &self.closure_writes[at].1,
            Err(_) => &[],
        }
    }

    /// The outer bindings closure `id` captures.
    pub fn captures_of(&self, id: ExprId) -> &[crate::scopes::LocalRef] {
        match self.captures.binary_search_by_key(&id, |(e, _)| *e) {
            Ok(at) => &self.captures[at].1,
            Err(_) => &[],
        }
    }

    pub fn call_target(&self, id: ExprId) -> Option<&CallTarget> {
        let at = self.call_targets.binary_search_by_key(&id, |(e, _)| *e).ok()?;
        Some(&self.call_targets[at].1)
    }

    /// The declared functions this body calls, in first-call order, each once.
    pub fn callees(&self) -> Vec<Item> {
        let mut out: Vec<Item> = Vec::new();
        for edge in self.calls.iter() {
            if !out.contains(&edge.callee) {
                out.push(edge.callee);
            }
        }
        out
    }
}

/// A region (or a collector's iteration) as later passes need it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// The `parallel` or collector statement.
    pub stmt: StmtId,
    /// The outer bindings its lanes name, in first-use order (what the lowering hands each lane).
    pub captures: Arc<[LocalRef]>,
    /// The call expressions its lanes make (their targets are in `FnCheck::call_targets`).
    pub calls: Arc<[ExprId]>,
    /// The declared functions its lanes may call (each implementation a `dyn` call may reach
    /// included), each once.
    pub callees: Arc<[crate::input::Item]>,
    /// The elements one lane index stands for: the stride of the block the lanes write (`1`
    /// for `[i]`).
    pub stride: u64,
    /// The arrays the lanes write in blocks, each with its stride, and the index expressions of
    /// every element access to them: each lies inside lane `i`'s block, so where the array holds
    /// that whole block the access is in bounds (the lowering proves those guards per lane).
    pub blocks: Arc<[(LocalRef, u64)]>,
    pub block_indices: Arc<[ExprId]>,
    /// True for device lanes (language §36): the lanes index `@device` memory (or call a
    /// `kernel fn`) and are held to the device rules.
    pub device: bool,
    /// For device lanes: how they touch each outer array (what the device plan items `vector`
    /// and `stage` need, language §26).
    pub arrays: Arc<[ArrayAccess]>,
}

/// A `fn`-typed argument of a call of a declared function: the call, the parameter's position in
/// the callee's signature, and the argument. Judged where it is written when the callee's lanes
/// call that parameter (`lane:p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FnArgument {
    pub call: ExprId,
    pub param: u32,
    pub arg: ExprId,
}

/// How device lanes touch one outer array (language §26's `vector` and `stage` read it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrayAccess {
    /// The outer binding.
    pub local: LocalRef,
    pub name: Arc<str>,
    /// The size of one element in bytes.
    pub elem_bytes: u64,
    /// Some lane writes it.
    pub written: bool,
    /// Every access is at the lane's own index, `x[i]`.
    pub own_only: bool,
    /// The constant offsets `d` of reads at `x[i + d]` (and `x[i - d]` as `-d`), `0` included.
    pub offsets: Arc<[i64]>,
}

/// A type per expression, each distinct type held once ([`FnCheck::expr_types`]). A body's
/// expressions have few distinct types (`u64`, `bool`, a view, …) and a type is 48 bytes: held one
/// per expression they were the largest record of a whole check (3.9 MB of 48 at 22,000 lines),
/// held once each with a 4-byte index per expression they are a tenth of that. Built from the
/// types in order; two tables are equal exactly when their sequences are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeTable {
    /// Each distinct type, in order of first occurrence.
    distinct: Arc<[Ty]>,
    /// For each expression, its type's position in `distinct`.
    index: Arc<[u32]>,
}

impl TypeTable {
    /// The type of expression `i`, if the body has one.
    pub fn get(&self, i: usize) -> Option<&Ty> {
        self.index.get(i).map(|&k| &self.distinct[k as usize])
    }

    /// Every expression's type, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Ty> + '_ {
        self.index.iter().map(|&k| &self.distinct[k as usize])
    }

    /// Each type some expression has, once.
    pub fn distinct(&self) -> &[Ty] {
        &self.distinct
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

impl From<Vec<Ty>> for TypeTable {
    fn from(types: Vec<Ty>) -> TypeTable {
        let mut seen: std::collections::HashMap<&Ty, u32> = std::collections::HashMap::new();
        let mut distinct: Vec<Ty> = Vec::new();
        let mut index = Vec::with_capacity(types.len());
        for ty in &types {
            let k = *seen.entry(ty).or_insert_with(|| {
                distinct.push(ty.clone());
                distinct.len() as u32 - 1
            });
            index.push(k);
        }
        TypeTable { distinct: Arc::from(distinct), index: Arc::from(index) }
    }
}
