#!/usr/bin/env bash
# `april sweep`, `april tune` and `april plan` under MPI (mpirun -n 3 --oversubscribe: rank 0
# stores, two worker ranks simulate) store exactly what one process stores,
# bit for bit; a worker rank killed mid-sweep (SIGKILL) loses no stored run,
# and the re-run completes the sweep with no duplicate and no missing run.
# usage: mpi_sweep_check.sh APRIL MPIRUN WORKDIR
set -euo pipefail
april=$1
mpirun=$2
dir=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir" && mkdir -p "$dir"
# OpenMPI refuses root unless told; CI containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() { "$mpirun" -n 3 --oversubscribe "$@"; }
count() { sqlite3 "$1" "$2"; }

# Colocated and disaggregated designs, three policies (one of them async), a
# fixed override: 14 runs, some of which only exist in one design (sync and
# one_step_off ignore april.alpha: 4 + 8 + 2).
grid='policy=sync,april,one_step_off;design=colocated,4+4;april.alpha=1.5,2'
args=(--grid "$grid" --repeats 2 --set max_response_len=12000)

"$april" sweep "${args[@]}" --steps 60 --jobs 2 --db "$dir/one.db" >"$dir/one.log" 2>&1 || { cat "$dir/one.log"; exit 1; }
mpi "$april" sweep "${args[@]}" --steps 60 --jobs 1 --db "$dir/mpi.db" >"$dir/mpi.log" 2>&1 || { cat "$dir/mpi.log"; echo "FAIL: the MPI sweep"; exit 1; }
grep -q "ran on 3 MPI ranks: rank 0 collects, 2 simulate" "$dir/mpi.log" || { cat "$dir/mpi.log"; echo "FAIL: the sweep did not run on 3 ranks"; exit 1; }
/usr/bin/python3 "$here/results_db_compare.py" "$dir/one.db" "$dir/mpi.db" 14
# Two threads per worker rank store the same again.
mpi "$april" sweep "${args[@]}" --steps 60 --jobs 2 --db "$dir/mpi_threads.db" >"$dir/mpi_threads.log" 2>&1 ||
  { cat "$dir/mpi_threads.log"; exit 1; }
/usr/bin/python3 "$here/results_db_compare.py" "$dir/one.db" "$dir/mpi_threads.db" 14

# tune: the same search, the same runs and the same answer.
tune=(--param april.alpha --range 1:3 --points 3 --rounds 2 --repeats 2 --steps 40)
"$april" tune "${tune[@]}" --db "$dir/tune_one.db" >"$dir/tune_one.log" 2>/dev/null
mpi "$april" tune "${tune[@]}" --db "$dir/tune_mpi.db" >"$dir/tune_mpi.log" 2>/dev/null || { cat "$dir/tune_mpi.log"; exit 1; }
grep -q "ran on 3 MPI ranks" "$dir/tune_mpi.log" || { cat "$dir/tune_mpi.log"; echo "FAIL: tune did not run on 3 ranks"; exit 1; }
answer() { grep -v -e "^ran on" -e "^$" "$1" | sed "s|$2||"; }
diff <(answer "$dir/tune_one.log" tune_one.db) <(answer "$dir/tune_mpi.log" tune_mpi.db) || { echo "FAIL: tune under MPI answered differently"; exit 1; }
/usr/bin/python3 "$here/results_db_compare.py" "$dir/tune_one.db" "$dir/tune_mpi.db"

# SIGKILL a worker rank mid-sweep. Longer runs, so that it is mid-sweep.
steps=1500
"$april" sweep "${args[@]}" --steps $steps --jobs 2 --db "$dir/ref.db" >"$dir/ref.log" 2>&1
db=$dir/killed.db
setsid "$mpirun" -n 3 --oversubscribe "$april" sweep "${args[@]}" --steps $steps --jobs 1 --db "$db" >"$dir/killed.log" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 1200); do
  n=$( (count "$db" "SELECT COUNT(*) FROM runs" 2>/dev/null) || echo 0)
  if [ "${n:-0}" -ge 3 ]; then
    for p in $(pgrep -f "sweep.*$db" || true); do
      if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && [ "$(cat /proc/$p/comm)" = april ]; then victim=$p; fi
    done
    [ -n "$victim" ] && break
  fi
  sleep 0.05
done
[ -n "$victim" ] || { kill -9 -- -$job 2>/dev/null || true; cat "$dir/killed.log"; echo "FAIL: found no worker rank to kill"; exit 1; }
kill -9 "$victim"
rc=0
wait $job || rc=$?
[ $rc -ne 0 ] || { cat "$dir/killed.log"; echo "FAIL: the job went on as if no rank had died"; exit 1; }
runs=$(count "$db" "SELECT COUNT(*) FROM runs")
echo "worker rank killed after $runs of 14 runs (mpirun exit $rc)"
[ "$runs" -lt 14 ] || { echo "FAIL: the sweep finished before the kill"; exit 1; }
[ "$(count "$db" "SELECT COUNT(*) FROM runs WHERE status<>'done'")" = 0 ] || { echo "FAIL: a run is not done"; exit 1; }
[ "$(count "$db" "SELECT COUNT(*) FROM steps")" = $((runs * steps)) ] || { echo "FAIL: half-written steps"; exit 1; }
[ "$(count "$db" "SELECT COUNT(DISTINCT run_id) FROM metrics")" = "$runs" ] || { echo "FAIL: a run without metrics"; exit 1; }
mpi "$april" sweep "${args[@]}" --steps $steps --jobs 1 --db "$db" >"$dir/resumed.log" 2>&1 || { cat "$dir/resumed.log"; exit 1; }
grep -q "14 runs ($runs already stored" "$dir/resumed.log" || { cat "$dir/resumed.log"; echo "FAIL: the re-run did not skip the stored runs"; exit 1; }
[ "$(count "$db" "SELECT COUNT(*) FROM sweep_runs")" = 14 ] || { echo "FAIL: sweep links"; exit 1; }
/usr/bin/python3 "$here/results_db_compare.py" "$dir/ref.db" "$db" 14
# plan: the same plans, ranked the same, as on one process's threads.
plan=(plan --steps 5 --repeats 2 --policy sync,april,async --alpha 1.5,2 --tp 1,2)
"$april" "${plan[@]}" --jobs 2 --json "$dir/plan_one.json" >/dev/null 2>&1 || { echo "FAIL: plan"; exit 1; }
mpi "$april" "${plan[@]}" --jobs 1 --json "$dir/plan_mpi.json" >"$dir/plan_mpi.log" 2>&1 || { cat "$dir/plan_mpi.log"; exit 1; }
grep -q "ran on 3 MPI ranks" "$dir/plan_mpi.log" || { cat "$dir/plan_mpi.log"; echo "FAIL: plan did not run on 3 ranks"; exit 1; }
/usr/bin/python3 -c "import json, sys; a, b = (json.load(open(p))['plans'] for p in sys.argv[1:]); sys.exit(0 if a == b else 1)" \
  "$dir/plan_one.json" "$dir/plan_mpi.json" || { echo "FAIL: plan under MPI planned differently"; exit 1; }
echo "sweeps, tuning and plans under MPI: ok"
