#!/usr/bin/env bash
# Regenerates validation/REPORT.md and validation/plots/ from the public validation set:
#   scripts/validation_report.sh [SCALECAST_EXE]
# Runs `scalecast validate validation/public.yaml --json`, then validation/plot_report.py.
set -euo pipefail
cd "$(dirname "$0")/.."
exe="${1:-}"
if [[ -z "$exe" ]]; then
  for c in build/release/cli/scalecast build/ci/cli/scalecast build/dev/cli/scalecast; do
    if [[ -x "$c" ]]; then exe="$c"; break; fi
  done
fi
[[ -n "$exe" ]] || { echo "validation_report.sh: build scalecast first (cmake --workflow --preset ci)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$exe" validate validation/public.yaml --json "$out/public.json" | tee "$out/table.txt"
# Debian's python3 carries python3-matplotlib; a pyenv shim first on PATH may not.
py=/usr/bin/python3; [[ -x "$py" ]] || py=python3
"$py" validation/plot_report.py "$out/public.json" validation validation/report_notes.md
echo "wrote validation/REPORT.md and validation/plots/"
