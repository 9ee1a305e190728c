//! What declarations mean: written types resolved to `Ty`, records and enums laid out.
//!
//! [`resolve_type`] resolves a position-free `TypeRef` from inside a module (scalars, `void`,
//! records and enums through the module's lookup order, generic arguments, borrows and views).
//! [`record_def`] and [`enum_def`] lay out one declaration each and report the first refusal of its
//! rules; whether a record or sum contains itself by value is a whole-program question answered by
//! `report` without recursive queries.

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::body::{ExtentRef, TypeArg, TypeRef, lower_type};
use crate::consts;
use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::input::{Item, ItemKind};
use crate::scope::{Lookup, Resolver};
use crate::types::{AdtTy, Extent, Mode, Place, Ty, ViewTy};

/// A type that could not be resolved: the code and message of the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    pub code: &'static str,
    pub message: String,
    /// The smallest fix, when the rule can say it (an import of the library type named).
    pub hint: Option<String>,
}

impl TypeError {
    fn new(code: &'static str, message: impl Into<String>) -> TypeError {
        TypeError { code, message: message.into(), hint: None }
    }
}

/// The import that brings a packaged library's public type `name` into scope, when one declares
/// it (`Result` → `import std.core (Result);`).
fn library_import(name: &str) -> Option<String> {
    crate::library::MODULES.iter().find_map(|module| {
        let declared = ["pub struct ", "pub linear struct ", "pub enum "].iter().any(|form| {
            module
                .text
                .lines()
                .any(|l| l.starts_with(&format!("{form}{name} ")) || l.starts_with(&format!("{form}{name}[")))
        });
        declared.then(|| format!("import {} ({name});", module.name))
    })
}

/// Where a type is resolved: its module and the generic parameters in scope.
#[derive(Clone, Copy)]
pub struct TypeCtx<'a> {
    pub db: &'a dyn Db,
    pub scope: Resolver<'a>,
    pub module: &'a str,
    pub generics: &'a [Arc<str>],
    /// Which of `generics` are naturals (an `Array`'s length may name one).
    pub naturals: &'a [Arc<str>],
    /// What `Self` means: an impl's type (a trait's members name `Self` as a generic).
    pub self_ty: Option<&'a Ty>,
}

/// Resolves a written type.
pub fn resolve_type(cx: TypeCtx<'_>, ty: &TypeRef) -> Result<Ty, TypeError> {
    match ty {
        TypeRef::Missing => Ok(Ty::Error),
        TypeRef::Fn { params, ret } => {
            let mut resolved = Vec::with_capacity(params.len());
            for param in params.iter() {
                let ty = resolve_type(cx, param)?;
                // A function type carries values and single borrows, never views (language §21).
                if matches!(ty, Ty::View(_) | Ty::Void) {
                    return Err(TypeError::new(
                        "E-FN-TYPE",
                        format!("A function type takes values and single borrows, and {ty} is not one."),
                    ));
                }
                resolved.push(ty);
            }
            let ret = match ret {
                Some(ret) => resolve_type(cx, ret)?,
                None => Ty::Void,
            };
            if matches!(ret, Ty::View(_) | Ty::Borrow(..)) {
                return Err(TypeError::new("E-FN-TYPE", "A function type returns a value, never a borrow."));
            }
            Ok(Ty::Fn(Arc::new(crate::types::FnTy { params: Arc::from(resolved), ret })))
        }
        TypeRef::Dyn(_) => Err(TypeError::new(
            "E-DYN",
            "`dyn Trait` is a borrowed reference: write `ro<dyn Trait>` or `rw<dyn Trait>` (a value or a view of dyn is refused).",
        )),
        TypeRef::Borrow { rw, inner, extent: None, .. } if matches!(&**inner, TypeRef::Dyn(_)) => {
            let TypeRef::Dyn(path) = &**inner else { unreachable!("matched above") };
            let mode = if *rw { Mode::Rw } else { Mode::Ro };
            match cx.scope.resolve_path(cx.module, path, |k| k == ItemKind::Trait) {
                Lookup::Found(decl) => {
                    Ok(Ty::Borrow(mode, Arc::new(Ty::Dyn(decl.item, cx.scope.full_name(decl.item)))))
                }
                Lookup::None => {
                    let written = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
                    Err(TypeError::new("E-DYN", format!("dyn {written} names no trait visible here.")))
                }
            }
        }
        TypeRef::Borrow { rw, inner, extent, place } => {
            let mode = if *rw { Mode::Rw } else { Mode::Ro };
            let inner_ty = resolve_type(cx, inner)?;
            let inner_ty = match inner_ty {
                // The inner type's own borrow mode is dropped: `ro<ro<u8>>` is `ro<u8>`.
                Ty::Borrow(_, value) => (*value).clone(),
                other => other,
            };
            match extent {
                None => Ok(Ty::Borrow(mode, Arc::new(inner_ty))),
                Some(extent) => {
                    if inner_ty == Ty::Void {
                        return Err(TypeError::new(
                            "E-TYPE",
                            "A view cannot contain void: its elements need a value type.",
                        ));
                    }
                    let extent = match extent {
                        ExtentRef::Literal(text) => match text.parse::<u64>() {
                            Ok(n) => Extent::Literal(n),
                            Err(_) => Extent::Literal(u64::MAX),
                        },
                        // A template's own natural names itself even where a constant has its
                        // name (inside the body the name is the natural too).
                        ExtentRef::Name(name) if cx.naturals.contains(name) => Extent::Name(name.clone()),
                        ExtentRef::Name(name) => match consts::integer_constant(cx.db, cx.module, name) {
                            Some(value) => Extent::Literal(value),
                            None => Extent::Name(name.clone()),
                        },
                    };
                    let place = match place.as_deref() {
                        Some("device") => Place::Device,
                        Some("pinned") => Place::Pinned,
                        Some("unified") => Place::Unified,
                        _ => Place::Host,
                    };
                    Ok(Ty::View(ViewTy { mode, elem: Arc::new(inner_ty), extent, place }))
                }
            }
        }
        TypeRef::Path { path, args } => resolve_path_type(cx, path, args),
    }
}

fn resolve_path_type(cx: TypeCtx<'_>, path: &[Arc<str>], args: &[TypeArg]) -> Result<Ty, TypeError> {
    let written = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
    if path.len() == 1 {
        let name = &*path[0];
        if let Some(index) = cx.generics.iter().position(|g| &**g == name) {
            return Ok(Ty::Param(index as u32));
        }
        if name == "Self" {
            return cx.self_ty.cloned().ok_or_else(|| {
                TypeError::new("E-TYPE", "Self names the implementing type: it is written only in a trait or an impl.")
            });
        }
        if name == "Buf" {
            return owner_type(cx, args);
        }
        if name == "Array" {
            return array_type(cx, args);
        }
        if name == "Dyn" {
            return dyn_owner_type(cx, args);
        }
        if let Some(ty) = Ty::scalar_named(name).or_else(|| (name == "void").then_some(Ty::Void)) {
            if !args.is_empty() {
                return Err(TypeError::new("E-GENERIC-ARITY", format!("{name} takes 0 type arguments.")));
            }
            return Ok(ty);
        }
        if crate::builtins::Builtin::from_name(name).is_some_and(crate::builtins::Builtin::storage_float) {
            return Err(TypeError::new(
                "E-UNSUPPORTED",
                format!("{name} is a storage float (tier 3), which this checker does not check yet."),
            ));
        }
        if crate::builtins::Builtin::from_name(name).is_some_and(crate::builtins::Builtin::intrinsic_type) {
            return Err(TypeError::new(
                "E-UNSUPPORTED",
                format!("{name} is a type of a later tier, which this checker does not check yet."),
            ));
        }
    }
    let found = cx.scope.resolve_path(cx.module, path, |kind| matches!(kind, ItemKind::Struct | ItemKind::Enum));
    let Lookup::Found(decl) = found else {
        let mut error = TypeError::new("E-TYPE", format!("Unknown type {written}."));
        if let [name] = path
            && let Some(import) = library_import(name)
        {
            error.message = format!("Unknown type {written}: it is the library's, and this module does not import it.");
            error.hint = Some(format!("Add `{import}` at the top of the module."));
        }
        return Err(error);
    };
    let full_name = cx.scope.full_name(decl.item);
    if !cx.scope.visible_from(decl.item, cx.module) {
        let owner = cx.scope.module_of(decl.item);
        return Err(TypeError::new("E-PRIVATE", format!("{full_name} is private to module {owner}.")));
    }
    let params = adt_generics(cx.db, decl.item);
    if params.len() != args.len() {
        return Err(TypeError::new("E-GENERIC-ARITY", format!("{full_name} takes {} type arguments.", params.len())));
    }
    let mut resolved = Vec::with_capacity(args.len());
    for (param, arg) in params.iter().zip(args) {
        resolved.push(if param.is_nat() {
            natural_argument(cx, arg, &param.name, &full_name)?
        } else {
            match arg {
                TypeArg::Type(t) => resolve_type(cx, t)?,
                TypeArg::Nat(n) => {
                    return Err(TypeError::new(
                        "E-GENERIC-KIND",
                        format!("{n} is a natural, but {full_name} takes a type as {}.", param.name),
                    ));
                }
            }
        });
    }
    let adt = AdtTy { item: decl.item, name: full_name, args: Arc::from(resolved) };
    Ok(if decl.kind == ItemKind::Struct { Ty::Record(adt) } else { Ty::Enum(adt) })
}

/// The natural parameter `name` of the template whose types are being resolved, if it is one.
fn natural_ref(cx: TypeCtx<'_>, name: &str) -> Option<crate::types::NatRef> {
    if !cx.naturals.iter().any(|n| &**n == name) {
        return None;
    }
    let index = cx.generics.iter().position(|g| &**g == name)?;
    Some(crate::types::NatRef { index: index as u32, name: Arc::from(name) })
}

/// A record's or enum's natural argument (`Ring[16]`, `Ring[SIZE]`, `Ring[N]` in a template
/// over `N:nat`): a literal, a `usize` constant or a natural of the template.
fn natural_argument(cx: TypeCtx<'_>, arg: &TypeArg, param: &str, owner: &str) -> Result<Ty, TypeError> {
    let text: Arc<str> = match arg {
        TypeArg::Nat(n) => n.clone(),
        TypeArg::Type(TypeRef::Path { path, args }) if path.len() == 1 && args.is_empty() => path[0].clone(),
        TypeArg::Type(_) => {
            return Err(TypeError::new(
                "E-GENERIC-KIND",
                format!("{param} of {owner} is a natural, and this is a type: pass a number."),
            ));
        }
    };
    if let Some(natural) = natural_ref(cx, &text) {
        return Ok(Ty::NatParam(natural));
    }
    let value = match text.parse::<u128>() {
        Ok(n) => Some(n),
        Err(_) => crate::consts::integer_constant(cx.db, cx.module, &text).map(u128::from),
    };
    match value {
        Some(n) if n < (1u128 << 63) => Ok(Ty::Nat(n as u64)),
        Some(_) => Err(TypeError::new("E-OWNER-EXTENT", format!("{param} of {owner} is at most 2^63-1."))),
        None => {
            let what = if Ty::scalar_named(&text).is_some() || cx.generics.contains(&text) {
                format!("{text} is a type")
            } else {
                format!("{text} is no natural here")
            };
            Err(TypeError::new(
                "E-GENERIC-KIND",
                format!(
                    "{param} of {owner} is a natural, and {what}: pass a literal, a usize constant or a natural parameter (`[N:nat]`)."
                ),
            ))
        }
    }
}

/// `Buf[T]` (language §22.1): one element type, a value type that is not void and not declared
/// `linear` (zeroed storage would forge linear values). A record holding a linear field is
/// judged where the owner is made (`E-LINEAR-STORAGE`), which needs the record's layout.
fn owner_type(cx: TypeCtx<'_>, args: &[TypeArg]) -> Result<Ty, TypeError> {
    let [TypeArg::Type(written)] = args else {
        return Err(TypeError::new(
            "E-GENERIC-ARITY",
            "Buf takes one element type: write Buf[u8], Buf[f64], Buf[Point].",
        ));
    };
    let elem = resolve_type(cx, written)?;
    element_rule(cx.db, &elem, "Buf")?;
    Ok(Ty::Buf(Arc::new(elem)))
}

/// `Dyn[Trait]` (language §20): the trait a heap-held value implements. Whether the trait can
/// stand behind `dyn` is judged where a `Dyn` is made or called through.
fn dyn_owner_type(cx: TypeCtx<'_>, args: &[TypeArg]) -> Result<Ty, TypeError> {
    let [TypeArg::Type(TypeRef::Path { path, args: inner })] = args else {
        return Err(TypeError::new("E-GENERIC-ARITY", "Dyn takes one trait: write Dyn[Shape]."));
    };
    if !inner.is_empty() {
        return Err(TypeError::new("E-DYN", "Dyn takes a trait by its name, with no arguments: Dyn[Shape]."));
    }
    match cx.scope.resolve_path(cx.module, path, |k| k == ItemKind::Trait) {
        Lookup::Found(decl) => Ok(Ty::DynBox(decl.item, cx.scope.full_name(decl.item))),
        Lookup::None => {
            let written = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
            Err(TypeError::new("E-DYN", format!("Dyn[{written}] names no trait visible here.")))
        }
    }
}

/// `Array[T, N]` (language §22.1): an element type and a natural length — a literal, a
/// constant (of this module or named through its own, `dims.CELLS`), or a template's natural parameter — at most 2^63-1 (`E-OWNER-EXTENT`).
fn array_type(cx: TypeCtx<'_>, args: &[TypeArg]) -> Result<Ty, TypeError> {
    let [TypeArg::Type(written), length] = args else {
        return Err(TypeError::new(
            "E-GENERIC-ARITY",
            "Array takes an element type and a length: write Array[u8, 16].",
        ));
    };
    let elem = resolve_type(cx, written)?;
    element_rule(cx.db, &elem, "Array")?;
    // A literal, or a name: a natural parameter, or a constant of this module or, named through
    // its module, of another (`Array[u8, dims.CELLS]`).
    let (text, path): (Arc<str>, Option<&Arc<[Arc<str>]>>) = match length {
        TypeArg::Nat(n) => (n.clone(), None),
        TypeArg::Type(TypeRef::Path { path, args }) if args.is_empty() => {
            (Arc::from(path.iter().map(|s| &**s).collect::<Vec<_>>().join(".")), Some(path))
        }
        TypeArg::Type(_) => {
            return Err(TypeError::new(
                "E-GENERIC-KIND",
                "Array's second argument is its length, a natural: Array[u8, 16].",
            ));
        }
    };
    // A template's natural parameter: each instance's value gives the length.
    if let Some(natural) = natural_ref(cx, &text) {
        return Ok(Ty::ArrayNat(Arc::new(elem), natural));
    }
    if cx.generics.contains(&text) {
        return Err(TypeError::new(
            "E-GENERIC-KIND",
            format!("{text} is a type parameter here, and an Array's length is a natural: declare it `{text}:nat`."),
        ));
    }
    let n = match text.parse::<u128>() {
        Ok(n) => Some(n),
        Err(_) => path.and_then(|p| crate::consts::integer_constant_at(cx.db, cx.module, p)).map(u128::from),
    };
    match n {
        Some(n) if n < (1u128 << 63) => Ok(Ty::Array(Arc::new(elem), n as u64)),
        Some(_) => {
            Err(TypeError::new("E-OWNER-EXTENT", "An Array longer than 2^63-1 elements is more than any memory holds."))
        }
        None => Err(TypeError::new(
            "E-GENERIC-KIND",
            format!(
                "{text} is no natural here: an Array's length is a literal, a usize constant or a natural parameter (`[N:nat]`)."
            ),
        )),
    }
}

/// What an owner of elements (`Buf`, `buffer`, `Array`) may hold: `E-OWNER-ELEMENT` for void and
/// borrows, `E-LINEAR-STORAGE` for a record declared `linear`.
pub fn element_rule(db: &dyn Db, elem: &Ty, form: &str) -> Result<(), TypeError> {
    match elem {
        Ty::Void => Err(TypeError::new(
            "E-OWNER-ELEMENT",
            format!("{form} holds values, and void has none: give it an element type such as u8."),
        )),
        Ty::View(_) | Ty::Borrow(..) => Err(TypeError::new(
            "E-OWNER-ELEMENT",
            format!("{form} holds values, never borrows: store the values themselves."),
        )),
        Ty::Opaque(o) if o.kind == crate::types::Kind::Linear => Err(TypeError::new(
            "E-LINEAR-STORAGE",
            format!(
                "{form}[{elem}] would hold zeroed {elem} values, and {elem} may be linear (it promises no kind): bound it `affine` or `copy` to keep it in {form}."
            ),
        )),
        Ty::Record(adt) if declared_linear(db, adt.item) => Err(TypeError::new(
            "E-LINEAR-STORAGE",
            format!(
                "{form}[{elem}] would hold zeroed {elem} values, and a linear value cannot be forged: keep each {elem} in a local or a field."
            ),
        )),
        _ => Ok(()),
    }
}

/// True when the record's declaration says `linear struct` (read from its syntax, so it is safe
/// to ask while the record itself is being laid out). A query of its own, so that the checks that
/// ask it do not depend on the record's text.
pub fn declared_linear(db: &dyn Db, item: Item) -> bool {
    *linear_declaration(db, item)
}

#[salsa::tracked(returns(ref))]
fn linear_declaration(db: &dyn Db, item: Item) -> bool {
    ast::Struct::cast(item.syntax(db).syntax_node()).is_some_and(|s| s.is_linear())
}

/// The generic parameter names of a record or enum.
pub fn generic_params(db: &dyn Db, item: Item) -> Arc<[Arc<str>]> {
    crate::params::generic_names(adt_generics(db, item)).into()
}

/// The generic parameters of a record or enum, with their kinds and promises: the same lists a
/// function takes (language §19), naturals included (`struct Ring[N:nat]`).
#[salsa::tracked(returns(ref))]
pub fn adt_generics(db: &dyn Db, item: Item) -> Arc<[crate::params::Generic]> {
    Arc::from(crate::params::generics_of_node(&item.syntax(db).syntax_node()))
}

/// A record laid out: its fields in declaration order (types may mention its parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordDef {
    pub fields: Arc<[(Arc<str>, Ty)]>,
    /// Declared `linear struct` (language §22.4).
    pub linear: bool,
    /// The view the record lends (`lends store[0..len];`, language §22.3).
    pub lends: Option<Lends>,
    /// Per field: the earlier `usize` field a `Buf` field names as its extent
    /// (`values:Buf[f64][n]`, language §22.3), by position.
    pub extents: Arc<[Option<u32>]>,
    /// The first refusal of the record's own rules.
    pub error: Option<Diag>,
}

/// `lends carrier[lo..hi]`: the part of a `Buf` field a record means where a view is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lends {
    /// The `Buf` field lent, by position.
    pub carrier: u32,
    pub lo: LendBound,
    pub hi: LendBound,
}

/// A bound of a lent part: a literal, or a `usize` field of the record (by position).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LendBound {
    Literal(u64),
    Field(u32),
}

/// The field a record's field `index` names as its extent (`values:Buf[f64][n]`), if any.
pub fn field_extent(db: &dyn Db, item: Item, index: u32) -> Option<u32> {
    record_def(db, item).extents.get(index as usize).copied().flatten()
}

/// True when field `index` of the record is half of an extent pair: a `Buf` with a declared
/// extent field, or that extent field.
pub fn in_extent_pair(db: &dyn Db, item: Item, index: u32) -> bool {
    let extents = &record_def(db, item).extents;
    extents.get(index as usize).copied().flatten().is_some() || extents.iter().any(|e| *e == Some(index))
}

/// The view a record lends, if it declares one.
pub fn record_lends(db: &dyn Db, item: Item) -> Option<Lends> {
    record_def(db, item).lends
}

/// Reads and judges a record's `lends` clause (`E-LENDS`).
fn lends_of(clause: &ast::LendsClause, fields: &[(Arc<str>, Ty)]) -> Result<Lends, Diag> {
    let at = range_of(clause.syntax());
    let refuse = |message: String| Diag::new("E-LENDS", message, at.clone());
    let carrier_name = clause.carrier().map(|n| n.text()).unwrap_or_default();
    let Some(carrier) = fields.iter().position(|(n, _)| **n == *carrier_name) else {
        return Err(refuse(format!("The record has no field {carrier_name} to lend.")));
    };
    if !matches!(fields[carrier].1, Ty::Buf(_) | Ty::Error) {
        return Err(refuse(format!(
            "{carrier_name} is a {}, and a record lends part of a Buf field: `lends store[0..len];` over `store:Buf[T]`.",
            fields[carrier].1
        )));
    }
    let mut bounds = Vec::new();
    for node in clause.bounds() {
        let text = node.text().to_string();
        let bound = match text.parse::<u64>() {
            Ok(n) => LendBound::Literal(n),
            Err(_) => match fields.iter().position(|(n, _)| **n == *text) {
                Some(i) if matches!(fields[i].1, Ty::Int(crate::types::IntTy::Usize) | Ty::Error) => {
                    LendBound::Field(i as u32)
                }
                _ => {
                    return Err(refuse(format!(
                        "{text} is no usize field of this record: a lent part's bounds are literals or usize fields."
                    )));
                }
            },
        };
        bounds.push(bound);
    }
    let [lo, hi] = bounds[..] else {
        return Err(refuse("A lent part has two bounds: `lends store[0..len];`.".to_string()));
    };
    if let (LendBound::Literal(a), LendBound::Literal(b)) = (lo, hi)
        && a > b
    {
        return Err(refuse(format!("The lent part {a}..{b} ends before it starts.")));
    }
    Ok(Lends { carrier: carrier as u32, lo, hi })
}

#[salsa::tracked(returns(ref))]
pub fn record_def(db: &dyn Db, item: Item) -> RecordDef {
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let generics = generic_params(db, item);
    let naturals = crate::params::natural_names(adt_generics(db, item));
    let cx = TypeCtx { db, scope, module: &module, generics: &generics, naturals: &naturals, self_ty: None };
    let node = item.syntax(db).syntax_node();
    let Some(strukt) = ast::Struct::cast(node) else {
        return RecordDef {
            fields: Arc::from(Vec::new()),
            linear: false,
            lends: None,
            extents: Arc::from(Vec::new()),
            error: None,
        };
    };
    let mut fields: Vec<(Arc<str>, Ty)> = Vec::new();
    let mut error = None;
    let list: Vec<ast::Field> = strukt.field_list().map(|l| l.fields().collect()).unwrap_or_default();
    if list.is_empty() {
        error = Some(Diag::new("E-RECORD", "A record needs at least one field.", Anchor::Item));
    }
    let mut extents: Vec<Option<u32>> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for field in &list {
        let name = field.name().map(|n| n.text()).unwrap_or_default();
        if error.is_none() && names.contains(&name) {
            let full = scope.full_name(item);
            error = Some(Diag::new(
                "E-DUPLICATE",
                format!("{full} declares the field {name} twice."),
                range_of(field.syntax()),
            ));
        }
        names.push(name.clone());
    }
    for field in &list {
        let name = Arc::from(field.name().map(|n| n.text()).unwrap_or_default());
        let written = field.ty().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
        let ty = if matches!(written, TypeRef::Borrow { .. }) {
            if error.is_none() {
                error = Some(Diag::new(
                    "E-RECORD-TYPE",
                    "A record field holds a value, never a borrow: borrows live only in calls.",
                    range_of(field.syntax()),
                ));
            }
            Ty::Error
        } else {
            match resolve_type(cx, &written) {
                Ok(Ty::Void) => {
                    if error.is_none() {
                        error = Some(Diag::new(
                            "E-RECORD-TYPE",
                            "A record field holds a value, and void is none.",
                            range_of(field.syntax()),
                        ));
                    }
                    Ty::Error
                }
                Ok(ty) => ty,
                Err(e) => {
                    if error.is_none() {
                        error = Some(Diag::new(e.code, e.message, range_of(field.syntax())));
                    }
                    Ty::Error
                }
            }
        };
        let mut extent = None;
        if let Some(written) = field.extent() {
            let extent_name = written.name_ref().map(|n| n.text()).unwrap_or_default();
            match fields.iter().position(|(n, _)| **n == *extent_name) {
                Some(at) if matches!(fields[at].1, Ty::Int(crate::types::IntTy::Usize)) && matches!(ty, Ty::Buf(_)) => {
                    extent = Some(at as u32);
                }
                found => {
                    if error.is_none() {
                        let why = if !matches!(ty, Ty::Buf(_)) {
                            format!("{name} is a {ty}: only a Buf field takes an extent field")
                        } else if found.is_none() {
                            format!("{extent_name} is no earlier field of this record")
                        } else {
                            format!("{extent_name} is no usize field")
                        };
                        error = Some(Diag::new(
                            "E-EXTENT",
                            format!("{why}: write `n:usize; values:Buf[T][n];` with the extent field first."),
                            range_of(field.syntax()),
                        ));
                    }
                }
            }
        }
        extents.push(extent);
        fields.push((name, ty));
    }
    let mut lends = None;
    if let Some(clause) = strukt.field_list().and_then(|l| l.lends_clauses().next()) {
        match lends_of(&clause, &fields) {
            Ok(found) => lends = Some(found),
            Err(diag) => {
                if error.is_none() {
                    error = Some(diag);
                }
            }
        }
    }
    if (strukt.is_packed() || strukt.align_clause().is_some()) && error.is_none() {
        error = Some(Diag::new(
            "E-UNSUPPORTED",
            "Packed and aligned records (tier 3 layout) are not checked by this checker yet.",
            Anchor::Item,
        ));
    }
    RecordDef { fields: Arc::from(fields), linear: strukt.is_linear(), lends, extents: Arc::from(extents), error }
}

/// An enum or sum laid out: its variants with their payloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumDef {
    pub variants: Arc<[(Arc<str>, Option<Ty>)]>,
    /// True for a tag-only enum: no payload and no generic parameters.
    pub tag_only: bool,
    pub error: Option<Diag>,
}

impl EnumDef {
    pub fn variant(&self, name: &str) -> Option<(usize, &Option<Ty>)> {
        self.variants.iter().enumerate().find(|(_, (n, _))| &**n == name).map(|(i, (_, p))| (i, p))
    }
}

#[salsa::tracked(returns(ref))]
pub fn enum_def(db: &dyn Db, item: Item) -> EnumDef {
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let generics = generic_params(db, item);
    let naturals = crate::params::natural_names(adt_generics(db, item));
    let cx = TypeCtx { db, scope, module: &module, generics: &generics, naturals: &naturals, self_ty: None };
    let node = item.syntax(db).syntax_node();
    let Some(enumeration) = ast::Enum::cast(node) else {
        return EnumDef { variants: Arc::from(Vec::new()), tag_only: true, error: None };
    };
    let list: Vec<ast::Variant> = enumeration.variant_list().map(|l| l.variants().collect()).unwrap_or_default();
    let mut error = None;
    let mut names: Vec<String> = Vec::new();
    for variant in &list {
        let name = variant.name().map(|n| n.text()).unwrap_or_default();
        if names.contains(&name) && error.is_none() {
            let full = scope.full_name(item);
            error = Some(Diag::new("E-ENUM", format!("{full} names the variant {name} twice."), Anchor::Item));
        }
        names.push(name);
    }
    if list.is_empty() {
        let full = scope.full_name(item);
        error = Some(Diag::new("E-ENUM", format!("{full} needs at least one variant."), Anchor::Item));
    }
    let mut variants = Vec::new();
    let mut any_payload = false;
    for variant in &list {
        let name: Arc<str> = Arc::from(variant.name().map(|n| n.text()).unwrap_or_default());
        let payload = variant.payload().map(|written| {
            any_payload = true;
            let written = lower_type(&written);
            if matches!(written, TypeRef::Borrow { .. }) {
                if error.is_none() {
                    error = Some(Diag::new(
                        "E-SUM-PAYLOAD",
                        "A payload is a value, never a borrow: borrows live only in calls.",
                        range_of(variant.syntax()),
                    ));
                }
                return Ty::Error;
            }
            match resolve_type(cx, &written) {
                Ok(Ty::Void) => {
                    if error.is_none() {
                        error = Some(Diag::new(
                            "E-SUM-PAYLOAD",
                            "A payload is a value, and void is none: write the variant without one.",
                            range_of(variant.syntax()),
                        ));
                    }
                    Ty::Error
                }
                Ok(ty) => ty,
                Err(e) => {
                    if error.is_none() {
                        error = Some(Diag::new(e.code, e.message, range_of(variant.syntax())));
                    }
                    Ty::Error
                }
            }
        });
        variants.push((name, payload));
    }
    let tag_only = !any_payload && generics.is_empty();
    EnumDef { variants: Arc::from(variants), tag_only, error }
}

/// The range of a node, relative to its declaration.
fn range_of(node: &cairn_syntax::SyntaxNode) -> Anchor {
    let range = cairn_syntax::first_significant_token(node).map_or(node.text_range(), |t| t.text_range());
    Anchor::Range(range)
}

/// True for a tag-only enum type.
pub fn is_tag_only(db: &dyn Db, ty: &Ty) -> bool {
    match ty {
        Ty::Enum(adt) => enum_def(db, adt.item).tag_only,
        _ => false,
    }
}

/// The variants of an enum type, payloads instantiated with its arguments.
pub fn variants_of(db: &dyn Db, adt: &AdtTy) -> Vec<(Arc<str>, Option<Ty>)> {
    enum_def(db, adt.item)
        .variants
        .iter()
        .map(|(n, p)| (n.clone(), p.as_ref().map(|t| t.substitute(&adt.args))))
        .collect()
}

/// The fields of a record type, instantiated with its arguments.
pub fn fields_of(db: &dyn Db, adt: &AdtTy) -> Vec<(Arc<str>, Ty)> {
    record_def(db, adt.item).fields.iter().map(|(n, t)| (n.clone(), t.substitute(&adt.args))).collect()
}
