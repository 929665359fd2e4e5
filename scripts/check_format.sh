#!/usr/bin/env bash
# Format check: every tracked (or new, not ignored) C++ file must match .clang-format.
# Run scripts/check_format.sh --fix to reformat the files it lists (never mass-reformat others).
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format || command -v clang-format-14 || true)
if [[ -z "$cf" ]]; then
  echo "clang-format not found (scripts/bootstrap.sh installs it)"
  exit 1
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.hpp' '*.cpp' '*.h' '*.cu' | sort)
# One clang-format process for all files (one per file took a minute on a loaded 2-core box).
# Only names of checked files count: a quoted source line may itself look like "f:1:2: error:".
mapfile -t bad < <("$cf" --dry-run --Werror "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u | grep -Fx -f <(printf '%s\n' "${files[@]}") || true)
if [[ "${1:-}" == "--fix" ]]; then
  for f in "${bad[@]}"; do "$cf" -i "$f"; done
  exit 0
fi
if (( ${#bad[@]} )); then
  printf 'not formatted (run scripts/check_format.sh --fix): %s\n' "${bad[@]}"
  exit 1
fi
echo "format ok (${#files[@]} files)"
