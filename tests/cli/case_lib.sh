# Sourced by the one-case-per-ctest-entry command-line scripts (hardening.sh, sweep_hostile.sh,
# llm_hostile.sh): `exe`, `case_name`, a private scratch folder `D` (removed on exit), `fail`
# and `expect`. usage in a script: source "$(dirname "$0")/case_lib.sh" "$@"
set -uo pipefail
exe=$1
case_name=$2
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL ($case_name): $*"; exit 1; }
# expect RC PATTERN CMD...: runs CMD, checks the exit status and that stderr matches PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 2
  "$@" >"$D/out.txt" 2>"$D/err.txt"
  local rc=$?
  [[ $rc -eq $want ]] || fail "exit $rc, expected $want: $* ; stderr: $(cat "$D/err.txt")"
  [[ -z $pattern ]] || grep -Eq -- "$pattern" "$D/err.txt" || fail "stderr does not match '$pattern': $(cat "$D/err.txt")"
}
