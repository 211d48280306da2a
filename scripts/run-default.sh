#!/usr/bin/env bash
# Sets up everything (Debian packages), builds, and runs the main job: every
# policy compared on the built-in default scenario. Extra arguments go to
# `april simulate` (e.g. --out results). Quiet when all is in place: the
# build's output goes to build/run-default.log, shown only if it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
log=build/run-default.log
[ -x build/cli/april ] || echo "run-default: building april (about 25 minutes on 2 cores the first time; log: $log)"
if ! { cmake -S . -B build && cmake --build build -j2; } > "$log" 2>&1; then
  tail -n 40 "$log"
  echo "run-default: the build failed; the whole log is $log" >&2
  exit 1
fi
exec build/cli/april simulate "$@"
