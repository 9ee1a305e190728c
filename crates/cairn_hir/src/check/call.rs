//! Calls: declared functions (omitted extents, borrows, extent identity, aliasing), builtins,
//! record construction and variant construction (language §5, §6, §9.3, §9.4, §11, §13).
//!
//! The callee is decided in the original's order: a bare variant where a sum is expected, method
//! syntax on a local, a qualified variant, a builtin (a soft one only when no function of that name
//! is visible), a record constructor, a declared function; anything else is `E-CALLEE`.

use std::sync::Arc;

use super::alias::Place;
use super::cx::{Cx, R};
use super::expr::same;
use super::result::{CallEdge, CallTarget, GuardKind, Mapped};
use crate::body::{Expr, ExprId};
use crate::builtins::{Binding, Builtin};
use crate::decl::fields_of;
use crate::diag::{Anchor, Diag};
use crate::input::{Item, ItemKind};
use crate::scope::Lookup;
use crate::signature::fn_signature;
use crate::types::{Extent, Mode, Ty, ViewTy};

/// What a call brings to a template's inference: the explicit generic arguments written
/// (`f[u64](…)`) and the type the call's context expects.
#[derive(Clone, Copy, Default)]
pub(crate) struct Generic<'a> {
    pub explicit: Option<&'a [ExprId]>,
    pub expected: Option<&'a Ty>,
    /// Arguments the callee's name already fixes (a family copy's natural).
    pub preset: Option<&'a [crate::instance::InstanceArg]>,
}

impl<'a> Generic<'a> {
    pub(crate) fn expecting(expected: Option<&'a Ty>) -> Generic<'a> {
        Generic { explicit: None, expected, preset: None }
    }
}

impl Cx<'_> {
    pub(crate) fn call(&mut self, e: ExprId, callee: ExprId, args: &Arc<[ExprId]>, expected: Option<&Ty>) -> R<Ty> {
        let body = self.body.clone();
        let callee = body.unparen(callee);
        match body.expr(callee).clone() {
            Expr::Name(name) => {
                if let Some(Ty::Enum(adt)) = expected.map(Ty::value)
                    && let Some(ty) = self.bare_variant(e, adt, &name, Some(args))?
                {
                    self.target(e, CallTarget::Constructor);
                    return Ok(ty);
                }
                self.call_name(e, &name, None, args, Generic::expecting(expected))
            }
            Expr::Field { base, name } => {
                // Method syntax: `x.f(a)` is `f(x, a)` when `x` is a local.
                if self.root_name(base).is_some() {
                    return self.call_method(e, base, &name, args, expected);
                }
                if let Some(adt) = self.enum_path(base)? {
                    return self.qualified_variant(e, &adt, &name, args, expected);
                }
                // A method call on a value that is no path (a call's result, an element).
                if self.dotted_path(base).is_none() {
                    return self.call_method(e, base, &name, args, expected);
                }
                if let Some(mut path) = self.dotted_path(callee) {
                    let last = path.pop().unwrap_or_default();
                    path.push(last.clone());
                    let full = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
                    match self.scope.resolve_path(&self.module, &path, |k| matches!(k, ItemKind::Fn | ItemKind::Struct))
                    {
                        Lookup::Found(decl) if decl.kind == ItemKind::Fn => {
                            return self.call_function(e, decl.item, &full, None, args, Generic::expecting(expected));
                        }
                        Lookup::Found(decl) => return self.construct(e, decl.item, args, Generic::expecting(expected)),
                        Lookup::None => {}
                    }
                    // `m.strided_4(…)`: a family's copy named through its module.
                    if path.len() >= 2
                        && self.local(&path[0]).is_none()
                        && let Some((template, k)) =
                            crate::family::family_copy_at(self.db, &self.module, &path[..path.len() - 1], &last)
                    {
                        let preset = [crate::instance::InstanceArg::Nat(k)];
                        let generic = Generic { preset: Some(&preset), ..Generic::expecting(expected) };
                        return self.call_function(e, template, &full, None, args, generic);
                    }
                    // `Trait.member(x)`: the member of that trait.
                    if path.len() >= 2
                        && self.local(&path[0]).is_none()
                        && let Lookup::Found(decl) =
                            self.scope.resolve_path(&self.module, &path[..path.len() - 1], |k| k == ItemKind::Trait)
                        && let Some(ty) =
                            self.trait_call(e, &last, Some(decl.item), None, args, Generic::expecting(expected))?
                    {
                        return Ok(ty);
                    }
                    if self.local(&path[0]).is_none() && !self.scope.is_module_alias(&self.module, &path[0]) {
                        // `a.b(…)` with `a` neither a local nor a module: `a` is unbound.
                        if self.enum_path_name_only(&path[0]).is_none() && self.constant(&path[..1]).is_none() {
                            return Err(self.unbound(callee, &path[0], None));
                        }
                    }
                }
                let diag = Diag::new(
                    "E-CALLEE",
                    "Qualified calls name a declared function or a sum's variant: nothing by this name can be called.",
                    Anchor::Expr(callee),
                );
                // `math.sqrt(x)`: a builtin is never qualified.
                let path = self.dotted_path(callee).unwrap_or_default();
                Err(match path.last().filter(|last| crate::builtins::is_builtin_name(last)) {
                    Some(last) => diag.with_hint(format!("{last} is a builtin: call it unqualified, `{last}(…)`.")),
                    None => diag,
                })
            }
            Expr::Index { base, indices } => {
                if let Some(path) = self.dotted_path(base) {
                    let full = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
                    if full == "Buf" && self.local("Buf").is_none() {
                        return self.buf_new(e, Some(&indices), args, expected);
                    }
                    if full == "Array" && self.local("Array").is_none() {
                        return self.array_new(e, Some(&indices), args, expected);
                    }
                    if full == "Dyn" && self.local("Dyn").is_none() {
                        return self.dyn_new(e, Some(&indices), args, expected);
                    }
                    if Builtin::from_name(&full).is_some_and(Builtin::later) {
                        return Err(Diag::new(
                            "E-UNSUPPORTED",
                            format!("{full}[…](…) belongs to a later tier, which this checker does not check yet."),
                            Anchor::Expr(callee),
                        ));
                    }
                    if Builtin::from_name(&full).is_some_and(|b| b.prints() || b == Builtin::Format) {
                        return Err(Diag::new(
                            "E-ARITY",
                            format!("{full} takes no type arguments: write {full}(…)."),
                            Anchor::Expr(callee),
                        ));
                    }
                    let explicit = Generic { explicit: Some(&indices), expected, preset: None };
                    if let Lookup::Found(decl) = self.scope.resolve_path(&self.module, &path, |k| k == ItemKind::Fn)
                        && self.local(&path[0]).is_none()
                    {
                        return self.call_function(e, decl.item, &full, None, args, explicit);
                    }
                    if let Lookup::Found(decl) = self.scope.resolve_path(&self.module, &path, |k| k == ItemKind::Struct)
                    {
                        return self.construct(e, decl.item, args, explicit);
                    }
                    return Err(Diag::new(
                        "E-CALLEE",
                        format!("{full}[…] names no generic function or record: nothing by this name can be called."),
                        Anchor::Expr(callee),
                    ));
                }
                Err(Diag::new(
                    "E-CALL",
                    "Only direct calls, methods and qualified constructors are supported.",
                    Anchor::Expr(callee),
                ))
            }
            _ => Err(Diag::new(
                "E-CALL",
                "Only direct calls, methods and qualified constructors are supported.",
                Anchor::Expr(callee),
            )),
        }
    }

    pub(crate) fn enum_path_name_only(&self, name: &Arc<str>) -> Option<()> {
        match self
            .scope
            .resolve_path(&self.module, std::slice::from_ref(name), |k| matches!(k, ItemKind::Enum | ItemKind::Struct))
        {
            Lookup::Found(_) => Some(()),
            Lookup::None => None,
        }
    }

    pub(crate) fn target(&mut self, e: ExprId, target: CallTarget) {
        self.call_targets.push((e, target));
    }

    /// `f(args)` with `f` a bare name (and `receiver` for method syntax).
    pub(crate) fn call_name(
        &mut self,
        e: ExprId,
        name: &Arc<str>,
        receiver: Option<ExprId>,
        args: &Arc<[ExprId]>,
        generic: Generic<'_>,
    ) -> R<Ty> {
        let expected = generic.expected;
        // A call through a function value or a borrowed callable held in a local.
        if receiver.is_none()
            && let Some(local) = self.local(name)
            && let Ty::Fn(fun) = local.ty.value()
        {
            let fun = fun.clone();
            let local = local.clone();
            self.lane_indirect(e, name, &local)?;
            return self.indirect_call(e, &fun, args);
        }
        // `T(x)` inside an instance: a conversion to (or construction of) the instance's `T`.
        if receiver.is_none()
            && let Some(ty) = self.type_param(name)
        {
            if let Some(builtin) = Builtin::from_name(&ty.to_string()).filter(|b| b.conversion().is_some()) {
                return self.builtin(e, builtin, args, expected);
            }
            if let Ty::Record(adt) = &ty {
                return self.construct(e, adt.item, args, Generic::expecting(Some(&ty)));
            }
            return Err(Diag::new(
                "E-CALLEE",
                format!("{name} is {ty} here, which cannot be called."),
                Anchor::Expr(e),
            ));
        }
        let path = [name.clone()];
        let function = self.scope.resolve_path(&self.module, &path, |k| k == ItemKind::Fn);
        let builtin = Builtin::from_name(name);
        let binding = builtin.map(Builtin::binding);
        let is_hard = binding == Some(Binding::Hard);
        let is_soft = binding == Some(Binding::Soft);
        if builtin.is_some_and(Builtin::later) && function == Lookup::None {
            return Err(Diag::new(
                "E-UNSUPPORTED",
                format!("{name} belongs to a later tier, which this checker does not check yet."),
                Anchor::Expr(e),
            ));
        }
        if let Some(builtin) = builtin
            && (is_hard || (is_soft && function == Lookup::None))
        {
            let mut all: Vec<ExprId> = receiver.into_iter().collect();
            all.extend(args.iter().copied());
            return self.builtin(e, builtin, &all, expected);
        }
        if binding == Some(Binding::TypeName) {
            return Err(Diag::new("E-CALLEE", format!("{name} is a type, not a callable."), Anchor::Expr(e)));
        }
        if let Lookup::Found(decl) = self.scope.resolve_path(&self.module, &path, |k| k == ItemKind::Struct)
            && receiver.is_none()
        {
            return self.construct(e, decl.item, args, generic);
        }
        if let Lookup::Found(decl) = function {
            return self.call_function(e, decl.item, name, receiver, args, generic);
        }
        // A family's copy: `strided_4(…)` is `stride[4](…)`.
        if generic.explicit.is_none()
            && let Some((template, k)) = crate::family::family_copy(self.db, &self.module, name)
        {
            let preset = [crate::instance::InstanceArg::Nat(k)];
            let generic = Generic { preset: Some(&preset), ..generic };
            return self.call_function(e, template, name, receiver, args, generic);
        }
        // A trait's member, dispatched on its receiver's type.
        if let Some(ty) = self.trait_call(e, name, None, receiver, args, generic)? {
            return Ok(ty);
        }
        if let Lookup::Found(decl) =
            self.scope.resolve_path(&self.module, &path, |k| matches!(k, ItemKind::Enum | ItemKind::Const))
        {
            let what = if decl.kind == ItemKind::Enum { "a type" } else { "a constant" };
            return Err(Diag::new("E-CALLEE", format!("{name} is {what}, not a callable."), Anchor::Expr(e)));
        }
        let mut message = format!("Unknown callable {name}: only declared functions and builtins can be called.");
        if let Some(owner) = self.variant_owner(name) {
            message
                .push_str(&format!(" {name} is a variant of {owner}: nothing here expects that sum, so qualify it."));
        }
        let mut candidates: Vec<Arc<str>> = Builtin::callable_names().map(Arc::from).collect();
        // An error path: the hint reads every declaration.
        for (full, decls) in &self.scope.whole().by_full_name {
            if decls.iter().any(|d| d.kind == ItemKind::Fn) {
                candidates.push(full.clone());
                if let Some(short) = full.rsplit('.').next() {
                    candidates.push(Arc::from(short));
                }
            }
        }
        let near = crate::diag::close_matches(name, &candidates);
        let mut diag = Diag::new("E-CALLEE", message, Anchor::Expr(e));
        // `strided_5` of `family strided = stride[1..5]`: past the family's range.
        if let Some((family, k)) = crate::family::family_named(self.db, &self.module, &[], name)
            && let Some(template) = family.template
        {
            let template = self.scope.full_name(template);
            let (name, lo, hi) = (&family.name, family.lo, family.hi);
            diag = diag.with_hint(format!(
                "The family {name} makes {name}_{lo} to {name}_{} ({template}[{lo}..{hi}]): widen its range to hold {k}, or call {template}[{k}](…).",
                hi.saturating_sub(1)
            ));
        } else if !near.is_empty() {
            diag = diag.with_hint(format!("Perhaps {}?", near.join(" or ")));
        }
        Err(diag)
    }

    /// `x.f(args)`: `f(x, args)`, looked up first in the module of `x`'s type.
    pub(crate) fn call_method(
        &mut self,
        e: ExprId,
        receiver: ExprId,
        name: &Arc<str>,
        args: &Arc<[ExprId]>,
        expected: Option<&Ty>,
    ) -> R<Ty> {
        let receiver_ty = self.check(receiver, None)?;
        if let Ty::Record(adt) | Ty::Enum(adt) = receiver_ty.value() {
            let module = self.scope.module_of(adt.item);
            if !module.is_empty() {
                let full: Arc<str> = Arc::from(format!("{module}.{name}"));
                if let Some(decl) = self.scope.declared(&full).iter().find(|d| d.kind == ItemKind::Fn) {
                    if !self.scope.visible_from(decl.item, &self.module) {
                        return Err(Diag::new(
                            "E-PRIVATE",
                            format!("{full} is private to module {module}."),
                            Anchor::Expr(e),
                        ));
                    }
                    return self.call_function(e, decl.item, name, Some(receiver), args, Generic::expecting(expected));
                }
            }
        }
        self.call_name(e, name, Some(receiver), args, Generic::expecting(expected))
    }

    /// `S.V(args)`.
    pub(crate) fn qualified_variant(
        &mut self,
        e: ExprId,
        adt: &crate::types::AdtTy,
        name: &str,
        args: &Arc<[ExprId]>,
        expected: Option<&Ty>,
    ) -> R<Ty> {
        let def = crate::decl::enum_def(self.db, adt.item);
        if def.tag_only {
            return Err(Diag::new(
                "E-CALLEE",
                format!("{}.{name} is a variant of a tag-only enum: write it without parentheses.", adt.name),
                Anchor::Expr(e),
            ));
        }
        let Some((_, payload)) = def.variant(name) else { return Err(self.unknown_variant(e, adt, name)) };
        let payload = payload.clone();
        let adt = self.infer_variant_args(e, adt, payload.as_ref(), args.first().copied(), expected)?;
        let want = payload.map(|p| p.substitute(&adt.args));
        self.variant_payload(e, &adt, name, want.as_ref(), Some(args))?;
        self.target(e, CallTarget::Constructor);
        self.resolved_variant(e, &adt, name);
        Ok(Ty::Enum(adt))
    }

    /// `R(fields…)`: positional, in declaration order.
    pub(crate) fn construct(&mut self, e: ExprId, item: Item, args: &Arc<[ExprId]>, generic: Generic<'_>) -> R<Ty> {
        let name = self.scope.full_name(item);
        if !self.scope.visible_from(item, &self.module) {
            let owner = self.scope.module_of(item);
            return Err(Diag::new("E-PRIVATE", format!("{name} is private to module {owner}."), Anchor::Expr(e)));
        }
        let type_args = self.record_args(e, item, &name, args, generic)?;
        let adt = crate::types::AdtTy { item, name: name.clone(), args: type_args };
        self.formed(e, &Ty::Record(adt.clone()))?;
        let fields = fields_of(self.db, &adt);
        if fields.len() != args.len() {
            return Err(Diag::new(
                "E-ARITY",
                format!(
                    "The record {name} takes {} values, one per field in declaration order; {} given.",
                    fields.len(),
                    args.len()
                ),
                Anchor::Expr(e),
            ));
        }
        for ((_, ty), arg) in fields.iter().zip(args.iter()) {
            self.check(*arg, Some(ty))?;
        }
        self.constructed_extents(item, args)?;
        self.target(e, CallTarget::Constructor);
        Ok(Ty::Record(adt))
    }

    /// A call of a declared function.
    pub(crate) fn call_function(
        &mut self,
        e: ExprId,
        item: Item,
        written: &str,
        receiver: Option<ExprId>,
        args: &Arc<[ExprId]>,
        generic: Generic<'_>,
    ) -> R<Ty> {
        let mut signature = fn_signature(self.db, item);
        if !self.scope.visible_from(item, &self.module) {
            let owner = self.scope.module_of(item);
            let full = self.scope.full_name(item);
            return Err(Diag::new("E-PRIVATE", format!("{full} is private to module {owner}."), Anchor::Expr(e)));
        }
        self.implementation_use(item, e)?;
        if signature.kernel {
            let full = self.scope.full_name(item);
            self.kernel_call(e, &full)?;
        }
        // A helper that takes host memory makes the lanes that call it host lanes (and is
        // refused in device code).
        for param in signature.params.iter() {
            if let Ty::View(view) = &param.ty
                && matches!(view.place, crate::types::Place::Host | crate::types::Place::Pinned)
                && (self.lane.is_some() || self.in_kernel())
            {
                self.index_placement(Anchor::Expr(e), view.place)?;
            }
        }
        if crate::foreign::is_extern(self.db, item) {
            let full = self.scope.full_name(item);
            self.lane_call(e, &format!("Calling the foreign function {full}"))?;
        }
        if self.unsafe_depth == 0 && crate::foreign::is_extern(self.db, item) {
            let full = self.scope.full_name(item);
            return Err(Diag::new(
                "E-UNSAFE",
                format!(
                    "{full} is a foreign (C) function, whose code no checker has seen: call it inside `unsafe {{ … }}`, ideally in one small wrapper function."
                ),
                Anchor::Expr(e),
            ));
        }
        let mut given: Vec<ExprId> = receiver.into_iter().collect();
        given.extend(args.iter().copied());
        let params = signature.params.clone();
        let extents = signature.extent_params.clone();
        // Omitted extents: all left out together, views written as names, paths, parts or strings.
        let mut filled: Vec<Option<ExprId>> = Vec::new();
        let omit = !extents.is_empty() && given.len() == params.len() - extents.len() && {
            let mut values = given.iter();
            params.iter().enumerate().filter(|(i, _)| !extents.contains(i)).all(|(_, p)| match (&p.ty, values.next()) {
                (Ty::View(_), Some(arg)) => self.is_view_argument_shape(*arg),
                _ => true,
            })
        };
        if omit {
            let mut values = given.iter();
            for i in 0..params.len() {
                if extents.contains(&i) {
                    filled.push(None);
                } else {
                    filled.push(values.next().copied());
                }
            }
            // An extent decided by a part is its `hi - lo`, written in: a checked subtraction.
            for &extent in extents.iter() {
                let name = &params[extent].name;
                let first = crate::signature::deciding_view(&params, name);
                if let Some(arg) = first.and_then(|i| filled[i])
                    && matches!(self.body.expr(self.body.unparen(arg)), Expr::Part { .. })
                {
                    self.site(GuardKind::Overflow);
                }
            }
        } else {
            // The count of a call that leaves the extents out, with a view that cannot decide one
            // (an element, a call's result): say so at that argument.
            if !extents.is_empty() && given.len() == params.len() - extents.len() {
                let mut values = given.iter();
                let culprit = params.iter().enumerate().filter(|(i, _)| !extents.contains(i)).find_map(|(_, p)| {
                    let arg = values.next()?;
                    (matches!(p.ty, Ty::View(_)) && !self.is_view_argument_shape(*arg)).then_some(*arg)
                });
                if let Some(arg) = culprit {
                    let names: Vec<&str> = extents.iter().map(|&i| &*params[i].name).collect();
                    return Err(Diag::new(
                        "E-ARITY",
                        format!(
                            "{written} can leave out {} only when each view is written as a place (a name, a field or an element), a part or a string literal, and this argument is a computed value.",
                            names.join(", ")
                        ),
                        Anchor::Expr(arg),
                    )
                    .with_hint(format!("Pass the extent yourself: `len(…)` of this view in {}'s place.", names.join(" and "))));
                }
            }
            if given.len() != params.len() {
                let message = if extents.is_empty() {
                    format!("{written} expects {} arguments.", params.len())
                } else {
                    let names: Vec<&str> = extents.iter().map(|&i| &*params[i].name).collect();
                    format!(
                        "{written} expects {} arguments, or {} leaving out the extents {}.",
                        params.len(),
                        params.len() - extents.len(),
                        names.join(", ")
                    )
                };
                return Err(Diag::new("E-ARITY", message, Anchor::Expr(e)));
            }
            filled = given.iter().map(|a| Some(*a)).collect();
        }
        // A template: the instance the call makes, checked against as an ordinary signature.
        let mut instance_args: Arc<[crate::instance::InstanceArg]> = Arc::from(Vec::new());
        if !crate::generics::fn_generics(self.db, item).is_empty() {
            instance_args = self.infer_instance(e, item, written, generic, &filled)?;
            let instance = crate::instance::Instance::new(self.db, item, instance_args.clone());
            signature = crate::signature::instance_signature(self.db, instance);
        } else if generic.explicit.is_some() {
            return Err(Diag::new(
                "E-GENERIC-ARITY",
                format!("{written} is not generic: call it without [...]."),
                Anchor::Expr(e),
            ));
        }
        let params = signature.params.clone();
        let mut mapping: Vec<Mapped> = Vec::with_capacity(params.len());
        let mut places: Vec<(Place, bool)> = Vec::new();
        for (index, param) in params.iter().enumerate() {
            let Some(arg) = filled[index] else {
                mapping.push(Mapped::Dropped);
                continue;
            };
            self.arguments.push((arg, param.ty.clone()));
            if matches!(param.ty.value(), Ty::Fn(_)) {
                self.fn_arguments.push(super::result::FnArgument { call: e, param: index as u32, arg });
                self.lane_hands_on(arg);
            }
            match &param.ty {
                Ty::View(want) => {
                    let named = self.root_name(arg).is_some();
                    // A string literal is a temporary: it may only be lent read-only.
                    if !named && (want.mode == Mode::Rw || !self.is_string_literal(arg)) {
                        return Err(Diag::new(
                            "E-CALL-VIEW",
                            "Only direct view parameters may be passed: pass a named view, a stack array, a part or a string literal.",
                            Anchor::Expr(arg),
                        ));
                    }
                    let got = self.view_argument(arg)?;
                    let got = self.lend(arg, got);
                    let is_part = matches!(self.body.expr(self.body.unparen(arg)), Expr::Part { .. });
                    let extent = if is_part {
                        // A part's length is checked by its guard: its extent argument may be any
                        // arithmetic the guard can evaluate again.
                        if let Extent::Name(name) = &want.extent
                            && let Some(extent_index) = params.iter().position(|p| p.name == *name)
                            && let Some(extent_arg) = filled[extent_index]
                            && !self.repeatable(extent_arg)
                        {
                            return Err(Diag::new(
                                "E-CALL-SHAPE",
                                "The extent paired with a part is evaluated again by the part's guard: bind a call to a name first.",
                                Anchor::Expr(extent_arg),
                            ));
                        }
                        Extent::Unknown
                    } else {
                        self.wanted_extent(want, &params, &filled, index)?
                    };
                    // The callee takes a view parameter declared `[n]` or `[8]` for exactly that
                    // long. Where the check cannot compare this argument's extent with the one
                    // asked — its own extent is undetermined (a record's lent part, an owner's
                    // element), or the asked one is (decided by such a view, or by `len` of one)
                    // — its length is compared at run time, unless this view itself decides a
                    // left-out extent (then it is that long by definition).
                    let declared = matches!(want.extent, Extent::Name(_) | Extent::Literal(_));
                    let compared =
                        extent != Extent::Unknown && matches!(&got, Ty::View(g) if g.extent != Extent::Unknown);
                    if !is_part && declared && !compared && !self.decides_extent(want, &params, &filled, index) {
                        self.length_checks.push(arg);
                        self.site(GuardKind::Bounds);
                    }
                    let wanted = Ty::View(ViewTy { extent, ..want.clone() });
                    if !view_accepts(&wanted, &got) {
                        if let (Ty::View(w), Ty::View(g)) = (&wanted, &got)
                            && view_accepts(&wanted, &Ty::View(ViewTy { place: w.place, ..g.clone() }))
                        {
                            return Err(Diag::new(
                                "E-PLACEMENT",
                                format!(
                                    "This view is @{} memory, and the parameter asks for @{}: memory is lent only as what it also is (@pinned or @unified where @host is asked, @unified where @device is asked). `transfer` the elements to a buffer of the asked placement first.",
                                    g.place.name(),
                                    w.place.name()
                                ),
                                Anchor::Expr(arg),
                            ));
                        }
                        return Err(self.mismatch(arg, &wanted, &got));
                    }
                    if want.mode == Mode::Rw {
                        self.lent_to_write(arg);
                    }
                    mapping.push(self.mapped(arg));
                    places.push((self.place_of(arg, true), want.mode == Mode::Rw));
                }
                Ty::Borrow(_, inner)
                    if matches!(&**inner, Ty::Fn(_))
                        && matches!(self.body.expr(self.body.unparen(arg)), Expr::Closure(_)) =>
                {
                    // A closure written in place: it borrows what it captures for the call.
                    let Ty::Fn(fun) = &**inner else { unreachable!("matched above") };
                    let closure = self.body.unparen(arg);
                    let mut captured = Vec::new();
                    let mut writes = Vec::new();
                    let first_call = self.call_targets.len();
                    // A capture lends the place the closure touches: `t.a` when the body only
                    // reads that field (§21: the call may not lend "a place the closure touches").
                    let field_of = self.field_parents();
                    for (name, written) in self.closure(closure, fun)? {
                        let view = matches!(self.body.expr(name), Expr::Name(n) if self.local(n).is_some_and(|l| matches!(l.ty, Ty::View(_))));
                        // One closure never overlaps itself: a place another of its places
                        // covers (`calls` read and written, `t` beside `t.a`) is the same lend.
                        let mut touched: Vec<super::alias::Place> = Vec::new();
                        for used in super::closure::uses_of(&self.body, closure, name, &field_of) {
                            let place = self.place_of(used, view);
                            if !touched.iter().any(|p| p.covers(&place)) {
                                touched.retain(|p| !place.covers(p));
                                touched.push(place);
                            }
                        }
                        places.extend(touched.into_iter().map(|p| (p, written)));
                        captured.extend(self.scopes.resolve(name));
                        if written {
                            writes.extend(self.scopes.resolve(name));
                        }
                    }
                    self.captures.push((closure, Arc::from(captured)));
                    self.closure_writes.push((closure, Arc::from(writes)));
                    let calls: Vec<ExprId> = self.call_targets[first_call..].iter().map(|(c, _)| *c).collect();
                    self.closure_calls.push((closure, Arc::from(calls)));
                    mapping.push(Mapped::Dropped);
                }
                Ty::Borrow(mode, inner) if matches!(&**inner, Ty::Dyn(..)) => {
                    let Ty::Dyn(tr, _) = &**inner else { unreachable!("matched above") };
                    let mapped = self.dyn_argument(arg, *mode, *tr)?;
                    if *mode == Mode::Rw {
                        // Lent rw as a `dyn` as surely as directly: its extent pair holds (§22.3).
                        self.keep_extent_pair(arg, "lending rw")?;
                        self.rw_lends.push(arg);
                    }
                    mapping.push(mapped);
                    places.push((self.place_of(arg, false), *mode == Mode::Rw));
                }
                Ty::Borrow(mode, inner) => {
                    self.borrow_argument(arg, *mode, inner)?;
                    mapping.push(self.mapped(arg));
                    places.push((self.place_of(arg, false), *mode == Mode::Rw));
                }
                ty => {
                    self.check(arg, Some(ty))?;
                    // A place moved into the call (an owner, not a copy) is emptied by it: no
                    // other argument — a closure reading it above all — may touch it (§21: the
                    // closure would read the moved-from value).
                    if self.root_name(arg).is_some()
                        && crate::generics::kind_of(self.db, ty) != crate::types::Kind::Copy
                    {
                        places.push((self.place_of(arg, false), true));
                    }
                    // A `fn` parameter handed on: what the callee's lanes do with it (`lane:p`)
                    // is renamed to the caller's parameter.
                    let param_fn = matches!(ty, Ty::Fn(_))
                        && matches!(self.body.expr(self.body.unparen(arg)), Expr::Name(n) if self.local(n).is_some_and(|l| l.kind == super::cx::LocalKind::Param));
                    match self.body.expr(self.body.unparen(arg)) {
                        Expr::Name(n) if param_fn => mapping.push(Mapped::Borrow(n.clone())),
                        _ => mapping.push(Mapped::Dropped),
                    }
                }
            }
        }
        self.alias_check(e, &places)?;
        self.tuned_instance(item, &instance_args, e)?;
        self.calls.push(CallEdge { callee: item, args: instance_args.clone(), mapping: Arc::from(mapping) });
        self.target(e, CallTarget::Function(item, instance_args));
        Ok(signature.ret.clone())
    }

    /// An argument lent to a single borrow (`ro<T>`, `rw<T>`), of a declared function or of a
    /// call through a function value alike: not a part; an `rw` one a named, writable place
    /// whose extent pair it may not break, written (`write:` its root, a lend to be written);
    /// a read-only one may be a temporary, a literal taking the borrowed type (§6).
    pub(crate) fn borrow_argument(&mut self, arg: ExprId, mode: Mode, inner: &Ty) -> R<()> {
        if matches!(self.body.expr(self.body.unparen(arg)), Expr::Part { .. }) {
            return Err(Diag::new(
                "E-VIEW-ALIAS",
                "A part is a view: pass one element, `xs[i]`, to a single borrow.",
                Anchor::Expr(arg),
            ));
        }
        let named = self.root_name(arg).is_some();
        if !named && mode == Mode::Rw {
            return Err(Diag::new(
                "E-CALL-VIEW",
                "An rw borrow needs a named, writable place, not a temporary.",
                Anchor::Expr(arg),
            ));
        }
        let hint = if mode == Mode::Ro { Some(inner) } else { None };
        let got = self.check(arg, hint)?;
        if let Ty::View(_) = got {
            let wanted = Ty::Borrow(mode, Arc::new(inner.clone()));
            return Err(self.mismatch(arg, &wanted, &got));
        }
        if mode == Mode::Rw && !self.writable_root(arg) {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                "A mutable borrow needs a mutable local or an rw borrow: declare the local `let mut`.",
                Anchor::Expr(arg),
            ));
        }
        if !same(&got, inner) {
            return Err(self.mismatch(arg, inner, &got));
        }
        if mode == Mode::Rw {
            self.keep_extent_pair(arg, "lending rw")?;
            self.lent_to_write(arg);
        }
        Ok(())
    }

    /// `arg` is lent to be written (an `rw` view or borrow, `format`'s target): recorded for
    /// what a closure writes (`rw_lends`), and a mutable local at its root is written
    /// (`write:` in the row).
    pub(crate) fn lent_to_write(&mut self, arg: ExprId) {
        self.rw_lends.push(arg);
        if let Some(root) = self.root_name(arg)
            && self.local(&root).is_some_and(|l| l.mutable && !matches!(l.ty, Ty::View(_)))
        {
            self.effect(format!("write:{root}"));
        }
    }

    /// True when the argument's root may be lent `rw`: a `let mut` local or an `rw` borrow.
    pub(crate) fn writable_root(&self, arg: ExprId) -> bool {
        let Some(root) = self.root_name(arg) else { return false };
        match self.local(&root) {
            Some(local) => match &local.ty {
                Ty::Borrow(mode, _) => *mode == Mode::Rw,
                Ty::View(view) => {
                    view.mode == Mode::Rw && !matches!(self.body.expr(self.body.unparen(arg)), Expr::Name(_))
                }
                _ => local.mutable,
            },
            None => false,
        }
    }

    /// How a borrowed argument maps for renaming the callee's footprints.
    pub(crate) fn mapped(&self, arg: ExprId) -> Mapped {
        match self.root_name(arg) {
            Some(root) => match self.local(&root) {
                Some(local) if local.borrowed_param() => Mapped::Borrow(root),
                Some(_) => Mapped::Local,
                None => Mapped::Dropped,
            },
            None => Mapped::Dropped,
        }
    }
}

/// True when a view argument of type `got` may be passed where `wanted` is asked: the same view,
/// or an `rw` view where `ro` is asked.
fn view_accepts(wanted: &Ty, got: &Ty) -> bool {
    match (wanted, got) {
        (Ty::View(w), Ty::View(g)) => {
            let mode_ok = w.mode == g.mode || (w.mode == Mode::Ro && g.mode == Mode::Rw);
            let place_ok = w.place == g.place
                || (matches!(g.place, crate::types::Place::Pinned | crate::types::Place::Unified)
                    && w.place == crate::types::Place::Host)
                || (g.place == crate::types::Place::Unified && w.place == crate::types::Place::Device);
            let extent_ok = w.extent == g.extent || w.extent == Extent::Unknown || g.extent == Extent::Unknown;
            mode_ok && place_ok && extent_ok && same(&w.elem, &g.elem)
        }
        (_, Ty::Error) | (Ty::Error, _) => true,
        _ => false,
    }
}
