#!/usr/bin/env bash
# The README's second command (and CI's): set up, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CI=${CI:-true}   # insta: a missing or changed snapshot fails instead of being written
cargo fmt --all -- --check
cargo test --workspace --locked
