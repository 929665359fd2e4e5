#!/usr/bin/env bash
# Layering check (docs/architecture.md): SimGrid headers only under sim/ (and tests/sim/),
# CUDA/cuDNN/cuBLAS/NCCL headers only under kernels/ (and tests/kernels/).
# Usage: check_layering.sh [--self-test]   (--self-test proves the check catches a violation)
set -euo pipefail
cd "$(dirname "$0")/.."

sg_re='#include[[:space:]]*[<"]simgrid/'
cu_re='#include[[:space:]]*[<"](cuda|cudnn|cublas|cublasLt|nccl|cuda_runtime)[a-zA-Z_]*\.h'

scan() {  # scan DIR...: prints violations in the given folders (paths as given)
  grep -rlE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' --include='*.cu' "$sg_re" "$@" 2>/dev/null |
    grep -vE '^(sim|tests/sim)/' | sed 's/^/SimGrid header outside sim\/: /' || true
  grep -rlE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' --include='*.cu' "$cu_re" "$@" 2>/dev/null |
    grep -vE '^(kernels|tests/kernels)/' | sed 's/^/CUDA header outside kernels\/: /' || true
}

if [[ "${1:-}" == "--self-test" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/models" "$tmp/sim" "$tmp/calibration"
  echo '#include <simgrid/s4u.hpp>' > "$tmp/models/bad.cpp"
  echo '#include <simgrid/s4u.hpp>' > "$tmp/sim/good.cpp"
  echo '#include <cudnn.h>' > "$tmp/calibration/bad.hpp"
  out=$(cd "$tmp" && scan models sim calibration)
  grep -q 'SimGrid header outside sim/: models/bad.cpp' <<<"$out" || { echo "self-test: SimGrid violation missed"; exit 1; }
  grep -q 'CUDA header outside kernels/: calibration/bad.hpp' <<<"$out" || { echo "self-test: CUDA violation missed"; exit 1; }
  if grep -q 'sim/good.cpp' <<<"$out"; then echo "self-test: false positive"; exit 1; fi
  echo "layering self-test passed"
  exit 0
fi

# The folders are passed to grep as they are: before, they were symlinked into a temporary
# folder, and `grep -r` does not follow symlinks below its arguments, so nothing was scanned.
dirs=()
for d in common models platforms calibration kernels sim validation cli tests bench; do
  [[ -d $d ]] && dirs+=("$d")
done
out=$(scan "${dirs[@]}")
if [[ -n "$out" ]]; then
  echo "$out"
  exit 1
fi
echo "layering ok"
