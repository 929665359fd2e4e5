#!/usr/bin/env bash
# A sweep keeps each finished point (results/point-ID.json): after losing points (an interrupted
# run) a rerun simulates only those and merges the same sweep.csv; --missing lists them, --merge
# refuses while any is missing, --run-task runs one; another sweep in the same folder is refused.
# The plots (scaling.png, breakdown.png) are drawn and come out byte-identical.
# usage: sweep_resume.sh SCALECAST
set -uo pipefail
exe=$1
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
args=(scenarios/summit-resnet50.yaml --nodes 1,2 --axis allreduce.algorithm=ring,tree --set iterations=1)

"$exe" sweep "${args[@]}" --out "$D/s" >"$D/first.txt" 2>&1 || fail "first sweep: $(cat "$D/first.txt")"
grep -q "6 points planned in $D/s, 0 with a result, 6 to run" "$D/first.txt" || fail "plan line: $(head -1 "$D/first.txt")"
cp "$D/s/sweep.csv" "$D/first.csv"
for png in scaling breakdown; do
  [[ -s $D/s/$png.png ]] || fail "no $png.png after the sweep"
  cp "$D/s/$png.png" "$D/first-$png.png"
done

rm "$D/s/results/point-1.json" "$D/s/results/point-4.json"
[[ $("$exe" sweep --missing --out "$D/s") == "1,4" ]] || fail "--missing: $("$exe" sweep --missing --out "$D/s")"
"$exe" sweep --merge --out "$D/s" >/dev/null 2>"$D/merge.txt"
rc=$?
[[ $rc -eq 1 ]] || fail "--merge with missing points: exit $rc, expected 1"
grep -q "2 of 6 points have no result yet (ids 1,4)" "$D/merge.txt" || fail "merge message: $(cat "$D/merge.txt")"
"$exe" --quiet sweep --run-task 4 --out "$D/s" || fail "--run-task 4"
[[ $("$exe" sweep --missing --out "$D/s") == "1" ]] || fail "point 4 not recorded by --run-task"

"$exe" sweep "${args[@]}" --out "$D/s" >"$D/second.txt" 2>&1 || fail "rerun: $(cat "$D/second.txt")"
grep -q "6 points planned in $D/s, 5 with a result, 1 to run" "$D/second.txt" || fail "rerun line: $(head -1 "$D/second.txt")"
cmp "$D/first.csv" "$D/s/sweep.csv" || fail "resumed sweep.csv differs"
for png in scaling breakdown; do
  cmp "$D/first-$png.png" "$D/s/$png.png" || fail "$png.png differs after the resumed sweep"
done

"$exe" sweep scenarios/summit-resnet50.yaml --nodes 1,4 --out "$D/s" >/dev/null 2>"$D/other.txt"
rc=$?
[[ $rc -eq 1 ]] || fail "another sweep in the same folder: exit $rc, expected 1"
grep -q "holds another sweep" "$D/other.txt" || fail "other-sweep message: $(cat "$D/other.txt")"
"$exe" sweep --run-task 6 --out "$D/s" 2>"$D/range.txt"
rc=$?
[[ $rc -eq 1 ]] || fail "--run-task 6: exit $rc, expected 1"
grep -qF -- "--run-task: error: expected 0..5 (the sweep in $D/s has 6 points), got 6" "$D/range.txt" ||
  fail "range message: $(cat "$D/range.txt")"
echo "ok: resumed sweep re-ran 1 of 6 points, same sweep.csv; errors as expected"
