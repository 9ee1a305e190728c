//! Implementations (language §27): `fn g(...) implements f [when c] [tune K in [...]] [needs(...)]`
//! declares an alternative implementation of the reference `f`, and `plan f use g;` selects it.
//!
//! [`implementation_def`] reads the clause; [`implementation_reference`] resolves the reference in
//! the implementation's module; [`implementations`] lists every implementation of the program
//! with its reference (what the rows join, and what a selection must name). These are facts of
//! declarations, read by the checker and the instance walk; the rules that judge them, which need
//! the checks and the rows, are `rules.rs`. The `when` condition itself is checked with the
//! implementation's body (`check/implements.rs`), and so is a call of an implementation by name
//! outside a test.
//!
//! The reference's row is the join of its own and every implementation's (`effects.rs` adds an
//! edge from the reference to each), so selecting one changes no row. [`selected`] is what the
//! lowering reads: the instance a plan selects, whose `when` the reference tests at its entry.
//! [`identity`] is an implementation's identity: the SHA-256 of the reference's tokens and its
//! own (comments and the `tune` list left out; an instance adds its values).
//!
//! `E-IMPL-NUMERICS` compares the roundings the two functions write; the roundings are the
//! storage-float conversions and `quantize` (language §42), which are tier 3 and refused before
//! this pass, so in this build no function writes one and the rule cannot fire (docs/decisions.md).

pub(crate) mod rules;

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};
use cairn_syntax::{SyntaxKind, SyntaxNode};
use sha2::{Digest, Sha256};

use crate::body::{BinaryOp, Body, Expr, ExprId, Literal, UnaryOp};
use crate::consts::Value;
use crate::db::Db;
use crate::diag::{Anchor, Diag, list};
use crate::input::{Item, ItemKind, Program};
use crate::instance::{Instance, InstanceArg};
use crate::scope::{Lookup, Resolver};
use crate::signature::fn_signature;

/// At most this many instances of one tuned implementation (language §27).
pub(crate) const TUNED_INSTANCES: usize = 16;

/// Device features `needs(...)` may name (language §41).
const FEATURES: [&str; 10] =
    ["device_lanes", "wmma", "mma_sync", "bf16", "cp_async", "clusters", "tma", "wgmma", "tcgen05", "mma_f8f6f4"];

/// One `tune` list: a natural and its values as written (`None`: not a natural below 2^64).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TuneList {
    pub name: Arc<str>,
    pub values: Arc<[Option<u64>]>,
}

/// An implementation's clause, as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImplDef {
    /// The reference, as a path.
    pub reference: Arc<[Arc<str>]>,
    pub when: bool,
    /// `tune` was written (possibly with no list that parsed).
    pub tuned: bool,
    pub tune: Arc<[TuneList]>,
    /// `needs(...)` was written, and the features it names.
    pub needs: Option<Arc<[Arc<str>]>>,
}

/// The `implements` clause of `item`, when it has one.
#[salsa::tracked(returns(ref))]
pub fn implementation_def(db: &dyn Db, item: Item) -> Option<ImplDef> {
    let node = item.syntax(db).syntax_node();
    let clause = ast::Fn::cast(node)?.implements_clause()?;
    let reference: Vec<Arc<str>> = clause
        .reference()
        .map(|p| p.segments().map(|s| Arc::from(s.syntax().text().to_string().trim())).collect())
        .unwrap_or_default();
    let tune_clause = clause.tune_clause();
    let tune: Vec<TuneList> = tune_clause
        .iter()
        .flat_map(|t| t.params())
        .map(|param| TuneList {
            name: Arc::from(param.name_ref().map(|n| n.syntax().text().to_string()).unwrap_or_default().trim()),
            values: param.values().map(|v| natural(v.text())).collect(),
        })
        .collect();
    let needs = clause.needs_clause().map(|n| {
        n.features().map(|f| Arc::from(f.syntax().text().to_string().trim())).collect::<Vec<Arc<str>>>().into()
    });
    Some(ImplDef {
        reference: Arc::from(reference),
        when: clause.when_clause().is_some(),
        tuned: tune_clause.is_some(),
        tune: Arc::from(tune),
        needs,
    })
}

fn natural(text: &str) -> Option<u64> {
    let text = text.replace('_', "");
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// True when `item` implements another function.
pub fn is_implementation(db: &dyn Db, item: Item) -> bool {
    implementation_def(db, item).is_some()
}

/// The function `item` implements, resolved in its module (any function of that name).
pub fn implementation_reference(db: &dyn Db, item: Item) -> Option<Item> {
    *reference_of(db, item)
}

#[salsa::tracked(returns(ref))]
fn reference_of(db: &dyn Db, item: Item) -> Option<Item> {
    let def = implementation_def(db, item).as_ref()?;
    let scope = Resolver::new(db);
    match scope.resolve_path(&scope.module_of(item), &def.reference, |k| k == ItemKind::Fn) {
        Lookup::Found(decl) => Some(decl.item),
        Lookup::None => None,
    }
}

/// Every implementation of the program with its reference, in declaration order.
#[salsa::tracked(returns(ref))]
pub fn implementations(db: &dyn Db, program: Program) -> Arc<[(Item, Item)]> {
    program
        .items(db)
        .iter()
        .filter(|e| e.key.kind == ItemKind::Fn && !e.library)
        .filter(|e| declaration_refusal(db, e.item).is_none())
        .filter_map(|e| implementation_reference(db, e.item).map(|r| (e.item, r)))
        .collect()
}

/// The implementations of `reference`, in declaration order.
pub fn implementations_of(db: &dyn Db, reference: Item) -> Vec<Item> {
    implementations(db, Program::get(db)).iter().filter(|(_, r)| *r == reference).map(|(g, _)| *g).collect()
}

/// The instances a tuned implementation lists (every combination of its lists, the first natural
/// varying slowest); empty for an untuned implementation or lists that break the rules.
pub fn tuned_instances(db: &dyn Db, item: Item) -> Vec<Arc<[InstanceArg]>> {
    let Some(def) = implementation_def(db, item) else { return Vec::new() };
    let generics = crate::generics::fn_generics(db, item);
    if !def.tuned || generics.is_empty() || tune_refusal(db, item, def).is_some() {
        return Vec::new();
    }
    let mut out: Vec<Vec<InstanceArg>> = vec![Vec::new()];
    for generic in generics.iter() {
        let Some(list) = def.tune.iter().find(|l| l.name == generic.name) else { return Vec::new() };
        let mut next = Vec::new();
        for prefix in &out {
            for value in list.values.iter().flatten() {
                let mut args = prefix.clone();
                args.push(InstanceArg::Nat(*value));
                next.push(args);
            }
        }
        out = next;
    }
    out.into_iter().map(Arc::from).collect()
}

/// What a selection plan (`plan f use g[v, ...];`) names, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selection {
    pub reference: Option<Item>,
    pub implementation: Option<Item>,
    /// The values given in brackets, as written.
    pub values: Arc<[Option<u64>]>,
    pub reference_written: Arc<str>,
    pub implementation_written: Arc<str>,
}

#[salsa::tracked(returns(ref))]
pub fn selection_def(db: &dyn Db, plan: Item) -> Option<Selection> {
    let node = plan.syntax(db).syntax_node();
    let plan_node = ast::Plan::cast(node)?;
    let chosen = plan_node.plan_use()?;
    let path = |p: Option<ast::Path>| -> Vec<Arc<str>> {
        p.map(|p| p.segments().map(|s| Arc::from(s.syntax().text().to_string().trim())).collect()).unwrap_or_default()
    };
    let reference_path = path(plan_node.target());
    let implementation_path = path(chosen.implementation());
    let scope = Resolver::new(db);
    let module = scope.module_of(plan);
    let find = |segments: &[Arc<str>]| match scope.resolve_path(&module, segments, |k| k == ItemKind::Fn) {
        Lookup::Found(decl) => Some(decl.item),
        Lookup::None => None,
    };
    Some(Selection {
        reference: find(&reference_path),
        implementation: find(&implementation_path),
        values: chosen.values().map(|v| natural(v.text())).collect(),
        reference_written: Arc::from(reference_path.join(".")),
        implementation_written: Arc::from(implementation_path.join(".")),
    })
}

/// The implementations a plan selects that declare `needs(...)`, with the features they name
/// (judged against the device target by a build: `E-IMPL-TARGET`, `E-EMULATE`).
pub fn selected_needs(db: &dyn Db) -> Vec<(Item, Arc<[Arc<str>]>)> {
    let mut out = Vec::new();
    for &(implementation, reference) in implementations(db, Program::get(db)).iter() {
        let Some(needs) = implementation_def(db, implementation).as_ref().and_then(|d| d.needs.clone()) else {
            continue;
        };
        if selected(db, reference).is_some_and(|chosen| chosen.item(db) == implementation) {
            out.push((implementation, needs));
        }
    }
    out
}

/// The instance a plan selects for `reference`, when a valid selection names one.
pub fn selected<'db>(db: &'db dyn Db, reference: Item) -> Option<Instance<'db>> {
    *selection_for(db, reference)
}

#[salsa::tracked(returns(ref))]
fn selection_for<'db>(db: &'db dyn Db, reference: Item) -> Option<Instance<'db>> {
    for entry in Program::get(db).items(db).iter().filter(|e| e.key.kind == ItemKind::Plan) {
        let Some(selection) = selection_def(db, entry.item) else { continue };
        if selection.reference != Some(reference) || selection_refusal(db, entry.item).is_some() {
            continue;
        }
        let implementation = selection.implementation?;
        let args: Vec<InstanceArg> = selection.values.iter().flatten().map(|&v| InstanceArg::Nat(v)).collect();
        return Some(Instance::new(db, implementation, Arc::from(args)));
    }
    None
}

/// The identity of an implementation instance: SHA-256 (hex) of its reference's significant
/// tokens, then its own without the `tune` list, then the instance's values.
pub fn identity(db: &dyn Db, instance: Instance<'_>) -> Option<String> {
    let item = instance.item(db);
    let reference = implementation_reference(db, item)?;
    let mut hasher = Sha256::new();
    hasher.update(tokens(&reference.syntax(db).syntax_node()).as_bytes());
    hasher.update(b"\n");
    hasher.update(tokens(&item.syntax(db).syntax_node()).as_bytes());
    for arg in instance.args(db).iter() {
        if let InstanceArg::Nat(v) = arg {
            hasher.update(format!("\n{v}").as_bytes());
        }
    }
    Some(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The significant tokens of `node`, one space apart, without a `tune` clause.
fn tokens(node: &SyntaxNode) -> String {
    let words: Vec<String> = node
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia())
        .filter(|t| !t.parent_ancestors().any(|a| a.kind() == SyntaxKind::TUNE_CLAUSE))
        .map(|t| t.text().to_string())
        .collect();
    words.join(" ")
}

/// The value of a `when` condition's expression `e` when it folds: literals and what `leaf`
/// answers for a name (a constant or natural the check resolved, a parameter whose value is
/// known), combined by the operators a condition may use. `None` when
/// any part is unknown or would overflow. One rule for the checker ("always false") and the
/// lowering (a call whose constant arguments make the condition true calls the implementation).
pub fn fold_condition(body: &Body, e: ExprId, leaf: &dyn Fn(ExprId) -> Option<Value>) -> Option<Value> {
    let fold = |x: ExprId| fold_condition(body, x, leaf);
    match body.expr(e) {
        Expr::Literal(Literal::Int { value: Some(v), .. }) => i128::try_from(*v).ok().map(Value::Int),
        Expr::Literal(Literal::Bool(b)) => Some(Value::Bool(*b)),
        Expr::Literal(Literal::Float { text }) => text.replace('_', "").parse::<f64>().ok().map(Value::Float),
        Expr::Paren(inner) => fold(*inner),
        Expr::Name(_) => leaf(e),
        Expr::Unary { op, operand } => match (op, fold(*operand)?) {
            (UnaryOp::Not, Value::Bool(b)) => Some(Value::Bool(!b)),
            (UnaryOp::Neg, Value::Int(n)) => Some(Value::Int(-n)),
            (UnaryOp::Neg, Value::Float(x)) => Some(Value::Float(-x)),
            _ => None,
        },
        Expr::Binary { op, lhs, rhs } => {
            let a = fold(*lhs)?;
            // `&&` and `||` decide on their left side alone where they can.
            match (op, &a) {
                (BinaryOp::And, Value::Bool(false)) => return Some(Value::Bool(false)),
                (BinaryOp::Or, Value::Bool(true)) => return Some(Value::Bool(true)),
                _ => {}
            }
            let b = fold(*rhs)?;
            Some(match (a, b) {
                (Value::Int(a), Value::Int(b)) => match op {
                    BinaryOp::Add => Value::Int(a.checked_add(b)?),
                    BinaryOp::Sub => Value::Int(a.checked_sub(b)?),
                    BinaryOp::Mul => Value::Int(a.checked_mul(b)?),
                    BinaryOp::Div => Value::Int(a.checked_div(b)?),
                    BinaryOp::Rem => Value::Int(a.checked_rem(b)?),
                    BinaryOp::BitAnd => Value::Int(a & b),
                    BinaryOp::BitOr => Value::Int(a | b),
                    BinaryOp::BitXor => Value::Int(a ^ b),
                    _ => Value::Bool(compare(*op, a, b)?),
                },
                (Value::Bool(a), Value::Bool(b)) => match op {
                    BinaryOp::And => Value::Bool(a && b),
                    BinaryOp::Or => Value::Bool(a || b),
                    BinaryOp::Eq | BinaryOp::Ne => Value::Bool(compare(*op, a, b)?),
                    _ => return None,
                },
                (Value::Float(a), Value::Float(b)) => Value::Bool(compare(*op, a, b)?),
                _ => return None,
            })
        }
        _ => None,
    }
}

/// A comparison's answer (`None` for an operator that is not a comparison).
fn compare<T: PartialOrd>(op: BinaryOp, a: T, b: T) -> Option<bool> {
    Some(match op {
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        _ => return None,
    })
}

/// The folded value of a constant declaration.
pub fn constant(db: &dyn Db, item: Item) -> Option<Value> {
    match crate::consts::constant_value(db, item).as_ref()? {
        crate::consts::ConstValue::Folded { value, .. } => Some(value.clone()),
        _ => None,
    }
}

pub(super) fn refuse(code: &'static str, message: String) -> Option<Diag> {
    Some(Diag::new(code, message, Anchor::Item))
}

/// The structural rules of one implementation: `E-IMPLEMENTS`, `E-IMPL-SIGNATURE`, `E-IMPL-PARAM`.
pub(crate) fn declaration_refusal(db: &dyn Db, item: Item) -> Option<Diag> {
    let def = implementation_def(db, item).as_ref()?;
    let scope = Resolver::new(db);
    let name = scope.full_name(item);
    let written = def.reference.join(".");
    let info = scope.info(item)?;
    if matches!(info.key.kind, ItemKind::Method | ItemKind::Member) {
        return refuse("E-IMPLEMENTS", format!("{name} is a trait member: an implementation is an ordinary function."));
    }
    let node = item.syntax(db).syntax_node();
    if ast::Fn::cast(node.clone()).is_some_and(|f| f.is_kernel()) {
        return refuse("E-IMPLEMENTS", format!("{name} is a kernel: an implementation is an ordinary function."));
    }
    let generics = crate::generics::fn_generics(db, item);
    if let Some(generic) = generics.iter().find(|g| !g.is_nat()) {
        return refuse(
            "E-IMPLEMENTS",
            format!(
                "{name} is generic over the type {}: an implementation has exactly its reference's types (only naturals, with `tune`).",
                generic.name
            ),
        );
    }
    let module = scope.module_of(item);
    let Some(reference) = implementation_reference(db, item) else {
        // A function of that name elsewhere is named with its module; say so.
        return refuse(
            "E-IMPLEMENTS",
            format!(
                "{name} implements {written}, and no function of that name is visible in {}: name a function of the implementation's own module.",
                if module.is_empty() { "the root module".to_string() } else { format!("module {module}") }
            ),
        );
    };
    let reference_name = scope.full_name(reference);
    if scope.module_of(reference) != module {
        return refuse(
            "E-IMPLEMENTS",
            format!("{name} implements {reference_name} of another module: declare the implementation in that module."),
        );
    }
    if is_implementation(db, reference) {
        return refuse(
            "E-IMPLEMENTS",
            format!(
                "{reference_name} is itself an implementation: implement its reference, {}, instead.",
                implementation_def(db, reference).as_ref().map(|d| d.reference.join(".")).unwrap_or_default()
            ),
        );
    }
    let reference_node = reference.syntax(db).syntax_node();
    let what = if crate::foreign::is_extern(db, reference) {
        Some("a foreign (extern) function")
    } else if ast::Fn::cast(reference_node).is_some_and(|f| f.is_kernel()) {
        Some("a kernel")
    } else if !crate::generics::fn_generics(db, reference).is_empty() {
        Some("a template")
    } else {
        None
    };
    if let Some(what) = what {
        return refuse(
            "E-IMPLEMENTS",
            format!("{reference_name} is {what}: a reference is an ordinary function that is not generic."),
        );
    }
    if let Some(needs) = &def.needs {
        if let Some(unknown) = needs.iter().find(|f| !FEATURES.contains(&&***f)) {
            return refuse(
                "E-IMPLEMENTS",
                format!("`needs({unknown})` names no device feature: the features are {}.", FEATURES.join(", ")),
            );
        }
    }
    if let Some(diag) = signature_refusal(db, item, reference) {
        return Some(diag);
    }
    tune_refusal(db, item, def)
}

/// `E-IMPL-SIGNATURE`: the parameters (names, types, extents) and result must be the reference's.
fn signature_refusal(db: &dyn Db, item: Item, reference: Item) -> Option<Diag> {
    let scope = Resolver::new(db);
    let (name, reference_name) = (scope.full_name(item), scope.full_name(reference));
    let (own, theirs) = (fn_signature(db, item), fn_signature(db, reference));
    if own.error.is_some() || theirs.error.is_some() {
        return None;
    }
    let shown = |s: &crate::signature::Signature| -> String {
        let params: Vec<String> = s.params.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect();
        format!("({}) -> {}", params.join(", "), s.ret)
    };
    let same_params = own.params.len() == theirs.params.len()
        && own.params.iter().zip(theirs.params.iter()).all(|(a, b)| a.name == b.name && a.ty == b.ty);
    if same_params && own.ret == theirs.ret {
        return None;
    }
    refuse(
        "E-IMPL-SIGNATURE",
        format!(
            "{name} has the signature {} and its reference {reference_name} has {}: an implementation takes exactly the reference's parameters (names, types, extents) and returns its result.",
            shown(own),
            shown(theirs)
        ),
    )
}

/// `E-IMPL-PARAM` for the `tune` lists of `item`.
fn tune_refusal(db: &dyn Db, item: Item, def: &ImplDef) -> Option<Diag> {
    let name = Resolver::new(db).full_name(item);
    let generics = crate::generics::fn_generics(db, item);
    let fail = |message: String| refuse("E-IMPL-PARAM", message);
    if def.tuned && generics.is_empty() {
        return fail(format!("{name} has no naturals to tune: remove the `tune` clause."));
    }
    if !def.tuned {
        return match generics.first() {
            Some(g) => fail(format!(
                "{name} has the natural {} and no `tune` list: write `tune {} in [4, 8]`.",
                g.name, g.name
            )),
            None => None,
        };
    }
    let mut total: usize = 1;
    for (index, list) in def.tune.iter().enumerate() {
        if !generics.iter().any(|g| g.name == list.name) {
            return fail(format!("`tune {} in [...]` names no natural of {name}: tune its naturals only.", list.name));
        }
        if def.tune[..index].iter().any(|l| l.name == list.name) {
            return fail(format!("`tune` lists {} twice: give each natural one list.", list.name));
        }
        if list.values.is_empty() {
            return fail(format!("The `tune` list of {} is empty: list the values to make instances at.", list.name));
        }
        for (i, value) in list.values.iter().enumerate() {
            match value {
                Some(v) if *v < 1 << 32 => {
                    if list.values[..i].contains(value) {
                        return fail(format!("The `tune` list of {} repeats {v}: list each value once.", list.name));
                    }
                }
                _ => return fail(format!("The `tune` list of {} holds a value of 2^32 or more.", list.name)),
            }
        }
        total = total.saturating_mul(list.values.len());
    }
    if let Some(missing) = generics.iter().find(|g| !def.tune.iter().any(|l| l.name == g.name)) {
        return fail(format!("The natural {} of {name} has no `tune` list: list its values.", missing.name));
    }
    if total > TUNED_INSTANCES {
        return fail(format!(
            "{name}'s `tune` lists make {total} instances; an implementation may have at most {TUNED_INSTANCES}."
        ));
    }
    None
}

/// `E-IMPL-USE` / `E-IMPL-PARAM` for one selection plan, judged alone.
pub(crate) fn selection_refusal(db: &dyn Db, plan: Item) -> Option<Diag> {
    let selection = selection_def(db, plan).as_ref()?;
    let (f, g) = (&selection.reference_written, &selection.implementation_written);
    let Some(reference) = selection.reference else {
        return refuse(
            "E-IMPL-USE",
            format!("`plan {f} use {g};` names {f}, and no function of that name is visible here."),
        );
    };
    let implementation = selection.implementation.filter(|&g| implementation_reference(db, g) == Some(reference));
    let Some(implementation) = implementation else {
        let known: Vec<String> =
            implementations_of(db, reference).iter().map(|&g| Resolver::new(db).full_name(g).to_string()).collect();
        let hint = if known.is_empty() {
            format!("{f} has no implementations")
        } else {
            format!("its implementations are {}", known.join(", "))
        };
        return refuse("E-IMPL-USE", format!("{g} is not an implementation of {f}: {hint}.")).map(|d| {
            d.with_details(vec![("implementation", list(&known.iter().map(String::as_str).collect::<Vec<_>>()))])
        });
    };
    let scope = Resolver::new(db);
    if !scope.visible_from(implementation, &scope.module_of(plan)) {
        return refuse(
            "E-PRIVATE",
            format!(
                "{g} is private to module {}: select it from that module, or make it `pub`.",
                scope.module_of(implementation)
            ),
        );
    }
    let def = implementation_def(db, implementation).as_ref()?;
    let generics = crate::generics::fn_generics(db, implementation);
    if generics.is_empty() {
        if !selection.values.is_empty() {
            return refuse(
                "E-IMPL-PARAM",
                format!("{g} is not tuned: select it without values (`plan {f} use {g};`)."),
            );
        }
        return None;
    }
    if selection.values.len() != generics.len() {
        let names: Vec<&str> = generics.iter().map(|g| &*g.name).collect();
        return refuse(
            "E-IMPL-PARAM",
            format!(
                "{g} is tuned over {}: select one instance with a value for each (`plan {f} use {g}[{}];`).",
                names.join(", "),
                vec!["v"; names.len()].join(", ")
            ),
        );
    }
    for (generic, value) in generics.iter().zip(selection.values.iter()) {
        let listed = def.tune.iter().find(|l| l.name == generic.name).map(|l| l.values.clone()).unwrap_or_default();
        if value.is_none() || !listed.contains(value) {
            let shown: Vec<String> = listed.iter().flatten().map(u64::to_string).collect();
            return refuse(
                "E-IMPL-PARAM",
                format!(
                    "{} = {} is not in {g}'s `tune` list for it ([{}]): select a listed value.",
                    generic.name,
                    value.map(|v| v.to_string()).unwrap_or_else(|| "?".into()),
                    shown.join(", ")
                ),
            );
        }
    }
    None
}
