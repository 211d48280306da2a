#!/usr/bin/env bash
# Failures a script relies on: every one is a non-zero exit with a message
# that says what is wrong; output that cannot be written is a failure too.
# usage: cli_arguments_check.sh APRIL WORKDIR
set -uo pipefail
april=$1
dir=$2
[ -d "$dir/readonly" ] && chmod 755 "$dir/readonly"
rm -rf "$dir" && mkdir -p "$dir" && chmod 755 "$dir"
fails=0
# expect_error WHAT PATTERN CMD...: CMD exits non-zero (not by a signal) and stderr matches PATTERN.
expect_error() {
  local what=$1 pattern=$2
  shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || ! grep -q -- "$pattern" "$dir/err"; then
    echo "FAIL: $what: rc=$rc, stderr: $(head -c 300 "$dir/err")"
    fails=$((fails + 1))
  fi
}
expect_error "a stray positional argument" "unexpected argument 'handcheck'" "$april" simulate handcheck
expect_error "an empty --policy" "an empty policy name" "$april" simulate --policy '' --steps 1
expect_error "a trailing comma in --policy" "an empty policy name" "$april" simulate --policy sync, --steps 1
expect_error "a policy named twice" "'sync' is named twice" "$april" simulate --policy sync --policy april,sync --steps 1
# A batch the filter can never fill is refused up front, or stopped with its count (never a run without end).
expect_error "the filter on groups of one" "n_samples_per_prompt = 1 always does" \
  timeout 30 "$april" simulate --scenario handcheck --set filter.dynamic_sampling=true --set n_samples_per_prompt=1 --steps 1
for i in 1 2 3 4 5 6 7 8; do echo "{\"prompt_id\": \"p$i\", \"prompt_tokens\": 9, \"response_tokens\": [4, 5], \"correct\": [true, true]}"; done \
  > "$dir/solved.jsonl"
expect_error "a workload the filter always rejects" "rejected 1001 groups in a row" \
  timeout 30 "$april" simulate --scenario handcheck --trace "$dir/solved.jsonl" --set filter.dynamic_sampling=true --steps 1 --policy sync
# Studies that grow with a flag are refused up front with their size, before any file is made.
expect_error "a sweep of 2e8 runs" "makes 200000000 runs" \
  timeout 30 "$april" sweep --scenario handcheck --grid 'april.alpha=1.5,2' --repeats 100000000 --db "$dir/huge.db"
expect_error "a whatif of 1.6e7 rows" "makes 16000000 runs" timeout 30 "$april" whatif --scenario handcheck --policy sync \
  --vary "seed=$(seq -s, 1 4000)" --vary "april.alpha=$(seq -s, 1 4000)"
expect_error "a tune round of 3e8 runs" "more runs per round" \
  timeout 30 "$april" tune --scenario handcheck --param april.alpha --range 1:3 --points 100000000 --db "$dir/huge.db"
expect_error "a synthetic trace of 1e12 groups" "the limit is 4 GB" timeout 30 "$april" trace synth "$dir/huge.jsonl" --groups 1000000000000
[ ! -e "$dir/huge.db" ] && [ ! -e "$dir/huge.jsonl" ] || { echo "FAIL: a refused study left a file"; fails=$((fails + 1)); }
# A published-run file with an error is refused by field before any run.
printf '{"source": {"title": "t"}, "scenario": {}, "steps": 3, "fit": {"row": "a", "procedure": "p", "fitted": {}},\n "rows": [{"name": "a", "policy": "sync", "published": {"step_time": 1}}]}' > "$dir/pub.json"
expect_error "a published row with an unknown metric" "unknown metric 'step_time'" "$april" reproduce "$dir/pub.json"
sed -i 's/"step_time"/"step_s"/; s/"row": "a"/"row": "b"/' "$dir/pub.json"
expect_error "a fit row that is not a row" "no row named 'b'" "$april" reproduce "$dir/pub.json"
sed 's/"policy": "sync",/"policy": "sync", "timers": "slime",/' "$dir/pub.json" | sed 's/"row": "b"/"row": "a"/' > "$dir/pub-timers.json"
expect_error "a row with unknown timers" "expected \"april\" or \"verl_fully_async\", got \"slime\"" "$april" reproduce "$dir/pub-timers.json"
sed 's/"row": "b"/"row": "a", "search": [{"key": "train.fixed_s", "metric": "step_s", "lo": 0, "hi": 1, "row": "c"}]/' "$dir/pub.json" > "$dir/pub-search.json"
expect_error "a search fitted on a row that is not a row" "no row named 'c'" "$april" reproduce "$dir/pub-search.json"
printf '{"source": {"title": "t"}, "scenario": {}, "steps": 3, "fit": {"row": "a", "procedure": "p", "fitted": {}},\n "rows": [{"name": "a", "policy": "sync", "published": {"step_s": 1}},\n  {"name": "b", "policy": "april", "published": {"speedup": 2}}]}' > "$dir/pub-speedup.json"
expect_error "a speedup with no baseline row" "pub-speedup.json:3:" "$april" reproduce "$dir/pub-speedup.json"
expect_error "a speedup with no baseline row (why)" "a speedup needs \"speedup_over\"" "$april" reproduce "$dir/pub-speedup.json"
sed -i 's/"published": {"speedup": 2}/"published": {"speedup": 2}, "speedup_over": "c"/' "$dir/pub-speedup.json"
expect_error "a speedup over a row that is not a row" "row 'b': no row named 'c'" "$april" reproduce "$dir/pub-speedup.json"
expect_error "plan --tp ''" "--tp: empty list" "$april" plan --tp '' --steps 1
expect_error "an engine TP that splits no heads evenly" "cluster.tensor_parallel 3 does not divide qwen3-4b's 32 attention heads" \
  "$april" simulate --set cluster.tensor_parallel=3 --set cluster.engines=2 --set cluster.gpus=6 --steps 1 --policy sync
# live's arguments are read by april-live, which a build without libtorch does not have.
if [ -x "$(dirname "$april")/april-live" ]; then
  expect_error "live --engines ''" "--engines: expected URL" "$april" live --engines '' --steps 1
fi
expect_error "an axis varied twice" "key 'april.alpha' is varied twice" \
  "$april" whatif --scenario handcheck --vary april.alpha=1,2 --vary april.alpha=3 --steps 1
expect_error "stdout on a full disk" "cannot write to standard output" sh -c "\"$april\" policies > /dev/full"
# Long outputs fail inside the print itself (fmt throws); still one line, in our words, with the reason.
expect_error "keys --markdown to a full disk" "cannot write to standard output: No space left on device" sh -c "\"$april\" keys --markdown > /dev/full"
expect_error "model show to a full disk" "cannot write to standard output" sh -c "\"$april\" model show qwen3-0.6b > /dev/full"
expect_error "hardware show to a full disk" "cannot write to standard output" sh -c "\"$april\" hardware show h20 > /dev/full"
sed 's/"row": "b"/"row": "a"/' "$dir/pub.json" > "$dir/pub-ok.json"
expect_error "reproduce --json to a full disk" "cannot write to standard output" sh -c "\"$april\" reproduce \"$dir/pub-ok.json\" --json > /dev/full"
# A misspelt field would drop what it holds: refused by name, as is an unknown base.
sed 's/"policy": "sync", "published"/"policy": "sync", "sett": {"seed": 2}, "published"/' "$dir/pub-ok.json" > "$dir/pub-typo.json"
expect_error "a row's misspelt field" "row 'a': unknown field 'sett'" "$april" reproduce "$dir/pub-typo.json"
sed 's/"steps": 3,/"steps": 3, "warmup_step": 1,/' "$dir/pub-ok.json" > "$dir/pub-typo.json"
expect_error "a misspelt top-level field" "the setup: unknown field 'warmup_step'" "$april" reproduce "$dir/pub-typo.json"
sed 's/"scenario": {}/"scenario": {"base": "nosuch"}/' "$dir/pub-ok.json" > "$dir/pub-typo.json"
expect_error "an unknown base scenario" "'base': \"nosuch\" is not a built-in scenario" "$april" reproduce "$dir/pub-typo.json"
sed 's/"scenario": {}/"scenario": {"base": "handcheck"}/' "$dir/pub-ok.json" > "$dir/pub-base.json"
"$april" reproduce "$dir/pub-base.json" | grep -q "engine.*handcheck\|predictions\|step_s" || { echo "FAIL: a published setup on a base scenario did not run"; fails=$((fails + 1)); }
"$april" sweep --scenario handcheck --grid 'april.alpha=1.5,2' --steps 2 --db "$dir/r.db" >/dev/null 2>&1 || { echo "FAIL: sweep"; fails=$((fails + 1)); }
expect_error "db export to a full disk" "cannot write to standard output" sh -c "\"$april\" db export \"$dir/r.db\" 1 > /dev/full"
# Output destinations are checked before the first run.
expect_error "--csv into a missing folder" "folder $dir/missing does not exist" \
  "$april" whatif --scenario handcheck --vary april.alpha=1.5 --steps 1 --csv "$dir/missing/w.csv"
expect_error "--out where a file stands" "exists and is not a folder" "$april" simulate --steps 1 --out "$dir/r.db"
# An earlier april --out DIR is replaced whole: nothing of that run stays beside the new files.
"$april" simulate --scenario handcheck --steps 2 --policy april --out "$dir/run" >/dev/null 2>&1 || { echo "FAIL: simulate --out"; fails=$((fails + 1)); }
echo stale > "$dir/run/old.csv"
"$april" simulate --scenario handcheck --steps 2 --policy sync --out "$dir/run" >/dev/null 2>&1 || { echo "FAIL: simulate --out again"; fails=$((fails + 1)); }
[ ! -e "$dir/run/april" ] || { echo "FAIL: the earlier run's april/ stayed"; fails=$((fails + 1)); }
[ -s "$dir/run/summary.json" ] && [ -s "$dir/run/sync/steps.csv" ] && [ ! -e "$dir/run/old.csv" ] ||
  { echo "FAIL: --out DIR is not the new run's alone"; fails=$((fails + 1)); }
ls "$dir" | grep -q '\.tmp$' && { echo "FAIL: a temporary was left behind: $(ls "$dir")"; fails=$((fails + 1)); }
# Read-only db commands create nothing beside the database.
"$april" sweep --scenario handcheck --grid 'april.alpha=1.5' --steps 2 --db "$dir/quiet.db" >/dev/null 2>&1
"$april" db list "$dir/quiet.db" >/dev/null && "$april" db show "$dir/quiet.db" 1 >/dev/null &&
  "$april" db export "$dir/quiet.db" 1 >/dev/null || { echo "FAIL: db list/show/export"; fails=$((fails + 1)); }
[ ! -e "$dir/quiet.db-wal" ] && [ ! -e "$dir/quiet.db-shm" ] ||
  { echo "FAIL: a read-only db command left $(ls "$dir" | grep quiet.db- | tr '\n' ' ')"; fails=$((fails + 1)); }
# `april db` reads a database in a folder the user may only read (as root,
# the check runs as nobody, for whom permissions apply).
ro="$dir/readonly"
mkdir -p "$ro"
"$april" sweep --scenario handcheck --grid 'april.alpha=1.5,2' --steps 2 --db "$ro/r.db" >/dev/null 2>&1
chmod a+r "$ro"/* && chmod 555 "$ro"
reader=()
[ "$(id -u)" = 0 ] && command -v runuser >/dev/null && reader=(runuser -u nobody --)
if [ ${#reader[@]} -gt 0 ] && ! "${reader[@]}" test -x "$april"; then
  echo "note: the read-only database check did not run: user nobody cannot run $april"
else
  "${reader[@]}" "$april" db list "$ro/r.db" 2>"$dir/err" | grep -q "handcheck" ||
    { echo "FAIL: db list on a read-only database: $(cat "$dir/err")"; fails=$((fails + 1)); }
  "${reader[@]}" "$april" db export "$ro/r.db" 1 2>"$dir/err" | grep -q "^april.alpha,seed," ||
    { echo "FAIL: db export on a read-only database: $(cat "$dir/err")"; fails=$((fails + 1)); }
fi
chmod 755 "$ro"
# One reading of an integer: --seed, --set and a scenario file agree on 1e3,
# and a value past the 64-bit range is refused, quoted as written, by each.
echo '{"base": "handcheck", "seed": 1e3}' > "$dir/seed.json"
"$april" simulate --scenario handcheck --steps 2 --seed 1000 --out "$dir/seed_digits" >/dev/null 2>&1
for how in "--seed 1e3" "--set seed=1e3" "--scenario $dir/seed.json"; do
  # shellcheck disable=SC2086
  "$april" simulate --scenario handcheck --steps 2 $how --out "$dir/seed_other" >/dev/null 2>&1
  cmp -s "$dir/seed_digits/summary.json" "$dir/seed_other/summary.json" || { echo "FAIL: $how is not --seed 1000"; fails=$((fails + 1)); }
done
expect_error "--seed past 2^63" "'--seed': '18446744073709551615' is out of the 64-bit integer range" \
  "$april" simulate --steps 1 --seed 18446744073709551615
expect_error "--set past 2^63" "'18446744073709551615' is out of the 64-bit integer range" \
  "$april" simulate --steps 1 --set april.max_staleness=18446744073709551615
expect_error "--repeats as a fraction" "'--repeats': '2.5' is not a whole number" \
  "$april" sweep --scenario handcheck --grid 'april.alpha=1.5,2' --repeats 2.5 --db "$dir/frac.db"
expect_error "--steps in hexadecimal" "'--steps': '0x10' is not an integer" "$april" simulate --steps 0x10
expect_error "--tp as a fraction" "'1.5' is not a whole number" "$april" model show qwen3-4b --tp 1.5
# --help tells the truth, and db's subcommands have one.
"$april" db list --help | grep -q "usage: april db" || { echo "FAIL: db list --help"; fails=$((fails + 1)); }
"$april" simulate --help | grep -q "default, handcheck, live-cpu" || { echo "FAIL: simulate --help lists the built-in scenarios"; fails=$((fails + 1)); }
"$april" whatif --help | grep -q "azure" || { echo "FAIL: whatif --help lists the trace formats"; fails=$((fails + 1)); }
# GPUs no engine holds are said, with the count that uses them all; a layout that uses every GPU says nothing.
"$april" simulate --steps 1 --policy sync --set cluster.gpus=32 --set cluster.tensor_parallel=4 > "$dir/idle.txt" 2>&1 || { echo "FAIL: idle GPUs run"; fails=$((fails + 1)); }
grep -qx "note: 4 engines x TP 4 hold 16 of the 32 GPUs; the other 16 sit idle through every rollout (cluster.engines=8 uses them all)" "$dir/idle.txt" ||
  { echo "FAIL: idle GPUs not said: $(head -c 400 "$dir/idle.txt")"; fails=$((fails + 1)); }
"$april" simulate --steps 1 --policy sync | grep -q "sit idle" && { echo "FAIL: the default layout said to leave GPUs idle"; fails=$((fails + 1)); }
# An unwritable (closed) stderr does not abort the process: the exit code stays 1.
sh -c "\"$april\" simulate --policy nope --steps 1 2>&-"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a closed stderr changed the exit code to $rc"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "every failure was a clear error with a non-zero exit"
[ $fails -eq 0 ]
