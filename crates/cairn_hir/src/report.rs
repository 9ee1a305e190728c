//! The whole-program check, in the original's phase order, with every-refusal semantics
//! (tools.md §3.1).
//!
//! Phases: duplicate declarations and unknown imports (reported alone, as the original raises
//! them before checking), builtin names, type declarations (records, then tag-only enums, then
//! sums), constants (stopping after the first refused one), signatures (no body is checked when
//! one is refused), bodies, then ceilings and operand order for every function whose row is known.
//! The first refusal met is exactly the one a check stopping at the first would report; the others
//! are independent ones (one per declaration), and functions left without a verdict are counted.
//! Positions are anchors here; the workspace turns them into files, lines and columns.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::consts::{ConstValue, constants};
use crate::db::Db;
use crate::decl::{enum_def, generic_params, record_def};
use crate::diag::{Anchor, Diag};
use crate::effects::{fn_ceiling, is_function, rows};
use crate::input::{Item, ItemKind, Program};
use crate::order::fn_order;
use crate::requested::FUNCTION_LIMIT;
use crate::scope::scope;
use crate::signature::fn_signature;
use crate::types::Ty;

/// The outcome of checking the program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckResult {
    /// Refusals: the first is the stop-mode refusal; the rest are further independent ones, in
    /// the order met (the workspace sorts them by position).
    pub refusals: Vec<(Item, Diag)>,
    /// When the check stopped after the first refusal on purpose (a refusal the original raises
    /// before checking anything else).
    pub alone: bool,
    /// The program's own functions that got no verdict because of a refusal.
    pub not_judged: usize,
    /// Functions of the program, library ones included (tests excluded).
    pub functions: usize,
    pub library_functions: usize,
}

/// What the whole-program pass found, phase by phase, before duplicates are dropped.
///
/// Kept apart from [`CheckResult`] so that the workspace can update it after an edit of one
/// body without running the pass again: the body, ceiling and order phases are maps keyed by the
/// function's index in declaration order, and [`ProgramRecord::compose`] turns the record into
/// the result exactly as the pass would have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramRecord {
    pub functions: usize,
    pub library_functions: usize,
    /// Refusals of the phases before the bodies, in the order met (already without duplicates).
    pub early: Vec<(Item, Diag)>,
    /// True when `early` holds a refusal the original raises alone.
    pub alone: bool,
    /// True when the bodies were checked (no refusal before them); otherwise only `early` counts.
    pub bodies_checked: bool,
    /// Functions left without a verdict.
    pub not_judged: usize,
    pub bodies: BTreeMap<u32, (Item, Diag)>,
    pub ceilings: BTreeMap<u32, (Item, Diag)>,
    pub orders: BTreeMap<u32, (Item, Diag)>,
    /// Functions whose ceiling or order refusal is a knock-on of another refused function they
    /// reach: not reported, and counted in `not_judged` (unless the refusal is the first).
    pub knocked: BTreeSet<u32>,
}

impl ProgramRecord {
    /// The result: early refusals, or the body, ceiling and order refusals in the pass's order,
    /// each (code, message) once (the first refusal always kept).
    pub fn compose(&self) -> CheckResult {
        let mut result = CheckResult {
            refusals: self.early.clone(),
            alone: self.alone,
            not_judged: self.not_judged,
            functions: self.functions,
            library_functions: self.library_functions,
        };
        if !self.bodies_checked {
            return result;
        }
        // A refusal is said once per place: the same code and message at the same anchor of the
        // same declaration.
        let mut seen: HashSet<(&'static str, &Arc<str>, Item, crate::diag::Anchor)> = HashSet::new();
        let knocked = &self.knocked;
        let ceilings = self.ceilings.iter().filter(|(key, _)| !knocked.contains(*key)).map(|(_, v)| v);
        let orders = self.orders.iter().filter(|(key, _)| !knocked.contains(*key)).map(|(_, v)| v);
        for (item, diag) in self.bodies.values().chain(ceilings).chain(orders) {
            if seen.insert((diag.code, &diag.message, *item, diag.anchor)) || result.refusals.is_empty() {
                result.refusals.push((*item, diag.clone()));
            }
        }
        result
    }
}

/// The record of the whole-program pass over the database.
pub fn program_record(db: &dyn Db) -> &ProgramRecord {
    program_check(db, Program::get(db))
}

#[salsa::tracked(returns(ref))]
pub fn program_check(db: &dyn Db, program: Program) -> ProgramRecord {
    let entries = program.items(db);
    let mut result = ProgramRecord::default();
    for entry in entries.iter().filter(|e| matches!(e.key.kind, ItemKind::Fn | ItemKind::Method)) {
        result.functions += 1;
        if entry.library {
            result.library_functions += 1;
        }
    }
    let own = own_functions(db, program);

    // The function limit (language §1): past it nothing else is judged.
    if result.functions > FUNCTION_LIMIT
        && let Some(entry) = entries.iter().filter(|e| e.key.kind == ItemKind::Fn).nth(FUNCTION_LIMIT)
    {
        let diag = Diag::new(
            "E-EXPANSION-LIMIT",
            format!(
                "The program has {} functions; a program may have at most {FUNCTION_LIMIT}, instances included. Split it into separate programs.",
                result.functions
            ),
            Anchor::Item,
        );
        result.early.push((entry.item, diag));
        result.alone = true;
        result.not_judged = own.len();
        return result;
    }

    // Declarations the original refuses while reading the program: reported alone. Recipes and
    // derivations come first: what a refused derivation would have generated is missing, and
    // every refusal about that would be a knock-on.
    if let Some(refusal) = crate::recipes::derivation_refusal(db, program)
        .or_else(|| duplicates(db, program))
        .or_else(|| unknown_import(db))
        .or_else(|| builtin_names(db, program))
    {
        result.early.push(refusal);
        result.alone = true;
        result.not_judged = own.len();
        return result;
    }

    // Declarations of later tiers: nothing else can be judged soundly beside them.
    if let Some(entry) = entries.iter().find(|e| matches!(e.key.kind, ItemKind::Unsupported(_))) {
        let ItemKind::Unsupported(kind) = entry.key.kind else { unreachable!("filtered above") };
        let diag = Diag::new(
            "E-UNSUPPORTED",
            format!("{} belong to a later tier, which this checker does not check yet.", plural_kind(kind)),
            Anchor::Item,
        );
        result.early.push((entry.item, diag));
        result.alone = true;
        result.not_judged = own.len();
        return result;
    }

    let mut refused_items: HashSet<Item> = HashSet::new();
    let mut seen: HashSet<(&'static str, Arc<str>)> = HashSet::new();
    let mut push = |early: &mut Vec<(Item, Diag)>, item: Item, diag: Diag, refused: &mut HashSet<Item>| {
        refused.insert(item);
        if seen.insert((diag.code, diag.message.clone())) || early.is_empty() {
            early.push((item, diag));
        }
    };

    // Types: records, then tag-only enums, then sums (generic ones only when used).
    let mut layout = Layout { db, done: HashSet::new(), active: Vec::new() };
    let kinds = [0, 1, 2];
    for kind in kinds {
        for entry in entries.iter() {
            let matches = match (kind, entry.key.kind) {
                (0, ItemKind::Struct) => true,
                (1, ItemKind::Enum) => enum_def(db, entry.item).tag_only,
                (2, ItemKind::Enum) => !enum_def(db, entry.item).tag_only,
                _ => false,
            };
            if !matches || !generic_params(db, entry.item).is_empty() {
                continue;
            }
            if let Some(diag) = layout.lay_out(entry.item) {
                push(&mut result.early, entry.item, diag, &mut refused_items);
            }
        }
    }
    if !result.early.is_empty() {
        result.not_judged = own.len();
        return result;
    }

    // Constants, in declaration order; the first refusal ends the phase.
    let folded = constants(db);
    for &item in &folded.order {
        if let Some(ConstValue::Refused(diag)) = folded.get(item) {
            push(&mut result.early, item, diag.clone(), &mut refused_items);
            break;
        }
    }

    // Signatures, then families (which read their templates' signatures).
    for entry in entries.iter().filter(|e| matches!(e.key.kind, ItemKind::Fn | ItemKind::Method | ItemKind::Member)) {
        if let Some(diag) = &fn_signature(db, entry.item).error {
            push(&mut result.early, entry.item, diag.clone(), &mut refused_items);
        }
    }
    if result.early.is_empty()
        && let Some((item, diag)) = crate::family::families_refusal(db)
    {
        push(&mut result.early, item, diag, &mut refused_items);
    }
    // One declaration per C symbol (language §45): two could give one symbol two signatures.
    if result.early.is_empty() {
        let mut symbols: HashMap<Arc<str>, Item> = HashMap::new();
        for entry in entries.iter().filter(|e| e.key.kind == ItemKind::Fn) {
            let Some(symbol) = crate::foreign::is_extern(db, entry.item)
                .then(|| crate::foreign::extern_symbol(db, entry.item))
                .flatten()
            else {
                continue;
            };
            if let Some(first) = symbols.insert(symbol.clone(), entry.item) {
                let first = crate::scope::Resolver::new(db).full_name(first);
                let diag = Diag::new(
                    "E-DUPLICATE",
                    format!(
                        "The C symbol {symbol} is declared again (first as {first}): declare each C function once and call that declaration."
                    ),
                    Anchor::Item,
                );
                push(&mut result.early, entry.item, diag, &mut refused_items);
                break;
            }
        }
    }
    // Impls against their traits, then coherence (language §20).
    if result.early.is_empty() {
        for entry in entries.iter().filter(|e| e.key.kind == ItemKind::Impl) {
            if let Some(diag) = crate::impl_rules::impl_refusal(db, entry.item) {
                push(&mut result.early, entry.item, diag.clone(), &mut refused_items);
                break;
            }
        }
    }
    if result.early.is_empty()
        && let Some((item, diag)) = crate::impl_rules::coherence_refusal(db)
    {
        push(&mut result.early, item, diag, &mut refused_items);
    }
    // Plans (language §26): each alone, then a second plan of one function.
    if result.early.is_empty() {
        for entry in entries.iter().filter(|e| e.key.kind == ItemKind::Plan) {
            if let Some(diag) = crate::plans::plan_refusal(db, entry.item) {
                push(&mut result.early, entry.item, diag, &mut refused_items);
                break;
            }
        }
    }
    if result.early.is_empty()
        && let Some((item, diag)) = crate::plans::second_plans(db)
    {
        push(&mut result.early, item, diag, &mut refused_items);
    }
    if !result.early.is_empty() {
        result.not_judged = own.iter().filter(|f| !refused_items.contains(f)).count();
        return result;
    }

    // Bodies, then ceilings and operand order for functions whose rows are known. The phases
    // are recorded whole; `compose` drops repeated messages.
    result.bodies_checked = true;
    let rows = rows(db);
    for (index, &function) in rows.functions.iter().enumerate() {
        if let Some(diag) = crate::requested::body_refusal(db, function) {
            result.bodies.insert(index as u32, (function, diag));
        }
    }
    // Instances count toward the function limit (language §19).
    let requested = crate::requested::requested_instances(db, program);
    let declared = entries.iter().filter(|e| e.key.kind == ItemKind::Fn).count();
    if result.bodies.is_empty() && (requested.over_limit || declared + requested.order.len() > FUNCTION_LIMIT) {
        let at = if requested.over_limit {
            requested.order.len() - 1
        } else {
            FUNCTION_LIMIT.saturating_sub(declared).min(requested.order.len().saturating_sub(1))
        };
        let (template, _) = &requested.order[at];
        let name = crate::instance::Instance::new(db, *template, requested.order[at].1.clone()).display(db);
        let message = if requested.over_limit && declared + requested.order.len() <= FUNCTION_LIMIT {
            format!(
                "Instantiating {name} nests type arguments more than {} deep: a template that instantiates itself at ever larger types never stops; make the recursion's type fixed.",
                crate::requested::MAX_TYPE_DEPTH
            )
        } else {
            format!(
                "Instantiating {name} takes the program past {FUNCTION_LIMIT} functions, instances included: split the program, or instantiate fewer templates."
            )
        };
        let diag = Diag::new("E-EXPANSION-LIMIT", message, Anchor::Item);
        if let Some(&index) = rows.index.get(template) {
            result.bodies.insert(index, (*template, diag));
        }
    }
    if result.bodies.is_empty() {
        for (index, &function) in rows.functions.iter().enumerate() {
            if let Some(diag) = crate::requested::uninstantiated_refusal(db, function) {
                result.bodies.insert(index as u32, (function, diag));
            }
        }
    }
    // Implementation rules (language §27) are judged only for a program every other rule
    // accepted (tools.md §3.1); until they pass, a row that joins an implementation's is not
    // judged: the ceilings and order of the functions reaching a reference with implementations
    // wait for them, and are not judged when they refuse.
    let implementation = if result.bodies.is_empty() { implementation_phase(db, program) } else { None };
    let waiting = match &implementation {
        Some(_) => joining_functions(db, &rows),
        None => HashSet::new(),
    };
    let mut unjudged: HashSet<Item> = HashSet::new();
    for (index, &function) in rows.functions.iter().enumerate() {
        if result.bodies.contains_key(&(index as u32)) {
            continue;
        }
        if rows.row(function).is_none() || waiting.contains(&function) {
            unjudged.insert(function);
            continue;
        }
        if let Some(diag) = fn_ceiling(db, function) {
            result.ceilings.insert(index as u32, (function, diag.clone()));
        }
    }
    for (index, &function) in rows.functions.iter().enumerate() {
        let key = index as u32;
        if result.bodies.contains_key(&key) || result.ceilings.contains_key(&key) || unjudged.contains(&function) {
            continue;
        }
        if let Some(diag) = fn_order(db, function) {
            result.orders.insert(key, (function, diag.clone()));
        }
    }
    // Knock-ons: a ceiling or order refusal of a function that reaches another refused function
    // is not reported (the first refusal of all excepted); the function joins `not_judged`.
    let refused: HashSet<Item> = result
        .bodies
        .values()
        .chain(result.ceilings.values())
        .chain(result.orders.values())
        .map(|(item, _)| *item)
        .collect();
    // The first refusal of all: the first body refusal, else the first ceiling refusal, else the
    // first order refusal (a function refused for its ceiling is not audited for order).
    let first = match result.bodies.keys().next() {
        Some(_) => None,
        None => result.ceilings.keys().next().or_else(|| result.orders.keys().next()).copied(),
    };
    let candidates: BTreeSet<u32> = result.ceilings.keys().chain(result.orders.keys()).copied().collect();
    for key in candidates {
        let function = rows.functions[key as usize];
        if first != Some(key) && reaches_refused(db, function, &refused) {
            result.knocked.insert(key);
        }
    }
    let knocked_items: HashSet<Item> = result.knocked.iter().map(|k| rows.functions[*k as usize]).collect();
    result.not_judged = own.iter().filter(|f| unjudged.contains(f) || knocked_items.contains(f)).count();
    // What the implementation rules read — signatures, the clauses, rows and call edges —
    // moves only with edits that take the whole pass, so the record stays right after a body
    // edit the workspace brings it up to date from.
    if result.ceilings.is_empty()
        && result.orders.is_empty()
        && let Some(refusal) = implementation
    {
        result.early.push(refusal);
    }
    result
}

/// The functions whose rows join an implementation's: the references with implementations and
/// every function that reaches one.
fn joining_functions(db: &dyn Db, rows: &crate::effects::Rows) -> HashSet<Item> {
    let mut out: HashSet<Item> = HashSet::new();
    let mut work: Vec<Item> =
        crate::implementations::implementations(db, Program::get(db)).iter().map(|&(_, reference)| reference).collect();
    while let Some(function) = work.pop() {
        if out.insert(function) {
            work.extend(rows.callers_of(function));
        }
    }
    out
}

/// The first refusal of the implementation rules: each implementation's structural rules, each
/// selection, a second selection of one reference, then what needs the rows.
fn implementation_phase(db: &dyn Db, program: Program) -> Option<(Item, Diag)> {
    use crate::implementations as imp;
    let entries = program.items(db);
    // Methods too: a trait member cannot be an implementation (`E-IMPLEMENTS`).
    let functions = entries.iter().filter(|e| matches!(e.key.kind, ItemKind::Fn | ItemKind::Method) && !e.library);
    let implementations: Vec<Item> = functions.filter(|e| imp::is_implementation(db, e.item)).map(|e| e.item).collect();
    for &item in &implementations {
        if let Some(diag) = imp::rules::implementation_refusal(db, item) {
            return Some((item, diag));
        }
    }
    for entry in entries.iter().filter(|e| e.key.kind == ItemKind::Plan) {
        if let Some(diag) = imp::selection_refusal(db, entry.item) {
            return Some((entry.item, diag));
        }
    }
    if let Some(found) = imp::rules::second_selection(db) {
        return Some(found);
    }
    implementations.iter().find_map(|&item| imp::rules::row_refusal(db, item).map(|diag| (item, diag)))
}

/// True when `function` calls, directly or through others, a function in `refused` other than
/// itself.
fn reaches_refused(db: &dyn Db, function: Item, refused: &HashSet<Item>) -> bool {
    let mut seen: HashSet<Item> = HashSet::from([function]);
    let mut stack: Vec<Item> = vec![function];
    while let Some(current) = stack.pop() {
        for edge in crate::effects::fn_summary(db, current).calls.iter() {
            if edge.callee != function && refused.contains(&edge.callee) {
                return true;
            }
            if seen.insert(edge.callee) {
                stack.push(edge.callee);
            }
        }
    }
    false
}

fn plural_kind(kind: cairn_syntax::SyntaxKind) -> &'static str {
    use cairn_syntax::SyntaxKind::*;
    match kind {
        TRAIT => "Traits",
        IMPL => "Trait implementations",
        EXTERN_FN => "Foreign (`extern`) functions",
        FAMILY => "Families",
        RECIPE => "Recipes",
        DERIVE => "Derivations",
        PLAN => "Plans",
        LAYOUT => "Layouts",
        _ => "These declarations",
    }
}

/// The program's own functions and tests (library ones excluded).
fn own_functions(db: &dyn Db, program: Program) -> Vec<Item> {
    program.items(db).iter().filter(|e| is_function(e.key.kind) && !e.library).map(|e| e.item).collect()
}

/// The name a declaration declares, as an anchor (its first token when it has no name node).
fn name_anchor(db: &dyn Db, item: Item) -> Anchor {
    let node = item.syntax(db).syntax_node();
    let start = node.text_range().start();
    match node.children().find(|c| c.kind() == cairn_syntax::SyntaxKind::NAME) {
        Some(name) => Anchor::Range(name.text_range() - start),
        None => Anchor::Item,
    }
}

/// `E-DUPLICATE` (two declarations of one name in one module) and `E-TEST` (two tests of one name
/// in one module): the first met in declaration order, at the second declaration.
fn duplicates(db: &dyn Db, program: Program) -> Option<(Item, Diag)> {
    let scope = scope(db);
    let mut names: HashMap<(Arc<str>, bool), Item> = HashMap::new();
    for entry in program.items(db).iter() {
        let test = entry.key.kind == ItemKind::Test;
        if !(entry.key.kind.declares_name() || test) || entry.key.name.is_empty() {
            continue;
        }
        let full = scope.info(entry.item).map(|i| i.full_name.clone())?;
        if let Some(first) = names.insert((full.clone(), test), entry.item) {
            // A generated declaration is listed after every written one: the derivation collides.
            if let Some(origin) = entry.origin {
                let diag = Diag::new(
                    "E-DERIVE-COLLISION",
                    format!(
                        "This derivation generates {full}, which is already declared; rename the existing declaration or derive into another module."
                    ),
                    Anchor::Item,
                );
                return Some((origin, diag));
            }
            let diag = if test {
                Diag::new(
                    "E-TEST",
                    format!("A module holds one test named {}.", entry.key.name),
                    name_anchor(db, entry.item),
                )
            } else {
                Diag::new(
                    "E-DUPLICATE",
                    format!("{full} is declared twice; a module declares each name once."),
                    name_anchor(db, entry.item),
                )
            };
            return Some((entry.item, diag.with_related_in(first, name_anchor(db, first), "first declared here")));
        }
    }
    // An unqualified import colliding with a declaration of the importing (non-root) module.
    for import in &scope.imports {
        if import.in_module.is_empty() {
            continue;
        }
        for name in import.names.iter() {
            let local: Arc<str> = Arc::from(format!("{}.{name}", import.in_module));
            if scope.by_full_name.contains_key(&local) {
                return Some((
                    import.item,
                    Diag::new(
                        "E-DUPLICATE",
                        format!("The import of {name} collides with {local}; rename one of them."),
                        Anchor::Item,
                    ),
                ));
            }
        }
    }
    None
}

/// `E-IMPORT` for a module neither the program nor the library has.
fn unknown_import(db: &dyn Db) -> Option<(Item, Diag)> {
    let scope = scope(db);
    scope.imports.iter().find(|i| !i.resolved).map(|import| {
        if crate::library::LATER_MODULES.contains(&&*import.module) {
            return (
                import.item,
                Diag::new(
                    "E-UNSUPPORTED",
                    format!("{} belongs to the standard library of a later tier, which this build does not package yet.", import.module),
                    Anchor::Item,
                ),
            );
        }
        (
            import.item,
            Diag::new(
                "E-IMPORT",
                format!(
                    "No module {} exists: import a module of this project or a packaged std module (nothing is downloaded).",
                    import.module
                ),
                Anchor::Item,
            ),
        )
    })
}

/// `E-BUILTIN-NAME`: a root declaration named like a builtin (functions, then types, then
/// constants).
fn builtin_names(db: &dyn Db, program: Program) -> Option<(Item, Diag)> {
    let groups: [&[ItemKind]; 3] = [&[ItemKind::Fn], &[ItemKind::Struct, ItemKind::Enum], &[ItemKind::Const]];
    for kinds in groups {
        for entry in program.items(db).iter().filter(|e| kinds.contains(&e.key.kind) && e.key.module.is_empty()) {
            let name = &*entry.key.name;
            let builtin = crate::builtins::Builtin::from_name(name).is_some_and(|b| {
                matches!(b.binding(), crate::builtins::Binding::Hard | crate::builtins::Binding::TypeName)
            }) || Ty::scalar_named(name).is_some();
            if builtin {
                return Some((
                    entry.item,
                    Diag::new(
                        "E-BUILTIN-NAME",
                        format!("{name} is a builtin and cannot be redeclared; choose another name."),
                        Anchor::Item,
                    ),
                ));
            }
        }
    }
    None
}

/// Lays out record and sum types, finding a type that contains itself by value.
struct Layout<'db> {
    db: &'db dyn Db,
    done: HashSet<Item>,
    active: Vec<Item>,
}

impl Layout<'_> {
    /// The first refusal met laying out `item` (its own rules, then containment).
    fn lay_out(&mut self, item: Item) -> Option<Diag> {
        if self.done.contains(&item) {
            return None;
        }
        self.active.push(item);
        let result = self.members(item);
        self.active.pop();
        self.done.insert(item);
        result
    }

    fn members(&mut self, item: Item) -> Option<Diag> {
        let db = self.db;
        let (error, members, payloads): (Option<Diag>, Vec<Ty>, bool) =
            match crate::scope::scope(db).info(item).map(|i| i.key.kind) {
                Some(ItemKind::Struct) => {
                    let def = record_def(db, item);
                    (def.error.clone(), def.fields.iter().map(|(_, t)| t.clone()).collect(), false)
                }
                Some(ItemKind::Enum) => {
                    let def = enum_def(db, item);
                    (def.error.clone(), def.variants.iter().filter_map(|(_, p)| p.clone()).collect(), true)
                }
                _ => (None, Vec::new(), false),
            };
        if let Some(error) = error {
            return Some(error);
        }
        // The types a field or payload forms keep their records' promises (language §19.1).
        if let Some((code, fact)) = members.iter().find_map(|t| crate::traits::formed_bounds(db, t)) {
            return Some(Diag::new(code, format!("{fact}."), Anchor::Item));
        }
        for member in members {
            // An owner's elements live on the heap: reached through a `Buf`, a type starts a new
            // chain of containment (a tree's `kids:Buf[Node]` is as finite as any pointer).
            let mut inner = &member;
            let mut owned = false;
            // An Array holds its elements inline: one of itself is as recursive as a field.
            loop {
                match inner {
                    Ty::Buf(elem) => {
                        inner = elem;
                        owned = true;
                    }
                    Ty::Array(elem, _) => inner = elem,
                    _ => break,
                }
            }
            let target = match inner {
                Ty::Record(adt) | Ty::Enum(adt) => adt.item,
                _ => continue,
            };
            if owned {
                if !self.done.contains(&target) && !self.active.contains(&target) {
                    let chain = std::mem::take(&mut self.active);
                    let refused = self.lay_out(target);
                    self.active = chain;
                    if refused.is_some() {
                        return refused;
                    }
                }
                continue;
            }
            if self.active.contains(&target) {
                let diag = if payloads {
                    Diag::new(
                        "E-SUM-PAYLOAD",
                        "A payload cannot contain its own sum by value, directly or through a record.",
                        Anchor::Item,
                    )
                } else {
                    Diag::new(
                        "E-RECORD-TYPE",
                        "A record cannot contain itself by value, directly or through another type.",
                        Anchor::Item,
                    )
                };
                return Some(diag);
            }
            if !self.done.contains(&target)
                && let Some(diag) = self.lay_out(target)
            {
                return Some(diag);
            }
        }
        None
    }
}
