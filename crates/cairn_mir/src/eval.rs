//! The reference evaluator of MIR (used by the differential test against compiled code).
