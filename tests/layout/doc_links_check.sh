#!/usr/bin/env bash
# Every file the README and docs/ point to exists in the repository: markdown
# links (relative ones) and `backticked` paths under a top-level folder.
set -u
shopt -s nullglob
root=${1:-.}
cd "$root" || exit 2
# The repository's folders; build trees (build/, build-*/) are outputs, not sources.
tops=$(ls -d */ | tr -d / | grep -v '^build' | tr '\n' '|'); tops=${tops%|}
bad=0
for doc in README.md docs/*.md; do
  dir=$(dirname "$doc")
  # [text](target): relative targets, anchors dropped
  while IFS= read -r target; do
    path=${target%%#*}
    [ -z "$path" ] && continue
    case "$path" in http://*|https://*|mailto:*) continue ;; esac
    if [ ! -e "$dir/$path" ]; then echo "$doc: link to missing $path"; bad=1; fi
  done < <(grep -o '\](\([^)]*\))' "$doc" | sed 's/^](//; s/)$//')
  # `folder/file.ext` where folder is one of the repository's top-level folders
  while IFS= read -r path; do
    case "$path" in *'*'*|*'<'*|*'{'*) continue ;; esac
    if [ ! -e "$path" ]; then echo "$doc: names missing $path"; bad=1; fi
  done < <(grep -oE '`('"$tops"')/[A-Za-z0-9_./<>*{}-]+`' "$doc" | tr -d '`' | sort -u)
done
exit $bad
