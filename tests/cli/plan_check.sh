#!/usr/bin/env bash
# `april plan` as a user runs it: the ranking, the exclusions with their
# reasons, the same plans whatever the worker threads, and its refusals.
# usage: plan_check.sh APRIL WORKDIR
set -uo pipefail
april=$1
dir=$(realpath -m "$2")
rm -rf "$dir" && mkdir -p "$dir"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# shellcheck source=expect_error.sh
source "$(dirname "$0")/expect_error.sh"
cd "$dir" || exit 1
expect_error "a zero engine size" "--tp '0': expected a comma list" "$april" plan --tp 0
expect_error "a word for an alpha" "--alpha '2,x'" "$april" plan --alpha 2,x
expect_error "no engine for the tail" "--tail-engines '0': expected a comma list" "$april" plan --tail-engines 0
expect_error "an unknown design" "no_such" "$april" plan --policy no_such
expect_error "no seeds" "--repeats must be in" "$april" plan --repeats 0

# Qwen3-30B-A3B on 8 H100 at 70% of each GPU for the engines: one GPU (56 GB) does not hold its
# 61 GB, two do; a Megatron trainer with experts over 4 GPUs and its optimizer on the CPU, as
# slime's script sets, holds its states (52.7 GB) and activations (23.1 GB) on 4 or 8 GPUs.
args=(plan --exhaustive --steps 3 --repeats 2 --policy sync,april,async --alpha 1.5,2 --tp 1,2 --max-splits 2 --set model=qwen3-30b-a3b
  --set engine.gpu_memory_fraction=0.7 --set train.expert_parallel=4 --set train.optimizer_offload_fraction=1)
"$april" "${args[@]}" --json "$dir/a.json" >"$dir/a.txt" 2>"$dir/a.err" || fail "plan exited $?: $(head -c 300 "$dir/a.err")"
"$april" "${args[@]}" --jobs 2 --json "$dir/b.json" >"$dir/b.txt" 2>/dev/null || fail "plan --jobs 2 failed"
grep -q "^  sync, TP 1, colocated: qwen3-30b-a3b in bf16 needs 61.1 GB of weights; TP 1 on h100" "$dir/a.txt" ||
  fail "TP 1 not excluded with its reason: $(head -c 600 "$dir/a.txt")"
grep -q "best plans by effective throughput" "$dir/a.txt" || fail "no ranking printed"
grep -q "each design's best:" "$dir/a.txt" || fail "no per-design table"
grep -q "^trust: " "$dir/a.txt" || fail "no trust line under the plan"
# async overlaps rollout and training: the ranking line quotes the checked design pairs; sync and APRIL alone were never compared.
grep -q "^ranking: of [0-9]* published speed-ups of an overlapped design" "$dir/a.txt" || fail "no ranking line under the plan"

# One seed has no interval: said, not printed as "+/- 0".
"$april" plan --steps 2 --repeats 1 --policy sync,april --alpha 2 --tp 2 >"$dir/one.txt" 2>&1 || fail "plan --repeats 1 failed"
grep -q "(one seed)" "$dir/one.txt" || fail "one seed not said: $(head -c 400 "$dir/one.txt")"
grep -q "^ranking: no published run compared these designs" "$dir/one.txt" || fail "sync and APRIL ranked as if checked"
grep -q "+/- 0" "$dir/one.txt" && fail "one seed printed as +/- 0"
/usr/bin/python3 - "$dir/a.json" "$dir/b.json" <<'PY' || fail "plan JSON"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["plans"] == b["plans"], "threads changed the plans"
run = [p for p in a["plans"] if "excluded" not in p]
out = [p for p in a["plans"] if "excluded" in p]
# TP 2: sync, APRIL at two alphas, async on the one split the trainer's expert groups of 4 allow (4+4);
# TP 1: the same four, excluded.
assert len(run) == 4 and len(out) == 4, (len(run), len(out))
assert [p["plan"] for p in run if p["policy"] == "async"] == ["async, TP 2, 4+4"]
tok = [p["effective_throughput_tok_s"] for p in run]
assert tok == sorted(tok, reverse=True), tok
assert all(p["seeds"] == 2 and p["effective_throughput_ci95"] >= 0 and p["reason"] for p in run)
assert all("needs 61.1 GB" in p["excluded"] for p in out)
PY
# Constraints: the cautious default said; a stricter one drops the overlapping designs with their values;
# 'none' keeps them; an unknown metric is refused before any run.
grep -q "^constraints: staleness_max<=4 (the default)" "$dir/a.txt" || fail "the default constraint is not said"
"$april" plan --steps 3 --repeats 1 --policy sync,async --tp 2 --max-splits 2 --constraint 'staleness_max<1' >"$dir/c.txt" 2>&1 ||
  fail "plan --constraint failed: $(head -c 300 "$dir/c.txt")"
grep -q "^constraints: staleness_max<1$" "$dir/c.txt" || fail "the constraint is not said: $(head -c 300 "$dir/c.txt")"
grep -q "async, TP 2, .*: dropped by the constraint staleness_max<1: staleness_max is [1-9][0-9]* on 1 seed of 2 steps (the race drops a plan there)" "$dir/c.txt" ||
  fail "async not dropped with its value: $(cat "$dir/c.txt")"
"$april" plan --exhaustive --steps 3 --repeats 1 --policy sync,async --tp 2 --max-splits 2 --constraint 'staleness_max<1' >"$dir/ce.txt" 2>&1 ||
  fail "plan --exhaustive --constraint failed: $(head -c 300 "$dir/ce.txt")"
grep -q "async, TP 2, .*: dropped by the constraint staleness_max<1: staleness_max is [1-9][0-9]* (mean over 1 seed)" "$dir/ce.txt" ||
  fail "async not dropped with its value in full: $(cat "$dir/ce.txt")"
"$april" plan --steps 3 --repeats 1 --policy sync,async --tp 2 --max-splits 2 --constraint none >"$dir/n.txt" 2>&1 || fail "--constraint none failed"
grep -q "^constraints: none" "$dir/n.txt" && ! grep -q "dropped by" "$dir/n.txt" || fail "--constraint none: $(head -c 300 "$dir/n.txt")"
expect_error "an unknown metric" "unknown metric 'stalenes'" "$april" plan --constraint 'stalenes<=2'
expect_error "none beside another" "--constraint none stands alone" "$april" plan --constraint none --constraint 'staleness_max<=2'
# A search of hours says so before it starts, from one simulated step (then this one is cut short).
timeout 5 "$april" plan --steps 100000 --repeats 100 --policy sync --tp 2 >"$dir/long.txt" 2>"$dir/long.err"
grep -Eq "^april plan: one step of sync, TP 2, colocated takes [0-9.e-]+ s here; the search should take about [0-9.]+ (min|h) \(a race; every plan in full: [0-9.]+ (min|h)\), fewer --steps" "$dir/long.err" ||
  fail "no estimate before a long search: $(head -c 300 "$dir/long.err")"
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
