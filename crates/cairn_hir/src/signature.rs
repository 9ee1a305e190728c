//! Function signatures: parameter and result types, extents, ceilings (language §5, §6, §14.4).
//!
//! [`fn_signature`] reads only the declaration's signature (never its body) and the scope, and
//! its value holds no positions, so editing a body, or moving text, leaves it equal: callers are
//! not re-checked. Its refusal is anchored at the declaration's first token, where the original
//! reports signature refusals.

use std::collections::BTreeSet;
use std::sync::Arc;

use cairn_syntax::SyntaxKind;
use cairn_syntax::ast::{self, AstNode};

use crate::body::{TypeRef, lower_type};
use crate::db::Db;
use crate::decl::{TypeCtx, resolve_type};
use crate::diag::{Anchor, Diag};
use crate::input::Item;
use crate::scope::Resolver;
use crate::types::{Extent, Place, Ty};

/// One parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: Arc<str>,
    pub ty: Ty,
}

impl Param {
    /// True for a borrowed parameter (a view or a single borrow).
    pub fn borrowed(&self) -> bool {
        matches!(self.ty, Ty::View(_) | Ty::Borrow(..))
    }
}

/// A declared ceiling.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ceiling {
    /// `pure`, or `pure` listed inside `effects(...)`.
    pub pure: bool,
    /// The effects listed (without `pure`).
    pub effects: BTreeSet<Arc<str>>,
}

/// The effects `pure` permits besides `read:` of anything lent.
pub const PURE: &[&str] =
    &["diverge", "ffi_precondition", "local_read", "local_write", "stack_storage", "trap", "zero_init"];

impl Ceiling {
    /// True when the ceiling admits `effect`.
    pub fn admits(&self, effect: &str) -> bool {
        self.effects.contains(effect)
            || (self.pure && (PURE.contains(&effect) || effect.starts_with("read:") || effect == "pure"))
    }
}

/// A function's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Arc<[Param]>,
    pub ret: Ty,
    pub ceiling: Option<Ceiling>,
    /// Indices of the `usize` parameters that name the extent of a later view parameter (the
    /// ones a call may leave out, all together).
    pub extent_params: Arc<[usize]>,
    /// True for a test block.
    pub test: bool,
    /// True for a `kernel fn`: a device helper, callable only from device lanes and other
    /// kernels, and held to the device-lane rules (language §36).
    pub kernel: bool,
    /// The first refusal of the signature's rules.
    pub error: Option<Diag>,
}

impl Signature {
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| &*p.name == name)
    }
}

/// The first view parameter whose extent is the parameter `extent`: the one that decides that
/// extent when a call leaves it out (language §6). The checker and the lowering both ask here.
pub fn deciding_view(params: &[Param], extent: &str) -> Option<usize> {
    params.iter().position(|p| matches!(&p.ty, Ty::View(v) if matches!(&v.extent, Extent::Name(n) if &**n == extent)))
}

#[salsa::tracked(returns(ref))]
pub fn fn_signature(db: &dyn Db, item: Item) -> Signature {
    let node = item.syntax(db).syntax_node();
    let mut signature = Signature {
        params: Arc::from(Vec::new()),
        ret: Ty::Void,
        ceiling: None,
        extent_params: Arc::from(Vec::new()),
        test: node.kind() == SyntaxKind::TEST,
        kernel: ast::Fn::cast(node.clone()).is_some_and(|f| f.is_kernel()),
        error: None,
    };
    // A function (an impl's methods included) or a trait's bodiless member.
    let (function, param_list, ret_type, ceiling_node) = if let Some(f) = ast::Fn::cast(node.clone()) {
        let parts = (f.param_list(), f.ret_type(), f.ceiling());
        (Some(f), parts.0, parts.1, parts.2)
    } else if let Some(m) = ast::TraitMember::cast(node.clone()) {
        (None, m.param_list(), m.ret_type(), m.ceiling())
    } else if let Some(x) = ast::ExternFn::cast(node) {
        // A foreign function's `effects(...)` is its row, not a ceiling (`foreign.rs`).
        (None, x.param_list(), x.ret_type(), None)
    } else {
        return signature;
    };
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let generics = crate::generics::fn_generics(db, item);
    let names = crate::generics::generic_names(generics);
    let naturals = crate::generics::natural_names(generics);
    // In an impl's method, `Self` is the impl's type.
    let parent = scope.info(item).and_then(|info| info.parent);
    let impl_def = parent
        .filter(|_| scope.info(item).is_some_and(|i| i.key.kind == crate::input::ItemKind::Method))
        .map(|p| crate::traits::impl_def(db, p));
    let self_ty = impl_def.map(|i| &i.self_ty);
    let cx = TypeCtx { db, scope, module: &module, generics: &names, naturals: &naturals, self_ty };
    let mut error: Option<Diag> = None;
    let fail = |error: &mut Option<Diag>, code: &'static str, message: String| {
        if error.is_none() {
            *error = Some(Diag::new(code, message, Anchor::Item));
        }
    };
    for (index, generic) in generics.iter().enumerate() {
        if generics[..index].iter().any(|g| g.name == generic.name) {
            fail(
                &mut error,
                "E-DUPLICATE",
                format!("The generic parameter {} is declared twice: give each parameter its own name.", generic.name),
            );
        }
    }
    let mut params: Vec<Param> = Vec::new();
    let mut extent_params: Vec<usize> = Vec::new();
    let foreign = crate::foreign::is_extern(db, item);
    if foreign && !generics.is_empty() {
        fail(
            &mut error,
            "E-EXTERN",
            "A foreign (C) function has one C signature: it takes no generic parameters (declare one extern per type)."
                .into(),
        );
    }
    for param in param_list.map(|l| l.params().collect::<Vec<_>>()).unwrap_or_default() {
        let name: Arc<str> = Arc::from(param.name().map(|n| n.text()).unwrap_or_default());
        let written = param.ty().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
        let ty = match resolve_type(cx, &written) {
            Ok(ty) => natural_as_type(generics, ty, &mut error),
            Err(e) => {
                let range = param.ty().map(|t| ast::AstNode::syntax(&t).text_range());
                fail_type(&mut error, e, range);
                Ty::Error
            }
        };
        if params.iter().any(|p| p.name == name) || ty == Ty::Void {
            fail(
                &mut error,
                "E-PARAM",
                format!("The parameter {name} is invalid: parameter names are distinct and none is void."),
            );
        }
        // `x:ro<u64>[K]` must mean one thing: a natural `K` (fixed per instance) or a parameter
        // `K` (given per call). An implementation's instance would otherwise take a view of the
        // natural's length where its reference passes one of the parameter's.
        if generics.iter().any(|g| g.name == name) {
            fail(
                &mut error,
                "E-PARAM",
                format!(
                    "The parameter {name} has the name of the function's generic parameter {name}: rename one, so that every use of the name means one of them."
                ),
            );
        }
        if let Ty::View(view) = &ty {
            match &view.extent {
                Extent::Literal(n) if *n > (1u64 << 63) - 1 => {
                    fail(&mut error, "E-EXTENT", format!("The static extent {n} exceeds 2^63-1."));
                }
                // A natural parameter is a static extent, bound where the instance is made.
                Extent::Name(extent) if generics.iter().any(|g| g.is_nat() && g.name == *extent) => {}
                // A foreign function's extent may name a later parameter (C's pointer, then
                // length); callers pass it themselves.
                Extent::Name(extent) if foreign && !params.iter().any(|p| p.name == *extent) => {}
                Extent::Name(extent) => match params.iter().position(|p| p.name == *extent) {
                    Some(index) if params[index].ty == Ty::usize() => {
                        if !extent_params.contains(&index) {
                            extent_params.push(index);
                        }
                    }
                    _ => fail(
                        &mut error,
                        "E-EXTENT",
                        format!(
                            "The extent {extent} of {name} must name an earlier immutable usize parameter (or be a literal or constant)."
                        ),
                    ),
                },
                _ => {}
            }
        }
        params.push(Param { name, ty });
    }
    let ret = match ret_type.and_then(|r| r.ty()) {
        Some(written) => match resolve_type(cx, &lower_type(&written)) {
            Ok(ty) => natural_as_type(generics, ty, &mut error),
            Err(e) => {
                fail_type(&mut error, e, Some(ast::AstNode::syntax(&written).text_range()));
                Ty::Error
            }
        },
        None => Ty::Void,
    };
    if matches!(ret, Ty::View(_) | Ty::Borrow(..)) {
        fail(&mut error, "E-ESCAPE", "A function cannot return a borrow: borrows never outlive a call.".into());
    }
    let mut ceiling = ceiling_node.map(|c| {
        let mut effects: BTreeSet<Arc<str>> = c.effects().map(|e| Arc::from(e.text())).collect();
        let pure = c.is_pure() || effects.remove("pure");
        Ceiling { pure, effects }
    });
    // A trait member's ceiling binds every implementation that declares none of its own.
    if ceiling.is_none()
        && let Some(member) =
            impl_def.and_then(|i| i.trait_member(db, &scope.info(item).map(|i| i.key.name.clone()).unwrap_or_default()))
    {
        ceiling = fn_signature(db, member).ceiling.clone();
    }
    if function.as_ref().is_some_and(ast::Fn::is_kernel) {
        // A kernel is device code: it takes device memory only (language §36).
        if let Some((param, place)) = params.iter().find_map(|p| match &p.ty {
            Ty::View(view) if matches!(view.place, Place::Host | Place::Pinned) => Some((p, view.place)),
            _ => None,
        }) {
            fail(
                &mut error,
                "E-PLACEMENT",
                format!(
                    "A kernel fn is device code, and its parameter {} is a view of @{} memory: take a @device (or @unified) view.",
                    param.name,
                    place.name()
                ),
            );
        }
    }
    extent_params.sort_unstable();
    signature.params = Arc::from(params);
    signature.ret = ret;
    signature.ceiling = ceiling;
    signature.extent_params = Arc::from(extent_params);
    signature.error = error;
    signature
}

/// A natural parameter written where a type is wanted: `E-GENERIC-KIND` (language §19).
fn natural_as_type(generics: &[crate::generics::Generic], ty: Ty, error: &mut Option<Diag>) -> Ty {
    let mut bad: Option<&crate::generics::Generic> = None;
    crate::generics::visit_params(&ty, &mut |i| {
        if let Some(g) = generics.get(i as usize).filter(|g| g.is_nat()) {
            bad.get_or_insert(g);
        }
    });
    match bad {
        Some(generic) => {
            if error.is_none() {
                *error = Some(Diag::new(
                    "E-GENERIC-KIND",
                    format!(
                        "{} is a static natural, not a type: declare it `{}` (or `{}:type`) to take a type.",
                        generic.name, generic.name, generic.name
                    ),
                    Anchor::Item,
                ));
            }
            Ty::Error
        }
        None => ty,
    }
}

/// The signature of an instance: the template's, with the instance's arguments in place of its
/// parameters (language §19). An instance without arguments has its declaration's signature.
#[salsa::tracked(returns(ref))]
pub fn instance_signature<'db>(db: &'db dyn Db, instance: crate::instance::Instance<'db>) -> Signature {
    let item = instance.item(db);
    let template = fn_signature(db, item);
    let generics = crate::generics::fn_generics(db, item);
    let args = instance.args(db);
    if generics.is_empty() || args.len() != generics.len() {
        return template.clone();
    }
    let subst = |ty: &Ty| crate::generics::substitute(ty, generics, args);
    Signature {
        params: template.params.iter().map(|p| Param { name: p.name.clone(), ty: subst(&p.ty) }).collect(),
        ret: subst(&template.ret),
        ..template.clone()
    }
}

/// A type of the signature that does not resolve: refused at the type itself (relative to the
/// declaration), with the fix when the rule knows it.
fn fail_type(error: &mut Option<Diag>, e: crate::decl::TypeError, range: Option<cairn_syntax::TextRange>) {
    if error.is_some() {
        return;
    }
    let anchor = range.map_or(Anchor::Item, Anchor::Range);
    let mut diag = Diag::new(e.code, e.message, anchor);
    if let Some(hint) = e.hint {
        diag = diag.with_hint(hint);
    }
    *error = Some(diag);
}

/// The receiver of a trait member: its first parameter typed `Self`, `ro<Self>` or `rw<Self>`.
pub fn receiver_index(db: &dyn Db, member: Item) -> Option<usize> {
    fn_signature(db, member).params.iter().position(|p| matches!(p.ty.value(), Ty::Param(0)))
}
