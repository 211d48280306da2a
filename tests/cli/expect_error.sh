# Sourced by the command-line checks: expect_error WHAT PATTERN CMD... runs
# CMD in the current folder and counts a failure in $fails unless it exits
# with an error (not 0, not killed), its standard error holds PATTERN, and
# that error is one line.
expect_error() {
  local what=$1 pattern=$2
  shift 2
  "$@" >out 2>err
  local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 124 ] || ! grep -q -- "$pattern" err || [ "$(grep -c . err)" -gt 1 ]; then
    echo "FAIL: $what: rc=$rc, stderr: $(head -c 400 err)"
    fails=$((fails + 1))
  fi
}
