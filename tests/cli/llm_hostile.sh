#!/usr/bin/env bash
# Hostile inputs of the LLM (3-D parallel) path, one case per ctest entry: degree products that
# wrapped in int, a sequence beyond a learned position table, a recompute_every that checkpoints
# nothing, and jobs whose simulated work is refused at load or warned about before they start.
# usage: llm_hostile.sh SCALECAST CASE   (run from the repository root)
# shellcheck source=tests/cli/case_lib.sh
source "$(dirname "$0")/case_lib.sh" "$@"
llama() {  # llama3_8b on one DGX H100 with the given parallel map
  printf 'platform: dgx-h100\nmodel: llama3_8b\nnodes: 1\nparallel: %s\niterations: 1\nwarmup: 0\n' "$1" >"$D/s.yaml"
}

case $case_name in
degree_overflow)
  # tp x pp wrapped to 0: SIGFPE (exit 136, no message) in run, validate, sweep and jobs:.
  llama '{tp: 65536, pp: 65536, global_batch: 16}'
  expect 1 "^$D/s.yaml:4:16: error: parallel.tp: 65536 does not divide the 32 attention heads" \
    "$exe" run "$D/s.yaml"
  llama '{tp: 8, global_batch: 16}'
  expect 1 "^--set parallel.tp=65536: error: parallel.tp: 65536 does not divide the 32 attention heads" \
    "$exe" sweep "$D/s.yaml" --set parallel.tp=65536 --set parallel.pp=65536 --out "$D/sw"
  # 8 x 1025 x 1,047,553 = 2^33 + 8 passed as 8 GPUs and failed in the point (exit 4).
  llama '{tp: 8, cp: 1025, dp: 1047553, seq_len: 8200, global_batch: 1047553}'
  expect 1 "^$D/s.yaml:4:33: error: parallel.dp: tp 8 x pp 1 x cp 1025 x dp 1047553 = 8,589,934,600 GPUs, but the job has 8$" \
    "$exe" run "$D/s.yaml"
  llama '{tp: 8, global_batch: 16}'
  expect 1 "^--set parallel.dp=4097: error: parallel.dp: tp 1 x pp 1 x cp 1048575 x dp 4097 = 4,296,011,775 GPUs, but the job has 8$" \
    "$exe" run "$D/s.yaml" --set parallel.tp=1 --set parallel.cp=1048575 --set parallel.dp=4097 \
    --set parallel.seq_len=2097150 --set parallel.global_batch=4097
  ;;
seq_len_position_table)
  # GPT-3's learned position table has 2,048 rows: describe took 4096 and 2^30 (exit 0).
  for args in "gpt3_175b 4096" "gpt3_1p7b 2049" "gpt3_175b 1073741824"; do
    set -- $args
    expect 1 "^--seq-len: error: expected at most 2048 tokens, the learned position table of $1 \(a model with rotary positions has no such limit\), got $2$" \
      "$exe" describe model "$1" --seq-len "$2"
  done
  printf 'name: small\ntransformer: {layers: 2, hidden: 8, heads: 1, vocab: 4, seq_len: 8}\n' >"$D/small.yaml"
  expect 1 "^--seq-len: error: expected at most 8 tokens, the learned position table of small" \
    "$exe" describe model "$D/small.yaml" --seq-len 9
  expect 0 "" "$exe" describe model "$D/small.yaml" --seq-len 8
  expect 0 "" "$exe" describe model llama3_8b --seq-len 1048576
  # run refuses it at parallel.seq_len.
  printf 'platform: dgx-h100\nmodel: gpt3_1p7b\nnodes: 1\nparallel: {tp: 8, global_batch: 16, seq_len: 4096}\n' >"$D/g.yaml"
  expect 1 "^$D/g.yaml:4:46: error: parallel.seq_len: expected at most 2048 tokens" "$exe" run "$D/g.yaml"
  # validate: skipped before any simulation, the reason at the point's seq_len key (not a
  # generated scenario.yaml).
  "$exe" validate tests/validation/data/llm_hostile_seq_len.yaml >"$D/out.txt" 2>"$D/err.txt"
  grep -q "llm_hostile_seq_len.yaml:11:14: points\[0\].seq_len: expected at most 2048 tokens, the learned position table of gpt3_1p7b" "$D/out.txt" ||
    fail "the anchor's reason is not at its seq_len key: $(cat "$D/out.txt" "$D/err.txt")"
  ! grep -q "scenario.yaml" "$D/out.txt" "$D/err.txt" || fail "a generated scenario is cited"
  ;;
recompute_every_bound)
  # k above the blocks of a pipeline rank checkpointed nothing: identical to recompute none.
  llama '{tp: 8, global_batch: 16}'
  for k in 64 1048576; do
    expect 1 "^--set parallel.recompute_every=$k: error: parallel.recompute_every: expected at most 32, the transformer blocks of pipeline rank 0" \
      "$exe" run "$D/s.yaml" --set parallel.recompute=full --set parallel.recompute_every=$k
  done
  ;;
work_cap)
  # 4,096 micro-batches of a 65,536-block model: about 900 GB (bad_alloc, SIGABRT under a ulimit).
  printf 'name: deep\ntransformer: {layers: 65536, hidden: 8, heads: 1, vocab: 1, seq_len: 8}\n' >"$D/deep.yaml"
  printf 'platform: dgx-h100\nmodel: deep.yaml\nnodes: 1\ngpus_per_node: 1\nparallel: {micro_batch: 1, global_batch: 4096}\niterations: 1\nwarmup: 0\n' >"$D/d.yaml"
  expect 1 "^$D/d.yaml:5:42: error: parallel.global_batch: one iteration would simulate 2,684,379,136 events .*expected at most 40,000,000" \
    "$exe" run "$D/d.yaml"
  # Llama 3 8B at tp 8 on 100,000 nodes: a DP ring of 100,000 flows (hours).
  printf 'platform: dgx-h100\nmodel: llama3_8b\nnodes: 100000\nparallel: {tp: 8, dp: 100000, global_batch: 100000}\nmemory_check: false\n' >"$D/l.yaml"
  expect 1 "^$D/l.yaml:4:23: error: parallel.dp: expected data-parallel collectives of at most 32,768 flows, got 100,000" \
    "$exe" run "$D/l.yaml"
  ;;
work_warning)
  # GPT-3 175B, 4,096 micro-batches over pp 32 x 3 chunks: 25 s an iteration, 7 hours for 1,000;
  # the warning comes before the point starts (the run is cut short here).
  printf 'platform: dgx-h100-superpod\nmodel: gpt3_175b\nnodes: 32\nparallel: {tp: 1, pp: 32, dp: 8, schedule: interleaved, virtual_stages: 3, global_batch: 32768, seq_len: 64}\nmemory_check: false\niterations: 1000\n' >"$D/g.yaml"
  timeout 20 "$exe" run "$D/g.yaml" >"$D/out.txt" 2>"$D/err.txt"
  grep -Eq "this LLM point will take about [0-9.]+ h of wall time \(1001 iterations at about" "$D/err.txt" ||
    fail "no warning: $(head -c 2000 "$D/err.txt")"
  # The same job inside a jobs: mix warns too, under its name (it said nothing before).
  printf 'platform: dgx-h100-superpod\ncluster: {nodes: 32}\niterations: 1000\njobs:\n  - name: big\n    model: gpt3_175b\n    nodes: 32\n    parallel: {tp: 1, pp: 32, dp: 8, schedule: interleaved, virtual_stages: 3, global_batch: 32768, seq_len: 64}\n    memory_check: false\n' >"$D/m.yaml"
  timeout 5 "$exe" run "$D/m.yaml" >"$D/out.txt" 2>"$D/err.txt"
  grep -Eq "job 'big': this LLM point will take about [0-9.]+ h of wall time \(1001 iterations at about" "$D/err.txt" ||
    fail "no warning for the mix's job: $(head -c 2000 "$D/err.txt")"
  # A small point says nothing.
  llama '{tp: 8, global_batch: 16, seq_len: 2048}'
  expect 0 "" "$exe" run "$D/s.yaml"
  ! grep -q "LLM point will take" "$D/err.txt" || fail "a warning for a small point"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "ok ($case_name)"
