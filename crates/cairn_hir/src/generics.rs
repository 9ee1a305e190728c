//! Generic parameters of function templates (language §19): their kinds and bounds, whether a
//! type meets a bound, and the substitution that turns a template's types into an instance's.
//!
//! [`fn_generics`] reads only the declaration's `[...]` list, so editing the body or the rest of
//! the signature leaves it equal. A type parameter is `Ty::Param(i)` in the template's signature,
//! `i` its position in the whole list (naturals included); a natural is an extent name
//! (`ro<u8>[N]`) in the signature and a `usize` constant in the body. [`substitute`] replaces
//! both by an instance's arguments: what an instance's signature and check see is ordinary,
//! monomorphic code.

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::db::Db;
use crate::input::Item;
use crate::instance::InstanceArg;
use crate::types::{Extent, Kind, Ty, ViewTy};

/// A scalar class a type parameter may promise (language §19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarClass {
    Integer,
    Unsigned,
    Signed,
    Float,
    Numeric,
    Scalar,
}

impl ScalarClass {
    pub fn name(self) -> &'static str {
        match self {
            ScalarClass::Integer => "integer",
            ScalarClass::Unsigned => "unsigned",
            ScalarClass::Signed => "signed",
            ScalarClass::Float => "float",
            ScalarClass::Numeric => "numeric",
            ScalarClass::Scalar => "scalar",
        }
    }

    fn named(word: &str) -> Option<ScalarClass> {
        Some(match word {
            "integer" => ScalarClass::Integer,
            "unsigned" => ScalarClass::Unsigned,
            "signed" => ScalarClass::Signed,
            "float" => ScalarClass::Float,
            "numeric" => ScalarClass::Numeric,
            "scalar" => ScalarClass::Scalar,
            _ => return None,
        })
    }

    /// True when `ty` belongs to the class.
    pub fn holds(self, ty: &Ty) -> bool {
        match self {
            ScalarClass::Integer => ty.is_integer(),
            ScalarClass::Unsigned => ty.is_unsigned(),
            ScalarClass::Signed => ty.is_signed(),
            ScalarClass::Float => ty.is_float(),
            ScalarClass::Numeric => ty.is_numeric(),
            ScalarClass::Scalar => ty.is_scalar(),
        }
    }
}

/// One promise of a type parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Bound {
    Copy,
    Affine,
    Class(ScalarClass),
    /// A trait, or a word naming nothing the checker knows (both judged at the first instance).
    Trait(Arc<str>),
}

impl Bound {
    pub fn text(&self) -> String {
        match self {
            Bound::Copy => "copy".into(),
            Bound::Affine => "affine".into(),
            Bound::Class(class) => class.name().into(),
            Bound::Trait(name) => name.to_string(),
        }
    }
}

/// What a generic parameter stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GenericKind {
    /// A type, with its promises (none: it may be linear).
    Type(Arc<[Bound]>),
    /// A natural: a compile-time `usize`.
    Nat,
}

/// One generic parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Generic {
    pub name: Arc<str>,
    pub kind: GenericKind,
}

impl Generic {
    pub fn is_nat(&self) -> bool {
        self.kind == GenericKind::Nat
    }

    /// `T:copy`, `N:nat`, `T` as the parameter is written in the rule text of a refusal.
    pub fn text(&self) -> String {
        match &self.kind {
            GenericKind::Nat => format!("{}:nat", self.name),
            GenericKind::Type(bounds) if bounds.is_empty() => self.name.to_string(),
            GenericKind::Type(bounds) => {
                format!("{}:{}", self.name, bounds.iter().map(Bound::text).collect::<Vec<_>>().join("+"))
            }
        }
    }
}

/// The generic parameters of a function (empty for an ordinary function). A trait's member
/// is a template over `Self` (first), then its own; an impl's method takes the impl's
/// parameters first, then its own.
#[salsa::tracked(returns(ref))]
pub fn fn_generics(db: &dyn Db, item: Item) -> Arc<[Generic]> {
    let scope = crate::scope::Resolver::new(db);
    let mut out: Vec<Generic> = Vec::new();
    if let Some(info) = scope.info(item)
        && let Some(parent) = info.parent
    {
        match info.key.kind {
            crate::input::ItemKind::Member => {
                let name = scope.full_name(parent);
                out.push(Generic {
                    name: Arc::from("Self"),
                    kind: GenericKind::Type(Arc::from(vec![Bound::Trait(name)])),
                });
            }
            crate::input::ItemKind::Method => out.extend(generics_of_node(&parent.syntax(db).syntax_node())),
            _ => {}
        }
    }
    out.extend(generics_of_node(&item.syntax(db).syntax_node()));
    Arc::from(out)
}

/// The parameters a declaration's own `[...]` list declares.
pub(crate) fn generics_of_node(node: &cairn_syntax::SyntaxNode) -> Vec<Generic> {
    let Some(list) = node.children().find_map(ast::GenericParamList::cast) else { return Vec::new() };
    list.params()
        .map(|param| {
            let name: Arc<str> = Arc::from(param.name().map(|n| n.text()).unwrap_or_default());
            let nat = param.kind_keyword().is_some_and(|k| k.text() == "nat");
            let kind = if nat {
                GenericKind::Nat
            } else {
                let bounds: Vec<Bound> = param
                    .bound_list()
                    .map(|list| {
                        list.bounds()
                            .map(|path| {
                                let word = path.text();
                                match word.as_str() {
                                    "copy" => Bound::Copy,
                                    "affine" => Bound::Affine,
                                    other => ScalarClass::named(other)
                                        .map(Bound::Class)
                                        .unwrap_or_else(|| Bound::Trait(Arc::from(other))),
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                GenericKind::Type(Arc::from(bounds))
            };
            Generic { name, kind }
        })
        .collect()
}

/// The names of a template's parameters, in order (how its types are resolved).
pub(crate) fn generic_names(generics: &[Generic]) -> Vec<Arc<str>> {
    generics.iter().map(|g| g.name.clone()).collect()
}

/// The names of a template's natural parameters.
pub(crate) fn natural_names(generics: &[Generic]) -> Vec<Arc<str>> {
    generics.iter().filter(|g| g.is_nat()).map(|g| g.name.clone()).collect()
}

/// The kind of a value type (language §22): scalars, tag-only enums, views, borrows and function
/// values are `copy`; a `Buf` is `affine`; a `linear struct` is `linear`; any other record or sum
/// takes the greatest kind among its fields and payloads.
pub fn kind_of(db: &dyn Db, ty: &Ty) -> Kind {
    match ty {
        Ty::Buf(_) | Ty::DynBox(..) => Kind::Affine,
        Ty::Ticket => Kind::Linear,
        Ty::Opaque(o) => o.kind,
        Ty::Array(elem, _) | Ty::ArrayNat(elem, _) => kind_of(db, elem),
        Ty::Record(adt) => {
            if crate::decl::record_def(db, adt.item).linear {
                return Kind::Linear;
            }
            crate::decl::fields_of(db, adt).iter().map(|(_, t)| kind_of(db, t)).max().unwrap_or(Kind::Copy)
        }
        Ty::Enum(adt) => crate::decl::variants_of(db, adt)
            .iter()
            .filter_map(|(_, payload)| payload.as_ref().map(|t| kind_of(db, t)))
            .max()
            .unwrap_or(Kind::Copy),
        _ => Kind::Copy,
    }
}

/// A template's type with the instance's arguments in place of its parameters: `Ty::Param(i)`
/// becomes the `i`-th argument's type, an extent naming a natural becomes its value.
pub(crate) fn substitute(ty: &Ty, generics: &[Generic], args: &[InstanceArg]) -> Ty {
    if generics.is_empty() {
        return ty.clone();
    }
    match ty {
        Ty::Param(i) => match args.get(*i as usize) {
            Some(InstanceArg::Type(t)) => t.clone(),
            _ => Ty::Error,
        },
        Ty::Record(adt) => Ty::Record(substitute_adt(adt, generics, args)),
        Ty::Enum(adt) => Ty::Enum(substitute_adt(adt, generics, args)),
        Ty::Borrow(mode, inner) => Ty::Borrow(*mode, Arc::new(substitute(inner, generics, args))),
        Ty::View(view) => Ty::View(ViewTy {
            elem: Arc::new(substitute(&view.elem, generics, args)),
            extent: substitute_extent(&view.extent, generics, args),
            ..view.clone()
        }),
        Ty::Fn(fun) => Ty::Fn(Arc::new(crate::types::FnTy {
            params: fun.params.iter().map(|p| substitute(p, generics, args)).collect(),
            ret: substitute(&fun.ret, generics, args),
        })),
        Ty::Buf(elem) => Ty::Buf(Arc::new(substitute(elem, generics, args))),
        Ty::Array(elem, n) => Ty::Array(Arc::new(substitute(elem, generics, args)), *n),
        // The natural's value is the length; a name that is no natural of the instance is an
        // error the declaration's check reports.
        Ty::ArrayNat(elem, name) => match natural(name, generics, args) {
            Some(n) => Ty::Array(Arc::new(substitute(elem, generics, args)), n),
            None => Ty::Error,
        },
        other => other.clone(),
    }
}

fn substitute_adt(adt: &crate::types::AdtTy, generics: &[Generic], args: &[InstanceArg]) -> crate::types::AdtTy {
    crate::types::AdtTy {
        item: adt.item,
        name: adt.name.clone(),
        args: adt.args.iter().map(|a| substitute(a, generics, args)).collect(),
    }
}

/// An extent naming a natural parameter, as the instance's value.
pub(crate) fn substitute_extent(extent: &Extent, generics: &[Generic], args: &[InstanceArg]) -> Extent {
    if let Extent::Name(name) = extent
        && let Some(value) = natural(name, generics, args)
    {
        return Extent::Literal(value);
    }
    extent.clone()
}

/// The value of the natural parameter `name` in an instance.
pub fn natural(name: &str, generics: &[Generic], args: &[InstanceArg]) -> Option<u64> {
    let index = generics.iter().position(|g| g.is_nat() && &*g.name == name)?;
    match args.get(index) {
        Some(InstanceArg::Nat(n)) => Some(*n),
        _ => None,
    }
}

/// Calls `f` with the index of every type parameter `ty` mentions.
pub(crate) fn visit_params(ty: &Ty, f: &mut dyn FnMut(u32)) {
    match ty {
        Ty::Param(i) => f(*i),
        Ty::Record(adt) | Ty::Enum(adt) => adt.args.iter().for_each(|a| visit_params(a, f)),
        Ty::Borrow(_, inner) => visit_params(inner, f),
        Ty::View(view) => visit_params(&view.elem, f),
        Ty::Buf(elem) | Ty::Array(elem, _) | Ty::ArrayNat(elem, _) => visit_params(elem, f),
        Ty::Fn(fun) => {
            fun.params.iter().for_each(|p| visit_params(p, f));
            visit_params(&fun.ret, f);
        }
        _ => {}
    }
}

/// True when `ty` mentions a type parameter.
pub(crate) fn mentions_param(ty: &Ty) -> bool {
    let mut any = false;
    visit_params(ty, &mut |_| any = true);
    any
}

/// Binds the parameters `pattern` mentions from `actual` (the inference of language §19):
/// the slots still `None` take what `actual` shows; a slot already bound keeps its value (a
/// mismatch is the argument check's to report). A natural named as a view's extent takes a
/// literal extent.
pub(crate) fn unify(pattern: &Ty, actual: &Ty, generics: &[Generic], slots: &mut [Option<InstanceArg>]) {
    match (pattern, actual) {
        (_, Ty::Error) => {}
        (Ty::Param(i), actual) => {
            if let Some(slot) = slots.get_mut(*i as usize)
                && slot.is_none()
                && !matches!(actual, Ty::View(_) | Ty::Void)
            {
                *slot = Some(InstanceArg::Type(actual.value().clone()));
            }
        }
        (Ty::Record(p), Ty::Record(a)) | (Ty::Enum(p), Ty::Enum(a)) if p.item == a.item => {
            for (p, a) in p.args.iter().zip(a.args.iter()) {
                unify(p, a, generics, slots);
            }
        }
        (Ty::Borrow(_, p), a) => unify(p, a.value(), generics, slots),
        (Ty::Buf(p), Ty::Buf(a)) => unify(p, a, generics, slots),
        (Ty::Array(p, _), Ty::Array(a, _)) => unify(p, a, generics, slots),
        // An array whose length is a natural binds the natural.
        (Ty::ArrayNat(p, name), Ty::Array(a, n)) => {
            unify(p, a, generics, slots);
            if let Some(index) = generics.iter().position(|g| g.is_nat() && g.name == *name)
                && slots[index].is_none()
            {
                slots[index] = Some(InstanceArg::Nat(*n));
            }
        }
        (Ty::View(p), Ty::Array(a, _)) => unify(&p.elem, a, generics, slots),
        // An owner lent whole to a view parameter binds the view's element.
        (Ty::View(p), Ty::Buf(a)) => unify(&p.elem, a, generics, slots),
        (Ty::View(p), Ty::View(a)) => {
            unify(&p.elem, &a.elem, generics, slots);
            if let (Extent::Name(name), Extent::Literal(n)) = (&p.extent, &a.extent)
                && let Some(index) = generics.iter().position(|g| g.is_nat() && g.name == *name)
                && slots[index].is_none()
            {
                slots[index] = Some(InstanceArg::Nat(*n));
            }
        }
        _ => {}
    }
}
