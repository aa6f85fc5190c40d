#!/usr/bin/env bash
# Run every stepscope reference scenario, one after another, on one CUDA GPU.
#
#   bash workloads/run_all.sh [OUTDIR] [SCENARIO ...]
#
# Writes OUTDIR/<scenario>/rank0.json.gz (default OUTDIR: examples) and one log
# per scenario under LOGDIR (default: OUTDIR/../workload_logs, override with the
# LOGDIR environment variable).  Prints the wall time of each scenario, then a
# table of GPU-busy shares from workloads/analyze_trace.py.  Exits non-zero if
# any scenario failed; the traces of those that succeeded are kept.
#
# Environment: PYTHON (default python3), SCENARIO_TIMEOUT (seconds per eager
# scenario, default 150), COMPILE_TIMEOUT (for torch.compile scenarios,
# default 300), BUDGET_S (overall seconds; scenarios that would start with less
# than 30 s left are skipped and each timeout is cut to what is left), EXTRA_ARGS (appended to every train_gpt.py command line, e.g.
# "--device cpu --d-model 64 --n-layers 2" for a quick smoke test without a GPU).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUTDIR="${1:-examples}"
shift || true
PY="${PYTHON:-python3}"
EXTRA_ARGS="${EXTRA_ARGS:-}"
mkdir -p "$OUTDIR"
LOGDIR="${LOGDIR:-$(dirname "$OUTDIR")/workload_logs}"
mkdir -p "$LOGDIR"
export PYTHONUNBUFFERED=1

# Fast eager scenarios first, torch.compile last (the compile takes the longest).
ALL=(host_bound_tiny dataloader_stall eager_bf16_baseline unfused_qkv_rope
     foreach_off_adamw item_sync empty_cache fp32_no_tf32 cuda_graph
     baseline_compiled)
if [ "$#" -gt 0 ]; then SCEN=("$@"); else SCEN=("${ALL[@]}"); fi

echo "=== environment ($(date -u +%Y-%m-%dT%H:%M:%SZ)) ==="
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
"$PY" - <<'EOF'
import platform, torch
print("python", platform.python_version(), "| torch", torch.__version__,
      "| cuda", torch.version.cuda, "| cudnn", torch.backends.cudnn.version())
if torch.cuda.is_available():
    print("gpu", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
try:
    import triton; print("triton", triton.__version__)
except Exception as e:
    print("triton: not importable:", e)
EOF

failed=()
START=$(date +%s)
for s in "${SCEN[@]}"; do
    to="${SCENARIO_TIMEOUT:-150}"
    case "$s" in baseline_compiled) to="${COMPILE_TIMEOUT:-300}";; esac
    if [ -n "${BUDGET_S:-}" ]; then
        left=$(( BUDGET_S - ($(date +%s) - START) ))
        if [ "$left" -lt 30 ]; then
            echo "=== $s SKIPPED: only ${left}s of BUDGET_S=${BUDGET_S} left ==="
            failed+=("$s(skipped)")
            continue
        fi
        [ "$left" -lt "$to" ] && to=$left
    fi
    out="$OUTDIR/$s/rank0.json.gz"
    rm -f "$out"
    echo "=== $s (timeout ${to}s) ==="
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout "$to" "$PY" "$HERE/train_gpt.py" --scenario "$s" --out "$out" $EXTRA_ARGS \
        >"$LOGDIR/$s.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && [ "$s" = cuda_graph ]; then
        # Whole-step capture failed: fall back to torch.compile(mode="reduce-overhead").
        echo "cuda_graph: whole-step capture failed (rc=$rc), retrying with --cuda-graph compile"
        mv "$LOGDIR/$s.log" "$LOGDIR/$s.full_capture_failed.log"
        timeout "${COMPILE_TIMEOUT:-300}" "$PY" "$HERE/train_gpt.py" --scenario "$s" \
            --cuda-graph compile --out "$out" $EXTRA_ARGS >"$LOGDIR/$s.log" 2>&1
        rc=$?
    fi
    t1=$(date +%s.%N)
    grep -E "^\[$s\]" "$LOGDIR/$s.log" | grep -v "params=" | tail -n 3
    if [ $rc -eq 0 ] && [ -s "$out" ]; then
        printf '%-22s OK     %6.1f s  %8d bytes\n' "$s" "$(awk "BEGIN{print $t1 - $t0}")" "$(stat -c %s "$out")"
    else
        printf '%-22s FAILED %6.1f s  rc=%d (log: %s)\n' "$s" "$(awk "BEGIN{print $t1 - $t0}")" "$rc" "$LOGDIR/$s.log"
        tail -n 15 "$LOGDIR/$s.log"
        failed+=("$s")
    fi
done

echo "=== GPU-busy summary (workloads/analyze_trace.py) ==="
traces=()
for s in "${SCEN[@]}"; do [ -s "$OUTDIR/$s/rank0.json.gz" ] && traces+=("$OUTDIR/$s/rank0.json.gz"); done
if [ "${#traces[@]}" -gt 0 ]; then
    "$PY" "$HERE/analyze_trace.py" "${traces[@]}" --json "$LOGDIR/analysis.json"
fi

if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all ${#SCEN[@]} scenarios OK"
