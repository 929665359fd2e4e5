#!/usr/bin/env bash
# Hostile sweep folders (cli/sweep_plan.hpp): `sweep --run-task`, `--merge` and `--missing` trust
# nothing in the folder. plan.json is checked key by key, points.jsonl must be exactly the points
# plan.json gives (an edited line wrote files outside the folder, simulated a whole node list, or
# asked for 22 GB), every point's files go inside the folder given with --out (a copied folder
# wrote into the original), and each result's figures must be its planned point's before the
# merge writes them into sweep.csv. One case per ctest entry; each checks exit status and stderr.
# usage: sweep_hostile.sh SCALECAST CASE
# shellcheck source=tests/cli/case_lib.sh
source "$(dirname "$0")/case_lib.sh" "$@"
# edit FILE PYTHON: runs PYTHON with `j` the file's JSON, and writes `j` back.
edit() {
  /usr/bin/python3 -c "import json,sys; f=sys.argv[1]; j=json.load(open(f)); $2; json.dump(j, open(f, 'w'), indent=2)" "$1" ||
    fail "editing $1"
}
scen=scenarios/summit-resnet50.yaml
# The sweep folder's name as a regular expression.
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }

case $case_name in
points_jsonl)
  # Points 0 (1 node), 1 (2 nodes), 2 (the 1-GPU baseline), planned for Slurm from $D/wd/a (the
  # working directory: a relative out_dir ../../escape would be $D/escape, in this test's folder).
  mkdir -p "$D/wd/a"
  abs_scen=$PWD/$scen
  (cd "$D/wd/a" && "$exe" -q sweep "$abs_scen" --nodes 1,2 --set iterations=1 --slurm --out "$D/sw" \
    >/dev/null) || fail "planning"
  cp "$D/sw/points.jsonl" "$D/points.orig"
  sw=$(re "$D/sw")
  line0() { sed -n 1p "$D/points.orig"; }
  # (An absolute folder outside the sweep folder stands for /etc/scalecast-x of the report.)
  for change in "\"out_dir\":\"$D/elsewhere\"" '"out_dir":"../../escape"' '"nodes":0' '"nodes":-3' \
    '"nodes":2147483649' '"nodes":1000000' '"nodes":1.0' '"gpus_per_node":99' '"role":"zzz"' '"id":7'; do
    key=${change%%:*}
    line0 | sed "s|$key:[^,}]*|$change|" >"$D/sw/points.jsonl"
    tail -n +2 "$D/points.orig" >>"$D/sw/points.jsonl"
    grep -qF "$change" "$D/sw/points.jsonl" || fail "the edit $change did not apply"
    for mode in "--run-task 0" --merge --missing; do
      # shellcheck disable=SC2086  # the mode is one or two words
      expect 1 "^$sw/points\.jsonl:1: error: malformed sweep plan: expected point 0 as plan\.json gives it, \{\"id\":0,\"combo\":0,\"nodes\":1,\"gpus_per_node\":0,\"role\":\"point\",\"out_dir\":\"points/nodes-1\"\}, got .*; plan the sweep afresh into another --out$" \
        "$exe" sweep $mode --out "$D/sw"
    done
  done
  [[ ! -e $D/elsewhere && ! -e $D/escape && ! -e $D/sw/points ]] || fail "a point's files were written"
  # A line that is not JSON, one point too many, an empty file.
  { line0; echo 'not json'; } >"$D/sw/points.jsonl"
  expect 1 "^$sw/points\.jsonl:2: error: malformed sweep plan: expected point 1 as plan\.json gives it" \
    "$exe" sweep --run-task 0 --out "$D/sw"
  { cat "$D/points.orig"; line0; } >"$D/sw/points.jsonl"
  expect 1 "^$sw/points\.jsonl: error: malformed sweep plan: plan\.json's combinations and node counts give 3 points, the file has more;" \
    "$exe" sweep --missing --out "$D/sw"
  : >"$D/sw/points.jsonl"
  for mode in "--run-task 0" --merge --missing; do
    # shellcheck disable=SC2086
    expect 1 "^$sw/points\.jsonl: error: malformed sweep plan: plan\.json's combinations and node counts give 3 points, the file has 0 \(it is empty\); plan the sweep afresh into another --out$" \
      "$exe" sweep $mode --out "$D/sw"
  done
  # The plan as written still works.
  cp "$D/points.orig" "$D/sw/points.jsonl"
  [[ $("$exe" sweep --missing --out "$D/sw") == "0-2" ]] || fail "--missing on the restored plan"
  ;;
plan_json)
  "$exe" -q sweep "$scen" --nodes 1,2 --set iterations=1 --slurm --out "$D/sw" >/dev/null || fail "planning"
  cp "$D/sw/plan.json" "$D/plan.orig"
  sw=$(re "$D/sw")
  for nodes in '[0,2]' '[-1]' '[1e18]' '[1.5,2]' '[]' '[1,2,1]' '[1000001]' '[2147483649]' '"1,2"'; do
    cp "$D/plan.orig" "$D/sw/plan.json"
    edit "$D/sw/plan.json" "j['nodes']=json.loads('$nodes')"
    for mode in --missing "--run-task 0" --merge; do
      # shellcheck disable=SC2086
      expect 1 "^$sw/plan\.json: error: nodes: malformed sweep plan: expected a list of node counts, whole numbers from 1 to 1000000, each once \(.*\); plan the sweep afresh into another --out$" \
        "$exe" sweep $mode --out "$D/sw"
    done
  done
  cp "$D/plan.orig" "$D/sw/plan.json"
  edit "$D/sw/plan.json" "j['scenario']='/nonexist.yaml'"
  for mode in --missing "--run-task 0" --merge; do
    # shellcheck disable=SC2086
    expect 1 "^$sw/plan\.json: error: scenario: the sweep's scenario /nonexist\.yaml is not a file \(removed, or plan\.json edited\); restore it, or plan the sweep afresh into another --out$" \
      "$exe" sweep $mode --out "$D/sw"
  done
  # Another scenario that exists: its fingerprint was never recorded.
  cp "$D/plan.orig" "$D/sw/plan.json"
  other=$PWD/scenarios/dgx-a100-superpod-bert.yaml
  edit "$D/sw/plan.json" "j['scenario']='$other'"
  expect 1 "^$sw/plan\.json: error: inputs: malformed sweep plan: the scenario $(re "$other") is not among the recorded inputs" \
    "$exe" sweep --run-task 0 --out "$D/sw"
  # Keys of the wrong type or missing, combinations that are no axes' product, a relative path.
  check() {  # check KEY PYTHON-EDIT
    cp "$D/plan.orig" "$D/sw/plan.json"
    edit "$D/sw/plan.json" "$2"
    expect 1 "^$sw/plan\.json: error: $1malformed sweep plan: " "$exe" sweep --run-task 0 --out "$D/sw"
  }
  check "workdir: " "j['workdir']='relative/dir'"
  check "scenario: " "j['scenario']=5"
  check "" "del j['combos']"
  check "combos: " "j['combos']=[]"
  check "combos: " "j['combos']=[['x=1']]"
  check "combos: " "j['keys']=['warmup']; j['combos']=[['warmup=1'],['warmup=2'],['warmup=1']]"
  check "keys: " "j['keys']=['nodes']; j['combos']=[['nodes=1'],['nodes=2']]"
  check "overrides: " "j['overrides']=['iterations']"
  check "llm: " "j['llm']='yes'"
  check "inputs: " "j['inputs']=[]"
  check "inputs: " "j['inputs'][0]['path']=7"
  cp "$D/plan.orig" "$D/sw/plan.json"
  echo '[1,2]' >"$D/sw/plan.json"
  expect 1 "^$sw/plan\.json: error: malformed sweep plan: expected a JSON object, got \[1,2\]" \
    "$exe" sweep --missing --out "$D/sw"
  # A plan with one point per node count and an axis of two values, checked whole: it still reads.
  "$exe" -q sweep "$scen" --nodes 1,2 --set iterations=1 --axis allreduce.algorithm=ring,tree \
    --slurm --out "$D/axes" >/dev/null || fail "planning with an axis"
  [[ $("$exe" sweep --missing --out "$D/axes") == "0-5" ]] || fail "--missing on a plan with an axis"
  edit "$D/axes/plan.json" "j['combos'].append(j['combos'][0])"
  expect 1 "^$(re "$D/axes")/plan\.json: error: combos: malformed sweep plan: expected every combination of the axes' values once, in order" \
    "$exe" sweep --missing --out "$D/axes"
  ;;
copied_folder)
  # The points' files are inside the folder given with --out: a copy works on itself.
  "$exe" -q sweep "$scen" --nodes 1,2 --set iterations=1 --out "$D/T1" >/dev/null || fail "first sweep"
  grep -q '"out_dir":"points/nodes-1"' "$D/T1/points.jsonl" || fail "out_dir not relative: $(head -1 "$D/T1/points.jsonl")"
  cp -r "$D/T1" "$D/T1copy"
  rm -r "$D/T1copy/results/point-0.json" "$D/T1copy/points" "$D/T1/points"
  "$exe" -q sweep --run-task 0 --out "$D/T1copy" || fail "--run-task 0 in the copy"
  [[ -s $D/T1copy/points/nodes-1/iterations.csv ]] || fail "no point files in the copy"
  [[ ! -e $D/T1/points ]] || fail "the copy wrote into the original folder"
  # A plan written by earlier versions (absolute out_dir, naming the folder planned in) still
  # reads, resumes and merges, and its points' files also go into the folder given.
  /usr/bin/python3 - "$D/T1copy/points.jsonl" "$D/T1" <<'PY' || fail "rewriting points.jsonl"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for p in lines:
    if p["out_dir"]:
        p["out_dir"] = sys.argv[2] + "/" + p["out_dir"]
open(sys.argv[1], "w").write("".join(json.dumps(p, separators=(",", ":")) + "\n" for p in lines))
PY
  grep -qF "\"out_dir\":\"$D/T1/points/nodes-1\"" "$D/T1copy/points.jsonl" || fail "the legacy edit did not apply"
  rm -r "$D/T1copy/results/point-1.json" "$D/T1copy/points"
  "$exe" -q sweep --run-task 1 --out "$D/T1copy" || fail "--run-task 1 on a legacy plan"
  [[ -s $D/T1copy/points/nodes-2/iterations.csv && ! -e $D/T1/points ]] || fail "legacy out_dir was followed"
  expect 0 "3 points planned in $(re "$D/T1copy"), 3 with a result, 0 to run" \
    "$exe" sweep "$scen" --nodes 1,2 --set iterations=1 --out "$D/T1copy"
  cmp "$D/T1/sweep.csv" "$D/T1copy/sweep.csv" || fail "the copy's sweep.csv differs"
  # Legacy lines under two different folders are no plan this version wrote.
  sed -i "2s|$D/T1/|$D/other/|" "$D/T1copy/points.jsonl"
  expect 1 "^$(re "$D/T1copy")/points\.jsonl:2: error: malformed sweep plan: expected point 1 as plan\.json gives it" \
    "$exe" sweep --missing --out "$D/T1copy"
  ;;
results)
  # Points 0 (1 node), 1 (2 nodes), 2 (the 1-GPU baseline).
  "$exe" -q sweep "$scen" --nodes 1,2 --set iterations=1 --out "$D/sw" >/dev/null || fail "sweep"
  cp "$D/sw/sweep.csv" "$D/sweep.csv"
  cp "$D/sw/results/point-1.json" "$D/point-1.json"
  sw=$(re "$D/sw")
  rerun() { echo "; remove it and run the point again \(\`scalecast sweep --run-task $1 --out $sw\`\)$"; }
  bad() {  # bad PYTHON-EDIT MESSAGE-REGEX: point 1 edited so
    cp "$D/point-1.json" "$D/sw/results/point-1.json"
    edit "$D/sw/results/point-1.json" "$1"
    rm -f "$D/sw/sweep.csv"
    expect 1 "^$sw/results/point-1\.json: error: the result of point 1 $2$(rerun 1)" \
      "$exe" sweep --merge --out "$D/sw"
    [[ ! -e $D/sw/sweep.csv ]] || fail "sweep.csv written from a bad result ($1)"
  }
  bad "j['iteration_time_s']=-1" "has iteration_time_s -1, expected a finite number > 0"
  bad "j['iteration_time_s']=0" "has iteration_time_s 0, expected a finite number > 0"
  bad "j['iteration_time_s']=1e308" "has throughput_samples_per_s [0-9.e+]+, but gpus x batch_per_gpu / iteration_time_s is [0-9.e-]+"
  bad "j['throughput_samples_per_s']=1e308" "has throughput_samples_per_s 1e\+308, but gpus x batch_per_gpu / iteration_time_s is [0-9.]+"
  bad "j['throughput_samples_per_s']='fast'" "has throughput_samples_per_s \"fast\", expected a finite number > 0"
  bad "j['breakdown']['compute_s']=-0.5" "has breakdown\.compute_s -0\.5, expected a finite number >= 0"
  bad "j['nodes']=999; j['gpus']=9999" "claims 999 nodes, its planned point has 2"
  bad "j['nodes']=2.0" "has nodes 2\.0, expected a whole number from 1 to 2147483647"
  bad "j['gpus']=9999" "claims 9999 GPUs, its 2 nodes of 6 GPUs are 12"
  bad "j['gpus_per_node']=3; j['gpus']=6" "claims 3 GPUs per node, its planned point runs 6 \\(the scenario's gpus_per_node\\)"
  bad "j['fidelity']=1" "has fidelity 1, expected a text"
  # The 1-GPU baseline runs one GPU.
  cp "$D/point-1.json" "$D/sw/results/point-1.json"
  cp "$D/sw/results/point-2.json" "$D/point-2.json"
  edit "$D/sw/results/point-2.json" "j['gpus_per_node']=6; j['gpus']=6"
  expect 1 "^$sw/results/point-2\.json: error: the result of point 2 claims 6 GPUs per node, its planned point runs 1$(rerun 2)" \
    "$exe" sweep --merge --out "$D/sw"
  cp "$D/point-2.json" "$D/sw/results/point-2.json"
  # A figure missing: the merge's message, now naming the file and the point.
  edit "$D/sw/results/point-1.json" "del j['breakdown']['idle_s']"
  expect 1 "^$sw/results: error: a point's result lacks a figure the merge reads \(.*\): $sw/results/point-1\.json, point 1$(rerun 1)" \
    "$exe" sweep --merge --out "$D/sw"
  # The real results still merge into the same sweep.csv.
  cp "$D/point-1.json" "$D/sw/results/point-1.json"
  "$exe" -q sweep --merge --out "$D/sw" >/dev/null || fail "merge of the real results"
  cmp "$D/sweep.csv" "$D/sw/sweep.csv" || fail "sweep.csv differs"
  # An LLM sweep's figures (one point per node count, no baselines).
  "$exe" -q sweep tests/cli/data/llm-no-dp.yaml --nodes 1,2 --out "$D/llm" >/dev/null || fail "LLM sweep"
  llm=$(re "$D/llm")
  cp "$D/llm/results/point-1.json" "$D/llm-1.json"
  for change in "j['mfu']=-0.1|has mfu -0\.1, expected a finite number >= 0" \
    "j['tokens_per_s_per_gpu']*=2|has tokens_per_s_per_gpu [0-9.]+, but throughput_tokens_per_s / gpus is [0-9.]+" \
    "j['bottleneck_stage']['stage']=2|has bottleneck_stage\.stage 2, expected a whole number from 0 to 1" \
    "j['gpus']=8|claims 8 GPUs, its 2 nodes of 8 GPUs are 16"; do
    cp "$D/llm-1.json" "$D/llm/results/point-1.json"
    edit "$D/llm/results/point-1.json" "${change%%|*}"
    expect 1 "^$llm/results/point-1\.json: error: the result of point 1 ${change#*|}; remove it" \
      "$exe" sweep --merge --out "$D/llm"
  done
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "ok: $case_name"
