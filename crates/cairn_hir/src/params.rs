//! Generic parameter lists as declared (language §19): a parameter's name, whether it is a type
//! or a natural, and a type parameter's promises (kinds, scalar classes, traits by name). Read
//! from the `[...]` list alone, so that both the declarations of records and enums (`decl`) and
//! the function templates (`generics`) share one reading of it.

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::types::Ty;

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

    pub(crate) fn named(word: &str) -> Option<ScalarClass> {
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

/// The parameters a declaration's own `[...]` list declares.
pub fn generics_of_node(node: &cairn_syntax::SyntaxNode) -> Vec<Generic> {
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
pub fn generic_names(generics: &[Generic]) -> Vec<Arc<str>> {
    generics.iter().map(|g| g.name.clone()).collect()
}

/// The names of a template's natural parameters.
pub fn natural_names(generics: &[Generic]) -> Vec<Arc<str>> {
    generics.iter().filter(|g| g.is_nat()).map(|g| g.name.clone()).collect()
}
