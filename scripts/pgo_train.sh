#!/usr/bin/env bash
# The training run of profile-guided optimisation (scripts/build.sh calls it):
# runs the instrumented stepscope of BUILD_DIR on what users run it on, so
# the final build is laid out for that work. The inputs are the project's
# own: the H200 traces under examples/ (one rank each, PyTorch 2.11) and a
# synthetic multi-rank set from stepscope-gen-trace; never the conformance or
# validation material the tool is checked against.
#
# usage: scripts/pgo_train.sh BUILD_DIR   (an STEPSCOPE_PGO=GENERATE build)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: pgo_train.sh BUILD_DIR}
stepscope=$build/stepscope
gen=$build/stepscope-gen-trace
for b in "$stepscope" "$gen"; do
  [ -x "$b" ] || { echo "pgo_train: missing $b" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# analyze, every output, both modes, on each example; then diff and the
# multi-rank path on a synthetic 4-rank set (about 60 MB of JSON).
for dir in "$root"/examples/*/; do
  "$stepscope" analyze "$dir" --json "$tmp/report.json" --html "$tmp/report.html" \
    --perfetto "$tmp/trace.json.gz" >/dev/null
  "$stepscope" analyze --compat hta --json - "$dir" >/dev/null
done
"$stepscope" diff "$root/examples/eager_bf16_baseline" "$root/examples/baseline_compiled" >/dev/null
"$gen" --out "$tmp/synthetic" --ranks 4 --target-mb 60 >/dev/null
"$stepscope" analyze "$tmp/synthetic" --json "$tmp/synthetic.json" >/dev/null

# plan: one layout, and a search (its hot loop).
"$stepscope" plan --model llama3-70b --gpu h100-sxm --tp 8 --pp 4 --dp 8 --micro-batch 1 \
  --global-batch 512 >/dev/null
"$stepscope" plan search --model llama3-70b --gpus 256 --global-batch 512 >/dev/null
