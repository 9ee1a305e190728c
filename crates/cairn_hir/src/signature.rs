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
use crate::types::{Extent, Ty};

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
    /// The first refusal of the signature's rules.
    pub error: Option<Diag>,
}

impl Signature {
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| &*p.name == name)
    }
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
        error: None,
    };
    let Some(function) = ast::Fn::cast(node) else { return signature };
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let cx = TypeCtx { db, scope, module: &module, generics: &[] };
    let mut error: Option<Diag> = None;
    let fail = |error: &mut Option<Diag>, code: &'static str, message: String| {
        if error.is_none() {
            *error = Some(Diag::new(code, message, Anchor::Item));
        }
    };
    if function.generic_param_list().is_some() {
        fail(
            &mut error,
            "E-UNSUPPORTED",
            "Generic functions are tier 1, which this checker does not check yet.".into(),
        );
    }
    if function.is_kernel() {
        fail(&mut error, "E-UNSUPPORTED", "Kernel functions are tier 2, which this checker does not check yet.".into());
    }
    if function.implements_clause().is_some() {
        fail(&mut error, "E-UNSUPPORTED", "Implementations are tier 1, which this checker does not check yet.".into());
    }
    let mut params: Vec<Param> = Vec::new();
    let mut extent_params: Vec<usize> = Vec::new();
    for param in function.param_list().map(|l| l.params().collect::<Vec<_>>()).unwrap_or_default() {
        let name: Arc<str> = Arc::from(param.name().map(|n| n.text()).unwrap_or_default());
        let written = param.ty().map(|t| lower_type(&t)).unwrap_or(TypeRef::Missing);
        let ty = match resolve_type(cx, &written) {
            Ok(ty) => ty,
            Err(e) => {
                fail(&mut error, e.code, e.message);
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
        if let Ty::View(view) = &ty {
            match &view.extent {
                Extent::Literal(n) if *n > (1u64 << 63) - 1 => {
                    fail(&mut error, "E-EXTENT", format!("The static extent {n} exceeds 2^63-1."));
                }
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
    let ret = match function.ret_type().and_then(|r| r.ty()) {
        Some(written) => match resolve_type(cx, &lower_type(&written)) {
            Ok(ty) => ty,
            Err(e) => {
                fail(&mut error, e.code, e.message);
                Ty::Error
            }
        },
        None => Ty::Void,
    };
    if matches!(ret, Ty::View(_) | Ty::Borrow(..)) {
        fail(&mut error, "E-ESCAPE", "A function cannot return a borrow: borrows never outlive a call.".into());
    }
    let ceiling = function.ceiling().map(|c| {
        let mut effects: BTreeSet<Arc<str>> = c.effects().map(|e| Arc::from(e.text())).collect();
        let pure = c.is_pure() || effects.remove("pure");
        Ceiling { pure, effects }
    });
    extent_params.sort_unstable();
    signature.params = Arc::from(params);
    signature.ret = ret;
    signature.ceiling = ceiling;
    signature.extent_params = Arc::from(extent_params);
    signature.error = error;
    signature
}
