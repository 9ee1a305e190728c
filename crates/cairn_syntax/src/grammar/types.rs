//! Types: `u64`, `Buf[f64]`, `Array[u8, 16]`, `ro<T>[n]@device`, `fn(A) -> R`, `dyn Trait`.
//!
//! A type has at most one bracket group of arguments; an argument is a decimal natural or a
//! type. Borrow extents are a decimal literal or a name, and a placement is recognised only after
//! an extent (as in the original). Nesting is bounded by [`Nesting::Type`].

use super::*;
use crate::parser::Nesting;

/// One type.
pub(crate) fn type_(p: &mut Parser<'_>) {
    if !p.enter(Nesting::Type) {
        p.skip_too_deep();
        return;
    }
    match p.current() {
        RO_KW | RW_KW => borrow_type(p),
        FN_KW => fn_type(p),
        DYN_KW => {
            let m = p.start();
            p.bump(DYN_KW);
            path(p);
            m.complete(p, DYN_TYPE);
        }
        _ => path_type(p),
    }
    p.leave(Nesting::Type);
}

/// `path [ [arg, …] ]`
fn path_type(p: &mut Parser<'_>) {
    let m = p.start();
    if !at_word(p) {
        // Other languages' types get their CAIRN spelling.
        let habit = match p.current() {
            T![&] | T![&&] => Some(
                "CAIRN writes a borrow as `ro<T>` (read) or `rw<T>` (read and write), not `&T`: for example `x:ro<u32>`.",
            ),
            T!['['] => Some(
                "A fixed array type is `Array[T, N]` (held inline) or a view `ro<T>[N]`, not `[T; N]`; a local array is `stack xs:T[N] = zeroed;`.",
            ),
            T![*] => Some("CAIRN has no raw pointers: lend a view `ro<T>[n]` or a borrow `ro<T>`."),
            _ => None,
        };
        match habit {
            Some(message) => p.error(ErrorCode::Parse, message),
            None => {
                let message = format!("Expected a type here, found {}.", p.describe_current());
                p.error(ErrorCode::Name, message);
            }
        }
        m.abandon(p);
        return;
    }
    path(p);
    if p.at(T!['[']) {
        generic_arg_list(p);
    }
    m.complete(p, PATH_TYPE);
}

/// `[u8, 16, Buf[T]]`
pub(crate) fn generic_arg_list(p: &mut Parser<'_>) {
    let m = p.start();
    delimited(p, T!['['], T![']'], "type argument list", type_arg);
    m.complete(p, GENERIC_ARG_LIST);
}

fn type_arg(p: &mut Parser<'_>) {
    if p.at(INT_NUMBER) && p.nth_text(0).bytes().all(|b| b.is_ascii_digit()) {
        let m = p.start();
        p.bump(INT_NUMBER);
        m.complete(p, NAT_ARG);
    } else {
        type_(p);
    }
}

/// `ro<T>` / `rw<T>[n] [@place]`
fn borrow_type(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_any();
    if p.expect(T![<]) {
        type_(p);
        p.expect(T![>]);
    }
    if p.at(T!['[']) {
        let e = p.start();
        p.bump(T!['[']);
        if p.at(INT_NUMBER) && p.nth_text(0).bytes().all(|b| b.is_ascii_digit()) {
            let lit = p.start();
            p.bump(INT_NUMBER);
            lit.complete(p, LITERAL);
        } else if p.at(INT_NUMBER) || p.at(FLOAT_NUMBER) {
            let message = format!("A view's extent is a decimal literal or a name, found {}.", p.describe_current());
            p.error(ErrorCode::Name, message);
            let lit = p.start();
            p.bump_any();
            lit.complete(p, LITERAL);
        } else {
            name_ref(p);
        }
        p.expect(T![']']);
        e.complete(p, EXTENT);
        if p.at(T![@]) {
            placement(p);
        }
    }
    m.complete(p, BORROW_TYPE);
}

/// `@host`, `@device`, `@pinned`, `@unified`; another word is `E-PLACE`.
pub(crate) fn placement(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(T![@]);
    let kind = match (p.current(), p.nth_text(0)) {
        (IDENT, "host") => Some(HOST_KW),
        (IDENT, "device") => Some(DEVICE_KW),
        (IDENT, "pinned") => Some(PINNED_KW),
        (IDENT, "unified") => Some(UNIFIED_KW),
        _ => None,
    };
    match kind {
        Some(kind) => p.bump_remap(kind),
        None => {
            let message = if at_word(p) {
                format!("`{}` is not a placement; a placement is @host, @device, @pinned or @unified.", p.nth_text(0))
            } else {
                format!(
                    "Expected a placement after `@` (host, device, pinned or unified), found {}.",
                    p.describe_current()
                )
            };
            p.error(ErrorCode::Place, message);
            if at_word(p) {
                p.bump_any();
            }
        }
    }
    m.complete(p, PLACEMENT);
}

/// `fn(A, B) -> R`
fn fn_type(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(FN_KW);
    if p.at(T!['(']) {
        let params = p.start();
        delimited(p, T!['('], T![')'], "function type's parameter list", type_);
        params.complete(p, FN_TYPE_PARAMS);
    } else {
        p.expect(T!['(']);
    }
    if p.at(T![->]) {
        let r = p.start();
        p.bump(T![->]);
        type_(p);
        r.complete(p, RET_TYPE);
    }
    m.complete(p, FN_TYPE);
}
