#!/usr/bin/env bash
# The CUDA calibration run on a lent GPU machine, prepared here. That machine has the CUDA
# toolkit, cuDNN and NCCL but none of scalecast's Debian libraries (SimGrid, yaml-cpp, fmt, ...),
# so this script packs the built tool with every shared library it needs, glibc's loader
# included, and runs it there under that loader; only the CUDA libraries come from the machine.
#
#   scripts/device_bundle.sh pack [BUILD_DIR]   # here: .device/scalecast-bundle.tar.gz (git-ignored
#                                               # via .git/info/exclude); BUILD_DIR default build/ci
#   scripts/device_bundle.sh run OUT_DIR [SECONDS]
#                                               # there (device `run`, carry [".device"]): the gpu
#                                               # tests, then `calibrate --backend cuda` in
#                                               # stages (below) into OUT_DIR, each stopped with
#                                               # SIGINT after its share of SECONDS (default 360;
#                                               # the database keeps every finished measurement)
#
# Run here first: `run` on a machine without a GPU must end in the CUDA runtime's own "no GPU
# visible" error, which proves the bundle, its loader and the CUDA module load.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=${DEVICE_BUNDLE:-.device/scalecast-bundle.tar.gz}  # tests put it elsewhere

pack() {
  local build=${1:-build/ci}
  local files=("$build/cli/scalecast" "$build/cli/libscalecast_cuda.so" "$build/tests/kernels/test_kernels")
  for f in "${files[@]}"; do
    [[ -f $f ]] || { echo "device_bundle: $f missing: build first (cmake --workflow --preset ci)" >&2; exit 1; }
  done
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib"
  cp "${files[@]}" "$stage/bin/"
  # Every shared library the three need, except the CUDA ones (the GPU machine's own match its
  # driver) and the vDSO.
  for f in "${files[@]}"; do ldd "$f"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    sort -u | grep -v -E 'libcuda|libcudart|libcublas|libcudnn|libnccl' | while read -r lib; do
      cp -L "$lib" "$stage/lib/"
    done
  mkdir -p "$(dirname "$bundle")"
  if [[ $bundle == .device/* && -d .git ]]; then
    grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >>.git/info/exclude
  fi
  tar -C "$stage" -czf "$bundle" bin lib
  rm -rf "$stage"
  echo "device_bundle: $bundle ($(du -h "$bundle" | cut -f1)); on the device: scripts/device_bundle.sh run \$OUT (carry .device)"
}

run() {
  local out=${1:?usage: device_bundle.sh run OUT_DIR [SECONDS]} seconds=${2:-360}
  [[ -f $bundle ]] || { echo "device_bundle: $bundle missing (pack it here, carry .device)" >&2; exit 1; }
  mkdir -p "$out"
  local root
  root=$(mktemp -d)
  tar -C "$root" -xzf "$bundle"
  # CUDA libraries of this machine: the toolkit's, and those of the Python wheels (nvidia-*).
  local cuda_dirs=""
  # The driver's libcuda.so.1 may sit in /usr/local/nvidia/lib64 (device README) or the system
  # folder; the bundle's own libraries stay first on the path.
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/local/cuda/lib64 /usr/local/cuda/lib \
    /usr/lib/x86_64-linux-gnu \
    $(find / -xdev -path /proc -prune -o \( -name 'libcuda.so.1' -o -name 'libcudnn.so.9' -o -name 'libnccl.so.2' -o -name 'libcublasLt.so.13' -o -name 'libcudart.so.13' \) -print 2>/dev/null | grep -v '/\.debug/' | xargs -r -n1 dirname | sort -u); do
    [[ -d $d ]] && cuda_dirs+=":$d"
  done
  local loader
  loader=$(ls "$root"/lib/ld-linux-x86-64.so.* | head -1)
  local path="$root/lib$cuda_dirs"
  export SCALECAST_CUDA_MODULE="$root/bin/libscalecast_cuda.so" SCALECAST_DATA_DIR="$PWD"
  sc() { "$loader" --library-path "$path" "$root/bin/scalecast" "$@"; }
  {
    echo "== $(date -u) $(uname -a)"
    command -v nvidia-smi >/dev/null &&
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,pcie.link.gen.max,pcie.link.width.max --format=csv
    command -v nvidia-smi >/dev/null && nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
    lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)|Socket|Thread|MHz" 
    echo "== library path: $path"
    echo "== gpu tests"
    timeout 60 "$loader" --library-path "$path" "$root/bin/test_kernels" -ts=gpu -s
    echo "== gpu tests exit $?"
  } >"$out/gpu-tests.txt" 2>&1
  cat "$out/gpu-tests.txt"
  # Calibration in stages, most wanted first, each stopped with SIGINT after its share of
  # SECONDS (the database keeps every finished measurement; a rerun resumes every stage):
  #  1 ResNet-50 fp16 batch 256 and BERT-large fp16 batch 64 (seq 128), the A100/H100 scenarios;
  #  2 one Llama-family layer: Llama 3 70B TP 8 and Llama 3 8B TP 1, micro-batch 1, seq 8192, bf16;
  #  3 the generic single-GPU grid: cuBLAS GEMMs, cuDNN convs, copies, NCCL (one rank), fp16/bf16;
  #  4 more batches and precisions: ResNet-50 fp16 b64 and tf32 b256, BERT-large fp16 b48 seq 512.
  local db="$out/h200.calibration.yaml" rc=0 r
  local -a stages=(
    "30 --models resnet50 --batch 256 --precision fp16"
    "20 --models bert_large --batch 64 --precision fp16"
    "15 --models llama3_70b --tp 8 --batch 1 --seq-len 8192 --precision bf16"
    "10 --models llama3_8b --batch 1 --seq-len 8192 --precision bf16"
    "15 --sweep --precision fp16,bf16"
    "10 --models resnet50,bert_large --batch 64 --precision fp16,tf32"
  )
  for st in "${stages[@]}"; do
    local share=${st%% *} args=${st#* }
    local t=$((seconds * share / 100))
    echo "== calibrate $args (at most ${t}s) $(date -u +%T)" | tee -a "$out/calibrate.txt"
    # shellcheck disable=SC2086
    timeout -s INT "$t" "$loader" --library-path "$path" "$root/bin/scalecast" calibrate \
      --backend cuda $args --out "$db" >>"$out/calibrate.txt" 2>&1
    r=$?
    echo "== exit $r" | tee -a "$out/calibrate.txt"
    ((r != 0)) && rc=$r
  done
  grep -E "calibrate:|skipped|error" "$out/calibrate.txt" | tail -40
  if [[ -f $db ]]; then
    sc describe calibration "$db" >"$out/describe.txt" 2>&1
    head -60 "$out/describe.txt"
  fi
  rm -rf "$root"
  return "$rc"
}

case ${1:-} in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,17p' "$0"; exit 2 ;;
esac
