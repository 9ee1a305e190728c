//! The mid-level IR: each checked function body as a control-flow graph of basic blocks, in
//! which every run-time guard is an explicit instruction carrying its kind and the expression it
//! guards (language §15). Codegen (LLVM) and the reference evaluator read only this.
//!
//! Shape: a function has typed locals (parameters first), blocks of instructions, and one
//! terminator per block. Instructions assign an `Rvalue` to a place, call, print, or guard.
//! Arithmetic in an `Rvalue` is *raw* (wrapping, unchecked): the checks the language demands are
//! the `Guard`s placed before it, so a reader sees every trap. A guard the compiler proved cannot
//! fail stays in the IR marked `elided` (codegen skips it unless asked to keep every guard).
//!
//! Invariant: MIR holds no text positions; a guard names the expression it guards (`ExprId`),
//! turned into a file, line and column only when code is emitted. `verify` checks the structure.

mod carry;
pub mod cfg;
mod counted;
mod display;
pub mod eval;
pub mod fuse;
mod lower;
pub mod mono;
pub mod range;
mod speculate;
pub mod verify;
mod version;
mod visit;

use std::sync::Arc;

pub use cairn_hir::Anchor;
pub use cairn_hir::body::ExprId;
pub use cairn_hir::check::GuardKind;
pub use cairn_hir::types::{FloatTy, IntTy};
pub use lower::{fn_mir, instance_extra_mir, instance_mir, mty, program_mir, symbol as lower_symbol};

/// A type as code sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MTy {
    Void,
    Bool,
    Int(IntTy),
    Float(FloatTy),
    /// A record: its fields in declaration order.
    Record {
        name: Arc<str>,
        fields: Arc<[MTy]>,
    },
    /// A tag-only enum: its tag (`u32`) and the number of variants.
    Enum {
        name: Arc<str>,
        variants: u32,
    },
    /// A sum: a tag and one payload (or none) per variant.
    Sum {
        name: Arc<str>,
        variants: Arc<[Option<MTy>]>,
    },
    /// A view: element pointer and length.
    View(Arc<MTy>),
    /// A single borrow: a pointer.
    Ptr(Arc<MTy>),
    /// A fixed array (`stack` storage).
    Array(Arc<MTy>, u64),
    /// A code pointer to a function of these parameters and result (the zero value is null).
    Fn {
        params: Arc<[MTy]>,
        ret: Arc<MTy>,
    },
    /// A heap owner of elements (`Buf[T]`): element pointer and length, as a view, but owning
    /// its storage (the zero value owns none).
    Buf(Arc<MTy>),
    /// `Dyn[Trait]`: laid out as the `dyn` reference record it lends (the object's address, then
    /// its impl's table), but owning the object's heap block (the zero value owns none).
    DynBox(Arc<MTy>),
    /// A record or sum met again, through a heap owner, while it is being lowered (a tree's
    /// `kids:Buf[Node]`): its name, and its type once the outer lowering finished. Only ever the
    /// element of an owner (the checker refuses a type that holds itself by value); projections
    /// and layouts see through it ([`MTy::resolved`]).
    Named(NamedTy),
}

/// The type behind [`MTy::Named`]. It compares and hashes by name — a type's name is unique in a
/// program and its body holds the name again, so comparing bodies would never end. The body is
/// shared with the enclosing type it names (a cycle of `Arc`s that lives as long as the process:
/// a few hundred bytes per lowering of a recursive type).
#[derive(Clone)]
pub struct NamedTy {
    pub name: Arc<str>,
    body: Arc<std::sync::OnceLock<MTy>>,
}

impl NamedTy {
    /// A name whose body is set later, by [`NamedTy::define`].
    pub fn new(name: Arc<str>) -> NamedTy {
        NamedTy { name, body: Arc::new(std::sync::OnceLock::new()) }
    }

    /// Sets the body (once: a second call is ignored).
    pub fn define(&self, body: MTy) {
        let _ = self.body.set(body);
    }

    /// The body; `Void` while the enclosing lowering has not finished (never seen outside it).
    pub fn body(&self) -> &MTy {
        static VOID: MTy = MTy::Void;
        self.body.get().unwrap_or(&VOID)
    }

    /// True when some type refers to this name (then its body must be defined).
    pub fn is_referenced(&self) -> bool {
        Arc::strong_count(&self.body) > 1
    }
}

impl PartialEq for NamedTy {
    fn eq(&self, other: &NamedTy) -> bool {
        self.name == other.name
    }
}

impl Eq for NamedTy {}

impl std::hash::Hash for NamedTy {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl std::fmt::Debug for NamedTy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Named({})", self.name)
    }
}

impl MTy {
    pub fn usize() -> MTy {
        MTy::Int(IntTy::Usize)
    }

    /// The type itself, or the body a [`MTy::Named`] stands for.
    pub fn resolved(&self) -> &MTy {
        match self {
            MTy::Named(named) => named.body(),
            other => other,
        }
    }

    /// The element type of a view or array (a named one resolved).
    pub fn element(&self) -> Option<&MTy> {
        match self {
            MTy::View(e) | MTy::Array(e, _) | MTy::Buf(e) => Some(e.resolved()),
            _ => None,
        }
    }

    /// True when a value of this type owns heap storage, so releasing it does something
    /// (`Inst::Drop`): a `Buf`, or a record, sum or array holding one.
    pub fn needs_drop(&self) -> bool {
        match self {
            MTy::Buf(_) | MTy::DynBox(_) => true,
            MTy::Record { fields, .. } => fields.iter().any(MTy::needs_drop),
            MTy::Sum { variants, .. } => variants.iter().flatten().any(MTy::needs_drop),
            MTy::Array(elem, _) => elem.needs_drop(),
            // Only ever an owner's element, whose owner says `true` before asking.
            MTy::Named(named) => named.body().needs_drop(),
            _ => false,
        }
    }

    /// The type of what one projection reaches in a value of this type: a record's field, a
    /// view's or array's element, a borrow's target, a sum variant's payload (`Void` for a variant
    /// that carries none). `None` when the projection does not apply to the type, which is the
    /// one fault `verify` rejects a place for.
    pub fn project(&self, proj: &Proj) -> Option<MTy> {
        self.project_named(proj).map(|ty| match ty {
            MTy::Named(named) => named.body().clone(),
            other => other,
        })
    }

    fn project_named(&self, proj: &Proj) -> Option<MTy> {
        match (proj, self.resolved()) {
            (Proj::Field(i), MTy::Record { fields, .. }) => fields.get(*i as usize).cloned(),
            (Proj::Field(_), MTy::DynBox(reference)) => reference.project(proj),
            (Proj::Index(_), MTy::View(e) | MTy::Array(e, _) | MTy::Buf(e)) => Some((**e).clone()),
            (Proj::Deref, MTy::Ptr(e)) => Some((**e).clone()),
            (Proj::Payload(v), MTy::Sum { variants, .. }) => {
                variants.get(*v as usize).map(|payload| payload.clone().unwrap_or(MTy::Void))
            }
            _ => None,
        }
    }
}

/// Index of a local in its function (parameters first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Local(pub u32);

/// Index of a basic block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// A local's declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalDecl {
    /// The source name, for locals the program named.
    pub name: Option<Arc<str>>,
    pub ty: MTy,
}

/// A constant operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Const {
    /// An integer of its type, as a two's-complement value (sign-extended for signed types).
    Int(i128, IntTy),
    /// A float as its bits (`f32` in the low 32).
    Float(u64, FloatTy),
    Bool(bool),
    /// A string literal's bytes: a read-only `u8` view.
    Str(Arc<[u8]>),
    /// A tag-only enum value.
    Tag(u32, u32),
    /// The address of a program function, by symbol.
    Fn(Arc<str>),
}

/// Where a value lives: a local, then projections.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place {
    pub local: Local,
    pub proj: Vec<Proj>,
}

impl Place {
    pub fn local(local: Local) -> Place {
        Place { local, proj: Vec::new() }
    }

    pub fn project(&self, proj: Proj) -> Place {
        let mut out = self.clone();
        out.proj.push(proj);
        out
    }
}

/// One step into a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Proj {
    /// A record field.
    Field(u32),
    /// An element of a view or array (its guard comes before).
    Index(Operand),
    /// Through a single borrow.
    Deref,
    /// The payload of a sum's variant (the tag was tested before).
    Payload(u32),
}

/// A value an instruction reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    Copy(Place),
    Const(Const),
}

/// Raw binary operations (integers wrap; the guards come before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Min,
    Max,
}

/// Raw unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
    Abs,
    Sqrt,
    Floor,
    Ceil,
    Trunc,
    /// A float's bit pattern as an unsigned integer.
    ToBits,
}

/// What an assignment computes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Rvalue {
    Use(Operand),
    Binary(BinOp, Operand, Operand),
    Unary(UnOp, Operand),
    /// A numeric conversion to the target type (range checks come before).
    Cast(MTy, Operand),
    /// A record from its fields.
    Record(MTy, Vec<Operand>),
    /// A sum's variant, with its payload.
    Variant(MTy, u32, Option<Operand>),
    /// The tag of a sum or tag-only enum.
    Tag(Place),
    /// The length of a view or array.
    Len(Place),
    /// A view of a whole view or array, or of its elements `lo..hi`.
    View(Place, Option<(Operand, Operand)>),
    /// The address of a place (a single borrow).
    Ref(Place),
    /// Zero-filled storage of the place's type.
    Zeroed,
    /// A new owner of this many zeroed elements (`Buf[T](n)`, `buffer`), in the memory named:
    /// the host heap, or for a `buffer …@device`/`@unified` the device's (language §36) when
    /// the build is for a GPU (emulation keeps every kind on the host heap). A failed
    /// allocation yields a null owner, which the `Allocated` guard after it turns into a clean
    /// abort with a message, never undefined behaviour.
    Alloc(MTy, Operand, Memory),
    /// `cond ? a : b`.
    Select(Operand, Operand, Operand),
    /// An atomic update of one element (language §34), relaxed: the element becomes `old op v`
    /// and the value is the old one.
    AtomicRmw(AtomicOp, Place, Operand),
    /// `atomic_cas`: the element becomes `desired` where it equals `expected`; the value is the
    /// old one.
    AtomicCas(Place, Operand, Operand),
}

/// Where an allocation's elements live (language §36).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Memory {
    /// The host heap (`Buf[T](n)`, and `buffer`s `@host` or `@pinned`).
    #[default]
    Host,
    /// Device memory, which host code never indexes (`buffer …@device`).
    Device,
    /// Memory both sides reach (`buffer …@unified`).
    Unified,
}

/// The operation of an atomic element update (signedness from the element's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// Wrapping addition.
    AddWrap,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// The condition a guard requires; the program traps when it fails.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Check {
    /// `a op b` is representable in the type (op: Add, Sub or Mul).
    NoOverflow(BinOp, IntTy, Operand, Operand),
    /// `-a` is representable (signed types).
    NegNoOverflow(IntTy, Operand),
    /// `b != 0`, and for a signed type not `MIN / -1`.
    Division(IntTy, Operand, Operand),
    /// The value fits the target type (for a float: not NaN and in range after truncation).
    Fits(MTy, MTy, Operand),
    /// A shift count below the width.
    ShiftCount(IntTy, Operand),
    /// `index < len`.
    InBounds(Operand, Operand),
    /// `lo <= hi <= len`.
    PartInBounds(Operand, Operand, Operand),
    /// A part `lo..hi` has the length its view parameter's extent asks for: `hi - lo == n`.
    PartLength(Operand, Operand, Operand),
    /// A tag within the variants: never holds when reached (the `match` default).
    Unreachable,
    /// `assert(cond)`, with its message.
    Assert(Operand, Option<Arc<[u8]>>),
    /// `assert_eq(a, b)` of a scalar type, with its message.
    AssertEq(MTy, Operand, Operand, Option<Arc<[u8]>>),
    /// A function value is not the zero value.
    Callable(Operand),
    /// A `Buf` just made holds storage for its elements (or has none to hold): the allocation
    /// did not fail.
    Allocated(Operand),
}

/// One guard.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Guard {
    pub kind: GuardKind,
    pub check: Check,
    /// The expression guarded (`None` for a guard at the function's entry).
    pub at: Option<ExprId>,
    /// Proved unable to fail: codegen leaves it out unless every guard is kept.
    pub elided: bool,
    /// Left out of a loop's copy because a check before the loop showed it holds for every
    /// value of the loop's counter (`version`, a build's rewrite; always with `elided`).
    pub hoisted: bool,
    /// For a guard the range analysis discharged, the facts that prove it (`range::audit`
    /// re-checks them; the evaluator checks each when it reaches the guard). Empty for a guard
    /// still in force and for one the lowering elided by construction.
    pub facts: Vec<range::Fact>,
    /// `Some((c, v))`: the guard can fail only where `c` is `v`. A speculated arm's overflow
    /// guard (`speculate`) runs on both paths of its `if`, over the arm's own values, which off
    /// its path are wrapping arithmetic of no use; it traps on its own path alone. `None`
    /// everywhere else: the guard holds wherever its code runs.
    pub only_if: Option<(Operand, bool)>,
}

/// Where a print goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One printed value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrintArg {
    pub ty: MTy,
    /// True for a character literal (printed as its byte).
    pub char: bool,
    pub value: Operand,
}

/// An instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Inst {
    Assign(Place, Rvalue),
    Guard(Guard),
    /// A call of a program function, by symbol.
    Call {
        dst: Option<Place>,
        callee: Arc<str>,
        args: Vec<Operand>,
    },
    Print {
        stream: Stream,
        newline: bool,
        args: Vec<PrintArg>,
    },
    /// `format`'s rendering (language §13.1): the pieces as a print writes them, into a scratch
    /// text the runtime holds until the next `Format`; `dst` (a `u8` view) is set to it. What
    /// appends it to the vector is the `std.vec.extend_from` call lowered right after.
    Format {
        dst: Place,
        args: Vec<PrintArg>,
    },
    /// A call through a function value (its `Callable` guard comes before).
    CallIndirect {
        dst: Option<Place>,
        callee: Operand,
        args: Vec<Operand>,
    },
    /// Releases every owner the place holds (its type's drop glue) and leaves the zero value in
    /// it, so releasing a moved-from place (zeroed by the move) or releasing twice does nothing.
    Drop(Place),
    /// A fact the checker proved that the code may rely on (a view's length equals its extent
    /// parameter): codegen hands it to LLVM (`llvm.assume`); the evaluator checks it, so a false
    /// one is a compiler bug found by the differential tests, never undefined behaviour unseen.
    Assume(Operand),
    /// Runs the lanes of a region (language §24): the lane function `lane(env, lo, hi)` (which
    /// runs indices `lo..hi`) over `0..count`, split into claims across the lane pool, or called
    /// once on the calling thread when the region is small. Returns when every lane is done.
    Parallel {
        lane: Arc<str>,
        env: Operand,
        count: Operand,
        /// The elements of work the whole region stands for (a lane owning a block counts as
        /// its block): what decides whether it runs as a plain loop, and the default claim.
        work: Operand,
        schedule: Schedule,
    },
    /// A device `reduce` (language §25, §36). `lane(env, lo, hi)` returns the fold of the
    /// yields of `lo..hi` in index order, from the operator's identity; `fold(a, b)` combines
    /// two totals with the collector's own guard (a checked `+` traps when the sum overflows).
    /// The total of `0..count` is written to `dest`, device memory when `dest_device` (the
    /// element form's `out[k]`). Emulation and the evaluator call `lane` once over `0..count`:
    /// the in-order fold language §41 fixes. A GPU build launches the lane function's kernel,
    /// whose threads fold their indices, combine across each warp with `fold`, and then into
    /// one device cell by `op` (`BinOp::Add` … `Max`; `checked` for a checked `+`): a tree of
    /// unspecified association, exact for the integer operators.
    DeviceReduce {
        lane: Arc<str>,
        fold: Arc<str>,
        env: Operand,
        count: Operand,
        op: BinOp,
        checked: bool,
        /// `op`'s identity in the total's type: the total of no indices, and the cell's start.
        identity: Const,
        dest: Place,
        dest_device: bool,
        schedule: Schedule,
    },
    /// `transfer(dst, src)` (language §36): copies `len(dst)` elements of `src` into `dst` (two
    /// views of one element type; a guard before it made their lengths agree). `device` is true
    /// when either side is device memory, so a GPU build copies through the driver; emulation
    /// copies host memory either way.
    Transfer {
        dst: Operand,
        src: Operand,
        device: bool,
    },
}

/// How a region's indices are split (language §24, §26); never what they compute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// A plan's `grain`: at least this many indices per claim (`0`: the default, 8,192
    /// elements' work).
    pub grain: u64,
    /// A plan's `lanes`: at most this many lanes (`0`: every lane of the pool).
    pub lanes: u32,
    /// The fusion chain of the plan's `fuse` the region belongs to: adjacent regions of one
    /// chain may run as one traversal (`fuse::fuse_regions`, never with every guard kept).
    pub chain: Option<u32>,
    /// A device region built for a GPU: a plan's `block` (threads per block, `0`: 256) and
    /// `per_lane` (consecutive indices per thread, `0`: one). Emulation ignores both.
    pub block: u32,
    pub per_lane: u32,
}

/// How a block ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Terminator {
    Goto(BlockId),
    Branch(Operand, BlockId, BlockId),
    /// On an integer (a tag): the block of each value, else `default`.
    Switch(Operand, Vec<(u64, BlockId)>, BlockId),
    Return(Option<Operand>),
    Unreachable,
}

/// A basic block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub insts: Vec<Inst>,
    /// Per instruction, the statement or expression it comes from (for debug line info).
    pub anchors: Vec<Option<Anchor>>,
    pub term: Terminator,
    pub term_anchor: Option<Anchor>,
}

/// Whether a function is the program's, the entry point, or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FnKind {
    Function,
    Main,
    Test,
    /// A foreign (C) function (language §45): its parameters only, no blocks; the symbol is
    /// the C one, and a view argument travels to it as its data pointer.
    Foreign,
}

/// One function in MIR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The symbol it is emitted under.
    pub symbol: Arc<str>,
    /// `module.name` (or `name` in the root module; `test$name` for a test).
    pub name: Arc<str>,
    pub kind: FnKind,
    pub params: u32,
    pub ret: MTy,
    pub locals: Vec<LocalDecl>,
    pub blocks: Vec<Block>,
    /// Each view parameter's length as its signature fixes it (callers pass the two together):
    /// what an equivalence check may assume of its inputs. Views without a fixed extent are
    /// absent.
    pub extents: Vec<(Local, ViewExtent)>,
    /// True for the lane function of a region whose lanes run on the device (language §36):
    /// compiled into the PTX module as a kernel's body (`cairn_codegen::compile_ptx`), and for
    /// the host under `--emulate`.
    pub device: bool,
}

/// What a view parameter's length equals.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ViewExtent {
    /// The value of this `usize` parameter.
    Param(Local),
    /// A literal length.
    Literal(u64),
}

impl Function {
    pub fn local(&self, local: Local) -> &LocalDecl {
        &self.locals[local.0 as usize]
    }

    /// The type of a place: its local's type narrowed by each projection in turn
    /// (`MTy::project`). `None` when the place does not fit the function (a local it lacks, a
    /// projection that does not apply), which never happens in a verified function.
    ///
    /// Invariant: this is the one definition of a place's type; codegen, the evaluator, the SMT
    /// translation, the lowering and the verifier all read it rather than keeping their own.
    pub fn place_ty(&self, place: &Place) -> Option<MTy> {
        place_ty(&self.locals, place)
    }

    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.0 as usize]
    }

    /// Every guard, in block order.
    pub fn guards(&self) -> impl Iterator<Item = &Guard> {
        self.blocks.iter().flat_map(|b| b.insts.iter()).filter_map(|i| match i {
            Inst::Guard(g) => Some(g),
            _ => None,
        })
    }
}

/// Why a function could not be lowered (a construct the lowering does not handle: never for
/// an accepted tier-0 program, which the checker guarantees).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError(pub String);

/// The MIR of the whole program: every function and test, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub functions: Vec<Arc<Function>>,
    pub errors: Vec<(Arc<str>, LowerError)>,
}

/// `Function::place_ty` over the locals declared so far, for the lowering, which has no
/// `Function` until it is done.
fn place_ty(locals: &[LocalDecl], place: &Place) -> Option<MTy> {
    let local = locals.get(place.local.0 as usize)?;
    place.proj.iter().try_fold(local.ty.clone(), |ty, proj| ty.project(proj))
}

/// Empties every block no path from the entry reaches (what a rewrite left behind, code after a
/// `return`): no instructions, an `Unreachable` terminator. Block numbers stay, so no jump
/// changes; no guard of dead code is emitted or counted.
pub(crate) fn clear_unreachable(blocks: &mut [Block]) {
    let mut reached = vec![false; blocks.len()];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if b >= blocks.len() || reached[b] {
            continue;
        }
        reached[b] = true;
        stack.extend(blocks[b].term.successors().iter().map(|s| s.0 as usize));
    }
    for (block, reached) in blocks.iter_mut().zip(reached) {
        if !reached {
            block.insts.clear();
            block.anchors.clear();
            block.term = Terminator::Unreachable;
        }
    }
}

/// The program-level rewrites a build makes when guards may be left out (never under
/// `--keep-guards`, which compiles the program as lowered): adjacent regions of one fusion chain
/// joined (`fuse`), small `if`/`else`s whose arms hold checked arithmetic speculated
/// (`speculate`), a value a counted loop stores at `v[i]` and reads back at `v[i - 1]` carried in a
/// local (`carry`), and counted loops (nests outermost first) versioned on a check of their
/// counter-affine guards before them (`version`). Every command that compiles as a build does calls this, and
/// only this.
pub fn rewrite_for_build(functions: &mut Vec<Arc<Function>>) {
    fuse::fuse_regions(functions);
    speculate::speculate_program(functions);
    carry::carry_program(functions);
    version::version_program(functions);
}
