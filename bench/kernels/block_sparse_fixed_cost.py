#!/usr/bin/env python3
"""Splits a block-sparse attention time into a fixed part and a per-block rate.

At one sequence length and head dim the windows of bench_block_sparse_raw
differ only in how many live blocks each query (or key) row walks; the rows
themselves, and the partial blocks at each window's edge, are the same. A
least-squares line through (live blocks, time) over the windows gives

  * the intercept: what the launch costs whatever the window (each row's
    prologue and epilogue, its partial tiles, the last wave), and
  * the slope: the cost of one more whole live block, as TFLOP/s (4 · heads ·
    head_dim · block² per block forward, 2.5 times that backward),

and the marginal rate is set against dense causal SDPA's in a Python
benchmark run on the same card (forward: its forward; backward: 2.5 times
its forward FLOPs over its fwd+bwd time less its forward time).

    python3 bench/kernels/block_sparse_fixed_cost.py --raw raw.log --bench bench.jsonl [--version 17]
"""

import argparse
import json
import re
from collections import defaultdict

BLOCK = 128
RAW_HEADS = 8  # bench_block_sparse_raw.cu's


def raw_times(path, version):
    """{(head_dim, seq, 'fwd'|'bwd'): [(live blocks per head, µs)]} of one version over the windows."""
    out = defaultdict(list)
    shape = None
    for line in open(path):
        fwd = re.match(r"d (\d+) seq (\d+) window \d+ density ([0-9.]+):", line)
        bwd = re.match(r"d (\d+) seq (\d+) window \d+ backward:", line)
        t = re.search(rf" v{version} ([0-9.]+) us", line)
        if fwd and t:
            d, seq, density = int(fwd[1]), int(fwd[2]), float(fwd[3])
            shape = (d, seq, density * (seq // BLOCK) ** 2)
            out[(d, seq, "fwd")].append((shape[2], float(t[1])))
        elif bwd and t and shape:
            out[(shape[0], shape[1], "bwd")].append((shape[2], float(t[1])))
    return out


def sdpa_rates(path):
    """{(head_dim, seq): (forward TFLOP/s, backward TFLOP/s)} of dense causal SDPA."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    rates, pending = {}, {}
    for r in rows:
        if r.get("case", "").startswith("dense causal SDPA"):
            pending[r["case"].endswith("fwd+bwd")] = r
        elif "seq" in r and pending:
            f, fb = pending[False], pending[True]
            dense = f["tflops"] * f["seconds"]  # TFLOP of the forward
            rates[(r["head_dim"], r["seq"])] = (f["tflops"], 2.5 * dense / (fb["seconds"] - f["seconds"]))
            pending = {}
    return rates


def fit(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - slope * mx, slope


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--raw", required=True, help="bench_block_sparse_raw's output")
    p.add_argument("--bench", required=True, help="bench_block_sparse_attention.py --json output (SDPA rows)")
    p.add_argument("--version", type=int, default=17)
    args = p.parse_args()
    sdpa = sdpa_rates(args.bench)
    print("| head dim, seq | pass | fixed part | share of the lowest-density time | per-block rate | of SDPA's | worst fit error |")
    print("|---|---|---|---|---|---|---|")
    for (d, seq, which), points in sorted(raw_times(args.raw, args.version).items()):
        if len(points) < 2:
            continue
        a, b = fit(points)
        flops = 4 * RAW_HEADS * d * BLOCK * BLOCK * (2.5 if which == "bwd" else 1)
        rate = flops / (b * 1e-6) / 1e12
        ref = sdpa.get((d, seq))
        share = f"{rate / ref[which == 'bwd'] * 100:.0f}%" if ref else "-"
        low = min(points)[1]
        worst = max(abs(a + b * x - y) / y for x, y in points)
        print(f"| {d}, {seq} | {which} | {a:.1f} µs | {a / low * 100:.0f}% | {rate:.0f} TFLOP/s | {share} | "
              f"{worst * 100:.1f}% |")


if __name__ == "__main__":
    main()
