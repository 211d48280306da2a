#!/usr/bin/env bash
# Designs on one GPU budget from the command line: the default table compares
# colocated and split designs, whatif and sweep take a `design` axis and leave
# out what is no design, and tune moves a split by whole engines.
# usage: cli_designs_check.sh APRIL WORKDIR
set -uo pipefail
april=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The default policies: three colocated, the two overlapping ones on the fastest split.
"$april" simulate --steps 3 --out "$dir/sim" >"$dir/sim.txt" 2>&1 || fail "simulate: $(tail -3 "$dir/sim.txt")"
for row in "sync +8 coloc" "april +8 coloc" "sorted +8 coloc" "one_step_off +[0-9]+\+[0-9]+ " "async +[0-9]+\+[0-9]+ "; do
  grep -Eq "^$row" "$dir/sim.txt" || fail "simulate: no row '$row' in: $(cat "$dir/sim.txt")"
done
grep -q "async overlaps rollout and training, so it runs on the split with the least s/step (this seed): 2+6 .*, 4+4 .*, 6+2 " \
  "$dir/sim.txt" || fail "simulate does not say which splits async tried"
/usr/bin/python3 - "$dir/sim/summary.json" <<'PY' || fail "summary.json lacks the cluster of each policy"
import json, sys
s = json.load(open(sys.argv[1]))["policies"]
assert s["april"]["cluster"]["mode"] == "colocated" and s["april"]["cluster"]["train_gpus"] == 8, s["april"]["cluster"]
a = s["async"]
assert a["cluster"]["mode"] == "disaggregated" and a["cluster"]["rollout_gpus"] + a["cluster"]["train_gpus"] == 8
best = min(a["split_search"], key=lambda t: t["step_time_s"])
assert best["rollout_gpus"] == a["cluster"]["rollout_gpus"], (best, a["cluster"])
assert abs(best["step_time_s"] - a["step_time_s"]) < 1e-9 * best["step_time_s"]
PY
# One GPU allows no split: the default leaves the overlapping policies out, asking for one is an error.
"$april" simulate --scenario handcheck --steps 2 >"$dir/hc.txt" 2>&1 || fail "simulate handcheck: $(tail -3 "$dir/hc.txt")"
grep -q "^async" "$dir/hc.txt" && fail "simulate handcheck ran async on 1 GPU"
"$april" simulate --scenario handcheck --steps 2 --policy async >/dev/null 2>"$dir/err" && fail "async on 1 GPU exited 0"
grep -q "leaves no split" "$dir/err" || fail "async on 1 GPU: $(cat "$dir/err")"

# whatif over designs: the colocated x async combination is listed, not run.
"$april" whatif --vary design=colocated,6+2 --policy april,async --steps 2 --csv "$dir/w.csv" >"$dir/w.txt" 2>&1 ||
  fail "whatif design: $(tail -3 "$dir/w.txt")"
[ "$(tail -n +2 "$dir/w.csv" | wc -l)" = 3 ] || fail "whatif design: expected 3 rows, got $(cat "$dir/w.csv")"
grep -q "design=colocated x async: async overlaps rollout and training" "$dir/w.txt" || fail "whatif does not list what it left out"
"$april" whatif --vary design=colocated --policy async --steps 2 >/dev/null 2>"$dir/err" && fail "whatif with no design exited 0"
grep -q "no combination is a design" "$dir/err" || fail "whatif with no design: $(cat "$dir/err")"
"$april" whatif --vary design=6x2 --steps 2 >/dev/null 2>"$dir/err" && fail "a malformed design exited 0"
grep -q "design '6x2': expected colocated or R+T" "$dir/err" || fail "a malformed design: $(cat "$dir/err")"

# sweep over designs stores the designs only.
"$april" sweep --grid 'design=colocated,6+2;policy=april,async' --steps 2 --db "$dir/s.db" >"$dir/s.txt" 2>&1 ||
  fail "sweep design: $(tail -3 "$dir/s.txt")"
grep -q "sweep 1 in .*: 3 runs" "$dir/s.txt" || fail "sweep design: $(cat "$dir/s.txt")"

# tune over the split tries whole engines only (TP 2: 2, 4, 6) and refuses a range off that lattice.
"$april" tune --set cluster.mode=disaggregated --policy async --param cluster.rollout_gpus --range 2:6 --points 3 --rounds 3 \
  --objective step_time_s --direction min --constraint 'staleness_max<=3' --steps 3 --repeats 2 --db "$dir/t.db" >"$dir/t.txt" 2>&1 ||
  fail "tune split: $(tail -3 "$dir/t.txt")"
values=$(grep -E "^ +[0-9]+ +[0-9.]+ " "$dir/t.txt" | awk '{print $1}' | tr '\n' ' ')
[ "$values" = "2 4 6 " ] || fail "tune split tried '$values', not '2 4 6 '"
grep -q "recommended cluster.rollout_gpus = [246]:" "$dir/t.txt" || fail "tune split: $(cat "$dir/t.txt")"
"$april" tune --set cluster.mode=disaggregated --policy async --param cluster.rollout_gpus --range 2:5 --steps 1 --db "$dir/t2.db" \
  >/dev/null 2>"$dir/err" && fail "tune on a range off the lattice exited 0"
grep -q "HI - LO must be a multiple of 2" "$dir/err" || fail "tune off the lattice: $(cat "$dir/err")"

# whatif ranks within each varied workload: shorter answers are faster work, not a faster design.
"$april" whatif --vary workload.response_median_tok=1000,4000 --policy sync,april --steps 3 --csv "$dir/w.csv" >"$dir/w.txt" 2>&1 ||
  fail "whatif over a workload key: $(tail -3 "$dir/w.txt")"
grep -q "^rank: within each value of workload.response_median_tok" "$dir/w.txt" || fail "the per-workload rank is not said"
/usr/bin/python3 - "$dir/w.csv" <<'PY' || fail "whatif ranks across workloads"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["workload.response_median_tok"], []).append(r)
for w, rs in by.items():
    ranks = sorted(int(r["rank"]) for r in rs)
    assert ranks == list(range(1, len(rs) + 1)), (w, ranks)
    assert any(r["rank"] == "1" for r in rs), w
PY
[ $fails -eq 0 ] && echo "all design checks passed"
exit $fails
