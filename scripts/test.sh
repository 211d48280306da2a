#!/usr/bin/env bash
# Sets up everything (Debian packages), builds with warnings as errors and
# runs the whole test suite. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DAPRIL_WERROR=ON
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
