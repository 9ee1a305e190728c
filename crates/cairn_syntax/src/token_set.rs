//! A set of token kinds, as a fixed bit set usable in `const` items.
//!
//! Invariant: only token kinds (not node kinds) go in a set; the grammar uses sets for
//! "first" sets and recovery points.

use crate::SyntaxKind;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenSet([u64; 4]);

impl TokenSet {
    pub(crate) const EMPTY: TokenSet = TokenSet([0; 4]);

    pub(crate) const fn new(kinds: &[SyntaxKind]) -> TokenSet {
        let mut bits = [0u64; 4];
        let mut i = 0;
        while i < kinds.len() {
            let k = kinds[i] as usize;
            assert!(k < 256, "token sets hold token kinds only");
            bits[k / 64] |= 1u64 << (k % 64);
            i += 1;
        }
        TokenSet(bits)
    }

    pub(crate) const fn contains(&self, kind: SyntaxKind) -> bool {
        let k = kind as usize;
        k < 256 && self.0[k / 64] & (1u64 << (k % 64)) != 0
    }
}
