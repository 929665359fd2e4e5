#!/usr/bin/env bash
# describe → YAML → describe gives the same totals, for a zoo model and a hand-written file;
# a malformed file exits 1 with the precise error. Usage: describe_round_trip.sh SCALECAST
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
totals() { sed -n '/^totals/,$p'; }
for model in resnet50 googlenet_aux bert_large_pretrain models/examples/small_cnn.yaml; do
  "$bin" describe model "$model" --yaml > "$tmp/m.yaml"
  "$bin" describe model "$model" --batch 32 --precision fp16 | totals > "$tmp/a.txt"
  "$bin" describe model "$tmp/m.yaml" --batch 32 --precision fp16 | totals > "$tmp/b.txt"
  [[ -s "$tmp/a.txt" ]] || { echo "no totals for $model"; exit 1; }
  if ! diff "$tmp/a.txt" "$tmp/b.txt"; then echo "round trip changed the totals of $model"; exit 1; fi
  echo "$model: same totals after describe --yaml"
done
set +e
err=$("$bin" describe model tests/models/data/bad_model.yaml 2>&1 >/dev/null)
rc=$?
set -e
expected="tests/models/data/bad_model.yaml:6:5: error: layers[2]: add needs equal shapes, got 16×32×32 and 32×32×32 (from 'conv2')"
echo "malformed file: rc $rc, stderr: $err"
[[ $rc -eq 1 && "$err" == "$expected" ]] || { echo "expected rc 1 and: $expected"; exit 1; }
