#!/usr/bin/env bash
# No layer folder holds more than a fifth of the code: a folder that grows past
# it holds more than one purpose. Counts the lines of the .cpp and .hpp files
# under each layer folder (adapters/* counts per backend, as the layers do),
# prints each folder's share, largest first, and exits 1 naming any above 20%.
# usage: folder_share_check.sh ROOT
set -u
cd "$1" || exit 2
folders="base sim traces policies hf rl tasks adapters/http adapters/sim adapters/live scenario studies cli"
total=0
declare -A lines
for f in $folders; do
  n=$(find "$f" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 2>/dev/null | xargs -0 cat 2>/dev/null | wc -l)
  lines[$f]=$n
  total=$((total + n))
done
[ "$total" -gt 0 ] || { echo "no code found under $1"; exit 2; }
bad=0
for f in $folders; do echo "${lines[$f]} $f"; done | sort -rn | while read -r n f; do
  pct=$((1000 * n / total))
  printf '%-16s %6d lines  %3d.%d%%\n' "$f" "$n" $((pct / 10)) $((pct % 10))
done
for f in $folders; do
  if [ $((5 * ${lines[$f]})) -gt "$total" ]; then
    echo "$f holds more than a fifth of the code (${lines[$f]} of $total lines)"
    bad=1
  fi
done
exit $bad
