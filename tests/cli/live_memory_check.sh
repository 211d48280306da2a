#!/usr/bin/env bash
# `april live` estimates its memory before it allocates: a run the machine
# cannot hold is refused within seconds, with the estimate and its parts; a
# run that fits says its estimate on its first line.
#   usage: live_memory_check.sh APRIL
set -u
april=$1
fails=0
expect_refused() {  # WHAT PATTERN ARGS...
  local what=$1 pattern=$2
  shift 2
  local err
  err=$(timeout 60 "$april" live "$@" 2>&1 >/dev/null)
  local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 124 ] || ! grep -q -- "$pattern" <<<"$err"; then
    echo "FAIL: $what: rc=$rc, stderr: ${err:0:400}"
    fails=$((fails + 1))
  fi
}
# A KV cache of 4096 slots x 16387 positions: hundreds of GiB, on any machine this runs on.
expect_refused "a KV cache larger than the machine" "KV cache 384.07 GiB" --scenario default --set live.slots=4096 --steps 1
# No warm start: an untrained policy may answer to max_response_len, and 256 samples of 16 K tokens train in ~14 TiB.
expect_refused "a train batch larger than the machine" "training activations [0-9]*\.[0-9]* GiB" \
  --scenario default --set live.sft_steps=0 --steps 1
expect_refused "the refusal names the machine's memory" "more than the [0-9.]* GiB this machine has" \
  --scenario default --set live.slots=4096 --steps 1
# validate holds every policy's run at once, and the profiler's engine and trainer besides.
err=$(timeout 60 "$april" validate --scenario default --set live.slots=2048 --steps 2 --policy sync,april 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 0 ] || [ $rc -ge 124 ] || ! grep -q "april validate (2 live runs and the profiler's engine and trainer) needs about" <<<"$err"; then
  echo "FAIL: validate too large for the machine: rc=$rc, stderr: ${err:0:400}"
  fails=$((fails + 1))
fi
out=$("$april" live --set live.model=tiny --set live.sft_steps=1 --set live.eval_prompts=0 --steps 1 2>&1)
grep -q "memory estimate [0-9.]* GiB of [0-9.]*" <<<"$out" || { echo "FAIL: a run that fits does not say its estimate: ${out:0:400}"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "live runs too large for the machine were refused before allocating"
[ $fails -eq 0 ]
