#!/usr/bin/env bash
# One `april simulate` reads its model file and its hardware file at most
# twice each, whatever the policies and splits it runs: the scenario is
# resolved once and its parts handed on. Counted with strace, as the files
# are opened.
# usage: resolved_once_check.sh APRIL SOURCE_DIR
set -uo pipefail
april=$1
src=$2
if ! command -v strace >/dev/null; then
  echo "FAIL: strace is not installed, so the files' reads cannot be counted (scripts/setup.sh installs it)"
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$src/calibration/models/qwen3-32b.json" "$dir/m.json"
cp "$src/tests/fuzz/corpus/hardware/h100.json" "$dir/hw.json"
fails=0
count() {
  local what=$1
  shift
  # LeakSanitizer cannot run under ptrace and fails the run at exit, so an
  # ASan build counts its opens with leak checks off (ctest checks leaks).
  if ! ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -e trace=openat -o "$dir/st.log" "$april" simulate --steps 1 "$@" --set "model=$dir/m.json" \
    --set "hardware=$dir/hw.json" >"$dir/out.txt" 2>&1; then
    echo "FAIL: $what: april simulate (under strace) failed: $(tail -c 600 "$dir/out.txt")"
    fails=$((fails + 1))
    return
  fi
  local m hw
  m=$(grep -c "openat.*$dir/m.json" "$dir/st.log")
  hw=$(grep -c "openat.*$dir/hw.json" "$dir/st.log")
  echo "$what: model file opened $m times, hardware file $hw times"
  if [ "$m" -gt 2 ] || [ "$hw" -gt 2 ]; then
    echo "FAIL: $what: more than 2 opens of a file"
    fails=$((fails + 1))
  fi
  if [ "$m" -lt 1 ] || [ "$hw" -lt 1 ]; then
    echo "FAIL: $what: a file was never opened (strace saw nothing?)"
    fails=$((fails + 1))
  fi
}
count "--policy sync" --policy sync
count "the default policies (with split searches)"
exit $((fails > 0))
