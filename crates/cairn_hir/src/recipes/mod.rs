//! Recipes and `derive` (language §29): generators written in CAIRN, expanded before checking.
//!
//! [`derive_expansion`] is one query per `derive` declaration: it resolves the recipe (the
//! program's, else `std.<name>`, else `std.derived` for a bare name), binds its bracket
//! arguments and its `for` target, evaluates its `where` names, and writes the recipe's
//! declarations out as source text of the deriving module (`emit.rs`; static values in
//! `statics.rs`). The workspace turns that text into ordinary declarations — inputs of their
//! own, in a generated file — so everything downstream (signatures, bodies, rows, code) treats
//! generated code exactly like written code. [`recipe_refusal`] judges a recipe's own header.
//!
//! Expansion reads only the `derive`, the recipe's syntax and the schema (record definitions
//! and names): an edit of a body never re-runs it, and an edit of the target record or the
//! recipe re-runs exactly the derivations that read them.
//!
//! Hygiene: generated code is the deriving module's code, so a name the recipe writes must be
//! spelled so that the deriving module reaches it (a full path, or a module the deriving module
//! imports), and a private helper of the recipe's module is `E-PRIVATE` there.

mod emit;
mod statics;

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};
use cairn_syntax::{SyntaxKind, SyntaxNode};

use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::input::{Item, ItemKind};
use crate::scope::{Lookup, Resolver};
use crate::types::{AdtTy, Ty};
use emit::{Emitter, Qualifier};
use statics::{Env, Eval, Schema, Static, TypeDesc, refuse, snippet};

/// What one `derive` generates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expansion {
    /// The generated declarations, as source of the deriving module (empty when refused).
    pub text: Arc<str>,
    /// Why the derivation generates nothing.
    pub refusal: Option<Diag>,
    /// The recipe applied, when one was found.
    pub recipe: Option<Item>,
}

/// The expansion of the `derive` declaration `item`.
#[salsa::tracked(returns(ref))]
pub fn derive_expansion(db: &dyn Db, item: Item) -> Expansion {
    match expand(db, item) {
        Ok((recipe, text)) => Expansion { text: Arc::from(text), refusal: None, recipe: Some(recipe) },
        Err((recipe, diag)) => Expansion { text: Arc::from(""), refusal: Some(diag), recipe },
    }
}

/// The refusal of a recipe's own declaration: bracket parameters other than `nat` and `fn`.
#[salsa::tracked(returns(ref))]
pub(crate) fn recipe_refusal(db: &dyn Db, item: Item) -> Option<Diag> {
    let node = item.syntax(db).syntax_node();
    let recipe = ast::Recipe::cast(node)?;
    let list = recipe.generic_param_list()?;
    let mut seen: Vec<String> = Vec::new();
    for param in list.syntax().children().filter(|c| c.kind() == SyntaxKind::GENERIC_PARAM) {
        let name = param.children().find(|c| c.kind() == SyntaxKind::NAME).map(|n| n.text().to_string());
        if let Some(name) = &name {
            if seen.contains(name) {
                return Some(Diag::new(
                    "E-RECIPE",
                    format!("The recipe names its parameter {name} twice: give each parameter its own name."),
                    Anchor::Range(param.text_range()),
                ));
            }
            seen.push(name.clone());
        }
        if param_kind(&param).is_none() {
            let name = param.children().find(|c| c.kind() == SyntaxKind::NAME).map(|n| n.text().to_string());
            return Some(Diag::new(
                "E-RECIPE",
                format!(
                    "The recipe parameter `{}` is not `nat` or `fn`: a recipe takes naturals (`K:nat`) and function names (`F:fn`); the record comes after `for`.",
                    snippet(&param)
                ),
                Anchor::Range(param.text_range()),
            )
            .with_hint(format!(
                "Write `{}:nat` or `{}:fn`.",
                name.as_deref().unwrap_or("K"),
                name.as_deref().unwrap_or("F")
            )));
        }
    }
    None
}

/// A recipe parameter's kind: `nat` or `fn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParamKind {
    Nat,
    Fn,
}

fn param_kind(param: &SyntaxNode) -> Option<ParamKind> {
    let mut kind = None;
    let mut extra = false;
    let mut after_colon = false;
    for element in param.children_with_tokens() {
        match element.kind() {
            SyntaxKind::COLON => after_colon = true,
            SyntaxKind::NAT_KW if after_colon && kind.is_none() => kind = Some(ParamKind::Nat),
            SyntaxKind::FN_KW if after_colon && kind.is_none() => kind = Some(ParamKind::Fn),
            k if after_colon && !k.is_trivia() => extra = true,
            _ => {}
        }
    }
    if extra { None } else { kind }
}

/// The recipe a `derive` names from `module`: declared or imported by the program, else, for a
/// bare name, `std.<name>.<name>` and then `std.derived.<name>`.
pub(crate) fn find_recipe(db: &dyn Db, module: &str, segments: &[Arc<str>]) -> Option<Item> {
    let scope = Resolver::new(db);
    if let Lookup::Found(decl) = scope.resolve_path(module, segments, |k| k == ItemKind::Recipe) {
        return Some(decl.item);
    }
    let [name] = segments else { return None };
    [format!("std.{name}.{name}"), format!("std.derived.{name}")]
        .iter()
        .find_map(|full| scope.declared(full).iter().find(|d| d.kind == ItemKind::Recipe).map(|d| d.item))
}

type Failure = (Option<Item>, Diag);

fn expand(db: &dyn Db, item: Item) -> Result<(Item, String), Failure> {
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let node = item.syntax(db).syntax_node();
    let derive = ast::Derive::cast(node).ok_or_else(|| (None, refuse("E-DERIVE-RECIPE", "Not a derivation.")))?;
    let recipe_path = derive.recipe().map(|p| p.text()).unwrap_or_default();
    let segments: Vec<Arc<str>> = recipe_path.split('.').map(Arc::from).collect();
    let found = find_recipe(db, &module, &segments);
    if found.is_none() && recipe_path == "grad" {
        return Err((
            None,
            refuse(
                "E-UNSUPPORTED",
                "`derive grad` (reverse-mode derivatives, language §44) belongs to tier 3, which this checker does not check yet.",
            ),
        ));
    }
    let recipe_item = found.ok_or_else(|| {
        (
            None,
            refuse(
                "E-DERIVE-RECIPE",
                format!(
                    "No visible recipe is named {recipe_path}: declare it, import the module that declares it, or name a packaged one (wire, eq, ord, hash)."
                ),
            ),
        )
    })?;
    let fail = |diag: Diag| (Some(recipe_item), diag);
    if !scope.visible_from(recipe_item, &module) {
        return Err(fail(refuse(
            "E-PRIVATE",
            format!(
                "The recipe {} is private to its module; mark it `pub` to derive it from {module}.",
                scope.full_name(recipe_item)
            ),
        )));
    }
    let recipe = ast::Recipe::cast(recipe_item.syntax(db).syntax_node())
        .ok_or_else(|| fail(refuse("E-DERIVE-RECIPE", format!("{recipe_path} is not a recipe."))))?;
    let recipe_name: Arc<str> = scope.full_name(recipe_item);
    if let Some(diag) = recipe_refusal(db, recipe_item) {
        return Err(fail(Diag { anchor: Anchor::Item, ..diag.clone() }));
    }

    // Bracket arguments against the recipe's parameters, by count and kind.
    let params: Vec<(Arc<str>, ParamKind)> = recipe
        .generic_param_list()
        .map(|list| {
            list.syntax()
                .children()
                .filter(|c| c.kind() == SyntaxKind::GENERIC_PARAM)
                .filter_map(|p| {
                    let name = p.children().find(|c| c.kind() == SyntaxKind::NAME)?.text().to_string();
                    Some((Arc::from(name.trim()), param_kind(&p)?))
                })
                .collect()
        })
        .unwrap_or_default();
    let args: Vec<SyntaxNode> = derive
        .arg_list()
        .map(|l| l.syntax().children().filter(|c| matches!(c.kind(), SyntaxKind::LITERAL | SyntaxKind::PATH)).collect())
        .unwrap_or_default();
    let wanted = || {
        let kinds: Vec<String> =
            params.iter().map(|(n, k)| format!("{n}:{}", if *k == ParamKind::Nat { "nat" } else { "fn" })).collect();
        if kinds.is_empty() { "no bracket arguments".to_string() } else { format!("[{}]", kinds.join(", ")) }
    };
    if args.len() != params.len() {
        return Err(fail(refuse(
            "E-DERIVE-RECIPE",
            format!("Recipe {recipe_name} takes {}; this derivation passes {}.", wanted(), args.len()),
        )));
    }
    let mut env = Env::default();
    for ((name, kind), arg) in params.iter().zip(&args) {
        let value = match (kind, arg.kind()) {
            (ParamKind::Nat, SyntaxKind::LITERAL) => {
                let text: String = arg.text().to_string().chars().filter(|c| *c != '_').collect();
                Static::Nat(text.trim().parse().map_err(|_| {
                    fail(refuse("E-DERIVE-RECIPE", format!("`{}` is not a natural that fits 64 bits.", text.trim())))
                })?)
            }
            (ParamKind::Fn, SyntaxKind::PATH) => {
                let path = ast::Path::cast(arg.clone()).map(|p| p.text()).unwrap_or_default();
                let segments: Vec<Arc<str>> = path.split('.').map(Arc::from).collect();
                // A declared function, or a builtin that computes a value from its arguments
                // (`add_wrap`, `max`; not an owner's maker or a printer): the expansion calls it
                // as written and is checked like any code.
                let builtin = segments.len() == 1
                    && crate::builtins::Builtin::from_name(&segments[0])
                        .is_some_and(|b| b.callable() && b.computing() && !b.intrinsic_type());
                if !builtin
                    && !matches!(scope.resolve_path(&module, &segments, |k| k == ItemKind::Fn), Lookup::Found(_))
                {
                    return Err(fail(refuse(
                        "E-DERIVE-RECIPE",
                        format!(
                            "Recipe {recipe_name}'s parameter {name} takes a function name, and {path} names no function here."
                        ),
                    )));
                }
                Static::Fn(Arc::from(path))
            }
            _ => {
                return Err(fail(refuse(
                    "E-DERIVE-RECIPE",
                    format!(
                        "Recipe {recipe_name} takes {}; `{}` is not of the kind its parameter {name} wants.",
                        wanted(),
                        snippet(arg)
                    ),
                )));
            }
        };
        env.push(name.clone(), value);
    }

    // The `for` target.
    let for_param = recipe.for_param().map(|n| Arc::<str>::from(n.text().trim()));
    let target = derive.target();
    let schema = Schema { db };
    let for_binding = match (&for_param, &target) {
        (Some(param), Some(path)) => {
            let text = path.text();
            let segments: Vec<Arc<str>> = text.split('.').map(Arc::from).collect();
            let found = scope.resolve_path(&module, &segments, |k| matches!(k, ItemKind::Struct | ItemKind::Enum));
            let Lookup::Found(decl) = found else {
                return Err(fail(refuse(
                    "E-DERIVE-TYPE",
                    format!("The derivation's target {text} names no record visible from {}.", display_module(&module)),
                )));
            };
            if !scope.visible_from(decl.item, &module) {
                return Err(fail(refuse(
                    "E-PRIVATE",
                    format!(
                        "{} is private to its module: mark it `pub` to derive for it from {}.",
                        scope.full_name(decl.item),
                        display_module(&module)
                    ),
                )));
            }
            let adt = AdtTy { item: decl.item, name: scope.full_name(decl.item), args: Arc::from(Vec::new()) };
            let ty = if decl.kind == ItemKind::Struct { Ty::Record(adt) } else { Ty::Enum(adt) };
            let name: Arc<str> = Arc::from(text.rsplit('.').next().unwrap_or(&text));
            let desc = TypeDesc { text: Arc::from(text.as_str()), name, ty };
            env.push(param.clone(), Static::Type(desc));
            Some((param.clone(), Arc::<str>::from(text.as_str())))
        }
        (None, None) => None,
        (Some(param), None) => {
            return Err(fail(refuse(
                "E-DERIVE-RECIPE",
                format!(
                    "Recipe {recipe_name} derives for a record ({param}): write `derive {recipe_path} for Record;`."
                ),
            )));
        }
        (None, Some(_)) => {
            return Err(fail(refuse(
                "E-DERIVE-RECIPE",
                format!("Recipe {recipe_name} takes no record: drop the `for` part of the derivation."),
            )));
        }
    };

    // The recipe's `where` names, in order.
    for clause in recipe.where_clauses() {
        for binding in clause.bindings() {
            let name: Arc<str> = Arc::from(binding.name().map(|n| n.text()).unwrap_or_default().trim());
            let Some(value) = binding.value() else { continue };
            let v = Eval { schema: &schema, env: &mut env, recipe: &recipe_name }.eval(value.syntax()).map_err(fail)?;
            env.push(name, v);
        }
    }

    let Some(body) = recipe.body() else { return Ok((recipe_item, String::new())) };
    let qualifier = qualifier(db, recipe_item, &body);
    let mut emitter = Emitter {
        schema: &schema,
        qualifier,
        env,
        recipe: recipe_name.clone(),
        for_param: for_binding,
        out: String::new(),
        declarations: 0,
    };
    emitter.items(body.syntax()).map_err(fail)?;
    // Laid out as `cairn fmt` would (the text `cairn expand` shows and the generated lines that
    // diagnostics quote). A splice can make text that is not CAIRN (`fn $b()` with a boolean `b`,
    // a name starting with a digit): the formatter's parse says so, and the derivation is refused
    // there rather than the generated code left unparsed.
    match cairn_syntax::format::format(&emitter.out) {
        Ok(text) => Ok((recipe_item, text)),
        Err(cairn_syntax::format::FormatError::Syntax(why)) => Err(fail(refuse(
            "E-RECIPE-STATIC",
            format!(
                "Recipe {recipe_name} generates text that is not CAIRN for this derivation ({}): a `$` splice must make a name, a type or a literal where one is written.",
                why.trim_end_matches('.')
            ),
        ))),
        Err(cairn_syntax::format::FormatError::Unsafe(_)) => Ok((recipe_item, emitter.out)),
    }
}

/// What the hygiene of `recipe`'s expansion needs: its module and the names each of its
/// functions binds (the module's import aliases are looked up per name, through a narrow query,
/// so a declaration added elsewhere re-runs no expansion).
fn qualifier(db: &dyn Db, recipe: Item, body: &ast::RecipeBody) -> Qualifier {
    let scope = Resolver::new(db);
    let module = scope.module_of(recipe);
    let mut locals: std::collections::HashMap<cairn_syntax::TextSize, std::collections::HashSet<String>> =
        std::collections::HashMap::new();
    for node in body.syntax().descendants() {
        let binds = matches!(
            node.parent().map(|p| p.kind()),
            Some(
                SyntaxKind::PARAM
                    | SyntaxKind::LET_STMT
                    | SyntaxKind::UNPACK_STMT
                    | SyntaxKind::UNPACK_LIST
                    | SyntaxKind::STACK_STMT
                    | SyntaxKind::BUFFER_STMT
                    | SyntaxKind::FOR_STMT
                    | SyntaxKind::EACH_ITEM
                    | SyntaxKind::EACH_STMT
                    | SyntaxKind::EACH_EXPR
                    | SyntaxKind::WHERE_BINDING
                    | SyntaxKind::MATCH_ARM
            )
        );
        if node.kind() == SyntaxKind::NAME
            && binds
            && let Some(function) = node.ancestors().find(|n| n.kind() == SyntaxKind::FN)
        {
            locals.entry(function.text_range().start()).or_default().insert(node.text().to_string().trim().to_string());
        }
    }
    Qualifier { module, locals }
}

fn display_module(module: &str) -> String {
    if module.is_empty() { "the root module".to_string() } else { format!("module {module}") }
}

/// The first refusal of the program's recipes and derivations, in declaration order: a recipe's
/// own header, a derivation that expands to nothing, and a generated record that repeats a
/// field (`E-DERIVE-COLLISION`; a generated name that already exists is found with the
/// duplicates, where the generated declaration comes last).
pub(crate) fn derivation_refusal(db: &dyn Db, program: crate::input::Program) -> Option<(Item, Diag)> {
    for entry in program.items(db).iter() {
        match entry.key.kind {
            ItemKind::Recipe if !entry.library => {
                if let Some(diag) = recipe_refusal(db, entry.item) {
                    return Some((entry.item, diag.clone()));
                }
            }
            ItemKind::Derive => {
                if let Some(diag) = &derive_expansion(db, entry.item).refusal {
                    return Some((entry.item, diag.clone()));
                }
            }
            ItemKind::Struct if entry.origin.is_some() => {
                let def = crate::decl::record_def(db, entry.item);
                if let (Some(diag), Some(origin)) = (&def.error, entry.origin)
                    && diag.code == "E-DUPLICATE"
                {
                    return Some((
                        origin,
                        refuse(
                            "E-DERIVE-COLLISION",
                            format!("This derivation generates a record that {}", lower_first(&diag.message)),
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}
