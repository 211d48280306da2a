#!/usr/bin/env bash
# Renders every figure committed in notebooks/figures from the inputs the docs
# describe (the README's tour and the notebooks' own defaults), with Debian's
# jupyter and matplotlib under /usr/bin/python3. Same binary, same figures:
# the simulator is deterministic for its seeds and the plots carry no dates.
# usage: render_figures.sh APRIL OUT_DIR   (OUT_DIR notebooks/figures refreshes them)
set -euo pipefail
april=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
nbdir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MPLBACKEND=Agg APRIL_BIN=$april APRIL_FIG_DIR=$work/figures
run() {  # run NOTEBOOK: executes it from the notebooks folder, as a reader would
  (cd "$nbdir" && /usr/bin/python3 -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=1200 \
    --output-dir "$work/executed" "$1.ipynb" >"$work/$1.log" 2>&1) || { cat "$work/$1.log"; echo "render_figures: $1.ipynb failed" >&2; exit 1; }
}
# The README's tour: 3 steps of sync, APRIL and async on the default scenario.
APRIL_TIMELINE=$work/timeline.json APRIL_STEPS=3 run timeline
# The README's tour sweep, in a database named as there.
"$april" sweep --grid 'policy=sync,april;april.alpha=1.5,2,3' --repeats 2 --steps 10 --jobs 2 --db "$work/study.db" >/dev/null
APRIL_DB=$work/study.db run alpha_tuning
# The notebooks' own defaults (docs/policies.md, docs/default-scenario.md, docs/published-runs.md).
APRIL_SENSITIVITY_DB=$work/sensitivity.db run sensitivity
APRIL_MATRIX_DB=$work/policy_matrix.db run policy_matrix
APRIL_LA_DB=$work/length_aware.db run length_aware
run published_runs
for fig in timeline alpha_tuning sensitivity policy_matrix length_aware published_runs; do
  cp "$work/figures/$fig.png" "$out/$fig.png"
done
