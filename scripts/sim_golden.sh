#!/usr/bin/env bash
# Golden predictions of the replay engine: the simulated figures of every scenario in scenarios/
# that runs today (at small node counts, at its own fidelity and, where flow is what a question
# needs, forced to `flow`) and of `scalecast validate validation/public.yaml`, compared byte for
# byte with tests/sim/golden/data/. summary.json and the validate JSON hold simulated figures
# only (no wall times, no paths); the "tool" key (version, git hash) and what follows it are cut.
# A speed-up of the engine must leave every file identical.
#
#   scripts/sim_golden.sh check    # the ctest `sim_golden` (label golden, slow): exit 1 on a diff
#   scripts/sim_golden.sh update   # rewrite the golden files from the current build
#
# Run `update` only when a change is MEANT to change predictions (a model, a cost, a default);
# review `git diff tests/sim/golden/data` and say why in the commit.
# Environment: BUILD_DIR (default build/ci), JOBS (processes per run, default 2), VERBOSE=1
# (seconds per case on stderr), ONLY=CASE (that run alone), DATA (the golden folder; the test
# that the check fails on a changed figure points it at a doctored copy).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
part=${2:-all}  # runs: the scalecast runs only; validate: the validate file only
[[ ($mode == check || $mode == update) && ($part == all || $part == runs || $part == validate) ]] || {
  echo "usage: $0 check|update [all|runs|validate]" >&2
  exit 2
}
BUILD_DIR=${BUILD_DIR:-build/ci}
JOBS=${JOBS:-2}
exe=$BUILD_DIR/cli/scalecast
DATA=${DATA:-tests/sim/golden/data}
[[ -x $exe ]] || {
  echo "$exe not built (cmake --build --preset ci --target scalecast)" >&2
  exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CASE NAME SCENARIO [--set KEY=VALUE]...: one `scalecast run`, its summary.json kept.
# Node counts are cut to what the test affords (about 50 s of CPU for the runs; the validate
# file is another ~40 s); fidelity `auto` gives flow up to each scenario's flow_limit_gpus.
cases=(
  "summit-resnet50|scenarios/summit-resnet50.yaml|nodes=[1,2,8,16,64]"
  "summit-resnet50-flow|scenarios/summit-resnet50.yaml|nodes=[2,16]|fidelity=flow"
  "summit-resnet50-ring-flow|scenarios/summit-resnet50.yaml|nodes=[4]|fidelity=flow|allreduce.algorithm=ring"
  "summit-resnet50-tree-flow|scenarios/summit-resnet50.yaml|nodes=[4]|fidelity=flow|allreduce.algorithm=hierarchical|allreduce.inter_node=tree"
  "summit-resnet50-gpfs|scenarios/summit-resnet50-gpfs.yaml|nodes=[1,16]"
  "summit-resnet50-gpfs-flow|scenarios/summit-resnet50-gpfs.yaml|nodes=[8]|fidelity=flow"
  "summit-resnet50-time-to-train|scenarios/summit-resnet50-time-to-train.yaml|nodes=[5,8,16]"
  "summit-10k-nodes|scenarios/summit-10k-nodes.yaml|nodes=[1,16]"
  "summit-study-resnet50|scenarios/summit-study/scaling-resnet50.yaml|nodes=[1,8,64]"
  "summit-study-vgg16|scenarios/summit-study/scaling-vgg16.yaml|nodes=[1,8]"
  "summit-study-storage|scenarios/summit-study/storage.yaml|nodes=[16]"
  "summit-study-variability|scenarios/summit-study/variability.yaml|nodes=[16]"
  "summit-study-variability-flow|scenarios/summit-study/variability.yaml|nodes=[4]|fidelity=flow|iterations=2"
  "dgx-a100-superpod-bert|scenarios/dgx-a100-superpod-bert.yaml|nodes=[1,2,4]"
  "dgx-a100-superpod-bert-flow|scenarios/dgx-a100-superpod-bert.yaml|nodes=[8]|fidelity=flow|iterations=1"
  "dgx-h100-superpod-1024|scenarios/dgx-h100-superpod-1024.yaml|nodes=[1,32]"
  "hetero-v100-a100-resnet50|scenarios/hetero-v100-a100-resnet50.yaml|nodes=[1,2,4]"
  "hetero-v100-a100-resnet50-flow|scenarios/hetero-v100-a100-resnet50.yaml|nodes=[8]|fidelity=flow"
  "summit-shared-jobs|scenarios/summit-shared-jobs.yaml"
  "summit-shared-jobs-flow|scenarios/summit-shared-jobs.yaml|fidelity=flow|iterations=1"
  "summit-llm-and-cnn-jobs|scenarios/summit-llm-and-cnn-jobs.yaml"
  "llama3-70b-dgx-h100-superpod|scenarios/llama3-70b-dgx-h100-superpod.yaml"
  "gpt3-175b-dgx-a100-superpod|scenarios/gpt3-175b-dgx-a100-superpod.yaml"
)

# summary.json up to its "tool" key (version and git hash of the build).
strip_tool() { sed '/^  "tool"/,$d' "$1"; }

run_case() {
  local name=$1 scenario=$2
  shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  "$exe" --quiet run "$scenario" "${sets[@]}" -j "$JOBS" --out "$tmp/$name" >/dev/null
  strip_tool "$tmp/$name/summary.json" >"$tmp/$name.json"
}

mkdir -p "$tmp/now"
[[ $part == validate ]] && cases=()
if [[ -n ${ONLY:-} ]]; then
  for c in "${cases[@]}"; do [[ ${c%%|*} == "$ONLY" ]] && cases=("$c") && break; done
  [[ ${cases[0]%%|*} == "$ONLY" ]] || {
    echo "no case $ONLY" >&2
    exit 2
  }
fi
for c in "${cases[@]}"; do
  IFS='|' read -r -a f <<<"$c"
  t0=$(date +%s.%N)
  run_case "${f[@]}"
  [[ -n ${VERBOSE:-} ]] && echo "${f[0]}: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" >&2
  mv "$tmp/${f[0]}.json" "$tmp/now/${f[0]}.json"
done
if [[ $part != runs ]]; then
  t0=$(date +%s.%N)
  "$exe" --quiet validate validation/public.yaml -j "$JOBS" --json "$tmp/validate.json" >/dev/null
  strip_tool "$tmp/validate.json" >"$tmp/now/validate-public.json"
  [[ -n ${VERBOSE:-} ]] && echo "validate: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" >&2
fi

# The golden files this part covers.
mine() {
  local f
  for f in "$DATA"/*.json; do
    [[ -f $f ]] || continue
    [[ -n ${ONLY:-} && $(basename "$f") != "$ONLY.json" ]] && continue
    case $part:$(basename "$f") in
      all:* | validate:validate-public.json) echo "$f" ;;
      runs:validate-public.json | validate:*) ;;
      runs:*) echo "$f" ;;
    esac
  done
}

if [[ $mode == update ]]; then
  mkdir -p "$DATA"
  mine | xargs -r rm -f
  cp "$tmp"/now/*.json "$DATA/"
  git status --short "$DATA"
  exit 0
fi
status=0
for f in "$tmp"/now/*.json; do
  g=$DATA/$(basename "$f")
  if [[ ! -f $g ]]; then
    echo "golden: no $g (scripts/sim_golden.sh update)"
    status=1
  elif ! diff -u "$g" "$f" >"$tmp/diff"; then
    echo "golden: $(basename "$f") differs:"
    head -40 "$tmp/diff"
    status=1
  fi
done
for g in $(mine); do
  [[ -f $tmp/now/$(basename "$g") ]] || {
    echo "golden: $g has no case any more"
    status=1
  }
done
[[ $status == 0 ]] && echo "golden ($part): $(ls "$tmp"/now | wc -l) files identical"
exit $status
