#!/usr/bin/env bash
# expect.sh EXE RC REGEX ARGS...: runs EXE ARGS and passes only when the exit status is RC and
# the combined stdout+stderr matches the extended regular expression REGEX (bash =~, where `.`
# also matches a newline). ctest's PASS_REGULAR_EXPRESSION alone ignores the exit status, so
# every command-line test goes through this script.
exe=$1; want_rc=$2; want=$3; shift 3
out=$("$exe" "$@" 2>&1); rc=$?
if [[ $rc -ne $want_rc ]] || ! [[ $out =~ $want ]]; then
  printf 'command: %s' "$exe"; printf ' %q' "$@"; printf '\n'
  printf 'expected exit %s and output matching: %s\n' "$want_rc" "$want"
  printf 'actual   exit %s, output:\n%s\n' "$rc" "$out"
  exit 1
fi
echo "ok: exit $rc, output matches: $want"
