#!/usr/bin/env bash
# The Summit study reproduced (Han et al., IEEE CLUSTER 2019: TensorFlow training on OLCF Summit):
# runs the study's axes with the built scalecast and writes a Markdown report with PNG plots.
#
# usage: scripts/summit_study.sh [--quick] OUT_DIR
#   OUT_DIR gets report.md and the plots; the simulations run in a temporary folder, removed at
#   the end. --quick: fewer node counts and seeds (the set the cli.summit_study_quick test reruns
#   against scenarios/summit-study/report/quick/). The full report is scenarios/summit-study/report/.
#   The same binary and inputs give the same bytes (seeded noise, fixed PNG metadata, no dates or
#   paths in the report).
# Environment: SCALECAST (the scalecast binary; default build/release/cli/scalecast, then
#   build/ci/cli/scalecast), JOBS (points simulated at a time, default 2), SUMMIT_STUDY_KEEP (a
#   folder to keep the runs' own outputs in, one `run --out` folder per run, instead of removing
#   them; it must be empty or new, else exit 1).
set -euo pipefail

quick=0
if [[ ${1:-} == --quick ]]; then
  quick=1
  shift
fi
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/summit_study.sh [--quick] OUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe=${SCALECAST:-}
if [[ -z $exe ]]; then
  for c in "$root/build/release/cli/scalecast" "$root/build/ci/cli/scalecast"; do
    if [[ -x $c ]]; then
      exe=$c
      break
    fi
  done
fi
if [[ -z $exe || ! -x $exe ]]; then
  echo "summit_study.sh: no scalecast binary (build it, or set SCALECAST=path)" >&2
  exit 1
fi
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")  # absolute, as OUT_DIR
python=/usr/bin/python3  # Debian's, with python3-matplotlib and python3-yaml (scripts/README.md)
if ! "$python" -c 'import matplotlib, yaml' 2>/dev/null; then
  echo "summit_study.sh: $python lacks matplotlib or yaml (scripts/bootstrap.sh installs them)" >&2
  exit 1
fi
jobs=${JOBS:-2}
# The report reads every run folder kept: an earlier study's seeds would be reported as this
# one's ("Across 4 seeds" with a seed never run). An empty or new folder only.
if [[ -n ${SUMMIT_STUDY_KEEP:-} && -d $SUMMIT_STUDY_KEEP && -n $(ls -A "$SUMMIT_STUDY_KEEP") ]]; then
  echo "summit_study: error: SUMMIT_STUDY_KEEP=$SUMMIT_STUDY_KEEP is not empty; expected an" \
    "empty or new folder (the report would take the runs already there for this study's)" >&2
  exit 1
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)  # absolute: the runs happen from the repository root

if [[ -n ${SUMMIT_STUDY_KEEP:-} ]]; then  # keep the runs' outputs (summary.json, traces) there
  mkdir -p "$SUMMIT_STUDY_KEEP"
  work=$(cd "$SUMMIT_STUDY_KEEP" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
scen=scenarios/summit-study
cd "$root"

if ((quick)); then
  scaling_nodes='[1,8,64]'
  seeds=(1 2 3)
  storage_nodes='[64]'
else
  scaling_nodes='[1,8,64,512,4608]'
  seeds=(1 2 3 4 5 6)
  storage_nodes='[512,4096,4608]'
fi

run() {  # run NAME SCENARIO [--set k=v ...]
  local name=$1 file=$2
  shift 2
  echo "summit_study: $name" >&2
  "$exe" --quiet run "$scen/$file" -j "$jobs" --out "$work/$name" "$@" >/dev/null
}

run scaling-resnet50 scaling-resnet50.yaml --set "nodes=$scaling_nodes"
run scaling-vgg16 scaling-vgg16.yaml --set "nodes=$scaling_nodes"
for s in "${seeds[@]}"; do
  run "variability-stragglers-seed$s" variability.yaml --set "seed=$s"
  run "variability-noise-seed$s" variability.yaml --set "seed=$s" --set variability.stragglers=0
done
run storage-pfs storage.yaml --set "nodes=$storage_nodes"
run storage-nvme storage.yaml --set "nodes=$storage_nodes" --set input.source=nvme

"$python" scripts/summit_study_report.py --work "$work" --out "$out" --mode "$( ((quick)) && echo quick || echo full)"
echo "summit_study: report in $out/report.md" >&2
