#!/usr/bin/env bash
# expect_cli.sh EXE RC TEXT ARGS...: runs EXE ARGS, passes when the exit status is RC and the
# first line of stderr is exactly TEXT.
exe=$1; want_rc=$2; want=$3; shift 3
err=$("$exe" "$@" 2>&1 >/dev/null); rc=$?
first=${err%%$'\n'*}
if [[ $rc -ne $want_rc || "$first" != "$want" ]]; then
  printf 'expected rc %s and: %s\nactual   rc %s and: %s\n' "$want_rc" "$want" "$rc" "$first"
  exit 1
fi
echo "ok: rc $rc: $first"
