#!/usr/bin/env bash
# Runs every scenario of train_gpt_dist.py: on all local GPUs with NCCL (world
# size = GPU count) and, with the same script, on CPU with gloo (8 ranks, small
# model). Traces: OUT/nccl_ws<N>/<scenario>/rank<R>.json.gz and
# OUT/gloo_cpu_ws8/<scenario>/rank<R>.json.gz; one log per run in OUT/logs.
#   bash workloads/run_dist.sh OUT [SCENARIO ...]
set -uo pipefail
out=${1:?usage: run_dist.sh OUT [SCENARIO ...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scenarios=("$@")
(( ${#scenarios[@]} )) || scenarios=(healthy fsdp_healthy straggler no_overlap small_collectives)
export NCCL_NVLS_ENABLE=0  # NVLink SHARP off, as for the published 8xH200 figures
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
cpu_model=(--device cpu --d-model 128 --n-heads 4 --n-layers 2 --seq-len 128 --batch-size 2 --vocab 2048)
mkdir -p "$out/logs"
fail=0
run() {  # name nproc args...
  local name=$1 nproc=$2
  shift 2
  local t0=$SECONDS
  if timeout 300 torchrun --standalone --nproc-per-node "$nproc" "$here/train_gpt_dist.py" "$@" \
      > "$out/logs/$name.log" 2>&1; then
    echo "[run_dist] $name ok in $((SECONDS - t0)) s"
  else
    echo "[run_dist] $name FAILED (log: $out/logs/$name.log)"; tail -5 "$out/logs/$name.log"; fail=1
  fi
}
for sc in "${scenarios[@]}"; do
  if (( ngpu > 0 )); then
    run "nccl_ws${ngpu}_$sc" "$ngpu" --scenario "$sc" --out-dir "$out/nccl_ws$ngpu/$sc"
  fi
  run "gloo_cpu_ws8_$sc" 8 --scenario "$sc" "${cpu_model[@]}" --out-dir "$out/gloo_cpu_ws8/$sc"
done
exit $fail
