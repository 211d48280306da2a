#!/usr/bin/env bash
# Sets up everything (Debian packages), builds, and runs the main job: sync,
# APRIL and sorted compared on the built-in default scenario. Extra arguments
# go to `april simulate` (e.g. --out results).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build
cmake --build build -j2
exec build/cli/april simulate "$@"
