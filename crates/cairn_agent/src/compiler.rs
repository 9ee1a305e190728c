//! Which compiler answered (protocol §2.2): its profile (`cairn-rs/<version>`), which every
//! state, terms block and receipt names, and its implementation hash — the build identity plus
//! the embedded library sources — which packets, sketches and the candidate history bind to.
//!
//! A leaf of the crate: it reads only the build and `cairn_hir`'s embedded library, so every host
//! and record may name the compiler without reaching into another.

use crate::canonical::sha256_hex;

/// The compiler profile every state, terms block and receipt names.
pub fn profile() -> String {
    format!("cairn-rs/{}", env!("CARGO_PKG_VERSION"))
}

/// The implementation hash (protocol §2.2): the build identity plus the embedded sources.
pub fn implementation_hash() -> String {
    let mut text = profile();
    for module in cairn_hir::library::MODULES {
        text.push_str(module.file);
        text.push('\u{0}');
        text.push_str(module.text);
        text.push('\u{0}');
    }
    sha256_hex(text.as_bytes())
}
