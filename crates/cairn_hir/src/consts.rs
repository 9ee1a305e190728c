//! Constants: folded at compile time to one literal of their type (language §4).
//!
//! [`constants`] folds every constant of the program in declaration order, in one query, so that
//! constants may refer to each other in any order without recursive queries; a constant reached
//! again while it is being folded is `E-CONST`. Folding is exact: integers in 128-bit arithmetic
//! (past that, the value fits no type), `/` and `%` truncating toward zero, floats in `f64`
//! rounded to `f32` at every step of an `f32` constant. The result is then checked as a literal of
//! the declared type (`E-LITERAL-RANGE`, `E-OPERATOR`, `E-TYPE-MISMATCH`).
//!
//! Decision (Appendix B.10): `%` on floats is refused here as at run time (`E-CONST`), rather than
//! folded as the original does.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_syntax::TextRange;

use crate::body::{BinaryOp, Body, Expr, ExprId, Literal, Stmt, TypeRef, UnaryOp, body_with_source_map, lower_type};
use crate::db::Db;
use crate::diag::{Anchor, Diag, text};
use crate::input::{Item, ItemKind, Library, Program};
use crate::scope::{Lookup, Resolver};
use crate::types::{FloatTy, Ty};

/// A folded value.
///
/// Invariant: equality is identity of the value's bits, because a `Value` is part of a query
/// result and salsa backdates a result that compares equal: with IEEE `==`, editing a constant
/// from `0.0` to `-0.0` would look like no change and leave its users (the MIR, the binary)
/// stale; NaN would never equal itself and nothing would backdate. Folding compares floats as
/// floats where the language says so; this is only the memo's equality.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    Int(i128),
    Float(f64),
    Bool(bool),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Bool(a), Value::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Value::Int(i) => (0u8, *i).hash(state),
            Value::Float(f) => (1u8, f.to_bits()).hash(state),
            Value::Bool(b) => (2u8, *b).hash(state),
        }
    }
}

/// A constant's outcome: its type and value, or its refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstValue {
    Folded {
        ty: Ty,
        value: Value,
    },
    Refused(Diag),
    /// Not folded because an earlier constant was refused.
    Skipped,
}

/// Every constant of the program, folded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Constants {
    pub values: HashMap<Item, ConstValue>,
    /// Constants in declaration order.
    pub order: Vec<Item>,
}

impl Constants {
    pub fn get(&self, item: Item) -> Option<&ConstValue> {
        self.values.get(&item)
    }
}

/// The folded constants of the program in the database.
pub fn constants(db: &dyn Db) -> &Constants {
    all_constants(db, Program::get(db))
}

#[salsa::tracked(returns(ref))]
pub fn all_constants(db: &dyn Db, program: Program) -> Constants {
    fold_all(db, program.items(db))
}

/// The library's constants alone, folded over the library's HIGH-durability input, so that a
/// library check that reads a constant never depends on the program's inputs.
#[salsa::tracked(returns(ref))]
pub fn library_constants(db: &dyn Db, library: Library) -> Constants {
    fold_all(db, library.items(db))
}

/// The folded value of one constant, read from the library's table for a library constant.
///
/// A query of its own per constant: it re-runs when any constant changes, but a body that reads
/// it re-runs only when this constant's value or refusal changed (the memo is backdated
/// otherwise).
#[salsa::tracked(returns(ref))]
pub fn constant_value(db: &dyn Db, item: Item) -> Option<ConstValue> {
    if Resolver::new(db).info(item).is_some_and(|info| info.library) {
        return library_constants(db, Library::get(db)).get(item).cloned();
    }
    constants(db).get(item).cloned()
}

fn fold_all(db: &dyn Db, entries: &[crate::input::ItemEntry]) -> Constants {
    let mut folder = Folder { db, values: HashMap::new(), active: Vec::new() };
    let order: Vec<Item> = entries.iter().filter(|e| e.key.kind == ItemKind::Const).map(|e| e.item).collect();
    let mut refused = false;
    for &item in &order {
        if refused {
            folder.values.entry(item).or_insert(ConstValue::Skipped);
            continue;
        }
        let value = folder.constant(item);
        if matches!(value, ConstValue::Refused(_)) {
            refused = true;
        }
    }
    Constants { values: folder.values, order }
}

/// The value of the integer constant `name` as seen from `module`, if it is one and folded.
pub fn integer_constant(db: &dyn Db, module: &str, name: &str) -> Option<u64> {
    integer_constant_at(db, module, &[Arc::from(name)])
}

/// The value of the integer constant `path` names from `module` (`CELLS`, or another module's
/// `dims.CELLS`), if it is one and folded.
pub fn integer_constant_at(db: &dyn Db, module: &str, path: &[Arc<str>]) -> Option<u64> {
    let scope = Resolver::new(db);
    let Lookup::Found(decl) = scope.resolve_path(module, path, |k| k == ItemKind::Const) else { return None };
    match constant_value(db, decl.item).as_ref()? {
        ConstValue::Folded { ty: Ty::Int(_), value: Value::Int(v) } => u64::try_from(*v).ok(),
        _ => None,
    }
}

/// The declared type of a constant: a scalar, or a refusal.
pub fn const_type(db: &dyn Db, item: Item) -> Result<Ty, Diag> {
    let node = item.syntax(db).syntax_node();
    let written =
        node.children().find_map(<cairn_syntax::ast::Type as cairn_syntax::ast::AstNode>::cast).map(|t| lower_type(&t));
    match written {
        Some(TypeRef::Path { path, args }) if path.len() == 1 && args.is_empty() => match Ty::scalar_named(&path[0]) {
            Some(ty) => Ok(ty),
            None => {
                let scope = Resolver::new(db);
                let module = scope.module_of(item);
                let known = &*path[0] == "void"
                    || !matches!(scope.resolve_path(&module, &path, |_| true), Lookup::None)
                    || crate::builtins::Builtin::from_name(&path[0])
                        .is_some_and(|b| b.intrinsic_type() || b.storage_float());
                if known {
                    Err(Diag::new("E-CONST", "A constant is a scalar: integers, floats or bool.", Anchor::Item))
                } else {
                    Err(Diag::new("E-TYPE", format!("Unknown type {}.", path[0]), Anchor::Item))
                }
            }
        },
        Some(TypeRef::Path { path, .. }) => {
            let written = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
            let scope = Resolver::new(db);
            let module = scope.module_of(item);
            if matches!(scope.resolve_path(&module, &path, |_| true), Lookup::None) {
                Err(Diag::new("E-TYPE", format!("Unknown type {written}."), Anchor::Item))
            } else {
                Err(Diag::new("E-CONST", "A constant is a scalar: integers, floats or bool.", Anchor::Item))
            }
        }
        _ => Err(Diag::new("E-CONST", "A constant is a scalar: integers, floats or bool.", Anchor::Item)),
    }
}

struct Folder<'db> {
    db: &'db dyn Db,
    values: HashMap<Item, ConstValue>,
    /// Constants being folded, innermost last (cycle detection).
    active: Vec<Item>,
}

/// Why a fold stopped.
struct Stop {
    code: &'static str,
    message: String,
    at: Option<ExprId>,
    details: Vec<(&'static str, crate::diag::Detail)>,
}

impl Stop {
    fn new(code: &'static str, message: impl Into<String>, at: Option<ExprId>) -> Stop {
        Stop { code, message: message.into(), at, details: Vec::new() }
    }
}

impl Folder<'_> {
    fn constant(&mut self, item: Item) -> ConstValue {
        if let Some(done) = self.values.get(&item) {
            return done.clone();
        }
        let result = self.fold_constant(item);
        self.values.insert(item, result.clone());
        result
    }

    fn fold_constant(&mut self, item: Item) -> ConstValue {
        let ty = match const_type(self.db, item) {
            Ok(ty) => ty,
            Err(diag) => return ConstValue::Refused(diag),
        };
        let with_map = body_with_source_map(self.db, item);
        let body = with_map.body.clone();
        let map = with_map.source_map.clone();
        let Some(root) = initializer(&body) else {
            return ConstValue::Refused(Diag::new("E-CONST", "A constant needs a value.", Anchor::Item));
        };
        self.active.push(item);
        let floats_f32 = ty == Ty::Float(FloatTy::F32);
        let folded = self.fold(&body, root, floats_f32);
        self.active.pop();
        let anchor = |at: Option<ExprId>| match at {
            Some(id) => Anchor::Range(map.exprs.get(id.0 as usize).copied().unwrap_or(TextRange::default())),
            None => Anchor::Range(map.exprs.get(root.0 as usize).copied().unwrap_or(TextRange::default())),
        };
        let value = match folded {
            Ok(value) => value,
            Err(stop) => {
                return ConstValue::Refused(
                    Diag::new(stop.code, stop.message, anchor(stop.at)).with_details(stop.details),
                );
            }
        };
        if let Value::Float(f) = value
            && !f.is_finite()
        {
            return ConstValue::Refused(Diag::new(
                "E-CONST",
                "A constant is finite: this one folds to infinity or NaN.",
                anchor(None),
            ));
        }
        match literal_of(&ty, value) {
            Ok(value) => ConstValue::Folded { ty, value },
            Err(stop) => {
                ConstValue::Refused(Diag::new(stop.code, stop.message, anchor(None)).with_details(stop.details))
            }
        }
    }

    fn fold(&mut self, body: &Body, id: ExprId, floats_f32: bool) -> Result<Value, Stop> {
        let round = |v: f64| if floats_f32 { v as f32 as f64 } else { v };
        match body.expr(id) {
            Expr::Paren(inner) => self.fold(body, *inner, floats_f32),
            Expr::Literal(Literal::Int { value, .. }) => match value.and_then(|v| i128::try_from(v).ok()) {
                Some(v) => Ok(Value::Int(v)),
                None => Err(Stop::new("E-LITERAL-RANGE", "This literal is larger than any integer type.", Some(id))),
            },
            Expr::Literal(Literal::Char(c)) => Ok(Value::Int(i128::from(*c))),
            Expr::Literal(Literal::Float { text }) => {
                let v: f64 = text.replace('_', "").parse().unwrap_or(f64::NAN);
                Ok(Value::Float(round(v)))
            }
            Expr::Literal(Literal::Bool(b)) => Ok(Value::Bool(*b)),
            Expr::Name(name) => self.named(name, id),
            Expr::Field { .. } => {
                // `m.N`: a constant of another module, written with its module.
                let path = dotted(body, id);
                match path {
                    Some(path) => self.named(&path.join("."), id),
                    None => Err(not_constant(id)),
                }
            }
            Expr::Unary { op, operand } => {
                let value = self.fold(body, *operand, floats_f32)?;
                match (op, value) {
                    (UnaryOp::Neg, Value::Int(v)) => Ok(Value::Int(-v)),
                    (UnaryOp::Neg, Value::Float(v)) => Ok(Value::Float(-v)),
                    (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
                    (UnaryOp::BitNot, _) => Err(Stop::new(
                        "E-CONST",
                        "A constant cannot fold `~`: write the complemented value as a literal.",
                        Some(id),
                    )),
                    (UnaryOp::Neg, Value::Bool(_)) => {
                        Err(Stop::new("E-CONST", "A constant negates only numbers.", Some(id)))
                    }
                    (UnaryOp::Not, _) => Err(Stop::new("E-CONST", "A constant applies `!` only to bools.", Some(id))),
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                let a = self.fold(body, *lhs, floats_f32)?;
                let b = self.fold(body, *rhs, floats_f32)?;
                binary(*op, a, b, id, floats_f32)
            }
            Expr::Call { callee, args } => {
                let callee = body.unparen(*callee);
                let Expr::Name(name) = body.expr(callee) else { return Err(not_constant(id)) };
                let Some(target) = Ty::scalar_named(name) else { return Err(not_constant(id)) };
                if args.len() != 1 {
                    return Err(Stop::new("E-ARITY", "A conversion takes exactly one argument.", Some(id)));
                }
                let value = self.fold(body, args[0], false)?;
                convert(&target, value, id, floats_f32)
            }
            _ => Err(not_constant(id)),
        }
    }

    fn named(&mut self, name: &str, id: ExprId) -> Result<Value, Stop> {
        let scope = Resolver::new(self.db);
        let module = self.active.last().map(|&i| scope.module_of(i)).unwrap_or_else(|| Arc::from(""));
        let segments: Vec<Arc<str>> = name.split('.').map(Arc::from).collect();
        let Lookup::Found(decl) = scope.resolve_path(&module, &segments, |k| k == ItemKind::Const) else {
            return Err(Stop::new(
                "E-CONST",
                format!("{name} is not a constant: a constant is made of literals and other constants."),
                Some(id),
            ));
        };
        if self.active.contains(&decl.item) {
            let full = scope.full_name(decl.item);
            return Err(Stop::new("E-CONST", format!("{full} is defined in terms of itself."), Some(id)));
        }
        match self.constant(decl.item) {
            ConstValue::Folded { value, .. } => Ok(value),
            ConstValue::Refused(diag) => Err(Stop::new(diag.code, diag.message.to_string(), Some(id))),
            ConstValue::Skipped => Err(Stop::new("E-CONST", format!("{name} could not be folded."), Some(id))),
        }
    }
}

fn initializer(body: &Body) -> Option<ExprId> {
    match body.root.first().map(|&s| body.stmt(s)) {
        Some(Stmt::Return(Some(e))) => Some(*e),
        _ => None,
    }
}

fn dotted(body: &Body, id: ExprId) -> Option<Vec<Arc<str>>> {
    match body.expr(id) {
        Expr::Name(n) => Some(vec![n.clone()]),
        Expr::Field { base, name } => {
            let mut path = dotted(body, *base)?;
            path.push(name.clone());
            Some(path)
        }
        _ => None,
    }
}

fn not_constant(id: ExprId) -> Stop {
    Stop::new(
        "E-CONST",
        "A constant is made of literals, other constants, arithmetic, comparison and conversions such as u8(x).",
        Some(id),
    )
}

fn binary(op: BinaryOp, a: Value, b: Value, id: ExprId, floats_f32: bool) -> Result<Value, Stop> {
    use BinaryOp::*;
    let round = |v: f64| if floats_f32 { v as f32 as f64 } else { v };
    let too_big = || Stop::new("E-LITERAL-RANGE", "This constant's value is larger than any integer type.", Some(id));
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => match op {
            Add => x.checked_add(y).map(Value::Int).ok_or_else(too_big),
            Sub => x.checked_sub(y).map(Value::Int).ok_or_else(too_big),
            Mul => x.checked_mul(y).map(Value::Int).ok_or_else(too_big),
            Div | Rem if y == 0 => Err(Stop::new("E-CONST", "A constant does not divide by zero.", Some(id))),
            Div => x.checked_div(y).map(Value::Int).ok_or_else(too_big),
            Rem => x.checked_rem(y).map(Value::Int).ok_or_else(too_big),
            BitAnd => Ok(Value::Int(x & y)),
            BitOr => Ok(Value::Int(x | y)),
            BitXor => Ok(Value::Int(x ^ y)),
            Eq => Ok(Value::Bool(x == y)),
            Ne => Ok(Value::Bool(x != y)),
            Lt => Ok(Value::Bool(x < y)),
            Le => Ok(Value::Bool(x <= y)),
            Gt => Ok(Value::Bool(x > y)),
            Ge => Ok(Value::Bool(x >= y)),
            And | Or => Err(Stop::new("E-CONST", "`&&` and `||` fold bools.", Some(id))),
        },
        (Value::Bool(x), Value::Bool(y)) => match op {
            And => Ok(Value::Bool(x && y)),
            Or => Ok(Value::Bool(x || y)),
            Eq => Ok(Value::Bool(x == y)),
            Ne => Ok(Value::Bool(x != y)),
            BitAnd | BitOr | BitXor => Err(Stop::new("E-CONST", "Bit operations fold integers.", Some(id))),
            _ => {
                Err(Stop::new("E-CONST", format!("A constant applies {} to numbers, not bools.", op.text()), Some(id)))
            }
        },
        (Value::Bool(_), _) | (_, Value::Bool(_)) => {
            Err(Stop::new("E-CONST", format!("{} cannot combine a bool with a number.", op.text()), Some(id)))
        }
        (x, y) => {
            let f = |v: Value| match v {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                Value::Bool(_) => 0.0,
            };
            let (x, y) = (round(f(x)), round(f(y)));
            match op {
                Add => Ok(Value::Float(round(x + y))),
                Sub => Ok(Value::Float(round(x - y))),
                Mul => Ok(Value::Float(round(x * y))),
                Div => Ok(Value::Float(round(x / y))),
                Rem => Err(Stop::new("E-CONST", "% folds integers only; floats have no %.", Some(id))),
                BitAnd | BitOr | BitXor => Err(Stop::new("E-CONST", "Bit operations fold integers.", Some(id))),
                Eq => Ok(Value::Bool(x == y)),
                Ne => Ok(Value::Bool(x != y)),
                Lt => Ok(Value::Bool(x < y)),
                Le => Ok(Value::Bool(x <= y)),
                Gt => Ok(Value::Bool(x > y)),
                Ge => Ok(Value::Bool(x >= y)),
                And | Or => Err(Stop::new("E-CONST", "`&&` and `||` fold bools.", Some(id))),
            }
        }
    }
}

fn convert(target: &Ty, value: Value, id: ExprId, floats_f32: bool) -> Result<Value, Stop> {
    match (target, value) {
        (Ty::Bool, _) | (_, Value::Bool(_)) => {
            Err(Stop::new("E-CAST", "A conversion takes and makes numbers, not bools.", Some(id)))
        }
        (Ty::Int(int), value) => {
            let (lo, hi) = int.range();
            let integer = match value {
                Value::Int(v) => Some(v),
                Value::Float(f) if f.is_finite() => Some(f.trunc() as i128),
                _ => None,
            };
            match integer {
                Some(v) if v >= lo && v <= hi => Ok(Value::Int(v)),
                _ => {
                    let shown = match value {
                        Value::Int(v) => v.to_string(),
                        Value::Float(f) => f.to_string(),
                        Value::Bool(b) => b.to_string(),
                    };
                    Err(Stop::new("E-CONST", format!("{shown} does not fit {}.", int.name()), Some(id)))
                }
            }
        }
        (Ty::Float(float), value) => {
            let v = match value {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                Value::Bool(_) => 0.0,
            };
            let v = if *float == FloatTy::F32 || floats_f32 { v as f32 as f64 } else { v };
            Ok(Value::Float(v))
        }
        _ => Err(not_constant(id)),
    }
}

/// Checks a folded value as a literal of `ty`.
fn literal_of(ty: &Ty, value: Value) -> Result<Value, Stop> {
    let mismatch = |got: &str| {
        let mut stop = Stop::new("E-TYPE-MISMATCH", format!("Expected {ty}, got {got}."), None);
        stop.details = vec![("expected_type", text(ty)), ("actual_type", text(got))];
        stop
    };
    match (ty, value) {
        (Ty::Int(int), Value::Int(v)) => {
            let (lo, hi) = int.range();
            if v < 0 && !int.signed() {
                if -v > hi {
                    return Err(Stop::new(
                        "E-LITERAL-RANGE",
                        format!("{v} is not representable in {}.", int.name()),
                        None,
                    ));
                }
                return Err(Stop::new(
                    "E-OPERATOR",
                    format!("{v} is negative, and {} is unsigned: negation needs a signed or float type.", int.name()),
                    None,
                ));
            }
            if v < lo || v > hi {
                return Err(Stop::new("E-LITERAL-RANGE", format!("{v} is not representable in {}.", int.name()), None));
            }
            Ok(value)
        }
        (Ty::Float(float), Value::Int(v)) => {
            if v.unsigned_abs() > (1u128 << 53) {
                return Err(Stop::new(
                    "E-LITERAL-RANGE",
                    "An integer above 2^53 does not convert to a float exactly; convert it explicitly.",
                    None,
                ));
            }
            let f = v as f64;
            Ok(Value::Float(if *float == FloatTy::F32 { f as f32 as f64 } else { f }))
        }
        (Ty::Float(float), Value::Float(f)) => {
            if *float == FloatTy::F32 && f.is_finite() && f.abs() > f32::MAX as f64 {
                return Err(Stop::new("E-LITERAL-RANGE", "This value overflows f32.", None));
            }
            Ok(Value::Float(if *float == FloatTy::F32 { f as f32 as f64 } else { f }))
        }
        (Ty::Bool, Value::Bool(_)) => Ok(value),
        (_, Value::Int(v)) => Err(mismatch(if v < 0 { "i64" } else { "u64" })),
        (_, Value::Float(_)) => Err(mismatch("f64")),
        (_, Value::Bool(_)) => Err(mismatch("bool")),
    }
}
