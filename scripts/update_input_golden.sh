#!/usr/bin/env bash
# Rewrites the `source: memory` golden outputs in tests/sim/replay/data/memory-golden/ from the
# current build: the engine cases of tests/sim/replay/memory_golden.hpp (files) and the default
# scenario's `scalecast run` (FNV-1a 64 hashes). Only run this when a change is MEANT to alter the
# replay of the original input model (e.g. a new cost model); review `git diff` of the data and
# say why in the commit. Usage: BUILD_DIR=build/ci scripts/update_input_golden.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/ci}
DATA=tests/sim/replay/data/memory-golden
cmake --build "$BUILD_DIR" --target test_sim_replay scalecast >/dev/null
for c in 0 1 2; do
  rm -rf "$DATA/$c" && mkdir -p "$DATA/$c"
  SCALECAST_GOLDEN_CASE=$c SCALECAST_GOLDEN_CASE_OUT="$DATA/$c" \
    "$BUILD_DIR/tests/sim/replay/test_sim_replay" -tc='input: memory outputs equal*' >/dev/null
done
out=$(mktemp -d)
"$BUILD_DIR/cli/scalecast" --quiet run scenarios/summit-resnet50.yaml --set nodes=[1,2,16] \
  --set iterations=1 -j 2 --out "$out/run" >"$out/stdout.txt"
python3 - "$out" "$DATA/summit-run.txt" <<'PY'
import os, sys
out, target = sys.argv[1], sys.argv[2]
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h
files = ['summary.json', 'scenario.resolved.yaml'] + [
    f'nodes-{n}/{f}' for n in (1, 2, 16) for f in ('iterations.csv', 'ops.csv', 'trace.json')]
lines = ['# scalecast run scenarios/summit-resnet50.yaml --set nodes=[1,2,16] --set iterations=1: FNV-1a 64 of each',
         '# output file (summary.json up to its "tool" key) and of stdout, as the engine wrote them before the',
         '# input pipeline existed. Regenerate only with scripts/update_input_golden.sh, reviewing why.']
for f in files:
    b = open(os.path.join(out, 'run', f), 'rb').read()
    if f == 'summary.json':
        b = b[:b.index(b'  "tool"')]
    lines.append(f'{f} {len(b)} {fnv(b):016x}')
b = open(os.path.join(out, 'stdout.txt'), 'rb').read()
lines.append(f'stdout {len(b)} {fnv(b):016x}')
open(target, 'w').write('\n'.join(lines) + '\n')
PY
rm -rf "$out"
git status --short "$DATA"
