#!/usr/bin/env bash
# The tree is formatted as .clang-format says. Formatting differs between
# clang-format releases, so the check runs with the one the tree was formatted
# with (Debian bookworm's 14) and is skipped (exit 77) without it.
# usage: format_check.sh ROOT
set -u
cd "$1" || exit 2
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$major" = "14" ] || { echo "clang-format $major, not 14: skipped"; exit 77; }
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find . -name '*.cpp' -o -name '*.hpp')
[ $bad -eq 0 ] || { echo "$bad files not formatted"; exit 1; }
echo "every source file formatted"
