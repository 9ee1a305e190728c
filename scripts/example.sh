#!/usr/bin/env bash
# The README's first command: set up, build cairn, then check, build and run an example program.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo build --release -p cairn_cli
program=${1:-examples/hello.cairn}
echo "+ cairn check $program" >&2
./target/release/cairn check "$program" --format human
echo "+ cairn run $program" >&2
./target/release/cairn run "$program" --format human
