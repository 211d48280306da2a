#!/usr/bin/env bash
# A user's file in an output folder survives every command that writes a
# folder whole (--out, --checkpoint): the command refuses before any work,
# names the folder and what it holds, and exits non-zero. A new, an empty, or
# an earlier april output folder is written.
#   usage: cli_output_folders_check.sh APRIL WORKDIR [APRIL_LIVE_AVAILABLE]
set -u
april=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

user_folder() {  # a folder holding a user's files, fresh each time
  local d="$work/user-$1"
  rm -rf "$d" && mkdir -p "$d/src" && echo "precious" > "$d/notes.txt" && echo "int main() {}" > "$d/src/main.cpp"
  echo "$d"
}
survived() { [ "$(cat "$1/notes.txt" 2>/dev/null)" = "precious" ] && [ -f "$1/src/main.cpp" ]; }

check_refused() {  # name, then the command with @DIR@ for the folder
  local name=$1; shift
  local d; d=$(user_folder "$name")
  local cmd=("${@//@DIR@/$d}")
  local out; out=$("${cmd[@]}" 2>&1); local rc=$?
  [ $rc -ne 0 ] || fail "$name: exit 0 writing into a user's folder"
  survived "$d" || fail "$name: the user's files are gone"
  echo "$out" | grep -q "notes.txt" || fail "$name: the refusal does not name what the folder holds: $out"
  echo "$out" | grep -q -- "$d" || fail "$name: the refusal does not name the folder: $out"
}

check_refused simulate "$april" simulate --scenario handcheck --steps 2 --out @DIR@
check_refused simulate_dot bash -c "cd @DIR@ && '$april' simulate --scenario handcheck --steps 2 --out @DIR@"
if [ "${3:-}" = "live" ]; then
  check_refused live_out "$april" live --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --steps 1 --out @DIR@
  check_refused live_checkpoint "$april" live --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --steps 1 \
    --checkpoint @DIR@
  check_refused validate "$april" validate --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --steps 1 \
    --policy sync --out @DIR@
fi

# A new folder, then the same folder again (april's own, marked), then an empty one.
new="$work/new/results"
"$april" simulate --scenario handcheck --steps 2 --out "$new" > /dev/null || fail "simulate into a new folder"
[ -f "$new/summary.json" ] && [ -f "$new/.april-output" ] || fail "no summary.json or marker in $new"
"$april" simulate --scenario handcheck --steps 3 --out "$new" > /dev/null || fail "simulate over its own earlier output"
empty="$work/empty" && mkdir -p "$empty"
"$april" simulate --scenario handcheck --steps 2 --out "$empty" > /dev/null || fail "simulate into an empty folder"
# A file where the folder should be is refused, and kept.
echo keep > "$work/afile"
"$april" simulate --scenario handcheck --steps 2 --out "$work/afile" > /dev/null 2>&1 && fail "a file replaced by a folder"
[ "$(cat "$work/afile")" = keep ] || fail "the file at the destination changed"
echo "output folders: ok"
