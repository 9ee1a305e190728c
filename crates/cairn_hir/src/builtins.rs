//! The builtins: one enum and one table, the only place that knows a builtin by its name.
//!
//! Every builtin function, conversion, intrinsic type name and later-tier intrinsic the checker
//! recognises is a [`Builtin`]. Its row in the table says how it binds (language §13 and the
//! original's namespaces): a *hard* builtin can never be replaced by a declaration; a *soft* one
//! is replaced by a visible program function of the same name; a *type name* is not callable; a
//! *later* intrinsic is recognised only to be refused (`E-UNSUPPORTED`) when nothing else of that
//! name is declared. The checker resolves a call to a `Builtin` (recorded in its resolutions and
//! call targets), and MIR lowering, the effect audit and the language server read that value —
//! nobody matches on the name again.
//!
//! Invariant: names are unique; [`Builtin::from_name`] and [`Builtin::name`] are inverse.

use crate::types::Ty;

/// How a builtin's name binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// Cannot be redefined in the root namespace.
    Hard,
    /// Replaced by a visible program function of the same name.
    Soft,
    /// An intrinsic type name: not callable.
    TypeName,
    /// A later-tier intrinsic: recognised only to be refused when nothing else is declared.
    Later,
}

macro_rules! builtins {
    ($($variant:ident $name:literal $binding:ident $computing:literal $later:literal;)*) => {
        /// A builtin, by what it is (see the module comment).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Builtin {
            $($variant,)*
        }

        /// Every builtin, in table order.
        pub const ALL: &[Builtin] = &[$(Builtin::$variant,)*];

        impl Builtin {
            /// The name it is written with.
            pub fn name(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $name,)*
                }
            }

            /// How its name binds.
            pub fn binding(self) -> Binding {
                match self {
                    $(Builtin::$variant => Binding::$binding,)*
                }
            }

            /// True for builtins that only compute a value (`E-DISCARD` as a statement).
            pub fn computing(self) -> bool {
                match self {
                    $(Builtin::$variant => $computing,)*
                }
            }

            /// True for builtins of a later tier than this checker supports.
            pub fn later(self) -> bool {
                match self {
                    $(Builtin::$variant => $later,)*
                }
            }

            /// The builtin written `name`.
            pub fn from_name(name: &str) -> Option<Builtin> {
                match name {
                    $($name => Some(Builtin::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

builtins! {
    // Hard: arithmetic helpers, conversions, intrinsic storage types.
    Len "len" Hard true false;
    Min "min" Hard true false;
    Max "max" Hard true false;
    AddWrap "add_wrap" Hard true false;
    SubWrap "sub_wrap" Hard true false;
    MulWrap "mul_wrap" Hard true false;
    ShlWrap "shl_wrap" Hard true false;
    Shr "shr" Hard true false;
    U8 "u8" Hard false false;
    U16 "u16" Hard false false;
    U32 "u32" Hard false false;
    U64 "u64" Hard false false;
    Usize "usize" Hard false false;
    I8 "i8" Hard false false;
    I16 "i16" Hard false false;
    I32 "i32" Hard false false;
    I64 "i64" Hard false false;
    F32 "f32" Hard false false;
    F64 "f64" Hard false false;
    F16 "f16" Hard false true;
    Bf16 "bf16" Hard false true;
    F8e4m3 "f8e4m3" Hard false true;
    F8e5m2 "f8e5m2" Hard false true;
    Buf "Buf" Hard false false;
    Array "Array" Hard false false;
    Group "Group" Hard false true;
    IoRing "IoRing" Hard false true;
    Atomic "Atomic" Hard false true;
    Mutex "Mutex" Hard false true;
    Dyn "Dyn" Hard false false;
    // Soft: printing, assertions, float helpers, and later-tier operations.
    Print "print" Soft false false;
    Println "println" Soft false false;
    Eprint "eprint" Soft false false;
    Eprintln "eprintln" Soft false false;
    Format "format" Soft false false;
    Assert "assert" Soft false false;
    AssertEq "assert_eq" Soft false false;
    Sqrt "sqrt" Soft true false;
    Floor "floor" Soft true false;
    Ceil "ceil" Soft true false;
    Trunc "trunc" Soft true false;
    Abs "abs" Soft true false;
    ToBits "to_bits" Soft true false;
    FromBits "from_bits" Soft false true;
    Quantize "quantize" Soft false true;
    QuantizeStochastic "quantize_stochastic" Soft false true;
    Take "take" Soft false false;
    Swap "swap" Soft false false;
    Transfer "transfer" Soft false false;
    Wait "wait" Soft false false;
    Collect "collect" Soft false true;
    MmioRead "mmio_read" Soft false true;
    MmioWrite "mmio_write" Soft false true;
    Asm "asm" Soft false true;
    // Intrinsic type names.
    Bool "bool" TypeName false false;
    Void "void" TypeName false false;
    FnType "fn" TypeName false false;
    DynType "dyn" TypeName false false;
    Ticket "Ticket" TypeName false false;
    WmmaA "WmmaA" TypeName false false;
    WmmaB "WmmaB" TypeName false false;
    WmmaAcc "WmmaAcc" TypeName false false;
    MmaA "MmaA" TypeName false false;
    MmaB "MmaB" TypeName false false;
    MmaAcc "MmaAcc" TypeName false false;
    TmemAcc "TmemAcc" TypeName false false;
    // Later-tier intrinsics (device and atomics).
    AtomicAddWrap "atomic_add_wrap" Soft false false;
    AtomicAddUnordered "atomic_add_unordered" Later false true;
    AtomicMin "atomic_min" Soft false false;
    AtomicMax "atomic_max" Soft false false;
    AtomicCas "atomic_cas" Soft false false;
    AtomicAnd "atomic_and" Soft false false;
    AtomicOr "atomic_or" Soft false false;
    AtomicXor "atomic_xor" Soft false false;
    Shuffle "shuffle" Later false true;
    ShuffleXor "shuffle_xor" Later false true;
    ShuffleDown "shuffle_down" Later false true;
    ShuffleUp "shuffle_up" Later false true;
    WarpBallot "warp_ballot" Later false true;
    WarpAny "warp_any" Later false true;
    WarpAll "warp_all" Later false true;
    WarpMatch "warp_match" Later false true;
    MmaUnordered "mma_unordered" Later false true;
    MmaLoad "mma_load" Later false true;
    MmaStore "mma_store" Later false true;
    MmaGet "mma_get" Later false true;
    MmaSet "mma_set" Later false true;
    LoadWide "load_wide" Later false true;
    StoreWide "store_wide" Later false true;
}

/// True for any builtin function or intrinsic type name (not a later-tier intrinsic).
pub(crate) fn is_builtin_name(name: &str) -> bool {
    Builtin::from_name(name).is_some_and(|b| b.binding() != Binding::Later)
}

impl Builtin {
    /// A callable builtin: hard or soft (type names and later intrinsics are not).
    pub fn callable(self) -> bool {
        matches!(self.binding(), Binding::Hard | Binding::Soft)
    }

    /// An atomic element update (language §34): `atomic_add_wrap(x[i], v)` and its kin.
    pub fn atomic_update(self) -> bool {
        matches!(
            self,
            Builtin::AtomicAddWrap
                | Builtin::AtomicMin
                | Builtin::AtomicMax
                | Builtin::AtomicCas
                | Builtin::AtomicAnd
                | Builtin::AtomicOr
                | Builtin::AtomicXor
        )
    }

    /// A builtin whose arguments are places, not values (`take`, `swap`): it moves what a field,
    /// element or local holds, so a search by the types of values never offers it.
    pub fn on_places(self) -> bool {
        matches!(self, Builtin::Take | Builtin::Swap)
    }

    /// The scalar type a conversion builtin converts to (`u8(x)`, `f64(x)`).
    pub fn conversion(self) -> Option<Ty> {
        match self {
            Builtin::U8
            | Builtin::U16
            | Builtin::U32
            | Builtin::U64
            | Builtin::Usize
            | Builtin::I8
            | Builtin::I16
            | Builtin::I32
            | Builtin::I64
            | Builtin::F32
            | Builtin::F64 => Ty::scalar_named(self.name()),
            _ => None,
        }
    }

    /// True for the intrinsic types of later tiers (`Buf`, `Ticket`, `WmmaA`, …).
    pub fn intrinsic_type(self) -> bool {
        use Builtin as B;
        matches!(
            self,
            B::Buf
                | B::Array
                | B::Ticket
                | B::Atomic
                | B::Mutex
                | B::Group
                | B::IoRing
                | B::Dyn
                | B::WmmaA
                | B::WmmaB
                | B::WmmaAcc
                | B::MmaA
                | B::MmaB
                | B::MmaAcc
                | B::TmemAcc
        )
    }

    /// True for the storage floats of tier 3 (`f16`, `bf16`, `f8e4m3`, `f8e5m2`).
    pub fn storage_float(self) -> bool {
        matches!(self, Builtin::F16 | Builtin::Bf16 | Builtin::F8e4m3 | Builtin::F8e5m2)
    }

    /// True for the four printing builtins.
    pub fn prints(self) -> bool {
        matches!(self, Builtin::Print | Builtin::Println | Builtin::Eprint | Builtin::Eprintln)
    }

    /// The names of every callable builtin (for "did you mean" hints).
    pub fn callable_names() -> impl Iterator<Item = &'static str> {
        ALL.iter().filter(|b| b.callable()).map(|b| b.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut names: Vec<&str> = ALL.iter().map(|b| b.name()).collect();
        for builtin in ALL {
            assert_eq!(Builtin::from_name(builtin.name()), Some(*builtin));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }
}

/// True for the name of a builtin function (hard or soft).
pub fn is_builtin(name: &str) -> bool {
    Builtin::from_name(name).is_some_and(Builtin::callable)
}

/// The builtins and `names` closest to `name` (at most two, similarity ≥ 0.6): what a host's
/// `E-CALLEE` hint suggests, the names being the functions its session disclosed (protocol §5.3).
pub fn close_callables(name: &str, names: &[std::sync::Arc<str>]) -> Vec<String> {
    let mut candidates: Vec<std::sync::Arc<str>> = Builtin::callable_names().map(std::sync::Arc::from).collect();
    candidates.extend(names.iter().cloned());
    crate::diag::close_matches(name, &candidates)
}
