#!/usr/bin/env bash
# Records a real /metrics scrape of `stepscope monitor` on a GPU machine while
# a training workload pushes its steps (docs/monitor.md, "Recorded scrape").
#
#   bash workloads/monitor_scrape.sh [OUT_DIR]        (default: $OUT, else .)
#
# Needs: a built stepscope (build/stepscope, or STEPSCOPE=path), the NVIDIA
# driver's libnvidia-ml.so.1, python3 with torch and a CUDA GPU. Writes
# metrics_h200.txt (the scrape taken mid-run), monitor.log (the exporter's
# log) and train.log (the workload's output) into OUT_DIR. NVML_LIB, STEPS,
# MIN_STEPS, METRICS_PORT and PUSH_PORT override the defaults.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-${OUT:-.}}
mkdir -p "$out"
cli=${STEPSCOPE:-$root/build/stepscope}
[[ -x $cli ]] || { echo "monitor_scrape: $cli not found (build first or set STEPSCOPE)" >&2; exit 2; }
# A bundle from workloads/bundle_monitor.sh carries its libraries in lib/.
if [[ -d $(dirname "$cli")/lib ]]; then
  bundle_lib=$(dirname "$cli")/lib
  export LD_LIBRARY_PATH="$bundle_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
metrics_port=${METRICS_PORT:-19401}
# GET /metrics with python3 (always there for the workload; curl may not be).
fetch() {
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
    "http://127.0.0.1:$metrics_port/metrics" 2>/dev/null
}
push_port=${PUSH_PORT:-19402}

"$cli" monitor --listen "127.0.0.1:$metrics_port" --push-listen "127.0.0.1:$push_port" --interval 1 \
  --job train_gpt --alerts --model "$root/workloads/train_gpt_model.json" --gpus 1 \
  --nvml-lib "${NVML_LIB:-libnvidia-ml.so.1}" \
  >"$out/monitor.log" 2>&1 &
monitor_pid=$!
trap 'kill $monitor_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  fetch >/dev/null && break
  sleep 0.2
done

# Baseline scenario, no profiler, ~60 s of steps pushed to the monitor.
python3 "$root/workloads/train_gpt.py" --scenario baseline_compiled --no-profile \
  --pre-steps "${STEPS:-300}" --monitor "127.0.0.1:$push_port" >"$out/train.log" 2>&1 &
train_pid=$!
# Scrape mid-run: once the job has pushed steps for a while.
for _ in $(seq 600); do
  steps=$(fetch | awk '/^stepscope_train_steps_total\{/ {print $2}') || steps=0
  [[ ${steps%.*} -ge ${MIN_STEPS:-100} ]] 2>/dev/null && break
  kill -0 $train_pid 2>/dev/null || break
  sleep 0.5
done
fetch >"$out/metrics_h200.txt"
wait $train_pid || echo "monitor_scrape: the workload exited with $?" >&2
kill $monitor_pid; wait $monitor_pid 2>/dev/null || true
trap - EXIT
echo "monitor_scrape: $(grep -c '^stepscope_' "$out/metrics_h200.txt") samples in $out/metrics_h200.txt"
grep -E '^stepscope_(train_(steps_total|mfu_ratio|tokens_per_second)|gpu_(utilization_ratio|sm_active_ratio|power_watts))' \
  "$out/metrics_h200.txt" | head -20
