#!/usr/bin/env bash
# Measures what removing a cause saves, with variant and counterfactual runs
# interleaved on one machine. The held-out check's first counterfactuals ran
# in another machine session than their variants, and the host's speed
# differs between runs and sessions (aten::reshape's median host time was
# 2.2 us in one run, 3.6 us in another), which in host-bound steps moves the
# step time as much as the cause does. Here every round runs each named
# configuration once, in an order rotated by one from round to round, so the
# pairs see the same machine and the same drift.
#
#   bash workloads/paired_savings.sh OUTDIR ROUNDS NAME [NAME ...]
#
# NAME is a configuration of heldout_variants.sh. Writes
# OUTDIR/round<R>/<name>/rank0.json.gz and OUTDIR/round<R>/<name>.log;
# workloads/paired_savings.py OUTDIR summarises them. When TAR is set, the
# whole OUTDIR is packed into that file after every round, so that a run
# stopped by a time limit still returns the rounds it finished.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUTDIR="${1:?usage: paired_savings.sh OUTDIR ROUNDS NAME [NAME ...]}"
ROUNDS="${2:?usage: paired_savings.sh OUTDIR ROUNDS NAME [NAME ...]}"
shift 2
NAMES=("$@")
[ "${#NAMES[@]}" -gt 0 ] || { echo "paired_savings.sh: name at least one configuration" >&2; exit 2; }
mkdir -p "$OUTDIR"
failed=0
for ((r = 1; r <= ROUNDS; r++)); do
  order=()
  n=${#NAMES[@]}
  for ((i = 0; i < n; i++)); do order+=("${NAMES[$(( (i + r - 1) % n ))]}"); done
  echo "round $r: ${order[*]}"
  bash "$HERE/heldout_variants.sh" "$OUTDIR/round$r" "${order[@]}" || failed=1
  if [ -n "${TAR:-}" ]; then tar -czf "$TAR" -C "$(dirname "$OUTDIR")" "$(basename "$OUTDIR")"; fi
done
exit "$failed"
