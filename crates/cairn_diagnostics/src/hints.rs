//! Static repair hints (protocol §5.3): the smallest fix that can be stated from the code alone.
//!
//! A computed hint (close names, conversions between numeric types, …) is built where the rule is
//! checked and takes precedence; these are the fall-backs. Outside a host, a code owned by a tool
//! card gets no hint at all. Wording is ours; what each hint must convey is the protocol's.

use crate::registry::is_tool_code;

/// The static hint for `code` as shown outside a host, if it has one.
pub fn static_hint(code: &str) -> Option<&'static str> {
    if is_tool_code(code) {
        return None;
    }
    let hint = match code {
        "E-TYPE-MISMATCH" => {
            "Give the value the expected type; an explicit conversion such as u32(x) may trap, and the signature stays as it is."
        }
        "E-IMMUTABLE" => {
            "Declare the local `let mut` where it is bound, or change the value through an `rw` parameter."
        }
        "E-WRITE-LEASE" => {
            "Write through an `rw` parameter or a `let mut` local; never turn an `ro` borrow into `rw` to make it fit."
        }
        "E-SHADOW" => "Pick a fresh name; CAIRN has no shadowing.",
        "E-RETURN" => "Make every path end in a `return` of the right kind.",
        "E-PARSE" => {
            "Write CAIRN's grammar, not Rust's or Python's: braces around every block, `;` after statements, conversions as calls like u64(x)."
        }
        "E-MOVED" => "Use the value before it moves, move it only once, or lend it instead.",
        "E-LEASED" => {
            "Touch the place after what holds it lets go (the wait, or the end of the block whose defer names it), or lend disjoint parts."
        }
        "E-LINEAR-LEAK" => {
            "Consume the value exactly once before this point: pass it to the call that ends it, return it, or write `defer end(v);` right after it is made."
        }
        "E-LINEAR-BRANCH" => {
            "Consume the value on every path (add the consuming call to the other branch), or on none."
        }
        "E-DEFER" => "Defer exactly one call statement: `defer close(f);`.",
        "E-PARTIAL-MOVE" => "Move the owner out with take(place), or exchange it with swap(a, b).",
        "E-MOVE-BORROW" => "take(…) or swap(…) the contents through the rw borrow, or take the parameter by value.",
        "E-MOVE-IN-LOOP" => "Move the owner after the loop, declare it inside, or take(…) it from a place.",
        "E-UNPACK" => {
            "Unpack a record by value with its own name and one binder (or `_`) per field, in declaration order."
        }
        "E-LINEAR-STORAGE" => "Keep each linear value in a local or a field; get one out of a place with swap(a, b).",
        "E-OWNER-EXTENT" => "Use a literal, a constant, or an immutable usize local bound first (`let n = …;`).",
        "E-ALIAS" => "Lend parts that meet at one visible boundary, or read through `ro`.",
        "E-COOP-GLOBAL" | "E-COOP-BARRIER" | "E-STAGE-UNREADY" => {
            "Keep the barrier and stage discipline of the cooperative card (`cairn rules cooperative`)."
        }
        "E-UNBOUND" => "Declare the name before its use, or use a name that is in scope.",
        "E-STACK-LIMIT" => "Use less stack storage, or a heap `buffer` where heap use is allowed.",
        "E-PRIVATE" => "Mark the declaration `pub` where it is declared, or use what its module exports.",
        "E-LITERAL-RANGE" => {
            "Write a value the type holds, or give the value a type that holds it (`let x:u16 = 300;`)."
        }
        _ => return None,
    };
    Some(hint)
}

/// The static hint for `code` inside a host: the hints above, and those of the host's own codes.
pub fn host_hint(code: &str) -> Option<&'static str> {
    let hint = match code {
        "E-SESSION" => "Refresh from the host (open the session again); never guess a digest or a handle.",
        "E-EFFECT-EXPANSION" => "Change the code so it does less; the ceiling is the host's and stays as it is.",
        "E-PRESERVE" => "Keep the behaviour of the original on every input.",
        "E-SYMBOL" => "Name the function or type exactly as the packet shows it.",
        "E-SIGNATURE" => "Change only the body; the signature stays as it is.",
        "E-DECLARATION" => "Write only the one body (or expression); nothing outside it may change.",
        "E-REFERENCE" | "E-TOLERANCE" | "E-TEST-POLICY" | "E-DOMAIN" => {
            "Those are the host's to set; narrow an implementation with `when` instead."
        }
        other => return static_hint_any(other),
    };
    Some(hint)
}

/// What brings an effect into a row (for hints about effects the host does not allow).
pub fn effect_construct(effect: &str) -> String {
    let plain = match effect {
        "alloc" => "a heap owner or buffer",
        "free" => "an owner released or overwritten",
        "zero_init" => "zeroed storage",
        "stack_storage" => "a `stack` declaration",
        "local_read" | "local_write" => "the function's own storage read or written through an index or a lending call",
        "trap" => "checked arithmetic, an index, a conversion or a part",
        "diverge" => "a loop that may not end, or a call back into the call graph",
        "io" => "printing or a foreign call declared `io`",
        "ffi_precondition" => "a view parameter's entry guard",
        "spawn" => "a spawned task",
        "join" => "a `wait`",
        "atomic" => "an atomic access",
        "lock" => "entering a mutex",
        "indirect_call" => "a call through a function value",
        "dispatch" => "a call through `dyn`",
        _ => "",
    };
    if !plain.is_empty() {
        return format!("{effect} comes from {plain}");
    }
    for (prefix, what) in [
        ("read:", "reading "),
        ("write:", "writing "),
        ("ffi:", "the foreign call "),
        ("par:", "a parallel region on "),
        ("lane:", "lanes calling "),
    ] {
        if let Some(name) = effect.strip_prefix(prefix) {
            return format!("{effect} comes from {what}{name}");
        }
    }
    format!("{effect} comes from a construct that has it")
}

/// The static hint of a language code, also inside a host.
fn static_hint_any(code: &str) -> Option<&'static str> {
    if is_tool_code(code) { None } else { static_hint(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_codes_get_no_hint_outside_a_host() {
        assert_eq!(static_hint("E-DEPTH"), None);
        assert_eq!(static_hint("E-PROJECT-OR-ENVIRONMENT"), None);
        assert!(static_hint("E-PARSE").is_some());
    }
}
