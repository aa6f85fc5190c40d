#!/usr/bin/env bash
# Runs workloads/profiler_overhead.py job by job, each in its own process (a
# fresh allocator, no compiled graphs left from the job before), within a
# wall-time budget, and packs the results for a machine that returns few
# files: OUT/results.jsonl, OUT/log.txt and the traces in tarballs of at most
# ~15 MB.
#   bash workloads/profiler_overhead.sh OUT BUDGET_S JOB [JOB ...]
set -uo pipefail
out=$1 budget=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out/raw"
start=$SECONDS
for job in "$@"; do
  left=$((budget - (SECONDS - start)))
  if (( left < 40 )); then
    echo "[profiler_overhead.sh] $job: skipped, ${left}s of the budget left" | tee -a "$out/raw/log.txt"
    continue
  fi
  timeout "$left" python3 "$here/profiler_overhead.py" "$out/raw" "$job" ${EXTRA_ARGS:-} \
    || echo "[profiler_overhead.sh] $job: exit $?" | tee -a "$out/raw/log.txt"
done
cp "$out/raw/log.txt" "$out/" 2>/dev/null
cp "$out/raw/results.jsonl" "$out/" 2>/dev/null
# Traces into tarballs of at most ~15 MB each, 56 MB in all (what the lent
# machine returns): the examples' setting first (the savings table reads it),
# then the others; what does not fit is named in the log.
cd "$out/raw" && n=0 size=0 total=0 list=()
flush() { (( ${#list[@]} )) && tar cf "../traces_$n.tar" "${list[@]}"; n=$((n + 1)); size=0; list=(); }
for f in $(find . -name 'examples.json.gz' | sort) $(find . -name '*.json.gz' ! -name 'examples.json.gz' | sort); do
  s=$(stat -c %s "$f")
  if (( s > 15000000 || total + s > 56000000 )); then echo "[profiler_overhead.sh] $f: $s bytes, not returned" >>../log.txt; continue; fi
  if (( size + s > 15000000 )); then flush; fi
  list+=("$f"); size=$((size + s)); total=$((total + s))
done
flush
cd .. && rm -rf raw
ls -la "$out"
