#!/usr/bin/env bash
# Start-up cost of the command-line programs, as ratios taken in one run
# (the machines are shared and noisy): the median wall time of `april
# policies` and `april simulate --steps 1` against `april-live --help`, which
# loads libtorch as `april` itself did before the live commands moved out.
# With a second program (an older `april`), its `policies` is timed in the
# same run for a before/after ratio.
#   usage: bench/startup_bench.sh [BUILD_DIR] [OTHER_APRIL] [REPEATS]
set -euo pipefail
build=${1:-build}
other=${2:-}
repeats=${3:-15}
april="$build/cli/april"
live="$build/cli/april-live"
[ -x "$april" ] || { echo "startup_bench: $april not built" >&2; exit 2; }

# Median wall time in milliseconds of REPEATS runs of a command (output discarded).
median_ms() {
  local times=() t0 t1
  for ((i = 0; i < repeats; i++)); do
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m / 1000}'
}

# Peak resident memory in MB of one run.
peak_mb() { /usr/bin/time -f '%M' "$@" 2>&1 > /dev/null | tail -1 | awk '{printf "%.0f", $1 / 1024}'; }

policies=$(median_ms "$april" policies)
simulate=$(median_ms "$april" simulate --steps 1)
echo "april policies:            ${policies} ms median of $repeats, $(peak_mb "$april" policies) MB peak"
echo "april simulate --steps 1:  ${simulate} ms median of $repeats"
if [ -x "$live" ]; then
  torch=$(median_ms "$live" --help)
  echo "april-live --help:         ${torch} ms median of $repeats, $(peak_mb "$live" --help) MB peak (loads libtorch)"
  awk -v a="$policies" -v b="$torch" 'BEGIN {printf "ratio: april policies takes %.3f of the time of a program that loads libtorch\n", a / b}'
fi
if [ -n "$other" ]; then
  before=$(median_ms "$other" policies)
  before_sim=$(median_ms "$other" simulate --steps 1)
  echo "$other policies: ${before} ms median of $repeats, $(peak_mb "$other" policies) MB peak"
  echo "$other simulate --steps 1: ${before_sim} ms median of $repeats"
  awk -v a="$policies" -v b="$before" -v c="$simulate" -v d="$before_sim" \
    'BEGIN {printf "ratio, this april / the other: policies %.3f, simulate --steps 1 %.3f\n", a / b, c / d}'
fi
