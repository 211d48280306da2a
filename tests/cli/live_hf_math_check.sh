#!/usr/bin/env bash
# `april live --checkpoint DIR --dataset FILE`: a Hugging Face checkpoint
# trained on math prompts with the verifier's reward, sync and APRIL, its
# results and its state saved and resumed; and the options it refuses, each
# in one line.
#   usage: live_hf_math_check.sh APRIL HF_FIXTURES_DIR DATASETS_DIR WORKDIR
set -u
. "$(cd "$(dirname "$0")" && pwd)/expect_error.sh"
april=$1
fixtures=$2
datasets=$3
work=$4
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
live=("$april" live --checkpoint "$fixtures/qwen3" --dataset "$datasets/gsm8k-sample.jsonl" --dataset-layout gsm8k
      --set live.eval_prompts=6 --set live.threads=1 --set rollout_batch_size=2 --set n_samples_per_prompt=2
      --set max_response_len=12 --steps 2)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for policy in sync april; do
  "${live[@]}" --policy "$policy" --out "out-$policy" > "log-$policy" 2>&1 || fail "$policy: $(tail -3 "log-$policy")"
  grep -q "Qwen3ForCausalLM from $fixtures/qwen3 (115136 parameters)" "log-$policy" || fail "$policy: no model line"
  grep -q "20 to train on, 6 held out" "log-$policy" || fail "$policy: no task line"
  grep -q "greedy accuracy on 6 held-out prompts" "log-$policy" || fail "$policy: no held-out accuracy"
  /usr/bin/python3 - "out-$policy" "$policy" <<'PY' || fail "$policy: summary or steps"
import csv, json, sys
out, policy = sys.argv[1], sys.argv[2]
s = json.load(open(f"{out}/summary.json"))
assert s["model"].startswith("Qwen3ForCausalLM"), s["model"]
assert "gsm8k-sample.jsonl" in s["task"], s["task"]
assert s["model_parameters"] == 115136
rows = list(csv.DictReader(open(f"{out}/{policy}/steps.csv")))
assert len(rows) == 2, rows
assert all(0.0 <= float(r["reward_mean"]) <= 1.0 for r in rows), rows
PY
done
# The trained policy exported in Hugging Face's layout, which generate reads.
"${live[@]}" --policy sync --export exported >/dev/null 2>&1 || fail "exporting"
for f in config.json model.safetensors tokenizer.json generation_config.json; do
  [ -s "exported/$f" ] || fail "exported/$f is missing"
done
"$april" generate --checkpoint exported --prompt-ids 1,2,3 --max-new-tokens 3 --greedy --json | grep -q '"output_ids"' || fail "generate on the export"
# Generation bounded by the model's positions (the fixture has 256), before any load.
expect_error "generate past the model's positions" "past the model's max_position_embeddings of 256" \
  "$april" generate --checkpoint "$fixtures/qwen3" --prompt-ids 1,2,3 --max-new-tokens 1000 --greedy
expect_error "generate asked for 1e9 tokens" "past the model's max_position_embeddings of 256" \
  "$april" generate --checkpoint "$fixtures/qwen3" --prompt-ids 1,2,3 --max-new-tokens 1000000000 --greedy
expect_error "--save and --out at one folder" "--out same and --save same overlap" "${live[@]}" --out same --save same
[ ! -e same ] || fail "an overlapping --save and --out wrote something"
expect_error "export without checkpoint" "--export writes a Hugging Face checkpoint: it needs --checkpoint" "$april" live --export x
# State saved and resumed: the run record names the checkpoint and the task.
"${live[@]}" --policy april --save ck >/dev/null 2>&1 || fail "writing the state"
grep -q '"model_checkpoint"' ck/loop.json || fail "no model_checkpoint in the run record"
"${live[@]}" --policy april --resume ck 2>&1 | grep -q "resumed from ck at step 2" || fail "the matching run did not resume"
expect_error "another dataset" "field 'run.task'" "$april" live --checkpoint "$fixtures/qwen3" --dataset "$datasets/deepscaler-sample.jsonl" \
  --dataset-layout deepscaler --set live.eval_prompts=6 --set live.threads=1 --set rollout_batch_size=2 --set n_samples_per_prompt=2 \
  --set max_response_len=12 --steps 1 --policy april --resume ck
# Refusals.
expect_error "dataset without checkpoint" "--dataset needs --checkpoint" "$april" live --dataset "$datasets/gsm8k-sample.jsonl"
expect_error "checkpoint without dataset" "--checkpoint needs --dataset FILE" "$april" live --checkpoint "$fixtures/qwen3"
expect_error "a reward april does not know" "--reward 'exact': math or dapo" "${live[@]}" --reward exact
expect_error "more held out than there are" "26 prompts, and 30 are to be held out" "${live[@]}" --set live.eval_prompts=30
expect_error "a folder with no model" "config.json" "$april" live --checkpoint . --dataset "$datasets/gsm8k-sample.jsonl"
expect_error "an unknown chat family" "mistral" "${live[@]}" --chat mistral
[ $fails -eq 0 ] && echo "live on a Hugging Face checkpoint: checks ok"
exit $fails
