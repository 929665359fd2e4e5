#!/usr/bin/env bash
# scripts/device_bundle.sh keeps working: the bundle packs from this build, runs under its own
# loader with none of the Debian libraries on the library path but its own, and on a machine
# without a GPU both the gpu tests and `calibrate --backend cuda` end in the CUDA runtime's own
# error (the CUDA module and its libraries loaded). Exit 77 (skipped) where a GPU is visible:
# there, run the script itself and read its results.
# usage: device_bundle.sh BUILD_DIR
set -uo pipefail
build=$1
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && { echo "skip: a GPU is visible"; exit 77; }
[[ -f $build/cli/libscalecast_cuda.so ]] || { echo "skip: this build has no CUDA backend"; exit 77; }
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export DEVICE_BUNDLE=$D/bundle.tar.gz
scripts/device_bundle.sh pack "$build" || { echo "FAIL: pack"; exit 1; }
listing=$(tar -tzf "$DEVICE_BUNDLE")
grep -q 'lib/ld-linux-x86-64.so' <<<"$listing" || { echo "FAIL: no loader in the bundle"; exit 1; }
grep -q -E 'lib/lib(cudnn|cublas|nccl)' <<<"$listing" && { echo "FAIL: CUDA libraries in the bundle"; exit 1; }
scripts/device_bundle.sh run "$D/out" 30 >"$D/run.txt" 2>&1
rc=$?
cat "$D/run.txt"
[[ $rc -ne 0 ]] || { echo "FAIL: calibrate succeeded without a GPU"; exit 1; }
n=$(grep -c "cuda: no GPU visible" "$D/run.txt")
[[ $n -ge 2 ]] || { echo "FAIL: expected the CUDA runtime's error from the gpu tests and from calibrate ($n)"; exit 1; }
grep -q "cannot load the CUDA backend module" "$D/run.txt" && { echo "FAIL: the module did not load"; exit 1; }
echo "ok: bundle packed ($(du -h "$DEVICE_BUNDLE" | cut -f1)) and ran to the CUDA runtime's own error"
