#!/usr/bin/env bash
# Stands in for a doctest executable in test_doctest_discovery.cmake: prints what doctest 2.4.9
# prints for --list-test-suites and --list-test-cases (optionally filtered by --test-suite=NAME).
# The test cases come from FAKE_CASES, one "suite|name" per line.
suite_filter=""
mode=""
for a in "$@"; do
  case $a in
    --test-suite=*) suite_filter=${a#--test-suite=} ;;
    --list-test-suites) mode=suites ;;
    --list-test-cases) mode=cases ;;
  esac
done
echo "[doctest] doctest version is \"2.4.9\""
echo "==============================================================================="
if [[ $mode == suites ]]; then
  printf '%s\n' "$FAKE_CASES" | cut -d'|' -f1 | awk 'NF && !seen[$0]++'
else
  printf '%s\n' "$FAKE_CASES" | while IFS='|' read -r s n; do
    [[ -z $n ]] && continue
    [[ -z $suite_filter || $s == "$suite_filter" ]] && printf '%s\n' "$n"
  done
fi
echo "==============================================================================="
echo "[doctest] unskipped test cases passing the current filters: 0"
