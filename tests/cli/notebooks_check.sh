#!/usr/bin/env bash
# Executes every notebook headless (Debian's jupyter under /usr/bin/python3)
# on small inputs made here, so that a broken notebook fails the suite.
# usage: notebooks_check.sh APRIL NOTEBOOK_DIR WORKDIR
set -euo pipefail
april=$1
nbdir=$2
dir=$3
rm -rf "$dir" && mkdir -p "$dir"
"$april" sweep --grid 'april.alpha=1.5,2,3' --repeats 2 --steps 8 --db "$dir/results.db" >/dev/null 2>&1
"$april" simulate --steps 6 --out "$dir/out" >/dev/null
"$april" trace synth --groups 200 --seed 2 "$dir/synth.jsonl" >/dev/null
"$april" trace synth --groups 200 --seed 3 --set workload.sigma_between=1.0 "$dir/synth2.jsonl" >/dev/null
export APRIL_DB=$dir/results.db APRIL_OUT=$dir/out APRIL_TRACES=$dir/synth.jsonl,$dir/synth2.jsonl APRIL_FIG_DIR=$dir/figures
export MPLBACKEND=Agg
# validation.ipynb needs a live run; the live tests execute it.
for nb in "$nbdir"/alpha_tuning.ipynb "$nbdir"/policy_comparison.ipynb "$nbdir"/trace_analysis.ipynb; do
  /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
    --output-dir "$dir/executed" "$nb" >"$dir/$(basename "$nb").log" 2>&1 || { cat "$dir/$(basename "$nb").log"; echo "FAIL: $nb"; exit 1; }
done
# The sensitivity study runs its own sweeps: small ones here.
APRIL_BIN=$april APRIL_SENSITIVITY_DB=$dir/sensitivity.db APRIL_STEPS=5 APRIL_SEEDS=2 \
  /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$dir/executed" "$nbdir/sensitivity.ipynb" >"$dir/sensitivity.ipynb.log" 2>&1 ||
  { cat "$dir/sensitivity.ipynb.log"; echo "FAIL: $nbdir/sensitivity.ipynb"; exit 1; }
APRIL_BIN=$april APRIL_MATRIX_DB=$dir/policy_matrix.db APRIL_STEPS=5 APRIL_SEEDS=2 \
  /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$dir/executed" "$nbdir/policy_matrix.ipynb" >"$dir/policy_matrix.ipynb.log" 2>&1 ||
  { cat "$dir/policy_matrix.ipynb.log"; echo "FAIL: $nbdir/policy_matrix.ipynb"; exit 1; }
APRIL_BIN=$april APRIL_LA_DB=$dir/length_aware.db APRIL_STEPS=10 APRIL_SEEDS=2 APRIL_DATASET=64 \
  /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$dir/executed" "$nbdir/length_aware.ipynb" >"$dir/length_aware.ipynb.log" 2>&1 ||
  { cat "$dir/length_aware.ipynb.log"; echo "FAIL: $nbdir/length_aware.ipynb"; exit 1; }
# The timeline notebook makes its own 3-step run of sync, APRIL and async.
APRIL_BIN=$april APRIL_TIMELINE=$dir/timeline.json APRIL_STEPS=3 \
  /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$dir/executed" "$nbdir/timeline.ipynb" >"$dir/timeline.ipynb.log" 2>&1 ||
  { cat "$dir/timeline.ipynb.log"; echo "FAIL: $nbdir/timeline.ipynb"; exit 1; }
# The published-runs plot reads `april reproduce --json` over the shipped setups.
APRIL_BIN=$april APRIL_PUBLISHED="$(ls "$nbdir"/../examples/published/*.json | paste -sd,)" \
  /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$dir/executed" "$nbdir/published_runs.ipynb" >"$dir/published_runs.ipynb.log" 2>&1 ||
  { cat "$dir/published_runs.ipynb.log"; echo "FAIL: $nbdir/published_runs.ipynb"; exit 1; }
for fig in timeline.png alpha_tuning.png policy_rollout_time.png policy_occupancy.png trace_cdf.png trace_group_spread.png sensitivity.png \
  policy_matrix.png length_aware.png published_runs.png; do
  [ -s "$dir/figures/$fig" ] || { echo "FAIL: $fig was not drawn"; exit 1; }
done
echo "notebooks: ok"
