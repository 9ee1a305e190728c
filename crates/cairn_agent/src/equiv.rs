//! Comparing a function between two checked programs: `identical-code` (the same MIR up to
//! renaming, itself and everything it calls), else the Z3 comparison of `cairn_smt`, with an
//! optional precondition compiled from CAIRN text; and the typed records a comparison is shown
//! as: the solver's [`Receipt`] and a witness (protocol §3.6:
//! `{"inputs":{param:value},"before":{"defined":bool,"return":v},"after":…}`).
//!
//! Invariant: a record's JSON keys come out in the order of its fields (serde_json keeps
//! insertion order in this workspace), so each record type is its documented key order. Only a
//! witness value, whose shape follows the function's types, is a `serde_json::Value`.
//!
//! Shared by `cairn diff`, `cairn verify`, the edit host's `preserve` contracts and `references`
//! evidence, and named choices. No IO: the native replay of a witness is the caller's (it needs
//! a linker and a process).

use std::collections::HashMap;
use std::sync::Arc;

use cairn_hir::{Item, SourceText, Workspace};
use cairn_mir::{Function, Inst, MTy};
use cairn_smt::{Comparison, Observed, Options, Request, Side, WValue};
use serde::Serialize;
use serde_json::Value;

use crate::named::Named;

/// A checked program's MIR, by symbol.
pub struct Lowered {
    pub functions: Vec<Arc<Function>>,
    by_symbol: HashMap<Arc<str>, usize>,
}

impl Lowered {
    /// The MIR of every function of an accepted program (`None` when lowering failed).
    pub fn of(workspace: &Workspace) -> Option<Lowered> {
        let program = cairn_mir::program_mir(workspace.db());
        if !program.errors.is_empty() {
            return None;
        }
        let by_symbol = program.functions.iter().enumerate().map(|(i, f)| (f.symbol.clone(), i)).collect();
        Some(Lowered { functions: program.functions, by_symbol })
    }

    /// The MIR of `item` and everything it calls, transitively, with what their lowering made
    /// (lanes, closures): what a comparison of `item` reads, proportional to that component.
    pub fn closure(workspace: &Workspace, item: Item) -> Option<Lowered> {
        let db = workspace.db();
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![item];
        let mut functions = Vec::new();
        while let Some(next) = work.pop() {
            if !seen.insert(next) {
                continue;
            }
            functions.push(cairn_mir::fn_mir(db, next).as_ref().ok()?.clone());
            // What its lowering made — lanes of its regions, closures, a `$when` — is its code too.
            let instance = cairn_hir::instance::Instance::monomorphic(db, next);
            functions.extend(cairn_mir::instance_extra_mir(db, instance).iter().cloned());
            // A template named bare (a `dyn` call's possible generic implementation) has no code
            // of its own: its instances are what runs, and the solver never calls it by name.
            work.extend(
                workspace.callees(next).into_iter().filter(|c| cairn_hir::generics::fn_generics(db, *c).is_empty()),
            );
        }
        let by_symbol = functions.iter().enumerate().map(|(i, f)| (f.symbol.clone(), i)).collect();
        Some(Lowered { functions, by_symbol })
    }

    /// The closure of an instance (a tuned instance `g[4]`): its own code and what its lowering
    /// made, then the closure of each function its body calls. `None` when something does not
    /// lower, or a callee is itself a template (its instance is not known here).
    pub fn instance_closure(workspace: &Workspace, instance: cairn_hir::instance::Instance<'_>) -> Option<Lowered> {
        let db = workspace.db();
        let mut functions = vec![cairn_mir::instance_mir(db, instance).as_ref().ok()?.clone()];
        functions.extend(cairn_mir::instance_extra_mir(db, instance).iter().cloned());
        let item = instance.item(db);
        for callee in workspace.callees(item) {
            if callee == item {
                continue;
            }
            if !cairn_hir::generics::fn_generics(db, callee).is_empty() {
                return None;
            }
            functions.extend(Lowered::closure(workspace, callee)?.functions);
        }
        let by_symbol = functions.iter().enumerate().map(|(i, f)| (f.symbol.clone(), i)).collect();
        Some(Lowered { functions, by_symbol })
    }

    pub fn get(&self, symbol: &str) -> Option<&Arc<Function>> {
        self.by_symbol.get(symbol).map(|&i| &self.functions[i])
    }

    /// Every function's digest of its emitted code up to renaming: locals, anchors and guarded
    /// expressions dropped, and each callee replaced by its own digest (computed once each).
    pub fn code_digests(&self) -> HashMap<String, String> {
        let mut memo = HashMap::new();
        for function in &self.functions {
            self.digest(&function.symbol, &mut memo, &mut Vec::new());
        }
        memo
    }

    fn digest(&self, symbol: &str, memo: &mut HashMap<String, String>, stack: &mut Vec<String>) -> String {
        if let Some(d) = memo.get(symbol) {
            return d.clone();
        }
        if let Some(depth) = stack.iter().position(|s| s == symbol) {
            // A cycle: named by its distance up the stack, which renaming does not change.
            return format!("cycle-{}", stack.len() - depth);
        }
        let Some(function) = self.get(symbol) else { return format!("missing:{symbol}") };
        stack.push(symbol.to_string());
        let mut stripped = strip(function);
        for block in &mut stripped.blocks {
            for inst in &mut block.insts {
                // A region's lanes and a device reduce's fold are code this function runs,
                // named by symbol as a callee is.
                match inst {
                    Inst::Call { callee, .. } | Inst::Parallel { lane: callee, .. } => {
                        let d = self.digest(callee, memo, stack);
                        *callee = Arc::from(d);
                    }
                    Inst::DeviceReduce { lane, fold, .. } => {
                        let d = self.digest(lane, memo, stack);
                        *lane = Arc::from(d);
                        let d = self.digest(fold, memo, stack);
                        *fold = Arc::from(d);
                    }
                    _ => {}
                }
            }
        }
        stripped.symbol = Arc::from("");
        stripped.name = Arc::from("");
        // A function taken as a value — a closure's code, an adapter, a `fn` value — is named in
        // an operand (`Fn("…")`): its own code stands in for its symbol, so a closure whose body
        // changed changes the digest of the function that lends it.
        let text = format!("{stripped:?}");
        let mut shown = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find("Fn(\"") {
            let open = at + 4;
            shown.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('"') else {
                rest = &rest[open..];
                break;
            };
            let named = &rest[open..open + close];
            if self.by_symbol.contains_key(named) {
                let d = self.digest(named, memo, stack);
                shown.push_str(&d);
            } else {
                shown.push_str(named);
            }
            rest = &rest[open + close..];
        }
        shown.push_str(rest);
        stack.pop();
        let d = sha256(shown.as_bytes());
        memo.insert(symbol.to_string(), d.clone());
        d
    }
}

/// A function's MIR without names, source anchors or guarded expressions' ids.
pub fn strip(function: &Function) -> Function {
    let mut function = function.clone();
    for local in &mut function.locals {
        local.name = None;
    }
    for block in &mut function.blocks {
        block.anchors.iter_mut().for_each(|a| *a = None);
        block.term_anchor = None;
        for inst in &mut block.insts {
            if let Inst::Guard(guard) = inst {
                guard.at = None;
            }
        }
    }
    function
}

/// Lower-case hex SHA-256 of some bytes ([`crate::canonical::sha256_hex`]).
pub fn sha256(bytes: &[u8]) -> String {
    crate::canonical::sha256_hex(bytes)
}

/// The symbol of a function of a workspace.
pub fn symbol_of(workspace: &Workspace, item: Item) -> Arc<str> {
    cairn_mir::lower_symbol(workspace.db(), item)
}

/// The symbols of the instances of template `item` that `lowered` holds (`cairn.twice[u8]`), in
/// its order: a template has no code of its own, so `diff` and `verify` compare these. Empty for
/// a function that is no template, or a template no instance of which is made.
pub fn instance_symbols(workspace: &Workspace, lowered: &Lowered, item: Item) -> Vec<Arc<str>> {
    if cairn_hir::generics::fn_generics(workspace.db(), item).is_empty() {
        return Vec::new();
    }
    let prefix = format!("{}[", symbol_of(workspace, item));
    lowered
        .functions
        .iter()
        .filter(|f| f.symbol.starts_with(&prefix) && f.symbol.ends_with(']') && !f.symbol.contains('$'))
        .map(|f| f.symbol.clone())
        .collect()
}

/// The function `written` names — `f`, or an instance `f[u8]` of a template — as its item and
/// the symbol of its code in `lowered`; `Err` says why it names none.
pub fn named_code(workspace: &Workspace, lowered: &Lowered, written: &str) -> Result<(Item, Arc<str>), String> {
    let (name, args) = match written.find('[') {
        Some(at) => (&written[..at], &written[at..]),
        None => (written, ""),
    };
    let Some(item) = workspace.function_named(name) else { return Err(format!("{name} is no function")) };
    let instances = instance_symbols(workspace, lowered, item);
    let generic = !cairn_hir::generics::fn_generics(workspace.db(), item).is_empty();
    let symbol: Arc<str> = Arc::from(format!("{}{args}", symbol_of(workspace, item)));
    match (generic, args.is_empty()) {
        (false, true) => Ok((item, symbol)),
        (false, false) => Err(format!("{name} is no template: name it without arguments")),
        (true, true) => {
            let shown: Vec<&str> = instances.iter().map(|s| &s[symbol.len()..]).collect();
            Err(if shown.is_empty() {
                format!("{name} is a template no instance of which is made: there is no code to compare")
            } else {
                format!("{name} is a template: name one of its instances, {name}{}", shown.join(&format!(", {name}")))
            })
        }
        (true, false) if instances.contains(&symbol) => Ok((item, symbol)),
        (true, false) => Err(format!("{written} is no instance this program makes")),
    }
}

/// A function's signature up to the names of it and its parameters (what callers depend on):
/// `fn ($0:usize, $1:ro<u8>[$0]) -> u32`.
pub fn signature_key(workspace: &Workspace, item: Item) -> String {
    let db = workspace.db();
    let text = cairn_hir::render::signature_text(db, item, true);
    let Some(open) = text.find('(') else { return text };
    let mut body = text[open..].to_string();
    let signature = cairn_hir::fn_signature(db, item);
    for (i, param) in signature.params.iter().enumerate() {
        body = replace_word(&body, &param.name, &format!("${i}"));
    }
    format!("fn {body}")
}

fn replace_word(text: &str, word: &str, by: &str) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before_ok = !rest[..at].chars().next_back().is_some_and(ident);
        let after_ok = !rest[at + word.len()..].chars().next().is_some_and(ident);
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { by } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The parameter list of `item` as written (`n:usize, xs:ro<u8>[n]`).
pub fn written_params(workspace: &Workspace, item: Item) -> Option<String> {
    let text = cairn_hir::render::signature_text(workspace.db(), item, false);
    let open = text.find('(')?;
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(text[open + 1..open + i].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// A precondition compiled into a program: the workspace holding `fn <name>(params) -> bool`.
pub struct Assumption {
    pub workspace: Workspace,
    pub lowered: Lowered,
    pub symbol: Arc<str>,
    pub text: String,
}

/// Why an assumption could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadAssumption(pub String);

/// The program's own sources (not the library's) a workspace was built from, in its file order.
pub fn sources_of(workspace: &Workspace) -> Vec<SourceText> {
    workspace
        .files()
        .iter()
        .filter(|f| !f.library)
        .map(|f| SourceText { name: f.name.clone(), text: f.text().to_string() })
        .collect()
}

/// Compiles `expr` (CAIRN text over the parameters of `function` of the checked `workspace`)
/// as a precondition; `"true"` and an empty text need none.
pub fn assumption(workspace: &Workspace, function: &str, expr: &str) -> Result<Option<Assumption>, BadAssumption> {
    let expr = expr.trim();
    if expr.is_empty() || expr == "true" {
        return Ok(None);
    }
    let item = workspace.function_named(function).ok_or_else(|| BadAssumption(format!("no function {function}")))?;
    let params = written_params(workspace, item).ok_or_else(|| BadAssumption("no parameter list".into()))?;
    let local = function.rsplit('.').next().unwrap_or(function);
    let name = format!("cairn_assume_{local}");
    let text = format!("\nfn {name}({params}) -> bool = ({expr});\n");
    // Added to the function's own file, so its module's names are in scope (the program's own
    // files come first in a workspace, so the index is the same among its sources).
    let (file, _) = workspace.entry_of(item).ok_or_else(|| BadAssumption("no file".into()))?;
    let mut sources = sources_of(workspace);
    sources[file].text.push_str(&text);
    let mut extended = Workspace::new(sources);
    if let Some(refusal) = extended.check().refusal {
        return Err(BadAssumption(format!(
            "the assumption does not check as a bool over the parameters: {} {}",
            refusal.first.code, refusal.first.message
        )));
    }
    let module = function.rsplit_once('.').map(|(m, _)| format!("{m}.")).unwrap_or_default();
    let assume_item = extended
        .function_named(&format!("{module}{name}"))
        .ok_or_else(|| BadAssumption("the assumption's function is missing".into()))?;
    let symbol = symbol_of(&extended, assume_item);
    let lowered = Lowered::closure(&extended, assume_item)
        .ok_or_else(|| BadAssumption("the assumption does not lower".into()))?;
    Ok(Some(Assumption { workspace: extended, lowered, symbol, text: expr.to_string() }))
}

/// A reference function: a program of its own, checked and lowered once.
pub struct Reference {
    pub workspace: Workspace,
    pub item: Item,
    pub symbol: Arc<str>,
    pub lowered: Lowered,
}

impl Reference {
    /// The function `name` (full, or its last segment) of the program `source`, which must
    /// compile and match the signature of `against_item` of `against` up to names. `Err` is
    /// the status the check ends in: `invalid-reference`, `invalid-contract` or `unknown`.
    pub fn load(source: &str, name: &str, against: &Workspace, against_item: Item) -> Result<Reference, &'static str> {
        let mut workspace =
            Workspace::new(vec![SourceText { name: "reference.cairn".into(), text: source.to_string() }]);
        if workspace.check().refusal.is_some() {
            return Err("invalid-reference");
        }
        let local = name.rsplit('.').next().unwrap_or(name);
        let item =
            workspace.function_named(name).or_else(|| workspace.function_named(local)).ok_or("invalid-reference")?;
        if signature_key(&workspace, item) != signature_key(against, against_item) {
            return Err("invalid-contract");
        }
        let lowered = Lowered::closure(&workspace, item).ok_or("unknown")?;
        let symbol = symbol_of(&workspace, item);
        Ok(Reference { workspace, item, symbol, lowered })
    }

    /// The reference's full name in its program.
    pub fn name(&self) -> String {
        self.workspace.full_name(self.item).to_string()
    }
}

/// Compares `old_symbol` of `old` with `new_symbol` of `new` under an optional precondition.
pub fn compare(
    old: &Lowered,
    old_symbol: &str,
    new: &Lowered,
    new_symbol: &str,
    assume: Option<&Assumption>,
    reference_must_not_trap: bool,
    options: Options,
) -> Comparison {
    cairn_smt::compare(&Request {
        old: Side { functions: &old.functions, symbol: old_symbol },
        new: Side { functions: &new.functions, symbol: new_symbol },
        assume: assume.map(|a| Side { functions: &a.lowered.functions, symbol: &a.symbol }),
        reference_must_not_trap,
        options,
    })
}

/// A witness value as JSON: integers and booleans as themselves, floats as numbers (or
/// `"NaN"`, `"inf"`, `"-inf"`), records as arrays of fields, variants as `{"variant": k}` with
/// their `payload`, views as arrays. A value's shape follows its type, so this one stays a
/// `Value`, built from typed pieces where the shape is fixed (a variant's object).
pub fn value_json(value: &WValue, ty: &MTy) -> Value {
    match (value, ty) {
        (WValue::Int(v), _) => {
            if let Ok(i) = i64::try_from(*v) {
                Value::from(i)
            } else if let Ok(u) = u64::try_from(*v) {
                Value::from(u)
            } else {
                Value::from(v.to_string())
            }
        }
        (WValue::Bool(b), _) => Value::from(*b),
        (WValue::Float(bits), MTy::Float(f)) => {
            let x = if *f == cairn_mir::FloatTy::F32 {
                f64::from(f32::from_bits(*bits as u32))
            } else {
                f64::from_bits(*bits)
            };
            if x.is_nan() {
                Value::from("NaN")
            } else if x.is_infinite() {
                Value::from(if x > 0.0 { "inf" } else { "-inf" })
            } else {
                Value::from(x)
            }
        }
        (WValue::Float(bits), _) => Value::from(*bits),
        (WValue::Tag(t), _) => Variant { variant: *t, payload: None }.value(),
        (WValue::Record(items), MTy::Record { fields, .. }) => {
            Value::Array(items.iter().zip(fields.iter()).map(|(v, t)| value_json(v, t)).collect())
        }
        (WValue::Sum(t, payload), MTy::Sum { variants, .. }) => {
            let payload = match (payload, variants.get(*t as usize)) {
                (Some(p), Some(Some(pt))) => Some(value_json(p, pt)),
                _ => None,
            };
            Variant { variant: *t, payload }.value()
        }
        (WValue::Array(items), MTy::View(e) | MTy::Array(e, _)) => {
            Value::Array(items.iter().map(|v| value_json(v, e)).collect())
        }
        (WValue::Void, _) => Value::Null,
        (other, _) => Value::from(format!("{other:?}")),
    }
}

/// The solver's receipt of one comparison (what its answer rests on): the digests of the two
/// sides, the domain compared over, each query's purpose, digest and answer, the files the
/// queries were written to (where the caller wrote them) and the Z3 that answered.
#[derive(Debug, Clone, Serialize)]
pub struct Receipt {
    pub reference_sha256: String,
    pub candidate_sha256: String,
    pub domain: String,
    pub queries: Vec<QueryReceipt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obligations: Option<Vec<String>>,
    pub z3: String,
}

/// One query of a receipt.
#[derive(Debug, Clone, Serialize)]
pub struct QueryReceipt {
    pub purpose: &'static str,
    pub sha256: String,
    pub answer: String,
}

/// The receipt of a comparison of `reference` against `candidate` (their digests) over
/// `domain`; `obligations` names the files its queries were written to, if a caller writes them.
pub fn receipt(
    reference: &str,
    candidate: &str,
    domain: &str,
    queries: &[cairn_smt::Query],
    obligations: Option<Vec<String>>,
) -> Receipt {
    Receipt {
        reference_sha256: reference.to_string(),
        candidate_sha256: candidate.to_string(),
        domain: domain.to_string(),
        queries: queries
            .iter()
            .map(|q| QueryReceipt { purpose: q.purpose, sha256: q.sha256(), answer: q.answer.clone() })
            .collect(),
        obligations,
        z3: cairn_smt::z3_version(),
    }
}

/// What one version did on a witness, as protocol §3.6 shows it: `defined` (`false` for a trap,
/// `null` when it could not be run), the `return` value, and what the view and borrow
/// parameters hold after the call (`leftovers`, absent when there is none); a trap and a run
/// that did not happen also say so in `outcome` (and why not, in `reason`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeRecord {
    pub defined: Option<bool>,
    #[serde(rename = "return")]
    pub returned: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Named::is_empty")]
    pub leftovers: Named<Value>,
}

/// A witness as protocol §3.6 shows it: the inputs by parameter, what the original (`before`)
/// and the new version (`after`) did on them, and what found it (`probe` or `solver`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WitnessRecord {
    pub inputs: Named<Value>,
    pub before: OutcomeRecord,
    pub after: OutcomeRecord,
    pub found_by: &'static str,
}

/// What one version did (an [`OutcomeRecord`]), its values read with `function`'s types.
pub fn outcome_record(observed: &Observed, function: &Function) -> OutcomeRecord {
    match observed {
        Observed::Trap => OutcomeRecord {
            defined: Some(false),
            returned: Value::Null,
            outcome: Some("trap"),
            reason: None,
            leftovers: Named::default(),
        },
        Observed::NotRun(why) => OutcomeRecord {
            defined: None,
            returned: Value::Null,
            outcome: Some("not-run"),
            reason: Some(why.clone()),
            leftovers: Named::default(),
        },
        Observed::Returned { value, leftovers } => OutcomeRecord {
            defined: Some(true),
            returned: value_json(value, &function.ret),
            outcome: None,
            reason: None,
            leftovers: leftovers
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let value = item.as_ref()?;
                    let decl = &function.locals[i];
                    Some((decl.name.as_deref().unwrap_or("?").to_string(), value_json(value, input_ty(&decl.ty))))
                })
                .collect(),
        },
    }
}

/// The type a parameter's witness value has: a borrow's value is its pointee's.
fn input_ty(ty: &MTy) -> &MTy {
    match ty {
        MTy::Ptr(inner) => inner,
        other => other,
    }
}

/// A witness as protocol §3.6 shows it (a [`WitnessRecord`]), its values read with the
/// original's types.
pub fn witness_record(witness: &cairn_smt::Witness, old: &Function) -> WitnessRecord {
    WitnessRecord {
        inputs: witness
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (name, value))| (name.clone(), value_json(value, input_ty(&old.locals[i].ty))))
            .collect(),
        before: outcome_record(&witness.before, old),
        after: outcome_record(&witness.after, old),
        found_by: witness.found_by,
    }
}

/// One line: the inputs and what each version does on them (a repair hint's words).
pub fn witness_sentence(witness: &cairn_smt::Witness, old: &Function) -> String {
    let inputs: Vec<String> = witness
        .inputs
        .iter()
        .enumerate()
        .map(|(i, (name, value))| format!("{name} = {}", value_json(value, input_ty(&old.locals[i].ty))))
        .collect();
    let does = |o: &Observed| match o {
        Observed::Trap => "traps".to_string(),
        Observed::NotRun(why) => format!("could not be run ({why})"),
        Observed::Returned { value, leftovers } => {
            let mut s = if old.ret == MTy::Void {
                "returns".to_string()
            } else {
                format!("returns {}", value_json(value, &old.ret))
            };
            for (i, item) in leftovers.iter().enumerate() {
                if let Some(v) = item {
                    let ty = match &old.locals[i].ty {
                        MTy::Ptr(inner) => (**inner).clone(),
                        other => other.clone(),
                    };
                    s.push_str(&format!(
                        ", leaving {} = {}",
                        old.locals[i].name.as_deref().unwrap_or("?"),
                        value_json(v, &ty)
                    ));
                }
            }
            s
        }
    };
    format!(
        "On {}: the original {}, the new version {}.",
        if inputs.is_empty() { "no input".to_string() } else { inputs.join(", ") },
        does(&witness.before),
        does(&witness.after)
    )
}

/// A variant's value: its tag, and its payload when it carries one.
#[derive(Serialize)]
struct Variant {
    variant: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<Value>,
}

impl Variant {
    fn value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
