#!/usr/bin/env bash
# The memory-snapshot reader's benchmark (issue #30: a 1 GB snapshot read and
# analysed in <= 10 s on the 2-core machine, peak RSS <= 0.5x the file):
# writes a synthetic snapshot of SIZE_MIB (bench/snapshot/make_large_snapshot.py),
# then runs `stepscope memory --json` on it RUNS times under /usr/bin/time and
# prints each run's wall time and peak RSS, and their medians.
#
#   bash bench/snapshot/run_snapshot_bench.sh [STEPSCOPE] [SIZE_MIB] [RUNS]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLI="${1:-$HERE/build/stepscope}"
SIZE="${2:-1024}"
RUNS="${3:-3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 "$HERE/bench/snapshot/make_large_snapshot.py" "$WORK/snap.pickle" --mib "$SIZE" >/dev/null
BYTES=$(stat -c %s "$WORK/snap.pickle")
echo "snapshot: $BYTES bytes; $(nproc) cores; $("$CLI" --version 2>/dev/null | head -1)"
walls=() rss=()
for i in $(seq "$RUNS"); do
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$CLI" memory "$WORK/snap.pickle" --json "$WORK/out.json" -q
  read -r wall kib < "$WORK/time"
  walls+=("$wall")
  rss+=("$kib")
  awk -v w="$wall" -v k="$kib" -v b="$BYTES" 'BEGIN { printf "run: %.2f s wall, peak RSS %.0f MiB = %.2fx the file\n", w, k / 1024, k * 1024 / b }'
done
printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median wall: %.2f s\n", a[int((NR+1)/2)]}'
printf '%s\n' "${rss[@]}" | sort -n | awk -v b="$BYTES" '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "median peak RSS: %.0f MiB = %.2fx the file\n", m/1024, m*1024/b}'
