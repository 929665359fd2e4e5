#!/usr/bin/env bash
# Rewrites the `source: memory` golden outputs in tests/sim/replay/data/memory-golden/ from the
# current build: the engine cases of tests/sim/replay/memory_golden.hpp (0/, 1/, 2/) and the
# default scenario's `scalecast run` at 1, 2 and 16 nodes (summit-run/: every output file,
# summary.json up to its "tool" key, and stdout.txt). The tests that read them are in
# tests/sim/replay/test_input_golden.cpp (ctest label golden). Only run this when a change is
# MEANT to alter the replay of the original input model (e.g. a new cost model); review
# `git diff` of the data and say why in the commit. Usage: BUILD_DIR=build/ci scripts/update_input_golden.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/ci}
DATA=tests/sim/replay/data/memory-golden
cmake --build "$BUILD_DIR" --target test_sim_replay scalecast >/dev/null
for c in 0 1 2; do
  rm -rf "${DATA:?}/$c" && mkdir -p "$DATA/$c"
  SCALECAST_GOLDEN_CASE=$c SCALECAST_GOLDEN_CASE_OUT="$DATA/$c" \
    "$BUILD_DIR/tests/sim/replay/test_sim_replay" -tc='input: memory outputs equal*' >/dev/null
done
out=$(mktemp -d)
"$BUILD_DIR/cli/scalecast" --quiet run scenarios/summit-resnet50.yaml --set nodes=[1,2,16] \
  --set iterations=1 -j 2 --out "$out/run" >"$out/stdout.txt"
run=$DATA/summit-run
rm -rf "${run:?}" && mkdir -p "$run"
cp "$out/stdout.txt" "$out/run/scenario.resolved.yaml" "$run/"
# summary.json without its "tool" key and what follows (version and git hash of the build).
sed '/^  "tool"/,$d' "$out/run/summary.json" >"$run/summary.json"
for n in 1 2 16; do
  mkdir -p "$run/nodes-$n"
  cp "$out/run/nodes-$n/iterations.csv" "$out/run/nodes-$n/ops.csv" "$out/run/nodes-$n/trace.json" \
    "$run/nodes-$n/"
done
rm -rf "$out"
git status --short "$DATA"
