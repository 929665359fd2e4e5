#!/usr/bin/env bash
# Layering check (docs/architecture.md): SimGrid headers only under sim/ (and tests/sim/),
# CUDA/cuDNN/cuBLAS/NCCL headers only under kernels/ (and tests/kernels/).
# Usage: check_layering.sh [--self-test]   (--self-test proves the check catches a violation)
set -euo pipefail
cd "$(dirname "$0")/.."

sg_re='#include[[:space:]]*[<"]simgrid/'
cu_re='#include[[:space:]]*[<"](cuda|cudnn|cublas|cublasLt|nccl|cuda_runtime)[a-zA-Z_]*\.h'

scan() {  # scan ROOT: prints violations under ROOT
  local root=$1
  grep -rlE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' --include='*.cu' "$sg_re" "$root" 2>/dev/null |
    sed "s|^$root/||" | grep -vE '^(sim|tests/sim)/' | sed 's/^/SimGrid header outside sim\/: /' || true
  grep -rlE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' --include='*.cu' "$cu_re" "$root" 2>/dev/null |
    sed "s|^$root/||" | grep -vE '^(kernels|tests/kernels)/' | sed 's/^/CUDA header outside kernels\/: /' || true
}

if [[ "${1:-}" == "--self-test" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/models" "$tmp/sim" "$tmp/calibration"
  echo '#include <simgrid/s4u.hpp>' > "$tmp/models/bad.cpp"
  echo '#include <simgrid/s4u.hpp>' > "$tmp/sim/good.cpp"
  echo '#include <cudnn.h>' > "$tmp/calibration/bad.hpp"
  out=$(scan "$tmp")
  grep -q 'SimGrid header outside sim/: models/bad.cpp' <<<"$out" || { echo "self-test: SimGrid violation missed"; exit 1; }
  grep -q 'CUDA header outside kernels/: calibration/bad.hpp' <<<"$out" || { echo "self-test: CUDA violation missed"; exit 1; }
  if grep -q 'sim/good.cpp' <<<"$out"; then echo "self-test: false positive"; exit 1; fi
  echo "layering self-test passed"
  exit 0
fi

dirs=(common models platforms calibration kernels sim validation cli tests bench)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in "${dirs[@]}"; do [[ -d $d ]] && ln -s "$PWD/$d" "$tmp/$d"; done
out=$(cd "$tmp" && scan . | sed 's|\./||')
if [[ -n "$out" ]]; then
  echo "$out"
  exit 1
fi
echo "layering ok"
