//! The static values of a recipe (language §29) and how its static expressions evaluate.
//!
//! A static is a natural, a boolean, a type, a field descriptor or a function name. Static
//! expressions are the `where` bindings, the conditions of `require`, the bounds of `each` and
//! the operands of a static `fold`; they are built from naturals, comparisons, `&& || !`,
//! `+ - * / %` (never negative, never dividing by zero), `min`, `max` and the schema facts
//! `bytes bits offset index count typeof unsigned signed integer float scalar record`. Anything
//! else is `E-RECIPE-STATIC`; walking the fields of what is not a plain non-generic record is
//! `E-DERIVE-TYPE`.
//!
//! Invariant: evaluation reads only the recipe's syntax and the schema (record definitions):
//! no body, no position, so a derivation re-runs only when one of those changes.

use std::sync::Arc;

use cairn_syntax::{SyntaxKind, SyntaxNode, SyntaxToken};

use crate::db::Db;
use crate::decl::{generic_params, record_def};
use crate::diag::{Anchor, Diag};
use crate::scope::Resolver;
use crate::types::Ty;

/// A type as a recipe sees it: how the deriving module spells it, its bare name (what a `$`
/// splice in the middle of an identifier gives), and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeDesc {
    pub text: Arc<str>,
    pub name: Arc<str>,
    pub ty: Ty,
}

/// One field of a walked record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldDesc {
    pub name: Arc<str>,
    pub index: u64,
    pub ty: TypeDesc,
    /// The packed offset (the bytes of the fields before it), when every earlier field has a
    /// static size.
    pub offset: Option<u64>,
}

/// A static value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Static {
    Nat(u64),
    Bool(bool),
    Type(TypeDesc),
    Field(FieldDesc),
    /// A function the deriving module named, as it wrote the path.
    Fn(Arc<str>),
}

impl Static {
    fn kind(&self) -> &'static str {
        match self {
            Static::Nat(_) => "a natural",
            Static::Bool(_) => "a boolean",
            Static::Type(_) => "a type",
            Static::Field(_) => "a field",
            Static::Fn(_) => "a function name",
        }
    }

    /// The text a whole `$name` stands for.
    pub fn whole_text(&self) -> String {
        match self {
            Static::Nat(n) => n.to_string(),
            Static::Bool(b) => b.to_string(),
            Static::Type(t) => t.text.to_string(),
            Static::Field(f) => f.name.to_string(),
            Static::Fn(path) => path.to_string(),
        }
    }

    /// The text a `$name` inside a longer identifier stands for.
    pub fn part_text(&self) -> String {
        match self {
            Static::Type(t) => t.name.to_string(),
            Static::Fn(path) => path.rsplit('.').next().unwrap_or(path).to_string(),
            other => other.whole_text(),
        }
    }

    /// The type a fact asks about: a type itself, or a field's type.
    fn as_type(&self) -> Option<&TypeDesc> {
        match self {
            Static::Type(t) => Some(t),
            Static::Field(f) => Some(&f.ty),
            _ => None,
        }
    }
}

/// The most steps one static iteration may take (language §29).
pub(crate) const STEP_LIMIT: u64 = 1024;

/// The most static steps one derivation may take in all (the node budget of language §29:
/// nested iterations multiply).
pub(crate) const TOTAL_STEP_LIMIT: u64 = 1 << 20;

/// A refusal of a static expression, anchored at the derivation.
pub(crate) fn refuse(code: &'static str, message: impl Into<String>) -> Diag {
    Diag::new(code, message, Anchor::Item)
}

/// The significant text of a node, for messages.
pub(crate) fn snippet(node: &SyntaxNode) -> String {
    let text = node.text().to_string();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 60 { format!("{}…", text.chars().take(60).collect::<String>()) } else { text }
}

/// The scope of static names at one point of an expansion, innermost last.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    names: Vec<(Arc<str>, Static)>,
    /// The static steps taken so far (against [`TOTAL_STEP_LIMIT`]).
    pub spent: std::cell::Cell<u64>,
}

impl Env {
    pub fn push(&mut self, name: Arc<str>, value: Static) {
        self.names.push((name, value));
    }

    pub fn mark(&self) -> usize {
        self.names.len()
    }

    pub fn reset(&mut self, mark: usize) {
        self.names.truncate(mark);
    }

    pub fn get(&self, name: &str) -> Option<&Static> {
        self.names.iter().rev().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    /// The longest static name that `text` starts with (`$R_cols` is `$R` then `_cols`).
    pub fn longest_prefix(&self, text: &str) -> Option<(&str, &Static)> {
        let mut best: Option<(&str, &Static)> = None;
        for (name, _) in self.names.iter().rev() {
            if text.starts_with(&**name) && best.is_none_or(|(b, _)| name.len() > b.len()) {
                best = Some((name, self.get(name).expect("listed")));
            }
        }
        best
    }

    /// The names in scope, for messages.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.names.iter().map(|(n, _)| n.to_string()).collect();
        names.sort();
        names.dedup();
        names
    }
}

/// The schema side of evaluation: types and the fields of records.
pub(crate) struct Schema<'db> {
    pub db: &'db dyn Db,
}

impl<'db> Schema<'db> {
    /// How the deriving module spells `ty`: scalars by name, declarations by full name.
    pub fn describe(&self, ty: &Ty) -> TypeDesc {
        let scope = Resolver::new(self.db);
        let (text, name) = match ty {
            Ty::Record(adt) | Ty::Enum(adt) => {
                let full = scope.full_name(adt.item);
                let bare: Arc<str> = Arc::from(full.rsplit('.').next().unwrap_or(&full));
                let args: Vec<String> = adt.args.iter().map(|a| self.describe(a).text.to_string()).collect();
                let text = if args.is_empty() { full.to_string() } else { format!("{full}[{}]", args.join(", ")) };
                (Arc::from(text), bare)
            }
            Ty::Buf(elem) => (Arc::from(format!("Buf[{}]", self.describe(elem).text)), Arc::from("Buf")),
            Ty::Array(elem, n) => (Arc::from(format!("Array[{}, {n}]", self.describe(elem).text)), Arc::from("Array")),
            other => {
                let text: Arc<str> = Arc::from(other.to_string());
                (text.clone(), text)
            }
        };
        TypeDesc { text, name, ty: ty.clone() }
    }

    /// The fields of a plain non-generic record, each described.
    pub fn fields(&self, ty: &TypeDesc) -> Result<Vec<FieldDesc>, Diag> {
        let Ty::Record(adt) = &ty.ty else {
            return Err(refuse(
                "E-DERIVE-TYPE",
                format!("{} is not a record: only a plain non-generic record's fields can be walked.", ty.text),
            ));
        };
        if !generic_params(self.db, adt.item).is_empty() {
            return Err(refuse(
                "E-DERIVE-TYPE",
                format!("{} is generic: only a plain non-generic record's fields can be walked.", ty.text),
            ));
        }
        let def = record_def(self.db, adt.item);
        let mut offset = Some(0u64);
        let mut out = Vec::new();
        for (index, (name, field_ty)) in def.fields.iter().enumerate() {
            let desc = self.describe(field_ty);
            let size = self.bytes(&desc.ty, 0);
            out.push(FieldDesc { name: name.clone(), index: index as u64, ty: desc, offset });
            offset = offset.zip(size).and_then(|(a, b)| a.checked_add(b));
        }
        Ok(out)
    }

    /// A type's size in bytes as the recipes count it (packed: a record is the sum of its
    /// fields, `usize` is 8), when it has one.
    pub fn bytes(&self, ty: &Ty, depth: u32) -> Option<u64> {
        if depth > 32 {
            return None;
        }
        match ty {
            Ty::Bool => Some(1),
            Ty::Int(i) => Some(u64::from(i.bits() / 8)),
            Ty::Float(f) => Some(if matches!(f, crate::types::FloatTy::F32) { 4 } else { 8 }),
            Ty::Array(elem, n) => self.bytes(elem, depth + 1).and_then(|b| b.checked_mul(*n)),
            Ty::Record(adt) if generic_params(self.db, adt.item).is_empty() => {
                let def = record_def(self.db, adt.item);
                def.fields
                    .iter()
                    .try_fold(0u64, |sum, (_, t)| self.bytes(t, depth + 1).and_then(|b| sum.checked_add(b)))
            }
            _ => None,
        }
    }
}

/// Evaluates static expressions against an environment.
pub(crate) struct Eval<'a, 'db> {
    pub schema: &'a Schema<'db>,
    pub env: &'a mut Env,
    /// The recipe's name, for messages.
    pub recipe: &'a str,
}

/// The first child node of `node` that is an expression.
pub(crate) fn expr_children(node: &SyntaxNode) -> impl Iterator<Item = SyntaxNode> {
    node.children().filter(|c| is_expr(c.kind()))
}

/// True for an expression node (the typed AST's own test).
pub(crate) fn is_expr(kind: SyntaxKind) -> bool {
    <cairn_syntax::ast::Expr as cairn_syntax::ast::AstNode>::can_cast(kind)
}

/// The operator token of a binary or prefix expression.
pub(crate) fn operator(node: &SyntaxNode) -> Option<SyntaxToken> {
    node.children_with_tokens().filter_map(|e| e.into_token()).find(|t| !t.kind().is_trivia())
}

impl Eval<'_, '_> {
    fn not_static(&self, node: &SyntaxNode, why: &str) -> Diag {
        refuse(
            "E-RECIPE-STATIC",
            format!(
                "In recipe {}, `{}` is not a static expression: {why} Static values are naturals, booleans, types, fields and function names, combined with + - * / % min max, comparisons, && || ! and the facts bytes, bits, offset, index, count, typeof, unsigned, signed, integer, float, scalar, record.",
                self.recipe,
                snippet(node)
            ),
        )
    }

    pub fn nat(&mut self, node: &SyntaxNode) -> Result<u64, Diag> {
        match self.eval(node)? {
            Static::Nat(n) => Ok(n),
            other => Err(self.not_static(node, &format!("a natural is needed here, and this is {}.", other.kind()))),
        }
    }

    pub fn boolean(&mut self, node: &SyntaxNode) -> Result<bool, Diag> {
        match self.eval(node)? {
            Static::Bool(b) => Ok(b),
            other => Err(self.not_static(node, &format!("a condition is needed here, and this is {}.", other.kind()))),
        }
    }

    pub fn eval(&mut self, node: &SyntaxNode) -> Result<Static, Diag> {
        use SyntaxKind::*;
        match node.kind() {
            LITERAL => {
                let token = operator(node).ok_or_else(|| self.not_static(node, "it is empty."))?;
                match token.kind() {
                    TRUE_KW => Ok(Static::Bool(true)),
                    FALSE_KW => Ok(Static::Bool(false)),
                    INT_NUMBER => parse_natural(token.text())
                        .map(Static::Nat)
                        .ok_or_else(|| self.not_static(node, "the literal is not a natural that fits 64 bits.")),
                    _ => Err(self.not_static(node, "only natural and boolean literals are static.")),
                }
            }
            NAME_EXPR => {
                let text = node.text().to_string();
                let name = text.trim().trim_start_matches('$');
                self.env.get(name).cloned().ok_or_else(|| {
                    self.not_static(
                        node,
                        &format!("`{name}` names no static value here (known: {}).", self.env.names().join(", ")),
                    )
                })
            }
            PAREN_EXPR => {
                let inner = expr_children(node).next().ok_or_else(|| self.not_static(node, "it is empty."))?;
                self.eval(&inner)
            }
            PREFIX_EXPR => {
                let op = operator(node).map(|t| t.text().to_string()).unwrap_or_default();
                let inner = expr_children(node).next().ok_or_else(|| self.not_static(node, "it has no operand."))?;
                match op.as_str() {
                    "!" => Ok(Static::Bool(!self.boolean(&inner)?)),
                    "-" => Err(self.not_static(node, "static values are never negative.")),
                    _ => Err(self.not_static(node, &format!("`{op}` is not a static operator."))),
                }
            }
            BIN_EXPR => self.binary(node),
            CALL_EXPR => self.fact(node),
            FOLD_EXPR => self.fold(node),
            _ => Err(self.not_static(node, "this form is not static.")),
        }
    }

    fn binary(&mut self, node: &SyntaxNode) -> Result<Static, Diag> {
        let operands: Vec<SyntaxNode> = expr_children(node).collect();
        let op = operator(node).map(|t| t.text().to_string()).unwrap_or_default();
        let [lhs, rhs] = operands.as_slice() else { return Err(self.not_static(node, "it needs two operands.")) };
        match op.as_str() {
            "&&" => Ok(Static::Bool(self.boolean(lhs)? && self.boolean(rhs)?)),
            "||" => Ok(Static::Bool(self.boolean(lhs)? || self.boolean(rhs)?)),
            "==" | "!=" => {
                let (a, b) = (self.eval(lhs)?, self.eval(rhs)?);
                let equal = match (&a, &b) {
                    (Static::Nat(x), Static::Nat(y)) => x == y,
                    (Static::Bool(x), Static::Bool(y)) => x == y,
                    (Static::Type(x), Static::Type(y)) => x.ty == y.ty,
                    _ => {
                        return Err(self.not_static(node, &format!("it compares {} with {}.", a.kind(), b.kind())));
                    }
                };
                Ok(Static::Bool(equal == (op == "==")))
            }
            "<" | "<=" | ">" | ">=" => {
                let (a, b) = (self.nat(lhs)?, self.nat(rhs)?);
                Ok(Static::Bool(match op.as_str() {
                    "<" => a < b,
                    "<=" => a <= b,
                    ">" => a > b,
                    _ => a >= b,
                }))
            }
            "+" | "-" | "*" | "/" | "%" => {
                let (a, b) = (self.nat(lhs)?, self.nat(rhs)?);
                nat_op(&op, a, b).map(Static::Nat).ok_or_else(|| {
                    self.not_static(
                        node,
                        &format!("{a} {op} {b} is not a natural (negative, too large, or a division by zero)."),
                    )
                })
            }
            _ => Err(self.not_static(node, &format!("`{op}` is not a static operator."))),
        }
    }

    /// A schema fact, `min` or `max`.
    fn fact(&mut self, node: &SyntaxNode) -> Result<Static, Diag> {
        let callee = expr_children(node).next().filter(|c| c.kind() == SyntaxKind::NAME_EXPR);
        let name = callee.map(|c| c.text().to_string().trim().to_string()).unwrap_or_default();
        let args: Vec<SyntaxNode> = node
            .children()
            .find(|c| c.kind() == SyntaxKind::ARG_LIST)
            .map(|list| expr_children(&list).collect())
            .unwrap_or_default();
        if matches!(name.as_str(), "min" | "max") {
            let [a, b] = args.as_slice() else {
                return Err(self.not_static(node, &format!("{name} takes two naturals.")));
            };
            let (a, b) = (self.nat(a)?, self.nat(b)?);
            return Ok(Static::Nat(if name == "min" { a.min(b) } else { a.max(b) }));
        }
        let [arg] = args.as_slice() else {
            return Err(self.not_static(node, &format!("`{name}` is not a fact of one operand.")));
        };
        let value = self.eval(arg)?;
        let ty = |this: &Self| {
            value.as_type().cloned().ok_or_else(|| {
                this.not_static(node, &format!("{name} asks about a type or a field, and this is {}.", value.kind()))
            })
        };
        let class = |this: &Self, test: fn(&Ty) -> bool| ty(this).map(|t| Static::Bool(test(&t.ty)));
        match name.as_str() {
            "bytes" | "bits" => {
                let t = ty(self)?;
                // The size of a record is a walk over its fields: a record that cannot be walked
                // is the wrong target, not a wrong expression.
                if matches!(t.ty, Ty::Record(_) | Ty::Enum(_)) {
                    self.schema.fields(&t)?;
                }
                let bytes = self
                    .schema
                    .bytes(&t.ty, 0)
                    .ok_or_else(|| self.not_static(node, &format!("{} has no static size.", t.text)))?;
                let value = if name == "bits" { bytes.checked_mul(8) } else { Some(bytes) };
                value
                    .map(Static::Nat)
                    .ok_or_else(|| self.not_static(node, &format!("the bits of {} do not fit 64 bits.", t.text)))
            }
            "offset" | "index" => match &value {
                Static::Field(f) if name == "index" => Ok(Static::Nat(f.index)),
                Static::Field(f) => f
                    .offset
                    .map(Static::Nat)
                    .ok_or_else(|| self.not_static(node, &format!("a field before {} has no static size.", f.name))),
                other => {
                    Err(self.not_static(node, &format!("{name} asks about a field, and this is {}.", other.kind())))
                }
            },
            "count" => {
                let t = ty(self)?;
                Ok(Static::Nat(self.schema.fields(&t)?.len() as u64))
            }
            "typeof" => match &value {
                Static::Field(f) => Ok(Static::Type(f.ty.clone())),
                Static::Type(t) => Ok(Static::Type(t.clone())),
                other => {
                    Err(self.not_static(node, &format!("typeof asks about a field, and this is {}.", other.kind())))
                }
            },
            "unsigned" => class(self, Ty::is_unsigned),
            "signed" => class(self, Ty::is_signed),
            "integer" => class(self, Ty::is_integer),
            "float" => class(self, Ty::is_float),
            "scalar" => class(self, Ty::is_scalar),
            "record" => class(self, |t| matches!(t, Ty::Record(_))),
            _ => Err(self.not_static(node, &format!("`{name}` is not a schema fact."))),
        }
    }

    /// A static `fold OP each … { e }` / `fold min each …`.
    fn fold(&mut self, node: &SyntaxNode) -> Result<Static, Diag> {
        let combiner = fold_combiner(node);
        let each = node
            .children()
            .find(|c| c.kind() == SyntaxKind::EACH_EXPR)
            .ok_or_else(|| self.not_static(node, "a fold joins an `each`."))?;
        let header = each_header(&each).ok_or_else(|| self.not_static(&each, "the `each` is incomplete."))?;
        let steps = self.steps(&header)?;
        let mut acc: Option<Static> = None;
        for step in steps {
            let mark = self.env.mark();
            for (name, value) in step {
                self.env.push(name, value);
            }
            let values: Result<Vec<Static>, Diag> = header.content_exprs().iter().map(|e| self.eval(e)).collect();
            self.env.reset(mark);
            for value in values? {
                acc = Some(match acc {
                    None => value,
                    Some(prev) => self.combine(node, &combiner, prev, value)?,
                });
            }
        }
        acc.ok_or_else(|| self.not_static(node, "the fold has no steps to join."))
    }

    fn combine(&self, node: &SyntaxNode, combiner: &str, a: Static, b: Static) -> Result<Static, Diag> {
        match (combiner, a, b) {
            ("&&", Static::Bool(x), Static::Bool(y)) => Ok(Static::Bool(x && y)),
            ("||", Static::Bool(x), Static::Bool(y)) => Ok(Static::Bool(x || y)),
            ("min", Static::Nat(x), Static::Nat(y)) => Ok(Static::Nat(x.min(y))),
            ("max", Static::Nat(x), Static::Nat(y)) => Ok(Static::Nat(x.max(y))),
            (op @ ("+" | "*"), Static::Nat(x), Static::Nat(y)) => {
                nat_op(op, x, y).map(Static::Nat).ok_or_else(|| self.not_static(node, "the fold does not fit 64 bits."))
            }
            (op, a, b) => {
                Err(self
                    .not_static(node, &format!("a static fold with `{op}` cannot join {} and {}.", a.kind(), b.kind())))
            }
        }
    }

    /// The steps of an `each`: per step, the static names it binds (the binder, then its
    /// `where` names in order).
    pub fn steps(&mut self, header: &EachHeader) -> Result<Vec<Vec<(Arc<str>, Static)>>, Diag> {
        let binder = header.binder.clone();
        let values: Vec<Static> = match &header.hi {
            Some(hi) => {
                let lo = self.nat(&header.source)?;
                let hi = self.nat(hi)?;
                if hi.saturating_sub(lo) > STEP_LIMIT {
                    return Err(refuse(
                        "E-EXPANSION-LIMIT",
                        format!(
                            "In recipe {}, `each {binder} in {lo}..{hi}` takes {} steps; a static iteration takes at most {STEP_LIMIT}.",
                            self.recipe,
                            hi - lo
                        ),
                    ));
                }
                (lo..hi.max(lo)).map(Static::Nat).collect()
            }
            None => match self.eval(&header.source)? {
                Static::Type(t) => {
                    let fields = self.schema.fields(&t)?;
                    if fields.len() as u64 > STEP_LIMIT {
                        return Err(refuse(
                            "E-EXPANSION-LIMIT",
                            format!(
                                "In recipe {}, `each {binder} in {}` walks {} fields; a static iteration takes at most {STEP_LIMIT} steps.",
                                self.recipe,
                                t.text,
                                fields.len()
                            ),
                        ));
                    }
                    fields.into_iter().map(Static::Field).collect()
                }
                other => {
                    return Err(self.not_static(
                        &header.source,
                        &format!("`each` walks a record's fields or a range lo..hi, and this is {}.", other.kind()),
                    ));
                }
            },
        };
        // Every step of every iteration, nested ones included, counts against one budget.
        let spent = self.env.spent.get().saturating_add(values.len() as u64);
        if spent > TOTAL_STEP_LIMIT {
            return Err(refuse(
                "E-EXPANSION-LIMIT",
                format!(
                    "Recipe {} takes more than {TOTAL_STEP_LIMIT} static steps for this derivation (nested iterations multiply); generate less.",
                    self.recipe
                ),
            ));
        }
        self.env.spent.set(spent);
        let mut steps = Vec::with_capacity(values.len());
        for value in values {
            let mark = self.env.mark();
            let mut bound = vec![(binder.clone(), value.clone())];
            self.env.push(binder.clone(), value);
            for (name, expr) in &header.wheres {
                let v = self.eval(expr);
                let v = match v {
                    Ok(v) => v,
                    Err(e) => {
                        self.env.reset(mark);
                        return Err(e);
                    }
                };
                self.env.push(name.clone(), v.clone());
                bound.push((name.clone(), v));
            }
            self.env.reset(mark);
            steps.push(bound);
        }
        Ok(steps)
    }
}

/// `a op b` over naturals, `None` where the result is not one.
fn nat_op(op: &str, a: u64, b: u64) -> Option<u64> {
    match op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "/" => a.checked_div(b),
        "%" => a.checked_rem(b),
        _ => None,
    }
}

/// A natural literal (`12`, `1_000`, `0x10`, `0b1`).
fn parse_natural(text: &str) -> Option<u64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let clean = clean.trim_end_matches(|c: char| c.is_ascii_alphabetic() && !c.is_ascii_hexdigit());
    if let Some(hex) = clean.strip_prefix("0x") {
        u64::from_str_radix(hex, 16).ok()
    } else if let Some(bin) = clean.strip_prefix("0b") {
        u64::from_str_radix(bin, 2).ok()
    } else {
        clean.parse().ok()
    }
}

/// What a `fold` joins with: an operator's text or a function path (`""` when none is written).
pub(crate) fn fold_combiner(node: &SyntaxNode) -> String {
    node.children()
        .find(|c| c.kind() == SyntaxKind::REDUCER)
        .map(|r| r.text().to_string().split_whitespace().collect::<String>())
        .unwrap_or_default()
}

/// The header of an `each` (item, field list, statement or expression): its binder, what it
/// walks, its `where` bindings, and the node its steps repeat.
#[derive(Debug, Clone)]
pub(crate) struct EachHeader {
    pub binder: Arc<str>,
    /// The record walked, or the low end of the range.
    pub source: SyntaxNode,
    /// The range's high end.
    pub hi: Option<SyntaxNode>,
    pub wheres: Vec<(Arc<str>, SyntaxNode)>,
    /// What each step repeats: a recipe body, a field list, a block or a list of expressions.
    pub content: Option<SyntaxNode>,
}

impl EachHeader {
    /// The expressions of an expression-level `each` (its `{ e, … }`).
    pub fn content_exprs(&self) -> Vec<SyntaxNode> {
        self.content.as_ref().map(|c| expr_children(c).collect()).unwrap_or_default()
    }
}

/// Reads an `each`'s header.
pub(crate) fn each_header(node: &SyntaxNode) -> Option<EachHeader> {
    use SyntaxKind::*;
    let binder: Arc<str> = Arc::from(node.children().find(|c| c.kind() == NAME)?.text().to_string().trim());
    let mut exprs = Vec::new();
    let mut wheres = Vec::new();
    let mut content = None;
    for child in node.children() {
        match child.kind() {
            RECIPE_WHERE => {
                for binding in child.children().filter(|c| c.kind() == WHERE_BINDING) {
                    let name = binding.children().find(|c| c.kind() == NAME)?.text().to_string();
                    let value = expr_children(&binding).next()?;
                    wheres.push((Arc::from(name.trim()), value));
                }
            }
            RECIPE_BODY | FIELD_LIST | BLOCK | ARG_LIST => content = Some(child),
            kind if is_expr(kind) && content.is_none() => exprs.push(child),
            _ => {}
        }
    }
    let mut exprs = exprs.into_iter();
    let source = exprs.next()?;
    Some(EachHeader { binder, source, hi: exprs.next(), wheres, content })
}
