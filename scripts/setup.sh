#!/usr/bin/env bash
# Installs what building and testing cairn needs, and nothing twice.
#
# - Debian packages: LLVM 19 (code generation), Z3 (equivalence), the libraries llvm-config
#   lists for static linking, the `z3` binary (tests re-check written SMT-LIB obligations with it), and Python with venv for the end-to-end clients. Only missing packages are installed, so a second run
#   changes nothing. valgrind checks every run test for invalid accesses and leaks (memcheck) and the
#   parallel ones for data races (helgrind). gcc is the system `cc` that compiles the runtime and
#   links programs, and builds the parallel benchmark's OpenMP twins (`-fopenmp`). neovim runs the
#   editor runtime's headless test (editors/nvim against `cairn lsp`). bubblewrap confines
#   agent-written programs (`cairn run --sandbox`, validate, tune; docs/sandbox.md). Nothing is
#   downloaded from anywhere but Debian's package registry.
# - The Python clients the end-to-end tests drive (MCP, LSP), and NVIDIA's `ptxas` (PyPI's
#   nvidia-cuda-nvcc-cu12, which assembles the PTX of the device tests), in ./.venv, from PyPI
#   (tests/python/requirements.txt).
# Needs: a Rust toolchain (cargo >= 1.89) on PATH; root or sudo for apt.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(llvm-19-dev libpolly-19-dev libzstd-dev libz3-dev z3 zlib1g-dev libffi-dev libxml2-dev python3 python3-venv valgrind gcc neovim bubblewrap)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is not on PATH; install a Rust toolchain (1.89 or newer) first." >&2
  exit 2
fi

if [ -f tests/python/requirements.txt ]; then
  stamp=.venv/.requirements.sha256
  want=$(sha256sum tests/python/requirements.txt | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: preparing the Python test clients in .venv" >&2
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
    echo "$want" > "$stamp"
  fi
fi
