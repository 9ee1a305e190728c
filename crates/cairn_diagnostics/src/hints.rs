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
        "E-IMMUTABLE" => "Copy the value into a `let mut` local and change that.",
        "E-WRITE-LEASE" => {
            "Write through an `rw` parameter or a `let mut` local; never turn an `ro` borrow into `rw` to make it fit."
        }
        "E-SHADOW" => "Pick a fresh name; CAIRN has no shadowing.",
        "E-RETURN" => "Make every path end in a `return` of the right kind.",
        "E-PARSE" => {
            "Write CAIRN's grammar, not Rust's or Python's: braces around every block, `;` after statements, conversions as calls like u64(x)."
        }
        "E-MOVED" => "Use the value before it moves, move it only once, or lend it instead.",
        "E-LEASED" => "Touch the place after the wait, or lend disjoint parts.",
        "E-ALIAS" => "Lend parts that meet at one visible boundary, or read through `ro`.",
        "E-COOP-GLOBAL" | "E-COOP-BARRIER" | "E-STAGE-UNREADY" => {
            "Keep the barrier and stage discipline of the cooperative card (`cairn rules cooperative`)."
        }
        "E-UNBOUND" => "Declare the name before its use, or use a name that is in scope.",
        "E-STACK-LIMIT" => "Use less stack storage, or a heap `buffer` where heap use is allowed.",
        _ => return None,
    };
    Some(hint)
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
