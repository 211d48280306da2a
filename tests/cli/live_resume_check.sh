#!/usr/bin/env bash
# `april live --resume` refuses a checkpoint of another run by naming the field
# that differs, and a damaged one in one line naming the folder; the matching
# run resumes.
#   usage: live_resume_check.sh APRIL WORKDIR
set -u
. "$(cd "$(dirname "$0")" && pwd)/expect_error.sh"
april=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
live=("$april" live --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --set live.eval_prompts=0 --steps 1)
fails=0
"${live[@]}" --policy sync --save ck >/dev/null 2>&1 || { echo "FAIL: writing the checkpoint"; exit 1; }
expect_error "another policy" "field 'run.policy': the checkpoint has \"sync\", this run \"april\"" "${live[@]}" --policy april --resume ck
expect_error "another batch" "field 'run.rollout_batch_size'" "${live[@]}" --policy sync --set rollout_batch_size=4 --resume ck
expect_error "another model" "field 'run.live.model'" "${live[@]}" --policy sync --set live.model=small --resume ck
cp -r ck damaged && head -c 100 ck/model.pt > damaged/model.pt
expect_error "damaged weights" "damaged: cannot load the checkpoint" "${live[@]}" --policy sync --resume damaged
cp -r ck badsamples && echo '[{"key": 5, "prompt_id": "p", "tokens": [1, "x"], "logprobs": []}]' > badsamples/samples.json
expect_error "a malformed buffered sample" "badsamples/samples.json: /0/tokens/1: a string where an integer" \
  "${live[@]}" --policy sync --resume badsamples
cp -r ck badloop && /usr/bin/python3 -c "import json,sys; p=sys.argv[1]; j=json.load(open(p)); j['loop']['buffer']=[{'id': 1}]; json.dump(j, open(p, 'w'))" \
  badloop/loop.json
expect_error "a malformed loop state" "badloop/loop.json: /loop/buffer/0/prompt_id: missing" "${live[@]}" --policy sync --resume badloop
cp -r ck foreign && echo '{"loop": {}}' > foreign/loop.json
expect_error "no run record" "field 'run' is missing" "${live[@]}" --policy sync --resume foreign
"${live[@]}" --policy sync --resume ck >/dev/null 2>&1 || { echo "FAIL: the matching run did not resume"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "live --resume: checks ok"
exit $fails
