//! Builtin calls (language §13): conversions with their guard, wrapping arithmetic and shifts,
//! `min`/`max`, float helpers, `len`, printing, assertions; later-tier builtins refused.

use crate::body::ExprId;
use crate::diag::{Anchor, Diag};
use crate::types::Ty;

use super::cx::{Cx, R};
use super::result::{CallTarget, GuardKind};
use crate::body::{Expr, Literal, UnaryOp};
use crate::builtins::Builtin;
use crate::types::{FloatTy, IntTy};

impl Cx<'_> {
    // ----- builtins --------------------------------------------------------------------------

    /// A builtin call. `expected` (the context's type) reaches the operand that decides the type,
    /// as a hint only, so `let b:u8 = add_wrap(200, 100);` types both literals `u8`.
    pub(crate) fn builtin(&mut self, e: ExprId, builtin: Builtin, args: &[ExprId], expected: Option<&Ty>) -> R<Ty> {
        self.target(e, CallTarget::Builtin(builtin));
        let name = builtin.name();
        let arity = |n: usize, message: &str| -> R<()> {
            if args.len() != n {
                return Err(Diag::new("E-ARITY", message.to_string(), Anchor::Expr(e)));
            }
            Ok(())
        };
        if let Some(target) = builtin.conversion() {
            arity(1, "A scalar conversion takes exactly one argument.")?;
            let ty = self.check(args[0], None)?;
            if !ty.is_numeric() && !ty.is_error() {
                return Err(Diag::new(
                    "E-CAST",
                    format!("A conversion takes a number, not a {ty}; compare instead (for example `x != 0`)."),
                    Anchor::Expr(e),
                ));
            }
            if target.is_integer() {
                self.site(GuardKind::Conversion);
            }
            return Ok(target);
        }
        if builtin.later() {
            return Err(Diag::new(
                "E-UNSUPPORTED",
                format!("{name} belongs to a later tier, which this checker does not check yet."),
                Anchor::Expr(e),
            ));
        }
        use Builtin as B;
        match builtin {
            B::AddWrap | B::SubWrap | B::MulWrap | B::ShlWrap | B::Shr | B::Min | B::Max => {
                arity(2, &format!("{name} takes two arguments."))?;
                let shift = matches!(builtin, B::ShlWrap | B::Shr);
                let first_literal =
                    matches!(self.body.expr(args[0]), Expr::Literal(Literal::Int { .. } | Literal::Char(_)));
                let ty = if first_literal && !shift && !self.adapts(args[1]) {
                    let second = self.hinted(args[1], expected)?;
                    self.check(args[0], Some(&second))?
                } else {
                    let first = self.hinted(args[0], expected)?;
                    let second_want = if shift { Ty::usize() } else { first.clone() };
                    self.check(args[1], Some(&second_want))?;
                    first
                };
                if ty.is_error() {
                    return Ok(Ty::Error);
                }
                if matches!(builtin, B::Min | B::Max) {
                    if !ty.is_integer() {
                        return Err(Diag::new(
                            "E-MINMAX",
                            format!("{name} works on integers only (floats would need a NaN rule), not on {ty}."),
                            Anchor::Expr(e),
                        ));
                    }
                } else if !ty.is_unsigned() {
                    return Err(Diag::new(
                        "E-WRAP-TYPE",
                        format!("{name} works on unsigned integers only, not on {ty}."),
                        Anchor::Expr(e),
                    ));
                }
                if shift {
                    self.site(GuardKind::Shift);
                }
                Ok(ty)
            }
            B::Sqrt | B::Floor | B::Ceil | B::Trunc | B::Abs | B::ToBits => {
                arity(1, &format!("{name} takes one argument."))?;
                let hint = if builtin == B::ToBits { None } else { expected };
                let ty = self.hinted(args[0], hint)?;
                match (builtin, &ty) {
                    (_, Ty::Error) => Ok(Ty::Error),
                    (B::ToBits, Ty::Float(FloatTy::F32)) => Ok(Ty::Int(IntTy::U32)),
                    (B::ToBits, Ty::Float(FloatTy::F64)) => Ok(Ty::Int(IntTy::U64)),
                    (B::ToBits, _) => {
                        Err(Diag::new("E-MATH-TYPE", format!("to_bits takes f32 or f64, not {ty}."), Anchor::Expr(e)))
                    }
                    (B::Abs, Ty::Int(i)) if i.signed() => {
                        self.site(GuardKind::Overflow);
                        Ok(ty)
                    }
                    (_, Ty::Float(_)) => Ok(ty),
                    (B::Abs, _) => Err(Diag::new(
                        "E-MATH-TYPE",
                        format!("abs takes a signed integer or a float, not {ty}."),
                        Anchor::Expr(e),
                    )),
                    _ => Err(Diag::new("E-MATH-TYPE", format!("{name} takes f32 or f64, not {ty}."), Anchor::Expr(e))),
                }
            }
            B::Len => {
                if args.len() != 1 {
                    return Err(Diag::new(
                        "E-LEN",
                        "len takes one view, local array or string literal.",
                        Anchor::Expr(e),
                    ));
                }
                let arg = self.body.unparen(args[0]);
                let direct = match self.body.expr(arg) {
                    Expr::Part { .. } => false,
                    Expr::Literal(Literal::String(_)) => true,
                    _ => self.root_name(arg).is_some() || self.root_is_name(arg),
                };
                if !direct {
                    return Err(Diag::new(
                        "E-LEN",
                        "len takes one direct view, local array or string literal (never a part or a computed value).",
                        Anchor::Expr(e),
                    ));
                }
                let ty = self.check(arg, None)?;
                if let Ty::Record(adt) = &ty
                    && let Some(lends) = crate::decl::record_lends(self.db, adt.item)
                {
                    let field = match lends.hi {
                        crate::decl::LendBound::Field(i) => crate::decl::fields_of(self.db, adt)
                            .get(i as usize)
                            .map(|(n, _)| format!("its field {n}"))
                            .unwrap_or_else(|| "a field".into()),
                        crate::decl::LendBound::Literal(_) => "fixed".into(),
                    };
                    return Err(Diag::new(
                        "E-LEN",
                        format!("{} lends a part whose length is {field}: read the field instead of len(…).", adt.name),
                        Anchor::Expr(e),
                    ));
                }
                if !matches!(ty, Ty::View(_) | Ty::Buf(_) | Ty::Array(..) | Ty::Error) {
                    return Err(Diag::new(
                        "E-LEN",
                        format!("len needs a view or an array, and this is a {ty}."),
                        Anchor::Expr(e),
                    ));
                }
                Ok(Ty::usize())
            }
            B::Print | B::Println | B::Eprint | B::Eprintln => {
                self.lane_call(e, "Printing")?;
                self.effect("io");
                self.effect("ffi:write");
                for &arg in args {
                    self.print_argument(arg)?;
                }
                Ok(Ty::Void)
            }
            B::Format => self.format(e, args),
            B::Assert => {
                if args.is_empty() || args.len() > 2 || (args.len() == 2 && !self.is_string_literal(args[1])) {
                    return Err(Diag::new(
                        "E-ARITY",
                        "assert takes a condition and, optionally, one string literal saying what failed.",
                        Anchor::Expr(e),
                    ));
                }
                self.check(args[0], Some(&Ty::Bool))?;
                self.site(GuardKind::Assert);
                Ok(Ty::Void)
            }
            B::AssertEq => {
                if args.len() < 2 || args.len() > 3 || (args.len() == 3 && !self.is_string_literal(args[2])) {
                    return Err(Diag::new(
                        "E-ARITY",
                        "assert_eq takes two values and, optionally, one string literal saying what failed.",
                        Anchor::Expr(e),
                    ));
                }
                let ty = self.comparison_operands(e, args[0], args[1])?;
                if !(ty.is_scalar() || ty.is_error()) {
                    return Err(Diag::new(
                        "E-ASSERT-EQ",
                        format!(
                            "assert_eq prints what it compares, and {ty} is not an integer, bool or float: write assert(a == b)."
                        ),
                        Anchor::Expr(e),
                    ));
                }
                self.site(GuardKind::Assert);
                Ok(Ty::Void)
            }
            B::Buf => self.buf_new(e, None, args, expected),
            B::Array => self.array_new(e, None, args, expected),
            B::Dyn => self.dyn_new(e, None, args, expected),
            B::Take => self.take(e, args),
            B::Swap => self.swap(e, args),
            B::Transfer => self.transfer(e, args),
            B::Wait => self.wait(e, args),
            atomic if atomic.atomic_update() => self.atomic_update(e, builtin, args),
            _ => Err(Diag::new("E-CALLEE", format!("Unknown callable {name}."), Anchor::Expr(e))),
        }
    }

    pub(crate) fn root_is_name(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(_) => true,
            Expr::Field { base, .. } | Expr::Index { base, .. } => self.root_is_name(*base),
            _ => false,
        }
    }

    /// Types two operands as `a == b` is typed, and applies its operator rule.
    pub(crate) fn comparison_operands(&mut self, e: ExprId, a: ExprId, b: ExprId) -> R<Ty> {
        let (left, right) = if self.adapts(a) && !self.adapts(b) {
            let right = self.check(b, None)?;
            let left = self.check(a, Some(&right))?;
            (left, right)
        } else {
            let left = self.check(a, None)?;
            let right = self.check(b, Some(&left))?;
            (left, right)
        };
        let _ = right;
        if matches!(left, Ty::View(_)) {
            return Err(Diag::new(
                "E-OPERATOR",
                "Operators never apply to views: views are not implicit loops.",
                Anchor::Expr(e),
            ));
        }
        if !(left.is_scalar() || left.is_error() || crate::decl::is_tag_only(self.db, &left)) {
            return Err(Diag::new(
                "E-OPERATOR",
                format!("== compares scalars and tag-only enums, not {left}."),
                Anchor::Expr(e),
            )
            .with_hint(self.compare_hint(&left)));
        }
        Ok(left)
    }

    /// `format(out, pieces…)` (language §13.1): the pieces as `print` takes them, appended to
    /// `out`, a writable `std.vec.Vec[u8]`. The append is a call of
    /// [`crate::Resolver::format_append`] (`std.vec.extend_from[u8]`, the one home of a vector's
    /// growth), recorded as this call's edge: the row gains what that call does (`alloc`, `free`,
    /// the write of `out`) and the instance is built. Host code only, lanes included.
    fn format(&mut self, e: ExprId, args: &[ExprId]) -> R<Ty> {
        let Some((&out, pieces)) = args.split_first() else {
            return Err(Diag::new(
                "E-ARITY",
                "format takes the Vec[u8] it appends to, then the pieces to write: format(out, \"x = \", x).",
                Anchor::Expr(e),
            ));
        };
        // Host code only (a device lane or kernel has no vector to grow); a host lane may format
        // into its own vector, the runtime's scratch being each thread's own.
        self.host_only(Anchor::Expr(e), "format")?;
        let target = self.check(out, None)?;
        let is_bytes = match target.value() {
            Ty::Record(adt) => {
                &*self.scope.full_name(adt.item) == crate::library::VEC_RECORD && *adt.args == [Ty::Int(IntTy::U8)]
            }
            Ty::Error => return Ok(Ty::Void),
            _ => false,
        };
        let append = self.scope.format_append();
        let Some(append) = append.filter(|_| is_bytes) else {
            return Err(Diag::new(
                "E-FORMAT-TARGET",
                format!(
                    "format appends to a growable byte vector, a std.vec.Vec[u8], and this is a {target}: print it instead, or format into `let mut out = vec.new[u8]();`."
                ),
                Anchor::Expr(out),
            ));
        };
        if self.root_name(out).is_none() {
            return Err(Diag::new(
                "E-FORMAT-TARGET",
                "format appends to a named, writable Vec[u8], not a temporary: bind it first (`let mut out = vec.new[u8]();`).",
                Anchor::Expr(out),
            ));
        }
        if !self.writable_root(out) {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                "format writes the vector it appends to: declare the local `let mut`, or take it as rw<Vec[u8]>.",
                Anchor::Expr(out),
            ));
        }
        self.keep_extent_pair(out, "lending rw")?;
        self.lent_to_write(out);
        // Lent as `rw` (what `extend_from` takes): a lane's walk and the leases of queued work
        // read what an argument is passed as (`E-PARALLEL-WRITE` for an outer vector).
        let lent = Ty::Borrow(crate::types::Mode::Rw, std::sync::Arc::new(target.value().clone()));
        self.arguments.push((out, lent));
        // Every piece is computed before the append (into the runtime's scratch), so a piece may
        // read `out` itself: no lend of `out` is live while the pieces are computed.
        for &piece in pieces {
            self.print_argument(piece)?;
        }
        let mapping = vec![self.mapped(out), super::result::Mapped::Dropped, super::result::Mapped::Dropped];
        let args: std::sync::Arc<[crate::instance::InstanceArg]> =
            std::sync::Arc::from(vec![crate::instance::InstanceArg::Type(Ty::Int(IntTy::U8))]);
        self.calls.push(super::result::CallEdge { callee: append, args, mapping: std::sync::Arc::from(mapping) });
        Ok(Ty::Void)
    }

    /// One argument of `print`.
    pub(crate) fn print_argument(&mut self, arg: ExprId) -> R<()> {
        let inner = self.body.unparen(arg);
        let ty = match self.body.expr(inner).clone() {
            Expr::Literal(Literal::Char(_)) => {
                self.check(arg, Some(&Ty::Int(IntTy::U8)))?;
                return Ok(());
            }
            Expr::Unary { op: UnaryOp::Neg, operand }
                if matches!(self.body.expr(operand), Expr::Literal(Literal::Float { .. })) =>
            {
                self.check(arg, Some(&Ty::Float(FloatTy::F64)))?;
                return Ok(());
            }
            Expr::Part { base, lo, hi } => self.part(inner, base, lo, hi)?,
            _ => {
                let ty = self.check(arg, None)?;
                self.lend(arg, ty)
            }
        };
        match &ty {
            Ty::View(view) => {
                if *view.elem != Ty::Int(IntTy::U8) && !view.elem.is_error() {
                    return Err(Diag::new(
                        "E-PRINT-ARG",
                        format!("print writes the bytes of a u8 view; format the elements of {ty} one by one instead."),
                        Anchor::Expr(arg),
                    ));
                }
                if let Some(root) = self.root_name(arg) {
                    self.effect(format!("read:{root}"));
                }
                Ok(())
            }
            ty if ty.is_scalar() || ty.is_error() => Ok(()),
            other => {
                // A sum has no fields to print: its variant is told apart by `match`.
                let how = match other.value() {
                    Ty::Enum(_) => format!(
                        "match on the {other} and print what each variant holds (a word for the variant, then its payload)"
                    ),
                    Ty::Record(_) => format!("print the fields of the {other} one by one"),
                    _ => format!("print what the {other} holds, one scalar at a time"),
                };
                Err(Diag::new(
                    "E-PRINT-ARG",
                    format!("print writes integers, bools, character literals, floats and bytes; {how}."),
                    Anchor::Expr(arg),
                ))
            }
        }
    }
}
