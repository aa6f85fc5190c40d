#!/usr/bin/env bash
# Held-out variants of the reference scenarios: the same injected causes at
# other model sizes, batch sizes and strengths, plus one cause the examples
# lack (the caching allocator switched off). They were not used to write the
# diagnosis rules; they check that the rules carry over. The expected primary
# bottleneck of each is written down before the traces are analysed
# (workloads/heldout_labels.json). The cf_* runs are the counterfactuals: a
# variant without its cause (cf_12_layers for empty_cache_deep and
# dataloader_light, cf_wide for item_sync_wide, cf_eager for
# no_caching_allocator, cf_bf16_small for fp32_small, cf_bf16_b16 for
# tf32_fp32, cf_compiled_b16 for empty_cache_compiled, cf_bf16_small for
# tf32_small, cf_bf16_b32 for tf32_b32, cf_bf16_long for tf32_long).
#
#   bash workloads/heldout_variants.sh OUTDIR [NAME ...]
#
# Writes OUTDIR/<name>/rank0.json.gz and OUTDIR/<name>.log. Needs one CUDA GPU.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUTDIR="${1:?usage: heldout_variants.sh OUTDIR [NAME ...]}"
shift
PY="${PYTHON:-python3}"
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1

declare -A ARGS=(
  [item_sync_wide]="--scenario item_sync --d-model 2048 --n-heads 16 --n-layers 4 --batch-size 4"
  [dataloader_light]="--scenario dataloader_stall --loader-cpu-ms 40 --n-layers 12"
  [empty_cache_deep]="--scenario empty_cache --n-layers 12 --batch-size 8"
  [no_caching_allocator]="--scenario baseline_compiled --compile none --batch-size 8"
  [fp32_small]="--scenario fp32_no_tf32 --d-model 512 --n-heads 8 --batch-size 16"
  [tiny_deeper]="--scenario host_bound_tiny --d-model 128 --n-heads 4 --n-layers 8 --batch-size 4"
  [healthy_long]="--scenario baseline_compiled --seq-len 2048 --batch-size 16"
  [cuda_graph_small]="--scenario cuda_graph --batch-size 4"
  # Second batch (expected primaries in heldout_labels.json, "_second_batch").
  [tf32_fp32]="--scenario baseline_compiled --compile none --dtype fp32 --batch-size 16"
  [item_sync_compiled]="--scenario item_sync --compile default"
  [empty_cache_compiled]="--scenario empty_cache --compile default"
  [dataloader_compiled]="--scenario dataloader_stall --compile default --loader-cpu-ms 60"
  [forloop_wide]="--scenario foreach_off_adamw --d-model 2048 --n-heads 16 --n-layers 4 --batch-size 4"
  [eager_small_host_bound]="--scenario eager_bf16_baseline --d-model 512 --n-heads 8 --n-layers 8 --batch-size 2 --seq-len 256"
  [cuda_graph_b16]="--scenario cuda_graph --batch-size 16"
  [compiled_small_batch]="--scenario baseline_compiled --batch-size 2"
  # Third batch: fp32 with TF32 at other shapes ("_third_batch").
  [tf32_small]="--scenario baseline_compiled --compile none --dtype fp32 --d-model 512 --n-heads 8 --batch-size 16"
  [tf32_b32]="--scenario baseline_compiled --compile none --dtype fp32 --batch-size 32"
  [tf32_long]="--scenario baseline_compiled --compile none --dtype fp32 --seq-len 2048 --batch-size 4"
  # Counterfactuals: a variant's configuration without its injected cause, so
  # that the saving the diagnosis estimates can be compared with the step
  # time that removing the cause actually saves.
  [cf_12_layers]="--scenario baseline_compiled --compile none --n-layers 12 --batch-size 8"
  [cf_wide]="--scenario baseline_compiled --compile none --d-model 2048 --n-heads 16 --n-layers 4 --batch-size 4"
  [cf_eager]="--scenario baseline_compiled --compile none --batch-size 8"
  [cf_bf16_small]="--scenario baseline_compiled --compile none --d-model 512 --n-heads 8 --batch-size 16"
  [cf_bf16_b16]="--scenario baseline_compiled --compile none --batch-size 16"   # tf32_fp32 in bf16
  [cf_compiled_b16]="--scenario baseline_compiled --batch-size 16"              # empty_cache_compiled without empty_cache
  [cf_bf16_b32]="--scenario baseline_compiled --compile none --batch-size 32"   # tf32_b32 in bf16
  [cf_bf16_long]="--scenario baseline_compiled --compile none --seq-len 2048 --batch-size 4"  # tf32_long in bf16
)
declare -A ENVS=(
  [no_caching_allocator]="PYTORCH_NO_CUDA_MEMORY_CACHING=1"
)
ORDER=(item_sync_wide dataloader_light empty_cache_deep no_caching_allocator fp32_small tiny_deeper
       cuda_graph_small healthy_long cf_12_layers cf_wide cf_eager cf_bf16_small
       tf32_fp32 item_sync_compiled empty_cache_compiled dataloader_compiled forloop_wide
       eager_small_host_bound cuda_graph_b16 compiled_small_batch cf_bf16_b16 cf_compiled_b16
       tf32_small tf32_b32 tf32_long cf_bf16_b32 cf_bf16_long)
if [ "$#" -gt 0 ]; then ORDER=("$@"); fi

failed=0
for name in "${ORDER[@]}"; do
  start=$(date +%s)
  # shellcheck disable=SC2086
  env ${ENVS[$name]:-} timeout "${VARIANT_TIMEOUT:-240}" "$PY" "$HERE/train_gpt.py" ${ARGS[$name]} \
      --out "$OUTDIR/$name/rank0.json.gz" > "$OUTDIR/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start ))s"
  [ "$rc" -ne 0 ] && { failed=1; tail -5 "$OUTDIR/$name.log"; }
done
exit "$failed"
