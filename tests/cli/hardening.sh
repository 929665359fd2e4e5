#!/usr/bin/env bash
# Hostile-user checks of the command line (issue 14 part B), one case per ctest entry. Each
# case checks the exit status as well as the output.
# usage: hardening.sh SCALECAST CASE
# shellcheck source=tests/cli/case_lib.sh
source "$(dirname "$0")/case_lib.sh" "$@"
scen=scenarios/summit-resnet50.yaml
quick=(--set 'nodes=[1,2]' --set iterations=1)

case $case_name in
utf8_name)
  # A Latin-1 byte in the scenario name used to crash the JSON writer after the simulations ran,
  # leaving a folder without summary.json (exit 4).
  printf 'name: caf\xe9\nplatform: summit\nmodel: resnet50\nnodes: 1\n' >"$D/s.yaml"
  expect 1 "^$D/s.yaml:1:10: error: invalid UTF-8 \(byte 0xE9\); save the file as UTF-8$" \
    "$exe" run "$D/s.yaml" --out "$D/out"
  [[ ! -e $D/out ]] || fail "a result folder was created"
  expect 1 "^--set:1:9: error: invalid UTF-8 \(byte 0xE9\); save the file as UTF-8$" \
    "$exe" run "$scen" --set "name=caf"$'\xe9' --out "$D/out"
  [[ ! -e $D/out ]] || fail "a result folder was created (--set)"
  ;;
sweep_edited_input)
  # Editing the scenario after a sweep and rerunning into the same --out used to bring the old
  # results back; now the changed file is named and the sweep refused (exit 1).
  cp "$scen" "$D/s.yaml"
  "$exe" -q sweep "$D/s.yaml" --nodes 1 --set iterations=1 --out "$D/sw" >/dev/null || fail "first sweep"
  sed -i 's/^batch_per_gpu: .*/batch_per_gpu: 128/' "$D/s.yaml"
  grep -q '^batch_per_gpu: 128' "$D/s.yaml" || fail "the edit did not apply"
  expect 1 "^--out: error: the scenario file $D/s.yaml changed since the sweep in $D/sw was planned" \
    "$exe" sweep "$D/s.yaml" --nodes 1 --set iterations=1 --out "$D/sw"
  expect 1 "the scenario file $D/s.yaml changed" "$exe" sweep --run-task 0 --out "$D/sw"
  expect 1 "the scenario file $D/s.yaml changed" "$exe" sweep --merge --out "$D/sw"
  # Unchanged inputs still resume (nothing to run).
  sed -i 's/^batch_per_gpu: 128/batch_per_gpu: 256/' "$D/s.yaml"
  cmp -s "$D/s.yaml" "$scen" || fail "could not restore the scenario"
  expect 0 "2 points planned in $D/sw, 2 with a result, 0 to run" \
    "$exe" sweep "$D/s.yaml" --nodes 1 --set iterations=1 --out "$D/sw"
  ;;
slurm_paths_with_spaces)
  # The generated scripts quote every path: run them by hand (as Slurm would) on a sweep folder
  # whose path holds a space and a quote.
  out="$D/my sweep's out"
  "$exe" -q sweep "$scen" --nodes 1 --set iterations=1 --slurm --sbatch='--comment=a b' \
    --out "$out" >/dev/null || fail "sweep --slurm"
  for f in array merge submit; do bash -n "$out/slurm/$f.sh" || fail "$f.sh: syntax"; done
  grep -q -- "'--comment=a b'" "$out/slurm/submit.sh" || fail "sbatch argument not quoted"
  for id in 0 1; do
    SLURM_ARRAY_TASK_ID=$id bash "$out/slurm/array.sh" "$out" >"$D/task.txt" 2>&1 || fail "array.sh task $id: $(cat "$D/task.txt")"
  done
  bash "$out/slurm/merge.sh" "$out" >"$D/merge.txt" 2>&1 || fail "merge.sh: $(cat "$D/merge.txt")"
  [[ -s $out/sweep.csv ]] || fail "no sweep.csv"
  # Without the folder (submit.sh passes it) a job script says so and does nothing.
  expect 1 "array.sh SWEEP_DIR \(run slurm/submit.sh, which passes it\)" \
    env SLURM_ARRAY_TASK_ID=0 bash "$out/slurm/array.sh"
  ;;
slurm_moved_folder)
  # A sweep folder moved after planning (to scratch, another cluster) used to run and merge in the
  # folder it was planned in: the scripts named that path. submit.sh now finds its own folder and
  # passes it to the jobs. A stand-in sbatch on PATH runs each job here, array tasks in turn.
  mkdir -p "$D/bin"
  cat >"$D/bin/sbatch" <<'SBATCH'
#!/bin/bash
array=""
while [[ $# -gt 0 && $1 == --* ]]; do
  [[ $1 == --array=* ]] && array=${1#--array=} && array=${array%%%*}
  shift
done
script=$1
shift
echo "$script $*" >>"$(dirname "$script")/sbatch.log"
if [[ -z $array ]]; then bash "$script" "$@" >/dev/null || exit 1; echo 2; exit 0; fi
for part in ${array//,/ }; do
  for ((i = ${part%-*}; i <= ${part#*-}; i++)); do
    SLURM_ARRAY_TASK_ID=$i bash "$script" "$@" >/dev/null || exit 1
  done
done
echo 1
SBATCH
  chmod +x "$D/bin/sbatch"
  "$exe" -q sweep "$scen" --nodes 1,2 --set iterations=1 --slurm --out "$D/planned" >/dev/null ||
    fail "sweep --slurm"
  mv "$D/planned" "$D/moved here"
  PATH="$D/bin:$PATH" "$D/moved here/slurm/submit.sh" >"$D/submit.txt" 2>&1 ||
    fail "submit.sh: $(cat "$D/submit.txt")"
  [[ ! -e $D/planned ]] || fail "the moved sweep wrote into the folder it was planned in"
  [[ -s "$D/moved here/sweep.csv" ]] || fail "no sweep.csv in the moved folder"
  grep -q "array.sh $D/moved here$" "$D/moved here/slurm/sbatch.log" ||
    fail "array.sh not given the moved folder: $(cat "$D/moved here/slurm/sbatch.log")"
  grep -q "points 0-2$" "$D/submit.txt" || fail "expected the array of points 0-2: $(cat "$D/submit.txt")"
  # Nothing left to run: submit.sh submits the merge alone, in the moved folder.
  rm "$D/moved here/sweep.csv"
  PATH="$D/bin:$PATH" "$D/moved here/slurm/submit.sh" >"$D/submit2.txt" 2>&1 ||
    fail "submit.sh again: $(cat "$D/submit2.txt")"
  [[ -s "$D/moved here/sweep.csv" ]] || fail "the merge alone did not write sweep.csv"
  [[ ! -e $D/planned ]] || fail "the merge wrote into the folder the sweep was planned in"
  ;;
ops_above_peak)
  # framework_efficiency may be up to 100, and at 100 ResNet-50 ran at 25,000 images/s per V100
  # without a word. Compute ops priced faster than the GPU's peak are now counted in summary.json
  # (op_costs.above_peak), printed under the table and warned about; none at the default.
  expect 0 "^\[W\] [0-9]+ compute ops of the step run faster than the GPU's peak \(up to [0-9.]+x\), which framework_efficiency 100 \(above 1\) allows" \
    "$exe" run "$scen" --set nodes=1 --set framework_efficiency=100 --out "$D/fast"
  grep -q "compute ops run faster than the GPU's datasheet peak" "$D/out.txt" || fail "no line under the table"
  python3 - "$D/fast/summary.json" <<'PY' || fail "summary.json lacks op_costs.above_peak"
import json, sys
summary = json.load(open(sys.argv[1]))
points = summary["points"] if "points" in summary else [summary]
assert all(p["op_costs"]["above_peak"]["ops"] > 0 and p["op_costs"]["above_peak"]["max_rate_over_peak"] > 1 for p in points)
PY
  expect 0 "" "$exe" run "$scen" --set nodes=1 --out "$D/default"
  ! grep -q "faster than the GPU's peak" "$D/err.txt" "$D/out.txt" || fail "a warning at the default efficiency"
  ! grep -q above_peak "$D/default/summary.json" || fail "above_peak at the default efficiency"
  ;;
slurm_control_characters)
  # A newline in the sweep folder's path ended the comment line of array.sh that names it and
  # made the rest a command of the script (found 5 Dec: --out $'/tmp/x\necho INJECTED\n#');
  # paths and --sbatch arguments with control characters are refused before anything is written.
  out="$D/x"$'\n'"touch $D/injected"$'\n'"#"
  expect 1 "^command line: error: --out: a control character \(byte 0x0a\) cannot go into a Slurm script" \
    "$exe" sweep "$scen" --nodes 1 --slurm --out "$out"
  [[ ! -e $out ]] || fail "a sweep folder was created"
  expect 1 "^command line: error: --sbatch: a control character \(byte 0x09\)" \
    "$exe" sweep "$scen" --nodes 1 --slurm --sbatch=$'--comment=a\tb' --out "$D/ok"
  [[ ! -e $D/ok ]] || fail "a sweep folder was created (--sbatch)"
  ;;
output_files)
  # Where validate and compare-trace write is checked before any simulation: --json naming an
  # input (the validation file, the trace, the scenario) replaced it with the JSON (found 5 Dec),
  # a folder failed only after the whole run, and a --work-dir that is a file made every point
  # fail.
  cat >"$D/v.yaml" <<'YAML'
schema: scalecast-validation/1
points:
  - {id: A, system: dgx1-v100, model: resnet50, precision: fp32, framework: tensorflow,
     strategy: none, batch_per_gpu: 64, gpus: 1, nodes: 1, measured: {throughput: 300},
     role: anchor, source: x}
  - {id: P, system: dgx1-v100, model: resnet50, precision: fp32, framework: tensorflow,
     strategy: allreduce, batch_per_gpu: 64, gpus: 8, nodes: 1, measured: {throughput: 2300},
     role: predict, anchor: A, source: x}
YAML
  cp "$D/v.yaml" "$D/v.orig"
  expect 1 "^--json: error: $D/v.yaml: is an input of this command" \
    "$exe" validate "$D/v.yaml" --json "$D/v.yaml"
  cmp -s "$D/v.yaml" "$D/v.orig" || fail "the validation file was changed"
  expect 1 "^--json: error: $D: is a folder" "$exe" validate "$D/v.yaml" --json "$D"
  expect 1 "^--json: error: $D/no/x.json: its folder $D/no does not exist" \
    "$exe" validate "$D/v.yaml" --json "$D/no/x.json"
  touch "$D/file"
  expect 1 "^--work-dir: error: $D/file: is not a folder" \
    "$exe" validate "$D/v.yaml" --work-dir "$D/file"
  expect 2 "--jobs: Value 0 not in range 1 to 4096" "$exe" validate "$D/v.yaml" -j 0
  cp tests/validation/data/chrome_steps.json "$D/t.json"
  cp "$D/t.json" "$D/t.orig"
  printf 'name: t\nplatform: summit\nmodel: resnet50\nnodes: 1\n' >"$D/s.yaml"
  cp "$D/s.yaml" "$D/s.orig"
  for target in "$D/t.json" "$D/s.yaml"; do
    expect 1 "^--json: error: $target: is an input of this command" \
      "$exe" compare-trace "$D/t.json" --scenario "$D/s.yaml" --json "$target"
  done
  cmp -s "$D/t.json" "$D/t.orig" || fail "the trace was changed"
  cmp -s "$D/s.yaml" "$D/s.orig" || fail "the scenario was changed"
  ;;
temp_folders)
  # Temporary folders are private (mkdtemp under $TMPDIR) and removed after the run (the
  # interrupt case checks the same after SIGINT); symlinks planted at the old predictable names
  # (scalecast-points-PID) are never followed.
  mkdir "$D/tmp" "$D/victim"
  for p in $(seq $(($$ + 1)) $(($$ + 200))); do ln -s "$D/victim" "$D/tmp/scalecast-points-$p"; done
  TMPDIR=$D/tmp "$exe" -q run "$scen" "${quick[@]}" >/dev/null 2>"$D/err.txt" || fail "run: $(cat "$D/err.txt")"
  [[ -z $(ls -A "$D/victim") ]] || fail "files written through a planted symlink: $(ls "$D/victim")"
  find "$D/tmp" -mindepth 1 ! -type l | grep -q . && fail "left in TMPDIR: $(find "$D/tmp" ! -type l)"
  ;;
interrupt)
  # SIGINT while points run: the point processes are killed, the temporary folder and the lock
  # are removed, the exit status is 130.
  mkdir "$D/tmp"
  TMPDIR=$D/tmp "$exe" -q run "$scen" --set 'nodes=[16,32]' --set fidelity=flow \
    --set iterations=3 -j 2 --out "$D/out" >/dev/null 2>"$D/err.txt" &
  pid=$!
  for _ in $(seq 100); do
    [[ -n $(ls "$D/tmp") && -n $(pgrep -P $pid) ]] && break
    sleep 0.1
  done
  children=$(pgrep -P $pid | tr '\n' ' ')
  [[ -n $children ]] || fail "no point process started"
  # A point killed while writing leaves its temporary copy (NAME.tmp.PID): the runner removes
  # the killed processes' own, and nothing else.
  for c in $children; do
    n=$(tr '\0' ' ' <"/proc/$c/cmdline" | grep -Eo -- '--point [0-9]+' | awk '{print $2}')
    [[ -n $n ]] || fail "point process $c has no --point"
    mkdir -p "$D/out/nodes-$n"
    touch "$D/out/nodes-$n/trace.json.tmp.$c"
  done
  mkdir -p "$D/out/nodes-16"
  touch "$D/out/nodes-16/notes.txt.tmp.1"
  kill -INT $pid
  wait $pid
  rc=$?
  [[ $rc -eq 130 ]] || fail "exit $rc after SIGINT, expected 130: $(cat "$D/err.txt")"
  grep -q "interrupted" "$D/err.txt" || fail "no message: $(cat "$D/err.txt")"
  for c in $children; do kill -0 "$c" 2>/dev/null && fail "point process $c still runs"; done
  for c in $children; do
    find "$D/out" -name "*.tmp.$c" | grep -q . && fail "temporary files of point $c left: $(find "$D/out" -name "*.tmp.$c")"
  done
  [[ -e $D/out/nodes-16/notes.txt.tmp.1 ]] || fail "a file no killed point wrote was removed"
  [[ -z $(ls -A "$D/tmp") ]] || fail "left in TMPDIR: $(ls -A "$D/tmp")"
  [[ ! -e $D/out/.lock ]] || fail "lock file left"
  ;;
flow_cost_warning)
  # A flow point that will take minutes says so before any point starts (with --quiet too), with
  # the count; a small flow run and the same size at wave do not.
  "$exe" -q run "$scen" --set 'nodes=[683]' --set fidelity=flow --out "$D/out" \
    >/dev/null 2>"$D/err.txt" &
  pid=$!
  for _ in $(seq 100); do
    grep -q "at fidelity flow" "$D/err.txt" && break
    sleep 0.1
  done
  kill -INT $pid
  wait $pid
  grep -Eq '683 nodes \(4098 GPUs\) at fidelity flow .* 5\.6 million communications per hierarchical all-reduce' \
    "$D/err.txt" || fail "no warning before the run: $(cat "$D/err.txt")"
  expect 0 "" "$exe" -q run "$scen" "${quick[@]}" --set fidelity=flow
  grep -q "fidelity flow" "$D/err.txt" && fail "a small flow run warned: $(cat "$D/err.txt")"
  expect 0 "" "$exe" -q run "$scen" --set 'nodes=[683]' --set iterations=1
  grep -q "fidelity flow" "$D/err.txt" && fail "a wave run warned: $(cat "$D/err.txt")"
  # sweep says it when it plans (--slurm plans and writes the scripts, runs nothing).
  expect 0 "683 nodes \(4098 GPUs\) at fidelity flow" \
    "$exe" -q sweep "$scen" --nodes 1,683 --set fidelity=flow --slurm --out "$D/sw"
  ;;
interrupt_validate)
  # SIGINT during validate: the killed simulations are not reported as results (no table, no
  # --json), the work folder and the lock are removed, exit 130.
  mkdir "$D/tmp"
  TMPDIR=$D/tmp "$exe" validate validation/public.yaml --json "$D/v.json" >"$D/out.txt" 2>"$D/err.txt" &
  pid=$!
  for _ in $(seq 100); do [[ -n $(pgrep -P $pid) && -n $(ls "$D/tmp") ]] && break; sleep 0.1; done
  sleep 1
  kill -INT $pid
  wait $pid
  rc=$?
  [[ $rc -eq 130 ]] || fail "exit $rc after SIGINT, expected 130: $(cat "$D/err.txt")"
  grep -q "^scalecast: interrupted" "$D/err.txt" || fail "no message: $(cat "$D/err.txt")"
  [[ ! -s $D/out.txt && ! -e $D/v.json && ! -e $D/v.json.lock ]] || fail "results written after SIGINT"
  [[ -z $(ls -A "$D/tmp") ]] || fail "left in TMPDIR: $(ls -A "$D/tmp")"
  ;;
interrupt_validate_term)
  # SIGTERM to validate alone (not its process group, as a batch system or `kill` sends it) while
  # simulations run: its simulation servers and their simulations are killed at once and it
  # exits 130 within 2 s, nothing left running (it used to wait for the simulations in flight;
  # the 4,000-GPU points of mlperf-scale.yaml take seconds each).
  mkdir "$D/tmp"
  TMPDIR=$D/tmp "$exe" validate validation/mlperf-scale.yaml -j 1 --json "$D/v.json" >"$D/out.txt" 2>"$D/err.txt" &
  pid=$!
  sims=""
  for _ in $(seq 300); do
    servers=$(pgrep -P $pid | tr '\n' ' ')
    sims=$(for s in $servers; do pgrep -P "$s"; done | tr '\n' ' ')
    [[ -n ${sims// /} ]] && break
    sleep 0.05
  done
  [[ -n ${sims// /} ]] || fail "no simulation started"
  sleep 0.5
  start=$(date +%s%N)
  kill -TERM $pid
  wait $pid
  rc=$?
  took_ms=$((($(date +%s%N) - start) / 1000000))
  [[ $rc -eq 130 ]] || fail "exit $rc after SIGTERM, expected 130: $(cat "$D/err.txt")"
  ((took_ms <= 2000)) || fail "took $took_ms ms to stop after SIGTERM"
  alive() { [[ -e /proc/$1 ]] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }
  for p in $servers $sims; do
    for _ in $(seq 20); do alive "$p" || break; sleep 0.1; done
    alive "$p" && fail "process $p still runs 2 s after SIGTERM"
  done
  [[ ! -s $D/out.txt && ! -e $D/v.json ]] || fail "results written after SIGTERM"
  [[ -z $(ls -A "$D/tmp") ]] || fail "left in TMPDIR: $(ls -A "$D/tmp")"
  ;;
concurrent_out)
  # Two runs into one --out: the second is refused while the first holds the folder.
  "$exe" -q run "$scen" --set 'nodes=[8]' --set fidelity=flow --set iterations=2 -j 1 \
    --out "$D/out" >/dev/null 2>"$D/first.txt" &
  pid=$!
  for _ in $(seq 100); do [[ -e $D/out/.lock ]] && break; sleep 0.05; done
  [[ -e $D/out/.lock ]] || fail "the first run took no lock"
  expect 1 "^--out: error: $D/out is in use by pid $pid \(another scalecast run writes there\)" \
    "$exe" -q run "$scen" "${quick[@]}" --out "$D/out"
  wait $pid || fail "the first run failed: $(cat "$D/first.txt")"
  [[ ! -e $D/out/.lock ]] || fail "lock file left"
  expect 0 "" "$exe" -q run "$scen" "${quick[@]}" --out "$D/out"
  ;;
disk_full)
  # A full disk: exit 1, the path and "No space left on device", no temporary files left.
  mkdir "$D/full"
  mount -t tmpfs -o size=64k tmpfs "$D/full" 2>/dev/null || { echo "skip: cannot mount a tmpfs (needs root)"; exit 77; }
  trap 'umount "$D/full"; rm -rf "$D"' EXIT
  expect 1 "^$D/full/out/nodes-[12]/[a-z]+\.(csv|json): error: cannot write: No space left on device" \
    "$exe" -q run "$scen" "${quick[@]}" --out "$D/full/out"
  find "$D/full" -name '*.tmp.*' | grep -q . && fail "temporary files left: $(find "$D/full" -name '*.tmp.*')"
  [[ ! -e $D/full/out ]] || fail "the half-written result folder was left: $(find "$D/full/out")"
  ;;
progress)
  # --progress reports on stderr only; stdout and result files are the same as without it.
  "$exe" run "$scen" "${quick[@]}" --out "$D/a" >"$D/a.txt" 2>/dev/null || fail "run"
  "$exe" run "$scen" "${quick[@]}" --progress --out "$D/b" >"$D/b.txt" 2>"$D/b.err" || fail "run --progress"
  grep -Eq '\[progress\] points 3/3 ' "$D/b.err" || fail "no progress line: $(cat "$D/b.err")"
  # Each point reports its simulated iterations too (a long flow point is not silent).
  grep -Eq '\[progress\] point [0-9]+ nodes: iteration [0-9]+/[0-9]+ simulated' "$D/b.err" ||
    fail "no per-point iteration line: $(cat "$D/b.err")"
  cmp "$D/a.txt" "$D/b.txt" || fail "stdout differs with --progress"
  diff -r "$D/a" "$D/b" >/dev/null || fail "result files differ with --progress"
  ;;
any_directory)
  # The default scenario runs from any working directory (its calibration database resolves in
  # the data directory).
  root=$PWD
  (cd "$D" && "$exe" -q run "$root/$scen" "${quick[@]}") >"$D/out.txt" 2>"$D/err.txt" || fail "from $D: $(cat "$D/err.txt")"
  grep -q "summit-resnet50" "$D/out.txt" || fail "no table"
  # A platform file named relative to the scenario file, run from elsewhere (the scenario loader
  # reads the platform itself: it must resolve the path as the command line does).
  mkdir -p "$D/case/machines"
  cp platforms/dgx1-v100.yaml platforms/gpus.yaml "$D/case/machines/"
  printf 'name: rel\nplatform: machines/dgx1-v100.yaml\nmodel: resnet50\nnodes: 1\niterations: 1\n' >"$D/case/s.yaml"
  (cd / && "$exe" -q run "$D/case/s.yaml") >"$D/out.txt" 2>"$D/err.txt" || fail "relative platform from /: $(cat "$D/err.txt")"
  grep -q "rel" "$D/out.txt" || fail "no table"
  ;;
deep_trace)
  # A trace nested 100,000 deep used to crash compare-trace (segfault); dur 1e300 gave negative
  # sums and exit 0; /dev/zero as a platform was read forever.
  python3 -c 'print("[" * 100000 + "]" * 100000)' >"$D/deep.json"
  expect 1 "^$D/deep.json:1:257: error: JSON nested deeper than 256 levels$" \
    "$exe" compare-trace "$D/deep.json" --scenario validation/public.yaml
  echo '[{"ph": "X", "name": "k", "ts": 1, "dur": 1e300}]' >"$D/dur.json"
  expect 1 "traceEvents\[0\]\.dur: expected a finite number of microseconds" \
    "$exe" compare-trace "$D/dur.json" --scenario validation/public.yaml
  printf 'name: z\nplatform: /dev/zero\nmodel: resnet50\nnodes: 1\n' >"$D/z.yaml"
  expect 1 "^$D/z.yaml:2:11: error: platform: expected a regular file \(not a device, FIFO or socket\)$" \
    timeout 20 "$exe" run "$D/z.yaml"
  ;;
preflight)
  # Checks made in the parent before any point runs, exit 1 with file:line:col (GPUs per node
  # used to be clamped silently; an unknown model or a missing database failed in every point
  # process, exit 4).
  printf 'name: g\nplatform: summit\nmodel: resnet50\nnodes: 1\ngpus_per_node: 8\n' >"$D/g.yaml"
  expect 1 "^$D/g.yaml:5:16: error: gpus_per_node: expected at most 6: a summit node \(ac922\) has 6 GPUs, got 8$" \
    "$exe" run "$D/g.yaml" --out "$D/out"
  [[ ! -e $D/out ]] || fail "a result folder was created"
  expect 1 "^--set model=resnet5: error: model: unknown model 'resnet5' \(did you mean 'resnet50'\?\)$" \
    "$exe" run "$scen" --set model=resnet5
  printf 'name: c\nplatform: summit\nmodel: resnet50\nnodes: 1\ncalibration: [ok.yaml, missing.yaml]\n' >"$D/c.yaml"
  cp calibration/data/deepbench-v100.yaml "$D/ok.yaml"
  expect 1 "^$D/c.yaml:5:24: error: calibration\[1\]: no calibration database file 'missing.yaml'" \
    "$exe" sweep "$D/c.yaml" --out "$D/sw"
  # compare-trace too, before simulating.
  expect 1 "^$D/c.yaml:5:24: error: calibration\[1\]: no calibration database file 'missing.yaml'" \
    "$exe" compare-trace tests/validation/data/kineto_steps.json --scenario "$D/c.yaml"
  printf 'name: p\nplatform: nosuch\nmodel: resnet50\nnodes: 1\n' >"$D/p.yaml"
  expect 1 "^$D/p.yaml:2:11: error: platform: no platform named 'nosuch'" \
    "$exe" sweep "$D/p.yaml" --axis allreduce.algorithm=ring,tree --out "$D/sw"
  # An error inside a referenced file names that file.
  printf 'name: b\nplatform: summit\nmodel: resnet50\nnodes: 1\ncalibration: [bad.yaml]\n' >"$D/b.yaml"
  printf 'format: scalecast-calibration\nversion: 1\nsources: []\nmeasurements: 7\n' >"$D/bad.yaml"
  expect 1 "^$D/bad.yaml:[0-9]+:[0-9]+: error: " "$exe" run "$D/b.yaml"
  sed -n 1,23p validation/public.yaml >"$D/v.yaml"
  sed -i 's/system: "dgx1-v100"/system: "nosuch"/' "$D/v.yaml"
  # A validation point on an unknown system is skipped at its key, not fatal to the file
  # (FORMAT.md 5.4): its reason names the validation file's line, not a generated scenario.
  expect 0 "" "$exe" validate "$D/v.yaml"
  grep -q "not fitted: $D/v.yaml:11:13: points\[0\]\.system: no platform named 'nosuch'" \
    "$D/out.txt" || fail "no located skip: $(cat "$D/out.txt")"
  ;;
calibrate_blocks)
  # Pooling jobs used to be rebuilt smaller than their window ("filter span 56 exceeds padded
  # input 45", naming no op); every kernel of the block model now measures.
  expect 0 "" "$exe" calibrate --backend cpu --models models/examples/resnet_blocks.yaml \
    --batch 8 --min-sample-time 1e-4 --out "$D/cal.yaml"
  grep -q "calibrate: 33 measured, 0 already present, 0 unsupported on cpu" "$D/out.txt" ||
    fail "summary: $(cat "$D/out.txt")"
  grep -q 'op: pooling, pass: "bwd_data".*r: 56, s: 56' "$D/cal.yaml" || fail "no global-pool backward row"
  ;;
output_paths)
  # An empty option value used to mean "not given" (run -o '' wrote nothing, sweep --nodes ''
  # ran the scenario's own nodes); an --out under a file was exit 4 with a bare filesystem error;
  # a table that could not be written to stdout was exit 0 (found 7 Dec).
  expect 2 "^--out: must not be empty" "$exe" run "$scen" "${quick[@]}" -o ''
  expect 2 "^--nodes: must not be empty" "$exe" sweep "$scen" --nodes '' --out "$D/sw"
  [[ ! -e $D/sw ]] || fail "a sweep folder was created"
  touch "$D/file"
  expect 1 "^--out: error: $D/file/sub: cannot create the folder: Not a directory$" \
    "$exe" run "$scen" "${quick[@]}" --out "$D/file/sub"
  expect 1 "^--out: error: $D/file/sub: cannot create the folder: Not a directory$" \
    "$exe" sweep "$scen" --nodes 1 --out "$D/file/sub"
  if [[ -c /dev/full ]]; then  # a character device (a stray regular file there would take the write)
    "$exe" -q run "$scen" "${quick[@]}" >/dev/full 2>"$D/err.txt"
    rc=$?
    [[ $rc -eq 4 ]] || fail "stdout on a full device: exit $rc, expected 4"
    grep -q "^scalecast: error: cannot write the standard output: No space left on device" \
      "$D/err.txt" || fail "no message for the failed stdout: $(cat "$D/err.txt")"
  fi
  ;;
point_files)
  # Each point of a multi-point run keeps its own results next to its files as soon as it
  # finishes (an interrupt used to lose every finished point's numbers: summary.json is written
  # at the end); they are the numbers summary.json reports.
  "$exe" -q run "$scen" "${quick[@]}" --out "$D/out" >/dev/null || fail "run"
  python3 - "$D/out" <<'PY' || fail "point.json does not match summary.json"
import json, sys
out = sys.argv[1]
summary = json.load(open(out + "/summary.json"))
assert len(summary["points"]) == 2, summary["points"]
for p in summary["points"]:
    own = json.load(open(f"{out}/nodes-{p['nodes']}/point.json"))
    assert own["throughput_samples_per_s"] == p["throughput_samples_per_s"], (own, p)
    assert own["iteration_time_s"] == p["iteration_time_s"], (own, p)
PY
  ;;
run_out_manifest)
  # A run into a folder holding an earlier run's results left them there: nodes [1, 2] and then
  # [2] gave a folder with nodes-1/ and nodes-2/ next to a summary of one point. Each run now
  # lists what it writes (manifest.txt) and the next run removes what that lists, nothing else.
  same_as_manifest() {  # the folder holds exactly the files its manifest lists (plus $2...)
    local dir=$1
    shift
    (cd "$dir" && { grep -v '^#' manifest.txt; printf '%s\n' manifest.txt "$@"; } | sort >"$D/want" &&
      find . -type f | sed 's|^\./||' | sort >"$D/have")
    diff "$D/want" "$D/have" >"$D/diff" || fail "$dir does not hold what its manifest lists: $(cat "$D/diff")"
  }
  "$exe" -q run "$scen" "${quick[@]}" --out "$D/out" >/dev/null || fail "run over [1, 2]"
  same_as_manifest "$D/out"
  echo mine >"$D/out/notes.txt"
  echo mine >"$D/out/nodes-1/keep.txt"
  "$exe" -q run "$scen" --set 'nodes=[2]' --set iterations=1 --out "$D/out" >/dev/null ||
    fail "run over [2]"
  [[ ! -e $D/out/nodes-2 ]] || fail "the earlier run's nodes-2/ is still there"
  [[ $(ls "$D/out/nodes-1") == keep.txt ]] || fail "nodes-1/ should hold only the user's file"
  same_as_manifest "$D/out" notes.txt nodes-1/keep.txt
  # An LLM job and a jobs: scenario list what they write too.
  for s in scenarios/llama3-70b-dgx-h100-superpod.yaml scenarios/summit-llm-and-cnn-jobs.yaml; do
    "$exe" -q run "$s" --set iterations=1 --out "$D/$(basename "$s")" >/dev/null || fail "run $s"
    same_as_manifest "$D/$(basename "$s")"
  done
  # Never through a symbolic link: a manifest line under a linked folder removes nothing there.
  mkdir "$D/outside"
  echo theirs >"$D/outside/summary.json"
  ln -s "$D/outside" "$D/out/linked"
  echo linked/summary.json >>"$D/out/manifest.txt"
  "$exe" -q run "$scen" --set 'nodes=[2]' --set iterations=1 --out "$D/out" >/dev/null ||
    fail "run with a linked folder in the manifest"
  [[ -f $D/outside/summary.json ]] || fail "a file outside the folder was removed"
  # A line that is no path inside the folder is refused, before anything is removed.
  printf '# x\nsummary.json\n../outside/summary.json\n' >"$D/out/manifest.txt"
  expect 1 "^$D/out/manifest\.txt:3:1: error: expected the path of a file inside $D/out \(relative, without \. or \.\. parts\), got \"\.\./outside/summary\.json\"" \
    "$exe" -q run "$scen" --set 'nodes=[2]' --set iterations=1 --out "$D/out"
  [[ -f $D/out/summary.json ]] || fail "a file was removed before the manifest was read whole"
  ;;
sweep_folder_modes)
  # --run-task, --merge and --missing on a folder: a folder without a plan, an id beyond the
  # plan, a corrupt result and a deleted working directory were exit 4 with a bare library
  # message; two modes at once, or a mode with a scenario, silently dropped one (CLI fuzzing);
  # -j and --progress, which no folder mode uses, were dropped without a word.
  mkdir "$D/wd" "$D/empty"
  abs_scen=$PWD/$scen
  (cd "$D/wd" && "$exe" -q sweep "$abs_scen" --nodes 1 --set iterations=1 --slurm \
    --out "$D/sw" >/dev/null) || fail "planning the sweep"
  expect 1 "^--out: error: $D/empty holds no sweep plan \(plan\.json\); plan one with" \
    "$exe" sweep --missing --out "$D/empty"
  expect 1 "^--out: error: $D/none is not a sweep folder \(no such folder\)" \
    "$exe" sweep --merge --out "$D/none"
  expect 1 "^--run-task: error: expected 0\.\.1 \(the sweep in $D/sw has 2 points\), got 999$" \
    "$exe" sweep --run-task 999 --out "$D/sw"
  for mode in "--merge --missing" "--run-task 1 --merge" "--run-task 1 --missing" \
    "--merge --nodes 2" "--run-task 0 --set iterations=2" "--missing --axis warmup=1,2" \
    "--merge -j 4" "--run-task 0 --progress" "--missing --jobs 2"; do
    # shellcheck disable=SC2086  # the mode is several words
    expect 2 "excludes" "$exe" sweep $mode --out "$D/sw"
  done
  expect 2 "excludes" "$exe" sweep "$scen" --run-task 0 --out "$D/sw"
  printf '{"throughput' >"$D/sw/results/point-0.json"
  echo '{}' >"$D/sw/results/point-1.json"
  expect 1 "^$D/sw/results/point-0\.json: error: the result of point 0 is not valid JSON \(.*\); remove it and run the point again \(\`scalecast sweep --run-task 0 --out $D/sw\`\)$" \
    "$exe" sweep --merge --out "$D/sw"
  echo '{}' >"$D/sw/results/point-0.json"
  expect 1 "^$D/sw/results: error: a point's result lacks a figure the merge reads" \
    "$exe" sweep --merge --out "$D/sw"
  # The working directory the plan records is gone: --missing does not need it.
  rm -f "$D/sw/results/point-1.json"
  rmdir "$D/wd"
  [[ $("$exe" sweep --missing --out "$D/sw") == "1" ]] || fail "--missing without the working directory"
  expect 1 "^$D/sw/plan\.json: error: workdir: the sweep's working directory $D/wd is gone" \
    "$exe" sweep --run-task 1 --out "$D/sw"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "ok: $case_name"
