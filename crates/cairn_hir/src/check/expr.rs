//! Expressions: literal typing from the expected type, names, operators, fields, indexes, `try`.
//!
//! `check(e, expected)` types `e` with `expected` handed down (literals and bare variants adapt to
//! it) and then requires the type to be exactly `expected` (`E-TYPE-MISMATCH`). Binary operators
//! type the operand that cannot adapt first and let a literal adapt to it; the mismatch is then
//! reported at the second operand, as the original reports it.

use std::sync::Arc;

use super::cx::{Cx, LocalKind, R};
use super::result::{GuardKind, Resolution};
use crate::body::{BinaryOp, Expr, ExprId, Literal, UnaryOp};
use crate::decl::{fields_of, variants_of};
use crate::diag::{Anchor, Diag, list, text};
use crate::input::ItemKind;
use crate::scope::Lookup;
use crate::types::{AdtTy, FloatTy, IntTy, Mode, Ty};

impl Cx<'_> {
    /// Checks `e` against `expected` and returns its type.
    pub(crate) fn check(&mut self, e: ExprId, expected: Option<&Ty>) -> R<Ty> {
        let ty = self.infer(e, expected)?;
        self.types[e.0 as usize] = ty.clone();
        if let Some(want) = expected
            && !same(&ty, want)
        {
            return Err(self.mismatch(e, want, &ty));
        }
        Ok(ty)
    }

    /// The type of `e` with `expected` as a hint only (no mismatch is raised here), recorded.
    pub(crate) fn hinted(&mut self, e: ExprId, expected: Option<&Ty>) -> R<Ty> {
        let ty = self.infer(e, expected)?;
        self.types[e.0 as usize] = ty.clone();
        Ok(ty)
    }

    /// The type of `e`, with `expected` as the hint literals and bare variants adapt to.
    pub(crate) fn infer(&mut self, e: ExprId, expected: Option<&Ty>) -> R<Ty> {
        if let Some(scope) = self.scopes.scope_of(e) {
            self.at = scope;
        }
        let body = self.body.clone();
        match body.expr(e) {
            Expr::Missing => Ok(Ty::Error),
            Expr::TypeArg(_) => Err(Diag::new(
                "E-TYPE",
                "A function type is written here where a value is wanted: a type stands only as a type argument (`Buf[fn(u64) -> u64](3)`).",
                Anchor::Expr(e),
            )),
            Expr::Literal(literal) => self.literal(e, literal, expected),
            Expr::Paren(inner) => self.check(*inner, expected),
            Expr::Name(name) => self.name(e, name, expected),
            Expr::Unary { op: UnaryOp::Neg, operand }
                if matches!(body.expr(*operand), Expr::Literal(Literal::Int { .. })) =>
            {
                self.negated_literal(e, *operand, expected)
            }
            Expr::Unary { op, operand } => self.unary(e, *op, *operand, expected),
            Expr::Binary { op, lhs, rhs } => self.binary(e, *op, *lhs, *rhs, expected),
            Expr::Field { base, name } => self.field(e, *base, name, expected),
            Expr::Index { base, indices } => self.index(e, *base, indices, false),
            Expr::Part { .. } => Err(Diag::new(
                "E-VIEW-ALIAS",
                "A part `xs[lo..hi]` is a borrow: it exists only as a view argument of a call.",
                Anchor::Expr(e),
            )),
            Expr::Call { callee, args } => self.call(e, *callee, args, expected),
            Expr::Try(operand) => self.try_expr(e, *operand),
            Expr::Closure(_) => Err(Diag::new(
                "E-CLOSURE",
                "A closure exists only as an argument to a `ro<fn(...)>` parameter: pass it to one, or declare a function.",
                Anchor::Expr(e),
            )),
            Expr::Unsupported(cairn_syntax::SyntaxKind::SPAWN_EXPR) => self.spawn_placement(e),
            Expr::Spawn { work, after } => self.spawn(e, *work, after),
            Expr::Unsupported(kind) => Err(Diag::new(
                "E-UNSUPPORTED",
                format!(
                    "{} is a construct of a later tier, which this checker does not check yet.",
                    super::cx::describe_kind(*kind)
                ),
                Anchor::Expr(e),
            )),
        }
    }

    fn literal(&mut self, e: ExprId, literal: &Literal, expected: Option<&Ty>) -> R<Ty> {
        match literal {
            Literal::Int { value, .. } => self.integer_literal(e, *value, expected, false),
            Literal::Char(c) => self.integer_literal(e, Some(u128::from(*c)), expected, false),
            Literal::Float { text } => {
                let digits = text.replace('_', "");
                let value: f64 = digits.parse().unwrap_or(f64::INFINITY);
                let ty = match expected {
                    Some(Ty::Float(f)) => Ty::Float(*f),
                    _ => Ty::Float(FloatTy::F64),
                };
                // In f32 the literal is rounded to the nearest f32: `3.4028235e38` is f32::MAX
                // (finite), though it is above f32::MAX as an f64.
                let overflows_f32 = ty == Ty::Float(FloatTy::F32) && !digits.parse::<f32>().is_ok_and(f32::is_finite);
                if !value.is_finite() || overflows_f32 {
                    return Err(Diag::new(
                        "E-LITERAL-RANGE",
                        format!("This float literal is not finite in {ty}."),
                        Anchor::Expr(e),
                    ));
                }
                Ok(ty)
            }
            Literal::Bool(_) => Ok(Ty::Bool),
            Literal::String(bytes) => {
                self.host_only(Anchor::Expr(e), "a string")?;
                Ok(Ty::View(crate::types::ViewTy {
                    mode: Mode::Ro,
                    elem: Arc::new(Ty::Int(IntTy::U8)),
                    extent: crate::types::Extent::Literal(bytes.len() as u64),
                    place: crate::types::Place::Host,
                }))
            }
        }
    }

    /// An integer literal (or a negated one, `negative`) typed from `expected`.
    fn integer_literal(&mut self, e: ExprId, value: Option<u128>, expected: Option<&Ty>, negative: bool) -> R<Ty> {
        let value = value.unwrap_or(u128::MAX);
        match expected.map(Ty::value) {
            Some(Ty::Int(int)) => {
                let (lo, hi) = int.range();
                let fits = if negative {
                    value <= lo.unsigned_abs() || (!int.signed() && value <= hi as u128)
                } else {
                    value <= hi as u128
                };
                if !fits {
                    let shown = if negative { format!("-{value}") } else { value.to_string() };
                    return Err(Diag::new(
                        "E-LITERAL-RANGE",
                        format!("The literal {shown} is not representable in {}.", int.name()),
                        Anchor::Expr(e),
                    ));
                }
                Ok(Ty::Int(*int))
            }
            Some(Ty::Float(float)) => {
                if value > 1u128 << 53 {
                    return Err(Diag::new(
                        "E-LITERAL-RANGE",
                        "An integer literal above 2^53 does not convert to a float exactly; write a float literal or convert explicitly.",
                        Anchor::Expr(e),
                    ));
                }
                Ok(Ty::Float(*float))
            }
            _ => {
                let int = if negative { IntTy::I64 } else { IntTy::U64 };
                let (lo, hi) = int.range();
                let fits = if negative { value <= lo.unsigned_abs() } else { value <= hi as u128 };
                if !fits {
                    let shown = if negative { format!("-{value}") } else { value.to_string() };
                    return Err(Diag::new(
                        "E-LITERAL-RANGE",
                        format!("The literal {shown} is not representable in {}.", int.name()),
                        Anchor::Expr(e),
                    ));
                }
                Ok(Ty::Int(int))
            }
        }
    }

    fn negated_literal(&mut self, e: ExprId, digits: ExprId, expected: Option<&Ty>) -> R<Ty> {
        let value = match self.body.expr(digits) {
            Expr::Literal(Literal::Int { value, .. }) => *value,
            _ => None,
        };
        let ty = self.integer_literal(digits, value, expected, true)?;
        self.types[digits.0 as usize] = ty.clone();
        if ty.is_unsigned() {
            return Err(Diag::new(
                "E-OPERATOR",
                format!("Negation needs a signed integer or a float, and {ty} is unsigned."),
                Anchor::Expr(e),
            ));
        }
        Ok(ty)
    }

    // ----- names ---------------------------------------------------------------------------

    fn name(&mut self, e: ExprId, name: &Arc<str>, expected: Option<&Ty>) -> R<Ty> {
        if let Some(Ty::Enum(adt)) = expected.map(Ty::value)
            && let Some(ty) = self.bare_variant(e, adt, name, None)?
        {
            return Ok(ty);
        }
        if let Some(local) = self.local(name).cloned() {
            if local.ty == Ty::Ticket {
                self.pinned(e, name)?;
            }
            if local.kind == LocalKind::Param && matches!(local.ty, Ty::Borrow(..)) {
                self.effect(format!("read:{name}"));
            }
            return Ok(match &local.ty {
                Ty::Borrow(_, inner) => (**inner).clone(),
                other => other.clone(),
            });
        }
        if let Some(value) = self.natural(name) {
            self.resolved(e, Resolution::Natural(value));
            return Ok(Ty::usize());
        }
        if let Some((item, ty)) = self.constant(std::slice::from_ref(name)) {
            self.resolved(e, Resolution::Const(item));
            return Ok(ty.unwrap_or(Ty::Error));
        }
        if let crate::scope::Lookup::Found(decl) =
            self.scope.resolve_path(&self.module, std::slice::from_ref(name), |k| k == ItemKind::Fn)
        {
            return self.function_value(e, decl.item);
        }
        // A family's copy (`sc_3`) as a value: its template's instance (language §28, §21).
        if let Some((template, k)) = crate::family::family_copy(self.db, &self.module, name) {
            return self.copy_value(e, template, k);
        }
        Err(self.unbound(e, name, expected))
    }

    /// `E-UNBOUND` for a name nothing binds.
    pub(crate) fn unbound(&self, e: ExprId, name: &str, expected: Option<&Ty>) -> Diag {
        if name == "_" {
            return Diag::new(
                "E-UNBOUND",
                "`_` binds nothing, so nothing can read it: name the value to use it.",
                Anchor::Expr(e),
            );
        }
        let mut message = format!("Unbound name {name}.");
        if let Some(owner) = self.variant_owner(name) {
            message
                .push_str(&format!(" {name} is a variant of {owner}: nothing here expects that sum, so qualify it."));
        }
        let names = self.visible_names();
        let expected_detail = match expected {
            Some(ty) => text(ty),
            None => crate::diag::Detail::Null,
        };
        let mut diag = Diag::new("E-UNBOUND", message, Anchor::Expr(e))
            .with_details(vec![("available_names", list(&names)), ("expected_type", expected_detail)]);
        let near = crate::diag::close_matches(name, &names);
        if !near.is_empty() {
            diag = diag.with_hint(format!("Perhaps {}?", near.join(" or ")));
        }
        diag
    }

    /// The short name of an enum of the program that has a variant `name` (for messages of
    /// refusals only: it reads every declaration).
    pub(crate) fn variant_owner(&self, name: &str) -> Option<Arc<str>> {
        for (full, decls) in &self.scope.whole().by_full_name {
            for decl in decls.iter().filter(|d| d.kind == ItemKind::Enum) {
                if crate::decl::enum_def(self.db, decl.item).variant(name).is_some() {
                    return Some(Arc::from(full.rsplit('.').next().unwrap_or(full)));
                }
            }
        }
        None
    }

    /// A bare variant `name` (or `name(payload)`) where `adt` is expected: its type, or `None`
    /// when `name` is no variant of `adt`.
    pub(crate) fn bare_variant(
        &mut self,
        e: ExprId,
        adt: &AdtTy,
        name: &str,
        payload: Option<&[ExprId]>,
    ) -> R<Option<Ty>> {
        let variants = variants_of(self.db, adt);
        let Some((_, want)) = variants.iter().find(|(v, _)| &**v == name) else { return Ok(None) };
        let short = adt.name.rsplit('.').next().unwrap_or(&adt.name).to_string();
        let clash = if self.local(name).is_some() {
            Some("a local")
        } else if crate::builtins::is_builtin_name(name) {
            Some("a builtin")
        } else if self.constant(&[Arc::from(name)]).is_some() {
            Some("a constant")
        } else {
            let path = [Arc::from(name)];
            match self
                .scope
                .resolve_path(&self.module, &path, |k| matches!(k, ItemKind::Fn | ItemKind::Struct | ItemKind::Enum))
            {
                Lookup::Found(decl) if decl.kind == ItemKind::Fn => Some("a function"),
                Lookup::Found(_) => Some("a type"),
                Lookup::None => None,
            }
        };
        if let Some(what) = clash {
            return Err(Diag::new(
                "E-VARIANT-AMBIGUOUS",
                format!("{name} is both {short}.{name} and {what}; write {short}.{name}."),
                Anchor::Expr(e),
            ));
        }
        if !self.scope.visible_from(adt.item, &self.module) {
            let owner = self.scope.module_of(adt.item);
            return Err(Diag::new("E-PRIVATE", format!("{} is private to module {owner}.", adt.name), Anchor::Expr(e)));
        }
        self.variant_payload(e, adt, name, want.as_ref(), payload)?;
        self.resolved_variant(e, adt, name);
        Ok(Some(Ty::Enum(adt.clone())))
    }

    /// Checks a variant construction's payload count and payload.
    pub(crate) fn variant_payload(
        &mut self,
        e: ExprId,
        adt: &AdtTy,
        name: &str,
        want: Option<&Ty>,
        payload: Option<&[ExprId]>,
    ) -> R<()> {
        let given = payload.map_or(0, <[ExprId]>::len);
        let needed = usize::from(want.is_some());
        if given != needed {
            return Err(Diag::new(
                "E-SUM-ARITY",
                match want {
                    Some(_) => format!("{}.{name} carries one payload: write {name}(value).", adt.name),
                    None => format!("{}.{name} carries no payload: write {name} without arguments.", adt.name),
                },
                Anchor::Expr(e),
            ));
        }
        if let (Some(want), Some([arg])) = (want, payload) {
            self.check(*arg, Some(want))?;
        }
        Ok(())
    }

    // ----- operators -----------------------------------------------------------------------

    fn unary(&mut self, e: ExprId, op: UnaryOp, operand: ExprId, expected: Option<&Ty>) -> R<Ty> {
        match op {
            UnaryOp::Not => {
                self.check(operand, Some(&Ty::Bool))?;
                Ok(Ty::Bool)
            }
            UnaryOp::Neg | UnaryOp::BitNot => {
                // The operand is checked with the outer expectation, as the original does.
                let ty = self.check(operand, expected)?;
                if matches!(ty, Ty::View(_)) {
                    return Err(Diag::new(
                        "E-OPERATOR",
                        "Operators never apply to views: views are not implicit loops.",
                        Anchor::Expr(e),
                    ));
                }
                if ty.is_error() {
                    return Ok(Ty::Error);
                }
                if op == UnaryOp::BitNot {
                    if !ty.is_unsigned() {
                        return Err(Diag::new(
                            "E-OPERATOR",
                            format!("Bitwise complement `~` needs an unsigned integer, not {ty}."),
                            Anchor::Expr(e),
                        ));
                    }
                } else if !(ty.is_signed() || ty.is_float()) {
                    return Err(Diag::new(
                        "E-OPERATOR",
                        format!("Negation needs a signed integer or a float, and {ty} is not one."),
                        Anchor::Expr(e),
                    ));
                } else if ty.is_signed() {
                    self.site(GuardKind::Overflow);
                }
                Ok(ty)
            }
        }
    }

    /// True when `e` takes its type from its context: a literal, a negated integer literal, or a
    /// bare variant that names nothing else.
    pub(crate) fn adapts(&self, e: ExprId) -> bool {
        match self.body.expr(e) {
            Expr::Literal(Literal::Int { .. } | Literal::Char(_) | Literal::Float { .. }) => true,
            Expr::Unary { op: UnaryOp::Neg, operand } => {
                matches!(self.body.expr(*operand), Expr::Literal(Literal::Int { .. }))
            }
            Expr::Name(name) => self.only_a_variant(name),
            Expr::Call { callee, .. } => match self.body.expr(*callee) {
                Expr::Name(name) => self.only_a_variant(name),
                _ => false,
            },
            _ => false,
        }
    }

    fn only_a_variant(&self, name: &str) -> bool {
        self.local(name).is_none()
            && !crate::builtins::is_builtin_name(name)
            && self.constant(&[Arc::from(name)]).is_none()
            && matches!(self.scope.resolve_path(&self.module, &[Arc::from(name)], |_| true), Lookup::None)
            && self.variant_owner(name).is_some()
    }

    fn binary(&mut self, e: ExprId, op: BinaryOp, lhs: ExprId, rhs: ExprId, expected: Option<&Ty>) -> R<Ty> {
        if op.is_logical() {
            let left = self.check(lhs, Some(&Ty::Bool))?;
            self.check(rhs, Some(&left))?;
            return Ok(Ty::Bool);
        }
        let hint = if op.is_comparison() { None } else { expected.cloned() };
        let (left, right) = if self.adapts(lhs) && !self.adapts(rhs) {
            let right = self.check(rhs, hint.as_ref())?;
            let left = self.check(lhs, Some(&right))?;
            (left, right)
        } else {
            let left = self.check(lhs, hint.as_ref())?;
            let right = self.check(rhs, Some(&left))?;
            (left, right)
        };
        self.operator(e, op, &left, &right)
    }

    /// `place op= value`: the place's value is the left operand.
    pub(crate) fn binary_with(&mut self, op: BinaryOp, e: ExprId, rhs: ExprId, left: Ty, _hint: Option<&Ty>) -> R<Ty> {
        let right = self.check(rhs, Some(&left))?;
        self.operator(e, op, &left, &right)
    }

    /// The operator's own rules once both operands are typed.
    fn operator(&mut self, e: ExprId, op: BinaryOp, left: &Ty, right: &Ty) -> R<Ty> {
        if matches!(left, Ty::View(_)) || matches!(right, Ty::View(_)) {
            return Err(Diag::new(
                "E-OPERATOR",
                "Operators never apply to views: views are not implicit loops.",
                Anchor::Expr(e),
            ));
        }
        if left.is_error() || right.is_error() {
            return Ok(if op.is_comparison() { Ty::Bool } else { Ty::Error });
        }
        if op.is_comparison() {
            let ok = left.is_scalar()
                || (matches!(op, BinaryOp::Eq | BinaryOp::Ne) && crate::decl::is_tag_only(self.db, left));
            if !ok {
                return Err(Diag::new(
                    "E-OPERATOR",
                    format!("{} compares scalars (and tag-only enums for == and !=), not {left}.", op.text()),
                    Anchor::Expr(e),
                )
                .with_hint(self.compare_hint(left)));
            }
            return Ok(Ty::Bool);
        }
        if op.is_bitwise() {
            if !left.is_unsigned() {
                return Err(Diag::new(
                    "E-OPERATOR",
                    format!("Bitwise {} needs unsigned integers, not {left}.", op.text()),
                    Anchor::Expr(e),
                ));
            }
            return Ok(left.clone());
        }
        // + - * / %
        if left.is_integer() {
            self.site(if matches!(op, BinaryOp::Div | BinaryOp::Rem) {
                GuardKind::Division
            } else {
                GuardKind::Overflow
            });
            return Ok(left.clone());
        }
        if left.is_float() {
            if op == BinaryOp::Rem {
                return Err(Diag::new("E-OPERATOR", format!("% is not defined on {left}."), Anchor::Expr(e)));
            }
            return Ok(left.clone());
        }
        Err(Diag::new("E-OPERATOR", format!("{} is not defined on {left}.", op.text()), Anchor::Expr(e)))
    }

    // ----- fields, indexes, try ------------------------------------------------------------

    fn field(&mut self, e: ExprId, base: ExprId, name: &Arc<str>, expected: Option<&Ty>) -> R<Ty> {
        // `E.V` / `m.E.V` / `Option[u64].None`: a variant without payload.
        if let Some(adt) = self.enum_path(base)? {
            let variants = variants_of(self.db, &adt);
            let Some((_, payload)) = variants.iter().find(|(v, _)| v == name) else {
                return Err(self.unknown_variant(e, &adt, name));
            };
            let adt = self.infer_variant_args(e, &adt, payload.as_ref(), None, expected)?;
            self.resolved_variant(e, &adt, name);
            self.variant_payload(
                e,
                &adt,
                name,
                variants
                    .iter()
                    .find(|(v, _)| v == name)
                    .and_then(|(_, p)| p.as_ref())
                    .map(|p| p.substitute(&adt.args))
                    .as_ref(),
                None,
            )?;
            return Ok(Ty::Enum(adt));
        }
        // `m.N`: a constant of another module.
        if let Some(path) = self.dotted_path(e)
            && self.local(&path[0]).is_none()
            && let Some((item, ty)) = self.constant(&path)
        {
            self.resolved(e, Resolution::Const(item));
            return Ok(ty.unwrap_or(Ty::Error));
        }
        let base_ty = self.check(base, None)?;
        self.field_of(e, &base_ty, name)
    }

    /// Records that `e` names (or constructs) the variant `name` of `adt`.
    pub(crate) fn resolved_variant(&mut self, e: ExprId, adt: &AdtTy, name: &str) {
        if let Some(index) = variants_of(self.db, adt).iter().position(|(v, _)| &**v == name) {
            self.resolved(e, Resolution::Variant { adt: adt.item, index: index as u32 });
        }
    }

    /// The type of field `name` of a value of type `base` (and its resolution, recorded at `e`).
    pub(crate) fn field_of(&mut self, e: ExprId, base: &Ty, name: &str) -> R<Ty> {
        match base.value() {
            Ty::Record(adt) => {
                if !self.scope.visible_from(adt.item, &self.module) {
                    let owner = self.scope.module_of(adt.item);
                    return Err(Diag::new(
                        "E-PRIVATE",
                        format!("{} is private to module {owner}.", adt.name),
                        Anchor::Expr(e),
                    ));
                }
                let fields = fields_of(self.db, adt);
                match fields.iter().position(|(f, _)| &**f == name) {
                    Some(index) => {
                        self.resolved(e, Resolution::Field { adt: adt.item, index: index as u32 });
                        Ok(fields[index].1.clone())
                    }
                    None => {
                        let names: Vec<Arc<str>> = fields.iter().map(|(f, _)| f.clone()).collect();
                        let near = crate::diag::close_matches(name, &names);
                        let message =
                            format!("{} has no field {name}: its fields are {}.", adt.name, spoken_list(&names));
                        let mut diag = Diag::new("E-FIELD", message, Anchor::Expr(e))
                            .with_details(vec![("available_fields", list(&names))]);
                        if !near.is_empty() {
                            diag = diag.with_hint(format!("Perhaps {}?", near.join(" or ")));
                        }
                        Err(diag)
                    }
                }
            }
            Ty::Error => Ok(Ty::Error),
            other => Err(Diag::new(
                "E-FIELD",
                format!("Field access needs a record, and this is a {other}."),
                Anchor::Expr(e),
            )),
        }
    }

    /// `x[i]` (or, as an assignment target, `x[i] = …`).
    pub(crate) fn index(&mut self, e: ExprId, base: ExprId, indices: &[ExprId], write: bool) -> R<Ty> {
        // `twice[u64]`: an instance of a template taken as a function value (language §21).
        if !write
            && let Expr::Name(name) = self.body.expr(self.body.unparen(base))
            && self.local(name).is_none()
            && let crate::scope::Lookup::Found(decl) =
                self.scope.resolve_path(&self.module, std::slice::from_ref(name), |k| k == ItemKind::Fn)
            && !crate::generics::fn_generics(self.db, decl.item).is_empty()
        {
            return self.instance_value(e, decl.item, indices);
        }
        if indices.len() != 1 {
            return Err(Diag::new("E-INDEX", "An index has exactly one position: write `x[i]`.", Anchor::Expr(e)));
        }
        let base_ty = if write { self.place_base(base)? } else { self.check(base, None)? };
        // An owner behind a borrow (`xs:rw<Buf[u64]>`) is indexed as the owner.
        let element = match base_ty.value() {
            Ty::View(view) => {
                self.index_placement(Anchor::Expr(e), view.place)?;
                (*view.elem).clone()
            }
            Ty::Buf(elem) => {
                self.index_placement(Anchor::Expr(e), crate::types::Place::Host)?;
                (**elem).clone()
            }
            Ty::Array(elem, _) => (**elem).clone(),
            Ty::Error => Ty::Error,
            other => {
                return Err(Diag::new(
                    "E-INDEX",
                    format!("Only views and arrays can be indexed, and this is a {other}."),
                    Anchor::Expr(e),
                ));
            }
        };
        self.check(indices[0], Some(&Ty::usize()))?;
        self.site(GuardKind::Bounds);
        if let Some(root) = self.root_name(base) {
            self.effect(format!("{}:{root}", if write { "write" } else { "read" }));
        }
        self.types[e.0 as usize] = element.clone();
        Ok(element)
    }

    /// The base of an indexed write: a name's view, or a field path's value.
    fn place_base(&mut self, base: ExprId) -> R<Ty> {
        match self.body.expr(self.body.unparen(base)) {
            Expr::Name(name) => Ok(self.local(name).map(|l| l.ty.clone()).unwrap_or(Ty::Error)),
            _ => self.check(base, None),
        }
    }

    fn try_expr(&mut self, e: ExprId, operand: ExprId) -> R<Ty> {
        self.lane_control(Anchor::Expr(e), "try")?;
        let ty = self.check(operand, None)?;
        if ty.is_error() {
            return Ok(Ty::Error);
        }
        let Some((success, failure)) = self.two_variants(&ty) else {
            return Err(Diag::new(
                "E-TRY",
                format!(
                    "`try` needs a sum of exactly two variants, success first and failure second; {ty} is not one."
                ),
                Anchor::Expr(e),
            ));
        };
        let ret = self.ret_ty();
        let carried = self.two_variants(&ret).map(|(_, f)| f);
        if carried.as_ref() != Some(&failure) && !ret.is_error() {
            return Err(Diag::new(
                "E-TRY",
                format!(
                    "`try` returns the failure of {ty}, which {ret} cannot carry: the function's result must be a two-variant sum with the same failure payload."
                ),
                Anchor::Expr(e),
            ));
        }
        Ok(success.unwrap_or(Ty::Void))
    }

    /// The payloads of a two-variant sum: `(success, failure)`.
    pub(crate) fn two_variants(&self, ty: &Ty) -> Option<(Option<Ty>, Option<Ty>)> {
        if !self.is_two_variant_sum(ty) {
            return None;
        }
        let Ty::Enum(adt) = ty else { return None };
        let variants = variants_of(self.db, adt);
        Some((variants[0].1.clone(), variants[1].1.clone()))
    }

    /// `E-ENUM-VARIANT` for `adt.name`.
    pub(crate) fn unknown_variant(&self, e: ExprId, adt: &AdtTy, name: &str) -> Diag {
        let names: Vec<Arc<str>> = variants_of(self.db, adt).iter().map(|(v, _)| v.clone()).collect();
        let near = crate::diag::close_matches(name, &names);
        let message = format!("{} has no variant {name}: its variants are {}.", adt.name, spoken_list(&names));
        let mut diag = Diag::new("E-ENUM-VARIANT", message, Anchor::Expr(e))
            .with_details(vec![("available_variants", list(&names))]);
        if !near.is_empty() {
            diag = diag.with_hint(format!("Perhaps {}?", near.join(" or ")));
        }
        diag
    }

    /// When `base` names an enum type (`E`, `m.E`, `E[u64]`), that type (arguments may be unknown).
    pub(crate) fn enum_path(&mut self, base: ExprId) -> R<Option<AdtTy>> {
        let body = self.body.clone();
        let (path_expr, args) = match body.expr(body.unparen(base)) {
            Expr::Index { base: inner, indices } => (*inner, Some(indices.clone())),
            _ => (body.unparen(base), None),
        };
        let Some(path) = self.dotted_path(path_expr) else { return Ok(None) };
        if self.local(&path[0]).is_some() {
            return Ok(None);
        }
        let Lookup::Found(decl) = self.scope.resolve_path(&self.module, &path, |k| k == ItemKind::Enum) else {
            return Ok(None);
        };
        let name = self.scope.full_name(decl.item);
        let params = crate::decl::adt_generics(self.db, decl.item).clone();
        let args: Arc<[Ty]> = match args {
            Some(indices) => self.adt_explicit_args(base, &name, &params, &indices)?,
            None => Arc::from(vec![Ty::Param(u32::MAX); params.len()]),
        };
        Ok(Some(AdtTy { item: decl.item, name, args }))
    }

    /// Reads an expression used as a type argument (`Option[u64]`) as a type.
    pub(crate) fn type_of_expr(&mut self, e: ExprId) -> R<Ty> {
        let written =
            self.expr_as_type(e).ok_or_else(|| Diag::new("E-TYPE", "Expected a type argument.", Anchor::Expr(e)))?;
        self.resolve_written(&written).map_err(|err| Diag::new(err.code, err.message, Anchor::Expr(e)))
    }

    pub(crate) fn expr_as_type(&self, e: ExprId) -> Option<crate::body::TypeRef> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::TypeArg(written) => Some((**written).clone()),
            Expr::Index { base, indices } => {
                let path = self.dotted_path(*base)?;
                let args: Option<Vec<crate::body::TypeArg>> = indices
                    .iter()
                    .map(|i| match self.body.expr(self.body.unparen(*i)) {
                        // A natural argument (`Array[u8, 16]`).
                        Expr::Literal(crate::body::Literal::Int { text, .. }) => {
                            Some(crate::body::TypeArg::Nat(text.clone()))
                        }
                        _ => self.expr_as_type(*i).map(crate::body::TypeArg::Type),
                    })
                    .collect();
                Some(crate::body::TypeRef::Path { path: Arc::from(path), args: Arc::from(args?) })
            }
            _ => {
                let path = self.dotted_path(e)?;
                Some(crate::body::TypeRef::Path { path: Arc::from(path), args: Arc::from(Vec::new()) })
            }
        }
    }

    /// `a.b.c` as names, when `e` is a name or a field chain on one.
    pub(crate) fn dotted_path(&self, e: ExprId) -> Option<Vec<Arc<str>>> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(name) => Some(vec![name.clone()]),
            Expr::Field { base, name } => {
                let mut path = self.dotted_path(*base)?;
                path.push(name.clone());
                Some(path)
            }
            _ => None,
        }
    }

    /// Fills an enum's unknown type arguments from the expected type, then from the payload,
    /// and holds the type formed to its promises (`E-BOUND`).
    pub(crate) fn infer_variant_args(
        &mut self,
        e: ExprId,
        adt: &AdtTy,
        payload: Option<&Ty>,
        payload_expr: Option<ExprId>,
        expected: Option<&Ty>,
    ) -> R<AdtTy> {
        let found = self.variant_args(e, adt, payload, payload_expr, expected)?;
        self.formed(e, &Ty::Enum(found.clone()))?;
        Ok(found)
    }

    fn variant_args(
        &mut self,
        e: ExprId,
        adt: &AdtTy,
        payload: Option<&Ty>,
        payload_expr: Option<ExprId>,
        expected: Option<&Ty>,
    ) -> R<AdtTy> {
        if !adt.args.contains(&Ty::Param(u32::MAX)) {
            return Ok(adt.clone());
        }
        if let Some(Ty::Enum(want)) = expected.map(Ty::value)
            && want.item == adt.item
        {
            return Ok(want.clone());
        }
        // From the payload: what its value shows of the parameters its type mentions.
        if let (Some(pattern), Some(arg)) = (payload, payload_expr)
            && crate::generics::mentions_param(pattern)
            && let Some(ty) = self.probe(arg, false)
        {
            let params = crate::decl::adt_generics(self.db, adt.item).clone();
            let mut slots: Vec<Option<crate::instance::InstanceArg>> = adt
                .args
                .iter()
                .map(|a| match a {
                    Ty::Param(u32::MAX) => None,
                    Ty::Nat(n) => Some(crate::instance::InstanceArg::Nat(*n)),
                    other => Some(crate::instance::InstanceArg::Type(other.clone())),
                })
                .collect();
            crate::generics::unify(pattern, &ty, &params, &mut slots);
            if let Some(args) = slots.into_iter().collect::<Option<Vec<_>>>() {
                let args = args
                    .into_iter()
                    .map(|a| match a {
                        crate::instance::InstanceArg::Type(t) => t,
                        crate::instance::InstanceArg::Nat(n) => Ty::Nat(n),
                    })
                    .collect();
                return Ok(AdtTy { args, ..adt.clone() });
            }
        }
        Err(Diag::new(
            "E-INFER",
            format!("Cannot infer the type arguments; write {}[...].V.", adt.name),
            Anchor::Expr(e),
        ))
    }

    /// `E-BOUND` / `E-TRAIT-IMPL` when a record or enum type formed at `e` breaks a promise of
    /// its parameters (language §19.1).
    pub(crate) fn formed(&self, e: ExprId, ty: &Ty) -> R<()> {
        match crate::traits::formed_bounds(self.db, ty) {
            Some((code, fact)) => Err(Diag::new(code, format!("{fact}."), Anchor::Expr(e))),
            None => Ok(()),
        }
    }
}

/// Type equality with unknown types matching anything.
pub(crate) fn same(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Error, _) | (_, Ty::Error) => true,
        (Ty::Record(x), Ty::Record(y)) | (Ty::Enum(x), Ty::Enum(y)) => {
            x.item == y.item
                && x.args.len() == y.args.len()
                && x.args.iter().zip(y.args.iter()).all(|(p, q)| same(p, q))
        }
        (Ty::View(x), Ty::View(y)) => {
            x.mode == y.mode
                && x.place == y.place
                && same(&x.elem, &y.elem)
                && (x.extent == y.extent
                    || x.extent == crate::types::Extent::Unknown
                    || y.extent == crate::types::Extent::Unknown)
        }
        (Ty::Borrow(m, x), Ty::Borrow(n, y)) => m == n && same(x, y),
        _ => a == b,
    }
}

/// Names as a person says them: `a`, `a and b`, `a, b and c`.
pub(crate) fn spoken_list(names: &[Arc<str>]) -> String {
    match names {
        [] => "none".to_string(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
