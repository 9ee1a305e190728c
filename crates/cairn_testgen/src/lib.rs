//! Deterministic generators of valid CAIRN programs, for tests and benchmarks, and of hostile
//! variants of valid text ([`mutate`]) for the servers' robustness tests.
//!
//! [`program`] writes a tier-0 program of a requested size from a seed: constants, records,
//! tag-only enums, a failure sum, and functions of five shapes (arithmetic, view scans, matches,
//! `try` chains, writers through `rw` views) that call earlier functions only, so the call graph is
//! acyclic and every name is declared. The text is meant to be accepted by the whole checker, not
//! only the parser; it uses no randomness source but its own seeded generator, so a seed names one
//! program forever.
//!
//! [`program_with_generics`] writes the same kind of program with tier-1 types mixed in: a
//! trait implemented by every record, and three more shapes — an integer template called at
//! random integer types, a natural template called with explicit naturals, and a template
//! bounded by the trait — so that every instance is made on demand from the calls.
//!
//! [`program_with_owners`] mixes in tier-1 owners (and parallel regions with a pooled `reduce`
//! among its fill functions): functions that make, fill, swap and move
//! `Buf`s and return early while holding them, and functions that make a linear value and
//! `defer` the call that consumes it.
//!
//! [`program_chains`] (`chains.rs`) is shaped unlike all of these — many three-to-six-line
//! functions in call chains up to 160 deep — so benches can show a figure on two shapes.
//!
//! Invariant: the output depends only on the [`Config`] (and the flavour); no clock, no
//! environment; [`program`]'s output is the same as before the generic flavour existed.

use std::fmt::Write;

mod chains;
pub mod mutate;

pub use chains::program_chains;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub seed: u64,
    /// How many functions (besides `main`).
    pub functions: usize,
    /// How deep generated expressions may nest.
    pub expression_depth: u32,
}

impl Config {
    /// A configuration that yields about `lines` lines.
    pub fn with_lines(seed: u64, lines: usize) -> Config {
        Config { seed, functions: (lines / 12).max(1), expression_depth: 3 }
    }

    /// A configuration that yields about `lines` lines of [`program_chains`] (its functions are
    /// about five and a half lines each, the blank line after each included).
    pub fn chains_with_lines(seed: u64, lines: usize) -> Config {
        Config { seed, functions: (lines * 10 / 54).max(1), expression_depth: 3 }
    }
}

/// A small, fast, seeded generator (SplitMix64); enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The shapes a generated function can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `fn calc_k(x:u64, y:i64) -> u64`
    Calc,
    /// `fn scan_k(n:usize, xs:ro<u64>[n]) -> u64`
    Scan,
    /// `fn pick_k(m:Mode_j, r:Rec_j) -> i64`
    Pick,
    /// `fn check_k(x:u64) -> Result[u64, Fault]`
    Check,
    /// `fn fill_k(n:usize, out:rw<u64>[n], seed:u64)`
    Fill,
    /// `fn tmpl_k[T:integer](x:T, y:T) -> T` (generic flavour)
    Template,
    /// `fn stride_k[K:nat](x:u64) -> u64` (generic flavour)
    Stride,
    /// `fn heft_k[W:Weigh](r:ro<W>) -> u64` (generic flavour)
    Heft,
    /// `fn hold_k(n:usize, seed:u64) -> u64` over `Buf`s (owners flavour)
    Hold,
    /// `fn grant_k(x:u64) -> u64` with a linear value and a `defer` (owners flavour)
    Grant,
}

const SHAPES: [Shape; 5] = [Shape::Calc, Shape::Scan, Shape::Pick, Shape::Check, Shape::Fill];
const OWNER_SHAPES: [Shape; 7] =
    [Shape::Calc, Shape::Scan, Shape::Pick, Shape::Check, Shape::Fill, Shape::Hold, Shape::Grant];
const GENERIC_SHAPES: [Shape; 8] =
    [Shape::Calc, Shape::Scan, Shape::Pick, Shape::Check, Shape::Fill, Shape::Template, Shape::Stride, Shape::Heft];

/// The integer types a template is called at, with a conversion from a small `u64`.
const INSTANCE_TYPES: [&str; 6] = ["u8", "u16", "u32", "u64", "i32", "i64"];

struct Generator {
    rng: Rng,
    config: Config,
    out: String,
    /// Names of functions already written, per shape.
    written: Vec<(Shape, String)>,
    types: usize,
    consts: usize,
    generics: bool,
    owners: bool,
    /// Natural templates without a family, which `main` calls.
    unfamilied: Vec<String>,
}

/// Generates a program; see the module comment.
pub fn program(config: Config) -> String {
    generate(config, false)
}

/// Generates a program with generics and a trait; see the module comment.
pub fn program_with_generics(config: Config) -> String {
    generate(config, true)
}

/// Generates a program with owners, linear values and `defer`; see the module comment.
pub fn program_with_owners(config: Config) -> String {
    generate_with(config, false, true)
}

fn generate(config: Config, generics: bool) -> String {
    generate_with(config, generics, false)
}

fn generate_with(config: Config, generics: bool, owners: bool) -> String {
    let mut g = Generator {
        rng: Rng::new(config.seed),
        config,
        out: String::new(),
        written: Vec::new(),
        types: 0,
        consts: 0,
        generics,
        owners,
        unfamilied: Vec::new(),
    };
    g.header();
    for k in 0..config.functions {
        if k % 16 == 0 {
            g.declarations();
        }
        let shape = if generics {
            *g.rng.pick(&GENERIC_SHAPES)
        } else if owners {
            *g.rng.pick(&OWNER_SHAPES)
        } else {
            *g.rng.pick(&SHAPES)
        };
        g.function(k, shape);
    }
    g.main();
    g.out
}

impl Generator {
    fn header(&mut self) {
        let _ = writeln!(self.out, "// Generated by cairn_testgen (seed {}).", self.config.seed);
        self.out.push_str("import std.core (Option, Result);\n\n");
        self.out.push_str("enum Fault { Empty; TooBig(u64); Negative(i64); }\n\n");
        if self.generics {
            self.out.push_str("trait Weigh { fn weigh(self:ro<Self>) -> u64; }\n\n");
        }
        if self.owners {
            self.out.push_str("linear struct Grant { id:u64; }\n\n");
            self.out
                .push_str("fn settle(g:Grant, log:rw<u64>) {\n  let Grant(id) = g;\n  log = add_wrap(log, id);\n}\n\n");
        }
    }

    /// A batch of constants, a record and an enum for the next functions to use.
    fn declarations(&mut self) {
        let t = self.types;
        self.types += 1;
        let c = self.consts;
        self.consts += 2;
        let a = self.rng.below(1000) + 1;
        let b = self.rng.below(64) + 1;
        let _ = writeln!(self.out, "const LIMIT_{c}:u64 = {a} * {b};");
        let _ = writeln!(self.out, "const SHIFT_{}:usize = {};", c + 1, self.rng.below(63));
        let _ = writeln!(self.out, "struct Rec_{t} {{ count:u64; delta:i64; ok:bool; }}");
        let _ = writeln!(self.out, "enum Mode_{t} {{ Idle; Run; Stop; }}\n");
        if self.generics {
            let w = self.rng.below(100);
            let _ = writeln!(
                self.out,
                "impl Weigh for Rec_{t} {{ fn weigh(self:ro<Rec_{t}>) -> u64 = self.count % 1000 + {w}; }}\n"
            );
        }
    }

    fn latest_type(&self) -> usize {
        self.types.saturating_sub(1)
    }

    fn latest_const(&self) -> usize {
        self.consts.saturating_sub(2)
    }

    fn earlier(&mut self, shape: Shape) -> Option<String> {
        let candidates: Vec<&String> = self.written.iter().filter(|(s, _)| *s == shape).map(|(_, n)| n).collect();
        if candidates.is_empty() {
            return None;
        }
        let index = self.rng.below(candidates.len() as u64) as usize;
        Some(candidates[index].clone())
    }

    fn function(&mut self, k: usize, shape: Shape) {
        let t = self.latest_type();
        let c = self.latest_const();
        let name = match shape {
            Shape::Calc => format!("calc_{k}"),
            Shape::Scan => format!("scan_{k}"),
            Shape::Pick => format!("pick_{k}"),
            Shape::Check => format!("check_{k}"),
            Shape::Fill => format!("fill_{k}"),
            Shape::Template => format!("tmpl_{k}"),
            Shape::Stride => format!("stride_{k}"),
            Shape::Heft => format!("heft_{k}"),
            Shape::Hold => format!("hold_{k}"),
            Shape::Grant => format!("grant_{k}"),
        };
        if self.rng.chance(1, 3) {
            let _ = writeln!(self.out, "// {name}: generated {shape:?} function.");
        }
        match shape {
            Shape::Calc => {
                let _ = writeln!(self.out, "fn {name}(x:u64, y:i64) -> u64 {{");
                let first = self.u64_expr(self.config.expression_depth);
                let _ = writeln!(self.out, "  let a:u64 = {first};");
                let cond = self.bool_expr(2);
                let _ = writeln!(self.out, "  let mut b:u64 = add_wrap(a, LIMIT_{c});");
                let _ = writeln!(self.out, "  if {cond} {{");
                let inner = self.u64_expr(2);
                let _ = writeln!(self.out, "    b = mul_wrap(b, {inner});");
                let _ = writeln!(self.out, "  }} else {{");
                let _ = writeln!(self.out, "    b = shr(b, SHIFT_{} % 64) ^ shl_wrap(a, 3);", c + 1);
                let _ = writeln!(self.out, "  }}");
                if self.generics {
                    self.generic_calls("b");
                }
                if let Some(callee) = self.earlier(Shape::Calc) {
                    let _ = writeln!(self.out, "  let c = {callee}(b % 1000, y);");
                    let _ = writeln!(self.out, "  return add_wrap(b, c);");
                } else {
                    let _ = writeln!(self.out, "  return b;");
                }
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Scan => {
                let _ = writeln!(self.out, "fn {name}(n:usize, xs:ro<u64>[n]) -> u64 {{");
                let _ = writeln!(self.out, "  let mut total:u64 = 0;");
                let _ = writeln!(self.out, "  let mut best:u64 = 0;");
                let _ = writeln!(self.out, "  for i in 0..n {{");
                let _ = writeln!(self.out, "    total = add_wrap(total, xs[i]);");
                let _ = writeln!(self.out, "    if xs[i] > best {{ best = xs[i]; }}");
                let _ = writeln!(self.out, "  }}");
                let _ = writeln!(self.out, "  let mut k:usize = 0;");
                let _ = writeln!(self.out, "  while k < n && k < 8 {{");
                let _ = writeln!(self.out, "    total = total ^ shl_wrap(xs[k], k);");
                let _ = writeln!(self.out, "    k += 1;");
                let _ = writeln!(self.out, "  }}");
                if let Some(callee) = self.earlier(Shape::Scan) {
                    let _ = writeln!(self.out, "  let inner = {callee}(xs);");
                    let _ = writeln!(self.out, "  return max(total, inner) - min(best, total);");
                } else {
                    let _ = writeln!(self.out, "  return max(total, best) - min(best, total);");
                }
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Pick => {
                let _ = writeln!(self.out, "fn {name}(m:Mode_{t}, r:Rec_{t}) -> i64 {{");
                let _ = writeln!(self.out, "  let mut score:i64 = r.delta % 1000;");
                let _ = writeln!(self.out, "  match m {{");
                let _ = writeln!(self.out, "    Idle => return 0;");
                let small = self.i64_expr(2);
                let _ = writeln!(self.out, "    Run => {{ score = score + {small}; }}");
                let _ = writeln!(self.out, "    Mode_{t}.Stop => {{ if r.ok {{ score = -score; }} }}");
                let _ = writeln!(self.out, "  }}");
                let _ = writeln!(self.out, "  if r.count > 10 && m == Run {{ score += 1; }}");
                if let Some(heft) = self.earlier(Shape::Heft).filter(|_| self.generics) {
                    let _ = writeln!(self.out, "  score += i64({heft}(r) % 100);");
                }
                let _ = writeln!(self.out, "  return score;");
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Check => {
                let _ = writeln!(self.out, "fn {name}(x:u64) -> Result[u64, Fault] {{");
                let _ = writeln!(self.out, "  if x == 0 {{ return Err(Empty); }}");
                let _ = writeln!(self.out, "  if x > LIMIT_{c} {{ return Err(Fault.TooBig(x)); }}");
                if let Some(callee) = self.earlier(Shape::Check) {
                    let _ = writeln!(self.out, "  let y = try {callee}(x);");
                    let _ = writeln!(self.out, "  return Ok(add_wrap(x, y));");
                } else {
                    let _ = writeln!(self.out, "  return Ok(x * 2);");
                }
                let _ = writeln!(self.out, "}}\n");
            }
            // In the owners flavour, now and then a region and a pooled reduction (language §24,
            // §25) with the same signature.
            Shape::Fill if self.owners && self.rng.chance(1, 2) => {
                let _ = writeln!(self.out, "fn {name}(n:usize, out:rw<u64>[n], seed:u64) {{");
                let _ = writeln!(self.out, "  parallel i in n {{");
                let _ =
                    writeln!(self.out, "    out[i] = mul_wrap(add_wrap(out[i], seed) ^ u64(i), 0x100000001b3) % 1000;");
                let _ = writeln!(self.out, "  }}");
                let _ = writeln!(self.out, "  let t = reduce add_wrap parallel i in n yield out[i];");
                let _ = writeln!(self.out, "  if n > 0 {{ out[0] = add_wrap(out[0], t) % 1000; }}");
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Fill => {
                let _ = writeln!(self.out, "fn {name}(n:usize, out:rw<u64>[n], seed:u64) {{");
                let _ = writeln!(self.out, "  let mut h:u64 = seed;");
                let _ = writeln!(self.out, "  for i, old in out {{");
                let _ = writeln!(self.out, "    h = mul_wrap(h ^ old, 0x100000001b3);");
                let _ = writeln!(self.out, "    out[i] = h % 1000;");
                let _ = writeln!(self.out, "  }}");
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Template => {
                let (a, b) = (self.rng.below(50) + 1, self.rng.below(7) + 2);
                let _ = writeln!(self.out, "fn {name}[T:integer](x:T, y:T) -> T {{");
                let _ = writeln!(self.out, "  let d = max(x, y) - min(x, y);");
                let _ = writeln!(self.out, "  if d > T({a}) {{ return d % T({b}); }}");
                let _ = writeln!(self.out, "  return min(x, y) / T(2) + d % T(3);");
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Stride => {
                let c = self.rng.below(1000);
                let _ = writeln!(self.out, "fn {name}[K:nat](x:u64) -> u64 {{");
                let _ = writeln!(self.out, "  return x % 1000 * u64(K) + {c};");
                let _ = writeln!(self.out, "}}\n");
                // Instantiated by a family, or else called from `main`: no template is left
                // uninstantiated (`E-UNINSTANTIATED`) by the generator, only by edits.
                if self.rng.chance(1, 2) {
                    let _ = writeln!(self.out, "family {name}_at = {name}[1..3];\n");
                } else {
                    self.unfamilied.push(name.clone());
                }
            }
            Shape::Hold => {
                let (a, b) = (self.rng.below(8) + 1, self.rng.below(5) + 2);
                let _ = writeln!(self.out, "fn {name}(n:usize, seed:u64) -> u64 {{");
                let _ = writeln!(self.out, "  let mut b = Buf[u64](n % {a} + 1);");
                let _ = writeln!(self.out, "  let mut t:u64 = seed;");
                let _ = writeln!(self.out, "  for i in 0..len(b) {{");
                let _ = writeln!(self.out, "    b[i] = add_wrap(t, u64(i));");
                let _ = writeln!(self.out, "    t = add_wrap(t, b[i]);");
                let _ = writeln!(self.out, "  }}");
                let _ = writeln!(self.out, "  let mut c = Buf[u64]({b});");
                let _ = writeln!(self.out, "  swap(b, c);");
                let _ = writeln!(self.out, "  if t % {b} == 0 {{ return t; }}");
                let _ = writeln!(self.out, "  let d = c;");
                let _ = writeln!(self.out, "  return add_wrap(t, u64(len(d)));");
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Grant => {
                let (a, b) = (self.rng.below(9) + 2, self.rng.below(100));
                let _ = writeln!(self.out, "fn {name}(x:u64) -> u64 {{");
                let _ = writeln!(self.out, "  let mut log:u64 = {b};");
                let _ = writeln!(self.out, "  let g = Grant(x % 100);");
                let _ = writeln!(self.out, "  defer settle(g, log);");
                let _ = writeln!(self.out, "  if x % {a} == 0 {{ return log; }}");
                let _ = writeln!(self.out, "  log = add_wrap(log, x);");
                let _ = writeln!(self.out, "  return log;");
                let _ = writeln!(self.out, "}}\n");
            }
            Shape::Heft => {
                let c = self.rng.below(1000);
                let _ = writeln!(self.out, "fn {name}[W:Weigh](r:ro<W>) -> u64 {{");
                let _ = writeln!(self.out, "  return weigh(r) + {c};");
                let _ = writeln!(self.out, "}}\n");
            }
        }
        self.written.push((shape, name));
    }

    fn main(&mut self) {
        self.out.push_str("fn main() -> i32 {\n");
        self.out.push_str("  stack data:u64[16] = zeroed;\n");
        if let Some(fill) = self.earlier(Shape::Fill) {
            let _ = writeln!(self.out, "  {fill}(data, 7);");
        }
        self.out.push_str("  let mut acc:u64 = 0;\n");
        for _ in 0..4 {
            if let Some(calc) = self.earlier(Shape::Calc) {
                let _ = writeln!(self.out, "  acc = add_wrap(acc, {calc}(data[3], -5));");
            }
            if let Some(scan) = self.earlier(Shape::Scan) {
                let _ = writeln!(self.out, "  acc = add_wrap(acc, {scan}(data));");
            }
        }
        if let Some(check) = self.earlier(Shape::Check) {
            let _ = writeln!(self.out, "  match {check}(acc % 100 + 1) {{");
            self.out.push_str("    Ok(v) => { acc = add_wrap(acc, v); }\n");
            self.out.push_str("    Err(_) => { acc = acc ^ 1; }\n");
            self.out.push_str("  }\n");
        }
        if let Some(hold) = self.earlier(Shape::Hold) {
            let _ = writeln!(self.out, "  let held = {hold}(usize(acc % 16), acc);");
            self.out.push_str("  acc = add_wrap(acc, held);\n");
        }
        if let Some(grant) = self.earlier(Shape::Grant) {
            let _ = writeln!(self.out, "  acc = add_wrap(acc, {grant}(acc));");
        }
        for stride in self.unfamilied.clone() {
            let _ = writeln!(self.out, "  acc = add_wrap(acc, {stride}[2](acc));");
        }
        self.out.push_str("  println(\"checksum \", acc);\n");
        self.out.push_str("  return 0;\n}\n");
    }

    /// Calls of earlier templates folded into the `u64` local `into`: an integer template at a
    /// random type, a natural template at a random natural.
    fn generic_calls(&mut self, into: &str) {
        if let Some(tmpl) = self.earlier(Shape::Template) {
            let ty = *self.rng.pick(&INSTANCE_TYPES);
            let _ = writeln!(
                self.out,
                "  {into} = add_wrap({into}, u64(max({tmpl}({ty}(x % 100), {ty}({into} % 100)), 0)));"
            );
        }
        if let Some(stride) = self.earlier(Shape::Stride) {
            let k = self.rng.below(9) + 1;
            let _ = writeln!(self.out, "  {into} = add_wrap({into}, {stride}[{k}]({into}));");
        }
    }

    /// A `u64` expression over `x`, `y` and literals.
    fn u64_expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(1, 3) {
            return match self.rng.below(5) {
                0 => "x".to_string(),
                1 => format!("{}", self.rng.below(10_000)),
                2 => format!("0x{:x}", self.rng.below(1 << 20)),
                3 => "u64(y % 100 + 100)".to_string(),
                _ => format!("LIMIT_{}", self.latest_const()),
            };
        }
        let a = self.u64_expr(depth - 1);
        let b = self.u64_expr(depth - 1);
        match self.rng.below(8) {
            0 => format!("add_wrap({a}, {b})"),
            1 => format!("mul_wrap({a}, {b})"),
            2 => format!("({a} ^ {b})"),
            3 => format!("({a} & {b} | 1)"),
            4 => format!("min({a}, {b})"),
            5 => format!("max({a}, {b}) / ({b} % 7 + 1)"),
            6 => format!("sub_wrap({a}, {b})"),
            _ => format!("({a} % 1000 + {b} % 1000)"),
        }
    }

    /// An `i64` expression over `y`, `r` and literals.
    fn i64_expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(1, 3) {
            return match self.rng.below(4) {
                0 => "r.delta % 100".to_string(),
                1 => format!("-{}", self.rng.below(1000)),
                2 => format!("{}", self.rng.below(1000)),
                _ => "i64(r.count % 100)".to_string(),
            };
        }
        let a = self.i64_expr(depth - 1);
        let b = self.i64_expr(depth - 1);
        match self.rng.below(3) {
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b})"),
            _ => format!("({a} % 100) * ({b} % 100)"),
        }
    }

    /// A `bool` expression over `x` and `y`.
    fn bool_expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(1, 2) {
            let a = self.u64_expr(1);
            let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
            return format!("{a} {op} {}", self.rng.below(5000));
        }
        let a = self.bool_expr(depth - 1);
        let b = self.bool_expr(depth - 1);
        match self.rng.below(3) {
            0 => format!("({a}) && ({b})"),
            1 => format!("({a}) || ({b})"),
            _ => format!("!({a})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_names_one_program() {
        let config = Config { seed: 7, functions: 40, expression_depth: 3 };
        assert_eq!(program(config), program(config));
        assert_ne!(program(config), program(Config { seed: 8, ..config }));
    }

    #[test]
    fn the_generic_flavour_leaves_the_plain_one_alone() {
        let config = Config { seed: 7, functions: 40, expression_depth: 3 };
        let plain = program(config);
        let generic = program_with_generics(config);
        assert!(!plain.contains("trait Weigh") && generic.contains("trait Weigh"));
        assert!(generic.contains("[T:integer]") && generic.contains("[K:nat]"));
    }

    #[test]
    fn the_chains_are_deep_and_their_size_follows_the_requested_lines() {
        let config = Config::chains_with_lines(3, 20_000);
        let text = program_chains(config);
        assert_eq!(text, program_chains(config));
        let lines = text.lines().count();
        assert!((15_000..30_000).contains(&lines), "{lines} lines");
        let functions = text.lines().filter(|l| l.starts_with("fn ")).count();
        assert!(functions > lines / 7, "{functions} functions in {lines} lines");
        // A chain 100 links long at least (c<k>_99 calls c<k>_98).
        assert!(text.contains("_99(") && text.contains("_98("));
    }

    #[test]
    fn size_follows_the_requested_lines() {
        let text = program(Config::with_lines(1, 20_000));
        let lines = text.lines().count();
        assert!((15_000..30_000).contains(&lines), "{lines} lines");
    }
}
