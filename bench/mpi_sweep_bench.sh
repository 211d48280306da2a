#!/usr/bin/env bash
# `april sweep` under MPI on this machine, as ratios taken in one run (the
# machines are shared and noisy):
#  1. runs per second of one sweep (24 runs of the default scenario) in one
#     process with 1 and 2 threads, and under mpirun with 1 and 2 worker ranks
#     (-n 2, -n 3: rank 0 only stores), each against one process, one thread;
#  2. rank 0's store rate: a sweep of trivial runs (1 step each) on 3 ranks,
#     where rank 0 is the bottleneck; its sustained rate, and the ceiling its
#     own write time allows (runs / seconds spent in database writes).
#   usage: bench/mpi_sweep_bench.sh [BUILD_DIR] [STEPS]
set -euo pipefail
build=${1:-build}
steps=${2:-600}
april="$build/cli/april"
[ -x "$april" ] || { echo "mpi_sweep_bench: $april not built" >&2; exit 2; }
mpirun=$(command -v mpirun) || { echo "mpi_sweep_bench: mpirun not found (apt-get install openmpi-bin)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Seconds a sweep takes into a fresh database (its output in $dir/last.log).
seconds() {
  rm -f "$dir/b.db" "$dir/b.db-wal" "$dir/b.db-shm"
  local t0 t1
  t0=$(date +%s%N)
  "$@" --db "$dir/b.db" >"$dir/last.log" 2>/dev/null
  t1=$(date +%s%N)
  awk -v ns=$((t1 - t0)) 'BEGIN {printf "%.3f", ns / 1e9}'
}

grid=(--grid 'policy=sync,april;april.alpha=1.5,2,3' --repeats 4 --steps "$steps")
runs=24
echo "sweep of $runs runs (default scenario, $steps steps each), $(nproc) cores:"
base=$(seconds "$april" sweep "${grid[@]}" --jobs 1)
row() { awk -v n=$runs -v s="$2" -v b="$base" 'BEGIN {printf "  %-38s %7.2f runs/s  %5.2fx\n", "'"$1"'", n / s, b / s}'; }
row "1 process, 1 thread" "$base"
row "1 process, 2 threads" "$(seconds "$april" sweep "${grid[@]}" --jobs 2)"
row "mpirun -n 2 (1 worker rank)" "$(seconds "$mpirun" -n 2 --oversubscribe "$april" sweep "${grid[@]}" --jobs 1)"
row "mpirun -n 3 (2 worker ranks)" "$(seconds "$mpirun" -n 3 --oversubscribe "$april" sweep "${grid[@]}" --jobs 1)"
sed -n 's/.*rank 0 stored \([0-9]*\) runs in \([0-9.]*\) s of writes.*/\1 \2/p' "$dir/last.log" |
  awk -v steps="$steps" '{printf "  rank 0 wrote each run of %d steps in %.2f ms (a ceiling of %.0f runs/s)\n", steps, 1000 * $2 / $1, $1 / $2}'

trivial=(--grid 'april.alpha=1.25,1.5,1.75,2' --repeats 100 --steps 1 --set max_response_len=64 --set rollout_batch_size=2 --set n_samples_per_prompt=2)
n=400
s=$(seconds "$mpirun" -n 3 --oversubscribe "$april" sweep "${trivial[@]}" --jobs 2)
echo "rank 0 storing $n trivial runs from 2 worker ranks x 2 threads:"
awk -v n=$n -v s="$s" 'BEGIN {printf "  sustained: %.0f runs/s (the whole job, start-up included)\n", n / s}'
sed -n 's/.*rank 0 stored \([0-9]*\) runs in \([0-9.]*\) s of writes.*/\1 \2/p' "$dir/last.log" |
  awk '{printf "  ceiling:   %.0f runs/s (%d runs in %.3f s of database writes, %.2f ms each)\n", $1 / $2, $1, $2, 1000 * $2 / $1}'
