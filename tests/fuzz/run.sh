#!/usr/bin/env bash
# Runs every fuzz target for SECONDS from its seed corpus (a scratch copy, so
# the tree is not written) and prints how many executions each made. A crash
# stops with the failing input saved under WORKDIR; add it to
# tests/fuzz/corpus/<target>/ once fixed, as a regression input.
#   usage: tests/fuzz/run.sh BUILD_DIR [SECONDS] [WORKDIR]
set -euo pipefail
build=$1
seconds=${2:-30}
work=${3:-$build/fuzz-work}
here=$(cd "$(dirname "$0")" && pwd)
for target in scenario trace topology profile model hardware published safetensors hf_config tokenizer math sglang openai; do
  bin="$build/tests/fuzz/fuzz_$target"
  [ -x "$bin" ] || { echo "fuzz: $bin not built" >&2; exit 2; }
  rm -rf "$work/$target" && mkdir -p "$work/$target/corpus" "$work/$target/crashes"
  cp "$here/corpus/$target/"* "$work/$target/corpus/"
  log="$work/$target/log"
  if ! "$bin" "$work/$target/corpus" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/$target/crashes/" -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz_$target: FAILED; the input is in $work/$target/crashes/"
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: $runs executions in ${seconds} s, no crash"
done
