#!/usr/bin/env bash
# The README's first command: set up, build cairn, and take an example program through it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo build --release -p cairn_cli
program=${1:-examples/hello.cairn}
echo "+ cairn check $program" >&2
./target/release/cairn check "$program" --format human
