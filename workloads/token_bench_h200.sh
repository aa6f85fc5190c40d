#!/usr/bin/env bash
# Issue #31 item 2 on the device machine's host cores: the token-batch
# benchmark (bench/data/bench_token_pipeline.py: stepscope's shards against
# pandas and Hugging Face `datasets`), three runs, each a JSON and a log
# under $OUT, with the machine and package versions beside them.
#
#   OUT=dir bash workloads/token_bench_h200.sh
#
# The device image has torch, pyarrow and pandas but neither `datasets` nor a
# stepscope build for its Python 3.12, and no network: both come as wheels in
# $WHEELS (default build-h200/wheels312, carried), made on a machine with
# network and a Python 3.12 by
#
#   python3.12 -m venv V && BUILD_VENV=V bash scripts/build_wheel.sh      # stepscope, cp312
#   pip download --python-version 3.12 --only-binary=:all: --platform manylinux_2_28_x86_64 \
#       --platform manylinux2014_x86_64 datasets 'datasets==3.6.0' -d WHEELS
#
# (pyarrow, pandas and numpy left out: the image's are used; datasets 3.6
# is there for an image whose pyarrow is older than the newest datasets
# needs). They are installed into a venv over the system's packages; pip's
# output and the resulting package list are kept, so a failed install says
# what was missing.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$HERE"
OUT="${OUT:-$HERE/token_bench_out}"
WHEELS="${WHEELS:-$HERE/build-h200/wheels312}"
RUNS="${RUNS:-3}"
mkdir -p "$OUT"
venv="$(mktemp -d)/venv"
{
  date -u +%FT%TZ
  echo "cores: $(nproc)"
  lscpu | grep -E '^(Model name|Socket|Thread|Core)' || true
  python3 --version
} > "$OUT/machine.txt"
python3 -m venv --system-site-packages "$venv"
if ! "$venv/bin/pip" install --no-index --find-links "$WHEELS" stepscope datasets > "$OUT/install.log" 2>&1; then
  "$venv/bin/pip" list > "$OUT/pip_list.txt" 2>&1 || true
  echo "token_bench_h200: installing the wheels failed (install.log, pip_list.txt)" >&2
  exit 1
fi
"$venv/bin/pip" list > "$OUT/pip_list.txt" 2>&1
for i in $(seq 1 "$RUNS"); do
  # Not the source tree's python/ folder: the wheel's stepscope, with its native module.
  (cd "$OUT" && "$venv/bin/python" "$HERE/bench/data/bench_token_pipeline.py" --json "run$i.json") \
    > "$OUT/run$i.log" 2>&1
done
echo "token_bench_h200: $RUNS runs in $OUT"
