#!/usr/bin/env bash
# Kills a sweep mid-way (SIGKILL), re-runs it, and checks that nothing was lost
# or duplicated; then runs two sweeps on one database at once.
# usage: sweep_resume_check.sh APRIL WORKDIR
set -euo pipefail
april=$1
dir=$2
# It reads the database with the sqlite3 program; without it every count
# reads 0 and the failure would look like lost runs.
command -v sqlite3 >/dev/null || { echo "sweep_resume_check.sh: needs the sqlite3 program (scripts/setup.sh installs it)" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
db=$dir/sweep.db
# sync ignores april.alpha: 4 sync runs (one per seed) + 6 x 4 APRIL runs = 28.
grid='policy=sync,april;april.alpha=1.25,1.5,1.75,2,2.5,3'
steps=150
count() { sqlite3 "$db" "$1"; }

"$april" sweep --grid "$grid" --repeats 4 --steps $steps --jobs 1 --db "$db" >"$dir/first.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  n=$( (count "SELECT COUNT(*) FROM runs" 2>/dev/null) || echo 0)
  [ "${n:-0}" -ge 3 ] && break
  sleep 0.05
done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
runs=$(count "SELECT COUNT(*) FROM runs")
echo "killed after $runs of 28 runs"
[ "$runs" -ge 3 ] || { echo "FAIL: the sweep stored too few runs before the kill"; exit 1; }
[ "$runs" -lt 28 ] || { echo "FAIL: the sweep finished before it could be killed"; exit 1; }
# Every stored run is whole: done, with all its steps and metrics.
[ "$(count "SELECT COUNT(*) FROM runs WHERE status<>'done'")" = 0 ] || { echo "FAIL: a run is not done"; exit 1; }
[ "$(count "SELECT COUNT(*) FROM steps")" = $((runs * steps)) ] || { echo "FAIL: half-written steps"; exit 1; }
[ "$(count "SELECT COUNT(DISTINCT run_id) FROM metrics")" = "$runs" ] || { echo "FAIL: a run without metrics"; exit 1; }

"$april" sweep --grid "$grid" --repeats 4 --steps $steps --jobs 2 --db "$db" >"$dir/second.log" 2>&1
grep -q "28 runs ($runs already stored" "$dir/second.log" || { cat "$dir/second.log"; echo "FAIL: resume did not skip the stored runs"; exit 1; }
grep -q "20 grid runs are the same run as another and made once (sync ignores april.alpha" "$dir/second.log" ||
  { cat "$dir/second.log"; echo "FAIL: the merged sync runs were not reported"; exit 1; }
# The rows of sync hold n/a for the key it ignores.
[ "$(count "SELECT COUNT(*) FROM sweep_runs WHERE params LIKE '%\"april.alpha\":\"n/a\"%'")" = 4 ] || { echo "FAIL: sync rows without n/a"; exit 1; }
[ "$(count "SELECT COUNT(*) FROM runs")" = 28 ] || { echo "FAIL: expected 28 runs"; exit 1; }
[ "$(count "SELECT COUNT(DISTINCT run_key) FROM runs")" = 28 ] || { echo "FAIL: duplicated runs"; exit 1; }
[ "$(count "SELECT COUNT(*) FROM steps")" = $((28 * steps)) ] || { echo "FAIL: step rows"; exit 1; }
[ "$(count "SELECT COUNT(*) FROM sweep_runs")" = 28 ] || { echo "FAIL: sweep links"; exit 1; }

# Two sweeps at once on one database, overlapping in half their runs.
db2=$dir/concurrent.db
"$april" sweep --grid 'policy=april;april.alpha=1.5,2,2.5,3' --repeats 3 --steps 60 --db "$db2" >"$dir/c1.log" 2>&1 &
p1=$!
"$april" sweep --grid 'policy=april;april.alpha=2.5,3,3.5,4' --repeats 3 --steps 60 --db "$db2" >"$dir/c2.log" 2>&1 &
p2=$!
wait $p1 || { cat "$dir/c1.log"; echo "FAIL: first concurrent sweep"; exit 1; }
wait $p2 || { cat "$dir/c2.log"; echo "FAIL: second concurrent sweep"; exit 1; }
db=$db2
[ "$(count "SELECT COUNT(*) FROM runs")" = 18 ] || { echo "FAIL: expected 18 distinct runs, got $(count "SELECT COUNT(*) FROM runs")"; exit 1; }
[ "$(count "SELECT COUNT(*) FROM sweep_runs")" = 24 ] || { echo "FAIL: expected 24 sweep links"; exit 1; }
[ "$(count "SELECT COUNT(*) FROM steps")" = $((18 * 60)) ] || { echo "FAIL: step rows"; exit 1; }
echo "sweep resume and concurrency: ok"
