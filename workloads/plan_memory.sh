#!/usr/bin/env bash
# Issue #28 item 3: measured peak GPU memory of FSDP2 training steps on one GPU
# (workloads/plan_memory.py; data in workloads/plan_memory/).
#   bash workloads/plan_memory.sh OUT BUDGET_S [CONFIG ...]     (no CONFIG: all)
# Run from the repository root. If .whl/ holds a torchao wheel (the fp8 rows
# need torchao.float8; the GPU machine has none installed), it is installed
# into /tmp/site first:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
#     -d .whl torchao==0.17.0
# What was run on the H200 (2026-12-04), two calls:
#   bash workloads/plan_memory.sh $OUT 420 l05b_s2k_none l1b_s2k_none l1b_s2k_sel l1b_s2k_none_fp8
#   bash workloads/plan_memory.sh $OUT 560 l1b_s2k_full l1b_s2k_seltt l1b_s2k_mb2ga2_none \
#     l1b_s2k_none_exp l1b_s8k_none l1b_s32k_none l1b_s32k_sel l1b_s32k_sel_exp l1b_s32k_full \
#     l3b_s2k_none l3b_s8k_sel l8b_s2k_full_fused l8b_s2k_full
# (device calls of 87 s and 283 s; every configuration took 17-32 s, mostly imports)
set -uo pipefail
out=$1 budget=$2
shift 2
mkdir -p "$out"
# NVLink multicast stays off (the lending workplace's rule; harmless on one GPU).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
unset PYTORCH_CUDA_ALLOC_CONF  # default allocator; rows that want another set it themselves
if compgen -G ".whl/torchao-*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/torchao-*.whl && export PYTHONPATH=/tmp/site
fi
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  python3 -c 'import sys, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)'
  python3 -c 'import torchao; print("torchao", torchao.__version__)' 2>&1 | tail -1
} 2>&1 | tee -a "$out/log.txt"
if (( $# )); then cfgs=("$@"); else cfgs=(all); fi
python3 workloads/plan_memory.py --configs "${cfgs[@]}" --out "$out" --budget-s "$budget" 2>&1 \
  | tee -a "$out/log.txt"
