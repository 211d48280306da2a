#!/usr/bin/env bash
# Every reader given an endless input (/dev/zero) or a huge sparse file ends
# within seconds with a clear error naming the file, under a 2 GiB
# address-space limit: none reads the input whole.
#   usage: endless_inputs_check.sh APRIL WORKDIR [2G|none]
# (none: a sanitizer build, whose shadow memory needs more address space than any limit.)
set -u
april=$1
work=$2
as_limit=${3:-2G}
rm -rf "$work" && mkdir -p "$work"
huge="$work/huge.json"
truncate -s 20G "$huge"  # sparse: no disk used, 20 GiB of zeros to read
fails=0
limit() {
  if [ "$as_limit" = none ]; then timeout 20 "$@"; else timeout 20 prlimit --as=$((2 << 30)) -- "$@"; fi
}
check() {  # WHAT INPUT CMD... (INPUT replaces @IN@)
  local what=$1 input=$2
  shift 2
  local cmd=("${@//@IN@/$input}")
  limit "${cmd[@]}" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 124 ] || ! grep -q -- "$input" "$work/err"; then
    echo "FAIL: $what on $input: rc=$rc, stderr: $(head -c 300 "$work/err")"
    fails=$((fails + 1))
  fi
}
for input in /dev/zero "$huge"; do
  check "scenario" "$input" "$april" simulate --scenario @IN@ --steps 1
  check "JSONL trace" "$input" "$april" simulate --trace @IN@ --steps 1
  check "Azure trace" "$input" "$april" simulate --trace @IN@ --trace-format azure --steps 1
  check "trace stats" "$input" "$april" trace stats @IN@
  check "trace import" "$input" "$april" trace import @IN@ "$work/imported.jsonl" --format azure
  check "topology file" "$input" "$april" simulate --set topology.file=@IN@ --steps 1
  check "model config" "$input" "$april" model show @IN@
  check "model key" "$input" "$april" simulate --set model=@IN@ --steps 1
  check "hardware file" "$input" "$april" hardware show @IN@
  check "calibration profile" "$input" "$april" calibrate @IN@ --out "$work/model.json"
done
# A run too long for its memory limit says so in words a user can act on, not as std::bad_alloc.
if [ "$as_limit" != none ]; then
  limit "$april" simulate --steps 10000000 --policy sync >"$work/out" 2>"$work/err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q "april simulate: error: out of memory: .*fewer steps" "$work/err" || grep -q "bad_alloc" "$work/err"; then
    echo "FAIL: simulate --steps 10000000 under the limit: rc=$rc, stderr: $(head -c 300 "$work/err")"
    fails=$((fails + 1))
  fi
fi
[ $fails -eq 0 ] && echo "endless inputs: every reader refused within its bound"
exit $fails
