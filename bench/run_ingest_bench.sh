#!/usr/bin/env bash
# End-to-end speed and memory of `stepscope analyze` (read + gunzip + parse +
# store + analyses + report), measured from outside (bench/process_usage.cpp:
# wait4's microsecond CPU times, not /usr/bin/time's cut-off two decimals), on:
#   1. every conformance folder under $SHARED/conformance/{hta,param}/ (one
#      process per folder, as a user runs it), with a total row;
#   2. a synthetic 8-rank set of >= 1 GB JSON from stepscope-gen-trace;
#   3. gzip backends: --gzip isal (default) vs --gzip zlib end to end, and the
#      decoders alone (bench_gzip: ISA-L and zlib streaming, libdeflate whole
#      buffer), each in its own process for its peak RSS;
#   4. what the what-if replay costs: analyze's CPU time with the replay (the
#      default) against --no-replay, on the conformance folders and the
#      synthetic set (issue #26: at most +25%);
#   5. optionally HTA on the same folders in the same run (--hta PYTHON).
# Prints markdown tables (docs/performance.md records them).
#
# Definitions (also in docs/performance.md):
#   MB            1e6 bytes of uncompressed trace JSON, as `analyze` reports reading
#   wall s        elapsed time of the process (best of --repeat runs)
#   CPU s         user + system CPU time of that run, all threads
#   MB/s          MB / wall s
#   MB/s/core     MB / CPU s: throughput per fully busy core
#   RSS MB        peak resident set size of the process (1e6 bytes)
#   RSS/JSON      peak RSS / uncompressed JSON bytes
#
# usage: bench/run_ingest_bench.sh [--shared DIR] [--synth DIR] [--synth-mb N]
#                                  [--repeat N] [--hta PYTHON] [--skip-synth] [--skip-gzip]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
shared=$root/../shared
synth=${TMPDIR:-/tmp}/stepscope_synth_8rank
synth_mb=1100
repeat=3
hta_python=""
skip_synth=0
skip_gzip=0
while [ $# -gt 0 ]; do
  case $1 in
    --shared) shared=$2; shift 2 ;;
    --synth) synth=$2; shift 2 ;;
    --synth-mb) synth_mb=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --hta) hta_python=$2; shift 2 ;;
    --skip-synth) skip_synth=1; shift ;;
    --skip-gzip) skip_gzip=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

stepscope=$build/stepscope
gen=$build/stepscope-gen-trace
bench_gzip=$build/bench/bench_gzip
process_usage=$build/bench/process_usage
for b in "$stepscope" "$gen" "$bench_gzip" "$process_usage"; do
  [ -x "$b" ] || { echo "missing $b: build first (scripts/build.sh)" >&2; exit 2; }
done
[ -d "$shared/conformance" ] || { echo "no $shared/conformance (pass --shared DIR)" >&2; exit 2; }
shared=$(cd "$shared" && pwd)  # absolute: the HTA step links the traces from another folder
# measure OUTFILE COMMAND...: "wall_s user_s sys_s maxrss_kb" of one run in OUTFILE.
measure() { "$process_usage" "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# MB of JSON in a file or folder, when the CLI does not say: every trace file decompressed.
json_mb() {
  local bytes=0 f paths
  if [ -d "$1" ]; then paths=("$1"/*.json "$1"/*.json.gz); else paths=("$1"); fi
  for f in "${paths[@]}"; do
    [ -f "$f" ] || continue
    [ "$(basename "$f")" = hta_expected.json ] && continue
    bytes=$((bytes + $(gzip -dcf "$f" | wc -c)))
  done
  awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }'
}

# Runs "$@" $repeat times under measure; keeps the fastest run's
# "wall user sys maxrss_kb" in $tmp/best and its stdout in $tmp/best.out.
best_of() {
  local i best=""
  for i in $(seq "$repeat"); do
    measure "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || {
      echo "failed: $*" >&2; cat "$tmp/err" >&2; return 1; }
    local t; t=$(cat "$tmp/time")
    if [ -z "$best" ] || awk -v a="${t%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
      best=$t
      cp "$tmp/out" "$tmp/best.out"
    fi
  done
  echo "$best" >"$tmp/best"
}

# One table row from $tmp/best: name files MB.
row() {
  read -r wall user sys rss <"$tmp/best"
  awk -v n="$1" -v f="$2" -v mb="$3" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    cpu = u + s; rmb = r * 1024 / 1e6
    printf "| %s | %d | %.1f | %.3f | %.3f | %s | %s | %.1f | %s |\n", n, f, mb, w, cpu,
      (w > 0 ? sprintf("%.0f", mb / w) : "-"), (cpu > 0 ? sprintf("%.0f", mb / cpu) : "-"), rmb,
      (mb > 0 ? sprintf("%.2f", rmb / mb) : "-") }'
  echo "$wall $user $sys $rss $3" >>"$tmp/rows"
}

analyze_mb() {
  local mb
  mb=$(grep -o '[0-9.]* MB of trace JSON' "$tmp/best.out" | head -1 | cut -d' ' -f1 || true)
  [ -n "$mb" ] && echo "$mb" || json_mb "$1"
}

header='| folder | files | MB | wall s | CPU s | MB/s | MB/s/core | RSS MB | RSS/JSON |'
rule='|---|---:|---:|---:|---:|---:|---:|---:|---:|'

echo "# stepscope ingest benchmark"
echo
echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "- machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
# The VM's model name says only "AMD EPYC"; family and model tell the host
# CPU's generation apart (25/17 is Zen 4, with AVX-512), and runs on
# different generations are not comparable.
echo "- cpu: family $(lscpu | sed -n 's/^CPU family: *//p' | head -1), model $(lscpu | sed -n 's/^Model: *//p' | head -1), AVX-512: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no)"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
echo "- binary: $stepscope; best of $repeat runs per row"
echo

# 1. Conformance folders.
echo "## Conformance folders: \`stepscope analyze FOLDER\`, one process each"
echo
echo "$header"
echo "$rule"
: >"$tmp/rows"
folders=()
declare -A stepscope_wall  # folder -> best-of wall s, for the HTA comparison
for d in "$shared"/conformance/hta/*/ "$shared"/conformance/param/*/; do folders+=("${d%/}"); done
for d in "${folders[@]}"; do
  files=$(find "$d" -maxdepth 1 \( -name '*.json' -o -name '*.json.gz' \) ! -name hta_expected.json | wc -l)
  best_of "$stepscope" analyze "$d"
  row "$(basename "$(dirname "$d")")/$(basename "$d")" "$files" "$(analyze_mb "$d")"
  stepscope_wall[$d]=$(cut -d' ' -f1 "$tmp/best")
done
awk -v n=${#folders[@]} '{ w += $1; c += $2 + $3; if ($4 > r) r = $4; mb += $5 }
  END { printf "| **all %d folders** | | %.1f | %.3f | %.3f | %.0f | %.0f | %.1f (max) | |\n", n, mb, w, c, mb / w, mb / c, r * 1024 / 1e6 }' "$tmp/rows"
stepscope_total=$(awk '{ w += $1 } END { printf "%.3f", w }' "$tmp/rows")
cp "$tmp/rows" "$tmp/rows.conformance"
echo

# 2. Synthetic 8-rank set.
if [ "$skip_synth" = 0 ]; then
  echo "## Synthetic 8-rank set (stepscope-gen-trace --ranks 8 --target-mb $synth_mb)"
  echo
  if [ ! -f "$synth/rank7.json.gz" ]; then
    measure "$tmp/gen" "$gen" --out "$synth" --ranks 8 --target-mb "$synth_mb" >"$tmp/gen.out"
    read -r gw gu gs gr <"$tmp/gen"
    echo "generated in $gw s wall ($(tail -1 "$tmp/gen.out"))"
  else
    echo "reusing $synth ($(du -sh "$synth" | cut -f1) on disk)"
  fi
  echo
  echo "$header"
  echo "$rule"
  : >"$tmp/rows"
  best_of "$stepscope" analyze "$synth"
  row "synthetic 8 ranks" 8 "$(analyze_mb "$synth")"
  cp "$tmp/rows" "$tmp/rows.synth"
  echo
fi

# 2b. What the replay costs: the same runs with --no-replay.
echo "## What-if replay cost: \`analyze\` against \`analyze --no-replay\`"
echo
echo "| set | CPU s with replay | CPU s without | replay adds |"
echo "|---|---:|---:|---:|"
: >"$tmp/rows"
for d in "${folders[@]}"; do best_of "$stepscope" analyze --no-replay "$d"; row x 0 0 >/dev/null; done
cpu_sum() { awk '{ c += $2 + $3 } END { printf "%.3f", c }' "$1"; }
with=$(cpu_sum "$tmp/rows.conformance") without=$(cpu_sum "$tmp/rows")
awk -v n=${#folders[@]} -v a="$with" -v b="$without" \
  'BEGIN { printf "| all %d conformance folders | %.3f | %.3f | %+.1f%% |\n", n, a, b, 100 * (a - b) / b }'
if [ "$skip_synth" = 0 ]; then
  : >"$tmp/rows"
  best_of "$stepscope" analyze --no-replay "$synth"
  row x 0 0 >/dev/null
  with=$(cpu_sum "$tmp/rows.synth") without=$(cpu_sum "$tmp/rows")
  awk -v a="$with" -v b="$without" 'BEGIN { printf "| synthetic 8 ranks | %.3f | %.3f | %+.1f%% |\n", a, b, 100 * (a - b) / b }'
fi
echo

# 3. gzip backends.
if [ "$skip_gzip" = 0 ]; then
  # The largest single-file folders and one synthetic rank.
  big=()
  while read -r _ f; do big+=("$f"); done < <(
    for d in "${folders[@]}"; do
      for f in "$d"/*.json.gz; do [ -f "$f" ] && echo "$(stat -c %s "$f") $f"; done
    done | sort -rn | head -3)
  [ "$skip_synth" = 0 ] && big+=("$synth/rank0.json.gz")
  echo "## gzip backends, end to end: \`stepscope analyze --gzip isal|zlib FILE\`"
  echo
  echo "| file | backend | MB | wall s | CPU s | MB/s | MB/s/core | RSS MB | RSS/JSON |"
  echo "$rule"
  for f in "${big[@]}"; do
    for g in isal zlib; do
      : >"$tmp/rows"
      best_of "$stepscope" analyze --gzip "$g" "$f"
      row "$(basename "$(dirname "$f")")/$(basename "$f") | $g" 1 "$(analyze_mb "$f")" | sed 's/| 1 |/|/'
    done
  done
  echo
  echo "## gzip decoders alone (bench_gzip: best thread CPU of 3; RSS of a process running one backend)"
  echo
  echo "| file | backend | MB out | CPU s | MB/s | decoder buffers MB | process RSS MB |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for f in "${big[@]}"; do
    for g in isal zlib libdeflate; do
      measure "$tmp/gz.time" "$bench_gzip" --repeat 3 --backend "$g" "$f" >"$tmp/gz.out"
      awk -v n="$(basename "$(dirname "$f")")/$(basename "$f")" -v r="$(cut -d' ' -f4 "$tmp/gz.time")" \
        'NR == 2 { printf "| %s | %s | %.1f | %.3f | %.0f | %.1f | %.1f |\n", n, $2, $3, $4, $5, $6, r * 1024 / 1e6 }' "$tmp/gz.out"
    done
  done
  echo
fi

# 4. HTA in the same run.
if [ -n "$hta_python" ]; then
  echo "## HTA on the same folders (\`TraceAnalysis(trace_dir=...)\` + \`get_temporal_breakdown()\`, one process each)"
  echo
  echo "| folder | process wall s | import s | load s | temporal breakdown s |"
  echo "|---|---:|---:|---:|---:|"
  hta_total=0      # every folder, failed runs included (their time until the error)
  hta_ok_total=0   # folders where HTA produced its breakdown
  ok_stepscope=0   # stepscope's wall on those same folders
  hta_failed=0
  for d in "${folders[@]}"; do
    # HTA takes every JSON file in the folder as a rank: give it the traces only.
    only=$tmp/hta/$(basename "$d")
    mkdir -p "$only"
    for f in "$d"/*.json "$d"/*.json.gz; do
      [ -f "$f" ] && [ "$(basename "$f")" != hta_expected.json ] && ln -sf "$f" "$only/"
    done
    if measure "$tmp/hta.time" "$hta_python" "$root/bench/hta_time.py" "$only" >"$tmp/hta.out" 2>"$tmp/hta.err"; then
      w=$(awk '{ printf "%.2f", $1 }' "$tmp/hta.time")
      tail -1 "$tmp/hta.out" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["import_s"], d["load_s"], d["temporal_breakdown_s"])' >"$tmp/hta.parts"
      read -r hi hl ht <"$tmp/hta.parts"
      echo "| $(basename "$(dirname "$d")")/$(basename "$d") | $w | $hi | $hl | $ht |"
      hta_ok_total=$(awk -v a="$hta_ok_total" -v b="$w" 'BEGIN { printf "%.3f", a + b }')
      ok_stepscope=$(awk -v a="$ok_stepscope" -v b="${stepscope_wall[$d]}" 'BEGIN { printf "%.3f", a + b }')
    else
      hta_failed=$((hta_failed + 1))
      w=$(awk '{ printf "%.2f", $1 }' "$tmp/hta.time")
      echo "| $(basename "$(dirname "$d")")/$(basename "$d") | $w (failed: $(tail -1 "$tmp/hta.err" | cut -c1-80)) | | | |"
    fi
    hta_total=$(awk -v a="$hta_total" -v b="$w" 'BEGIN { printf "%.3f", a + b }')
  done
  echo
  awk -v h="$hta_total" -v s="$stepscope_total" -v f="$hta_failed" 'BEGIN {
    printf "HTA total %.1f s (%d of the folders failed; their time until the error is included) vs stepscope total %.3f s (best-of wall, summed over the folders): %.0fx\n", h, f, s, h / s }'
  awk -v h="$hta_ok_total" -v s="$ok_stepscope" 'BEGIN {
    if (h > 0 && s > 0) printf "On the folders where HTA succeeded only: HTA %.1f s vs stepscope %.3f s: %.0fx\n", h, s, h / s
    else print "HTA succeeded on no folder: no ratio" }'
  echo
fi
