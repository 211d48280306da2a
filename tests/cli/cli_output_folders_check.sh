#!/usr/bin/env bash
# A user's file in an output folder survives every command that writes a
# folder whole (--out, --save): the command refuses before any work,
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

check_kept() {  # name, then the command with @DIR@ for a user's folder: refused naming it, the files kept
  local name=$1; shift
  local d; d=$(user_folder "$name")
  local cmd=("${@//@DIR@/$d}")
  local out; out=$("${cmd[@]}" 2>&1); local rc=$?
  [ $rc -ne 0 ] || fail "$name: exit 0 writing over a user's folder"
  survived "$d" || fail "$name: the user's files are gone"
  echo "$out" | grep -q -- "$d" || fail "$name: the refusal does not name the folder: $out"
}

check_refused simulate "$april" simulate --scenario handcheck --steps 2 --out @DIR@
check_refused simulate_dot bash -c "cd @DIR@ && '$april' simulate --scenario handcheck --steps 2 --out @DIR@"
if [ "${3:-}" = "live" ]; then
  check_refused live_out "$april" live --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --steps 1 --out @DIR@
  check_refused live_checkpoint "$april" live --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --steps 1 \
    --save @DIR@
  check_refused validate "$april" validate --set live.model=tiny --set live.sft_steps=1 --set live.threads=1 --steps 2 \
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

# Single-file outputs: '-' and a pipe are streams, a symbolic link is followed
# (it stays a link, its target gets the file), two outputs at one file are refused.
whatif=("$april" whatif --scenario handcheck --steps 1 --vary april.alpha=1.5 --policy sync)
"${whatif[@]}" --csv - 2>/dev/null | head -1 | grep -q '^april.alpha,policy' || fail "--csv - is not the CSV alone on standard output"
mkfifo "$work/pipe"
cat "$work/pipe" > "$work/from_pipe" &
reader=$!
"${whatif[@]}" --csv "$work/pipe" > /dev/null || fail "--csv to a named pipe"
wait $reader
grep -q '^april.alpha,policy' "$work/from_pipe" || fail "nothing came through the pipe"
[ -p "$work/pipe" ] || fail "the pipe was replaced by a file"
echo old > "$work/target.csv" && ln -s target.csv "$work/link.csv"
"${whatif[@]}" --csv "$work/link.csv" > /dev/null || fail "--csv to a symbolic link"
[ -L "$work/link.csv" ] || fail "the symbolic link was replaced"
grep -q '^april.alpha,policy' "$work/target.csv" || fail "the link's target was not written"
out=$("${whatif[@]}" --csv "$work/same" --json "$work/same" 2>&1) && fail "--csv and --json at one file were accepted"
echo "$out" | grep -q "same file" || fail "the refusal does not say why: $out"
[ ! -e "$work/same" ] || fail "something was written before the refusal"

# A single-file output or a database given a user's folder or file: refused, and both survive.
check_kept csv_at_a_folder "${whatif[@]}" --csv @DIR@
check_kept json_at_a_folder "${whatif[@]}" --json @DIR@
check_kept db_export_at_a_folder bash -c "'$april' sweep --scenario handcheck --grid april.alpha=1.5 --steps 1 --db '$work/ok.db' \
  > /dev/null && '$april' db export '$work/ok.db' 1 --csv @DIR@"
d=$(user_folder db)
for cmd in "sweep --scenario handcheck --grid april.alpha=1.5,2 --steps 1" \
           "tune --scenario handcheck --param april.alpha --range 1:3 --points 2 --rounds 1 --steps 1"; do
  # shellcheck disable=SC2086
  "$april" $cmd --db "$d/notes.txt" > /dev/null 2>&1 && fail "--db on a user's text file was accepted ($cmd)"
  survived "$d" || fail "--db on a user's text file changed it ($cmd)"
done
if command -v /usr/bin/python3 > /dev/null; then
  # Someone else's SQLite database is not april's: refused, its tables alone.
  /usr/bin/python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table notes(x)'); c.commit()" "$d/user.db"
  "$april" sweep --scenario handcheck --grid april.alpha=1.5 --steps 1 --db "$d/user.db" > /dev/null 2>&1 &&
    fail "--db on another program's SQLite database was accepted"
  tables=$(/usr/bin/python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('select group_concat(name) from sqlite_master').fetchone()[0])" "$d/user.db")
  [ "$tables" = notes ] || fail "another program's database now holds: $tables"
  mode=$(/usr/bin/python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('pragma journal_mode').fetchone()[0])" "$d/user.db")
  [ "$mode" = delete ] || fail "a refused --db switched another program's database to journal mode $mode"
fi
# plan --json as every other single-file output: `-` is standard output, a
# link is followed (and stays a link), a FIFO is written as a stream.
plan=("$april" plan --scenario handcheck --alpha 1.5 --steps 1 --max-splits 1 --repeats 1)
(cd "$work" && "${plan[@]}" --json - > plan-stdout.txt) || fail "plan --json -"
[ ! -e "$work/-" ] || fail "plan --json - made a file named '-'"
grep -q '"plans"' "$work/plan-stdout.txt" || fail "plan --json - did not print the plans"
echo old > "$work/plan-target.json" && ln -s plan-target.json "$work/plan-link.json"
"${plan[@]}" --json "$work/plan-link.json" > /dev/null || fail "plan --json to a symbolic link"
[ -L "$work/plan-link.json" ] || fail "plan --json replaced the symbolic link"
grep -q '"plans"' "$work/plan-target.json" || fail "plan --json did not write the link's target"
mkfifo "$work/plan-pipe" && { cat "$work/plan-pipe" > "$work/plan-pipe.txt" & }
"${plan[@]}" --json "$work/plan-pipe" > /dev/null || fail "plan --json to a FIFO"
wait
[ -p "$work/plan-pipe" ] || fail "plan --json replaced the FIFO"
grep -q '"plans"' "$work/plan-pipe.txt" || fail "plan --json did not write through the FIFO"
# A file output inside a folder output, which is replaced whole: refused before any run.
out=$("$april" simulate --scenario handcheck --steps 1 --out "$work/sim" --timeline "$work/sim/summary.json" 2>&1) &&
  fail "simulate --out D --timeline D/summary.json was accepted"
echo "$out" | grep -q "is inside --out" || fail "the refusal does not say why: $out"
[ ! -e "$work/sim" ] || fail "simulate wrote --out before refusing"
echo "output folders and files: ok"
