#!/usr/bin/env python3
"""Instruction mix of each kernel in an Nsight Compute source-page CSV:
executed warp instructions and warp-stall samples per SASS opcode, largest
first. Made with

    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > sass.csv
    python3 bench/kernels/ncu_instruction_mix.py sass.csv [--top 22]

(how the block-sparse forward's FMUL/IMAD/ISETP counts behind v5 were read).
"""

import argparse
import collections
import csv


def kernels(path):
    """(kernel name, header row, instruction rows) per kernel of the CSV."""
    out = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if row and row[0] == "Kernel Name":
                out.append([row[1], None, []])
            elif row and row[0] == "Address" and out:
                out[-1][1] = row
            elif out and out[-1][1] and len(row) == len(out[-1][1]):
                out[-1][2].append(row)
    return out


def opcode(source):
    words = source.split()
    if not words:
        return "?"
    op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]  # a predicate comes first
    return op.split(".")[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--top", type=int, default=22)
    args = p.parse_args()
    for name, header, rows in kernels(args.csv):
        src, ex = header.index("Source"), header.index("Instructions Executed")
        st = header.index("Warp Stall Sampling (All Samples)")
        count, stalls = collections.Counter(), collections.Counter()
        for r in rows:
            op = opcode(r[src])
            count[op] += int(r[ex] or 0)
            stalls[op] += int(r[st] or 0)
        total, samples = sum(count.values()), sum(stalls.values())
        if not total:
            continue
        print(f"{name}\n  {total} warp instructions, {samples} stall samples")
        for op, n in count.most_common(args.top):
            print(f"  {op:10s} {100 * n / total:5.1f}% of instructions  {100 * stalls[op] / max(samples, 1):5.1f}% of stalls")


if __name__ == "__main__":
    main()
