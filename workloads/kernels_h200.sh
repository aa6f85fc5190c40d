#!/usr/bin/env bash
# Issue #6 kernels on a CUDA GPU (made for the project's H200 device machine):
# build the PyTorch extension, run the C++ GPU-vs-reference tests, the torch
# tests and the benchmarks, every log and JSON result under $OUT.
#
#   bash workloads/kernels_h200.sh                 # all stages
#   bash workloads/kernels_h200.sh build pytest    # some stages: build ctest pytest bench wgmma variants convergence
#
# Each stage runs even when an earlier one failed; its exit status is recorded
# in $OUT/status.txt and the script exits non-zero if any stage failed.
#
# Environment:
#   OUT               output folder (the device tool sets it; default ./kernels_out)
#   PYTHON            interpreter with PyTorch (default python3)
#   KERNELS_TEST_BIN  prebuilt stepscope_kernels_tests (the device image has no
#                     gtest/fmt/simdjson, so the C++ tests are built on a
#                     machine with scripts/install_deps.sh and carried; default
#                     build-h200/tests/stepscope_kernels_tests). Without it the
#                     stage tries a CMake build, which needs those packages.
#   STAGE_TIMEOUT     seconds per test stage (default 420); BENCH_TIMEOUT per
#                     benchmark script (default 300); BENCH_ARGS extra
#                     benchmark flags (e.g. --no-compile); BENCH_ONLY the
#                     benchmarks to run, e.g. "qkv_rope loss_scaler" (default all).
#   AQ_RAW_DIR        folder of prebuilt bench_activation_quant_raw variants
#                     (aq_raw_v<VEC>_mb<MINBLOCKS>); without it stage
#                     `variants` builds them with nvcc (AQ_VARIANTS, default
#                     "8:8 16:6 16:4 32:4").
#   CONV_ARGS         extra arguments of workloads/compression_convergence.py
#                     (stage `convergence`; default: the script's own, 5 seeds x
#                     baseline, int8, int4, deterministic), e.g. "--runs baseline,int4
#                     --seeds 0-39 --rerun baseline,int4 --time-budget-s 270".
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$HERE"
OUT="${OUT:-$HERE/kernels_out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0
# The package is used in place (built with --inplace), not installed.
export PYTHONPATH="$HERE/python/stepscope_kernels${PYTHONPATH:+:$PYTHONPATH}"
STAGE_TIMEOUT="${STAGE_TIMEOUT:-420}"
BENCH_TIMEOUT="${BENCH_TIMEOUT:-300}"
read -r -a BENCH_EXTRA <<< "${BENCH_ARGS:-}"
KTEST="${KERNELS_TEST_BIN:-$HERE/build-h200/tests/stepscope_kernels_tests}"

if [ "$#" -gt 0 ]; then STAGES=("$@"); else STAGES=(build ctest pytest bench); fi
: > "$OUT/status.txt"
failed=0

# run NAME TIMEOUT CMD...: CMD's output to $OUT/NAME.log (and the console), status recorded.
run() {
    local name="$1" limit="$2"
    shift 2
    echo "=== $name ($(date -u +%H:%M:%S)) ==="
    local rc
    set +e  # a failing stage is recorded, not fatal
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$OUT/$name.log"
    rc=${PIPESTATUS[0]}
    set -e
    echo "$name rc=$rc" | tee -a "$OUT/status.txt"
    [ "$rc" -eq 0 ] || failed=1
}

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
    "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' || true
    nvcc --version | tail -n 2 || true
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

for stage in "${STAGES[@]}"; do
    case "$stage" in
    build)
        # setup.py compiles python/stepscope_kernels/csrc/*.cpp and src/kernels/gpu/*.cu.
        run build_extension "$STAGE_TIMEOUT" env MAX_JOBS="${MAX_JOBS:-16}" \
            bash -c "cd python/stepscope_kernels && '$PY' setup.py build_ext --inplace"
        ;;
    ctest)
        if [ ! -x "$KTEST" ]; then
            # No carried binary: build one (needs the Debian packages of scripts/install_deps.sh).
            run cmake_kernels_tests "$STAGE_TIMEOUT" bash -c "
                cmake -S . -B /tmp/stepscope-kernels-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
                      -DSTEPSCOPE_NATIVE=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DSTEPSCOPE_BENCH=OFF &&
                ninja -C /tmp/stepscope-kernels-build -j16 stepscope_kernels_tests"
            KTEST=/tmp/stepscope-kernels-build/tests/stepscope_kernels_tests
        fi
        run gtest_kernels "$STAGE_TIMEOUT" "$KTEST" --gtest_output="json:$OUT/gtest_kernels.json"
        ;;
    pytest)
        run torch_tests "$STAGE_TIMEOUT" "$PY" -m unittest discover -s tests/kernels_torch -v
        ;;
    bench)
        # Every bench/kernels/bench_*.py except the shared helpers (helper B's
        # bench_activation_compression.py is picked up the same way).
        for b in bench/kernels/bench_*.py; do
            name="$(basename "$b" .py)"
            [ "$name" = bench_common ] && continue
            if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" ${name#bench_} "* ]]; then continue; fi
            run "$name" "$BENCH_TIMEOUT" "$PY" "$b" --json "$OUT/$name.jsonl" "${BENCH_EXTRA[@]}"
        done
        ;;
    wgmma)
        # Block-sparse attention's wgmma operands and TMA copies apart from
        # the kernels, then the forwards from v5 on and the backwards of v5,
        # v13 and v14 timed on the same inputs,
        # without PyTorch.
        run build_wgmma_probe "$STAGE_TIMEOUT" nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc \
            bench/kernels/wgmma_layout_probe.cu -o /tmp/wgmma_probe
        run wgmma_probe 60 /tmp/wgmma_probe
        run build_tma_probe "$STAGE_TIMEOUT" nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc \
            bench/kernels/tma_layout_probe.cu src/kernels/gpu/tensor_map.cu -o /tmp/tma_probe
        run tma_probe 60 /tmp/tma_probe
        run build_bsa_raw "$STAGE_TIMEOUT" bash -c "nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc \
            bench/kernels/bench_block_sparse_raw.cu src/kernels/gpu/block_sparse_attention*.cu \
            src/kernels/gpu/tensor_map.cu -o /tmp/bsa_raw"
        run bsa_raw "$BENCH_TIMEOUT" /tmp/bsa_raw
        ;;
    variants)
        # The quantize kernel's build-time variants (elements per thread,
        # blocks per SM), timed without torch in one process each.
        dir="${AQ_RAW_DIR:-}"
        if [ -z "$dir" ]; then
            dir=/tmp/aq_raw
            mkdir -p "$dir"
            for v in ${AQ_VARIANTS:-8:8 16:6 16:4 32:4}; do
                run "build_aq_raw_${v/:/_}" "$STAGE_TIMEOUT" nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 \
                    -Isrc -DSTEPSCOPE_AQ_VEC="${v%%:*}" -DSTEPSCOPE_AQ_MIN_BLOCKS="${v##*:}" \
                    bench/kernels/bench_activation_quant_raw.cu src/kernels/gpu/activation_quant.cu \
                    -o "$dir/aq_raw_v${v%%:*}_mb${v##*:}"
            done
        fi
        : > "$OUT/aq_variants.log"
        for b in "$dir"/aq_raw_v*; do
            run "$(basename "$b")" "$BENCH_TIMEOUT" "$b"
            cat "$OUT/$(basename "$b").log" >> "$OUT/aq_variants.log"
            rm -f "$OUT/$(basename "$b").log"
        done
        ;;
    convergence)
        read -r -a CONV_EXTRA <<< "${CONV_ARGS:-}"
        run compression_convergence "$((STAGE_TIMEOUT * 2))" "$PY" workloads/compression_convergence.py \
            --json "$OUT/compression_convergence.json" "${CONV_EXTRA[@]}"
        ;;
    *)
        echo "unknown stage '$stage' (build ctest pytest bench variants convergence)" | tee -a "$OUT/status.txt"
        failed=1
        ;;
    esac
done

echo "=== summary ==="
cat "$OUT/status.txt"
exit "$failed"
