//! Semantic types (language §2) and how they are written in diagnostics and signatures.
//!
//! `Ty::Error` stands for a type that could not be determined; every rule treats it as matching
//! anything, so one refusal never causes another (knock-on suppression).
//! Invariant: types hold no positions and compare structurally; a record or enum is named by its
//! declaration's input and the qualified name it is written with.

use std::fmt;
use std::sync::Arc;

use crate::input::Item;

/// The integer types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntTy {
    U8,
    U16,
    U32,
    U64,
    Usize,
    I8,
    I16,
    I32,
    I64,
}

impl IntTy {
    pub fn signed(self) -> bool {
        matches!(self, IntTy::I8 | IntTy::I16 | IntTy::I32 | IntTy::I64)
    }

    pub fn bits(self) -> u32 {
        match self {
            IntTy::U8 | IntTy::I8 => 8,
            IntTy::U16 | IntTy::I16 => 16,
            IntTy::U32 | IntTy::I32 => 32,
            IntTy::U64 | IntTy::Usize | IntTy::I64 => 64,
        }
    }

    /// The smallest and largest value, as `i128`.
    pub fn range(self) -> (i128, i128) {
        let bits = self.bits();
        if self.signed() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
    }

    pub fn name(self) -> &'static str {
        match self {
            IntTy::U8 => "u8",
            IntTy::U16 => "u16",
            IntTy::U32 => "u32",
            IntTy::U64 => "u64",
            IntTy::Usize => "usize",
            IntTy::I8 => "i8",
            IntTy::I16 => "i16",
            IntTy::I32 => "i32",
            IntTy::I64 => "i64",
        }
    }

    pub const ALL: [IntTy; 9] =
        [IntTy::U8, IntTy::U16, IntTy::U32, IntTy::U64, IntTy::Usize, IntTy::I8, IntTy::I16, IntTy::I32, IntTy::I64];
}

/// The float types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatTy {
    F32,
    F64,
}

impl FloatTy {
    pub fn name(self) -> &'static str {
        match self {
            FloatTy::F32 => "f32",
            FloatTy::F64 => "f64",
        }
    }
}

/// `ro` or `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    Ro,
    Rw,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ro => "ro",
            Mode::Rw => "rw",
        }
    }
}

/// Where a view's memory lives (tier 2 uses all four).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    Host,
    Device,
    Pinned,
    Unified,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::Host => "host",
            Place::Device => "device",
            Place::Pinned => "pinned",
            Place::Unified => "unified",
        }
    }
}

/// A view's extent, compared by identity (language §6).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Extent {
    /// A literal (a constant counts as its value).
    Literal(u64),
    /// A `usize` parameter (or, at a call, the caller's name bound to it).
    Name(Arc<str>),
    /// `len(x)` of a place without a static extent.
    Len(Arc<str>),
    /// Could not be determined: matches anything.
    Unknown,
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Extent::Literal(n) => write!(f, "{n}"),
            Extent::Name(name) => write!(f, "{name}"),
            Extent::Len(place) => write!(f, "len({place})"),
            Extent::Unknown => write!(f, "?"),
        }
    }
}

/// A record or enum type: its declaration, its written name, and its type arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AdtTy {
    pub item: Item,
    pub name: Arc<str>,
    pub args: Arc<[Ty]>,
}

/// A borrowed view.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewTy {
    pub mode: Mode,
    pub elem: Arc<Ty>,
    pub extent: Extent,
    pub place: Place,
}

/// A function type's parameters and result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FnTy {
    pub params: Arc<[Ty]>,
    pub ret: Ty,
}

/// A CAIRN type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Bool,
    Int(IntTy),
    Float(FloatTy),
    Void,
    Record(AdtTy),
    Enum(AdtTy),
    /// `ro<T>` / `rw<T>`: one borrowed value (parameters only).
    Borrow(Mode, Arc<Ty>),
    /// `ro<T>[n]` / `rw<T>[n]`: borrowed elements (parameters, `stack` arrays, string literals).
    View(ViewTy),
    /// The `i`-th generic parameter of the declaration being defined (substituted at use).
    Param(u32),
    /// `fn(A, B) -> R`: a code pointer to a declared function of values (language §21).
    Fn(Arc<FnTy>),
    /// `dyn Trait` (the trait's declaration and full name): only behind a single borrow.
    Dyn(Item, Arc<str>),
    /// `Buf[T]`: a heap owner of zeroed elements, affine (language §22.1); lent whole as a view
    /// whose extent identity is `len(b)`.
    Buf(Arc<Ty>),
    /// `Dyn[Trait]`: a value of any type implementing the trait, moved to the heap; an affine
    /// owner whose members dispatch (language §20). The trait's declaration and full name.
    DynBox(Item, Arc<str>),
    /// `Array[T, N]`: `N` elements held inline, of `T`'s kind (language §22.1); lent whole as a
    /// view of extent `N`.
    Array(Arc<Ty>, u64),
    /// `Array[T, N]` in a template (a function, or a record or enum) whose natural parameter `N`
    /// gives the length: what a template's declaration holds; every instance has an
    /// [`Ty::Array`] of `N`'s value in its place (`generics::substitute`, [`Ty::substitute`]).
    ArrayNat(Arc<Ty>, NatRef),
    /// A natural as a record's or enum's argument: `Ring[16]` holds `Nat(16)` (language §19:
    /// records and enums take the same parameter lists as functions). Never a value's type.
    Nat(u64),
    /// In a template, its natural parameter given as a record's or enum's argument (`Ring[N]`
    /// inside `fn f[N:nat]`); every instance has the [`Ty::Nat`] of `N`'s value in its place.
    NatParam(NatRef),
    /// The opaque witness of a type parameter (language §19.2, `cairn check --generics`): a type
    /// that is exactly what the parameter promises — its kind, and the traits it names — and
    /// nothing else. It exists only in the checks of witness instances; no code is made for it.
    Opaque(Arc<OpaqueTy>),
    /// `Ticket[void]@device`: the ticket of queued device work (language §37), linear and
    /// pinned: bound by `let`, consumed by `wait`, never stored, passed or returned.
    Ticket,
    /// Unknown because of an earlier refusal; matches anything.
    Error,
}

/// A template's natural parameter where a type mentions it: its position in the template's
/// parameter list (what substitution reads) and its name (what diagnostics print).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NatRef {
    pub index: u32,
    pub name: Arc<str>,
}

/// An opaque witness: the parameter it stands for, its kind and its traits (declarations).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpaqueTy {
    pub name: Arc<str>,
    pub kind: Kind,
    pub traits: Arc<[Item]>,
}

impl Ty {
    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, Ty::Int(_))
    }

    pub fn is_unsigned(&self) -> bool {
        matches!(self, Ty::Int(i) if !i.signed())
    }

    pub fn is_signed(&self) -> bool {
        matches!(self, Ty::Int(i) if i.signed())
    }

    pub fn is_float(&self) -> bool {
        matches!(self, Ty::Float(_))
    }

    pub fn is_numeric(&self) -> bool {
        self.is_integer() || self.is_float()
    }

    pub fn is_scalar(&self) -> bool {
        self.is_numeric() || matches!(self, Ty::Bool)
    }

    pub fn usize() -> Ty {
        Ty::Int(IntTy::Usize)
    }

    /// The value type behind a single borrow (a borrowed parameter reads as its value).
    pub fn value(&self) -> &Ty {
        match self {
            Ty::Borrow(_, inner) => inner,
            other => other,
        }
    }

    /// The element type of an owner of elements (`Buf[T]`, `Array[T, N]`).
    pub fn owned_elements(&self) -> Option<&Ty> {
        match self {
            Ty::Buf(elem) | Ty::Array(elem, _) | Ty::ArrayNat(elem, _) => Some(elem),
            _ => None,
        }
    }

    /// True for a view.
    pub fn as_view(&self) -> Option<&ViewTy> {
        match self {
            Ty::View(view) => Some(view),
            _ => None,
        }
    }

    /// The scalar type named `name`, if it is one.
    pub fn scalar_named(name: &str) -> Option<Ty> {
        Some(match name {
            "bool" => Ty::Bool,
            "u8" => Ty::Int(IntTy::U8),
            "u16" => Ty::Int(IntTy::U16),
            "u32" => Ty::Int(IntTy::U32),
            "u64" => Ty::Int(IntTy::U64),
            "usize" => Ty::Int(IntTy::Usize),
            "i8" => Ty::Int(IntTy::I8),
            "i16" => Ty::Int(IntTy::I16),
            "i32" => Ty::Int(IntTy::I32),
            "i64" => Ty::Int(IntTy::I64),
            "f32" => Ty::Float(FloatTy::F32),
            "f64" => Ty::Float(FloatTy::F64),
            _ => return None,
        })
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => write!(f, "bool"),
            Ty::Int(i) => write!(f, "{}", i.name()),
            Ty::Float(x) => write!(f, "{}", x.name()),
            Ty::Void => write!(f, "void"),
            Ty::Record(adt) | Ty::Enum(adt) => {
                write!(f, "{}", adt.name)?;
                if !adt.args.is_empty() {
                    write!(f, "[")?;
                    for (i, arg) in adt.args.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{arg}")?;
                    }
                    write!(f, "]")?;
                }
                Ok(())
            }
            Ty::Borrow(mode, inner) => write!(f, "{}<{inner}>", mode.name()),
            Ty::View(view) => {
                write!(f, "{}<{}>[{}]@{}", view.mode.name(), view.elem, view.extent, view.place.name())
            }
            Ty::Param(i) => write!(f, "T{i}"),
            Ty::Fn(fun) => {
                let params: Vec<String> = fun.params.iter().map(ToString::to_string).collect();
                write!(f, "fn({})", params.join(", "))?;
                if fun.ret != Ty::Void {
                    write!(f, " -> {}", fun.ret)?;
                }
                Ok(())
            }
            Ty::Dyn(_, name) => write!(f, "dyn {name}"),
            Ty::Buf(elem) => write!(f, "Buf[{elem}]"),
            Ty::Array(elem, n) => write!(f, "Array[{elem}, {n}]"),
            Ty::ArrayNat(elem, n) => write!(f, "Array[{elem}, {}]", n.name),
            Ty::Nat(n) => write!(f, "{n}"),
            Ty::NatParam(n) => write!(f, "{}", n.name),
            Ty::DynBox(_, name) => write!(f, "Dyn[{name}]"),
            Ty::Opaque(o) => write!(f, "{}", o.name),
            Ty::Ticket => write!(f, "Ticket[void]@device"),
            Ty::Error => write!(f, "?"),
        }
    }
}

impl Ty {
    /// Replaces generic parameters by `args` (a natural's argument is a [`Ty::Nat`]).
    pub fn substitute(&self, args: &[Ty]) -> Ty {
        match self {
            Ty::Param(i) => args.get(*i as usize).cloned().unwrap_or(Ty::Error),
            Ty::Record(adt) => Ty::Record(adt.substitute(args)),
            Ty::Enum(adt) => Ty::Enum(adt.substitute(args)),
            Ty::Borrow(mode, inner) => Ty::Borrow(*mode, Arc::new(inner.substitute(args))),
            Ty::View(view) => Ty::View(ViewTy { elem: Arc::new(view.elem.substitute(args)), ..view.clone() }),
            Ty::Fn(fun) => Ty::Fn(Arc::new(FnTy {
                params: fun.params.iter().map(|p| p.substitute(args)).collect(),
                ret: fun.ret.substitute(args),
            })),
            Ty::Buf(elem) => Ty::Buf(Arc::new(elem.substitute(args))),
            Ty::Array(elem, n) => Ty::Array(Arc::new(elem.substitute(args)), *n),
            Ty::ArrayNat(elem, n) => {
                let elem = Arc::new(elem.substitute(args));
                match args.get(n.index as usize) {
                    Some(Ty::Nat(value)) => Ty::Array(elem, *value),
                    Some(Ty::NatParam(other)) => Ty::ArrayNat(elem, other.clone()),
                    _ => Ty::Error,
                }
            }
            Ty::NatParam(n) => match args.get(n.index as usize) {
                Some(arg @ (Ty::Nat(_) | Ty::NatParam(_))) => arg.clone(),
                _ => Ty::Error,
            },
            other => other.clone(),
        }
    }
}

impl AdtTy {
    fn substitute(&self, args: &[Ty]) -> AdtTy {
        AdtTy { item: self.item, name: self.name.clone(), args: self.args.iter().map(|a| a.substitute(args)).collect() }
    }
}

/// The kinds of language §19.1, ordered `copy < affine < linear`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Copy,
    Affine,
    Linear,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Copy => "copy",
            Kind::Affine => "affine",
            Kind::Linear => "linear",
        }
    }
}
