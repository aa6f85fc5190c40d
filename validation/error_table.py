#!/usr/bin/env python3
"""Per-row error table of `stepscope plan validate` on the validation files.

Runs the CLI on each CSV, joins its JSON with the rows, and writes the
markdown of docs/planner_validation.md: every predicted row with its
measured and predicted step time (and memory where published), the error,
and the features of that row the models do not express. Those features are
read from the row itself (its columns and its source notes) by the rules in
UNMODELLED below, each of which names a documented gap of docs/planner.md
("Known limits"); they say what the model leaves out for the row, not how
much of the error each one causes.

    python3 validation/error_table.py --stepscope build/stepscope > docs/planner_validation.md
"""

import argparse
import csv
import datetime
import json
import platform
import subprocess
import sys

FILES = ["validation/recent_runs.csv", "validation/heldout_runs.csv", "validation/h200_memory.csv"]


def _has(row, column, *values):
    return row.get(column, "").strip().lower() in values


def _int(row, column, default=1):
    try:
        return int(row.get(column, ""))
    except ValueError:
        return default


def _notes(row):
    return row.get("notes", "").lower()


# (label, rule): a row with the feature gets the label.
UNMODELLED = [
    ("500 W H100: peak between NVL and SXM, NVL's rates taken",
     lambda r: "96gb" in r["gpu"].lower() and "h100" in r["gpu"].lower()),
    ("float8 rowwise modelled as tensorwise",
     lambda r: "rowwise" in _notes(r)),
    ("async TP: chunked GEMMs share SMs and HBM with the collectives",
     lambda r: _has(r, "tp_overlap", "yes") and r.get("framework") in ("torchtitan", "pytorch", "hf")),
    ("TP comm overlap not published: counted exposed",
     lambda r: _int(r, "tp") > 1 and not r.get("tp_overlap") and r.get("framework") in ("nemo", "megatron-bridge")),
    ("ring attention: kernel efficiency on s/cp blocks",
     lambda r: _int(r, "cp") > 1),
    ("attention at a fixed fraction at any sequence length",
     lambda r: _int(r, "seq", 0) >= 32768),
    ("pipeline schedule details (interleaving / split points) beyond the stage counts",
     lambda r: _int(r, "pp") > 1 and r.get("framework") == "torchtitan"),
    ("torch.compile beyond fused memory-bound kernels",
     lambda r: _has(r, "torch_compile", "yes")),
    ("fixed per-step costs (TE fp8 scaling updates, optimizer launches)",
     lambda r: r.get("framework") in ("nemo", "megatron-bridge") and float(r.get("params_B") or 0) < 10),
    ("Ampere GEMM epilogue counted exposed (an upper bound)",
     lambda r: "a100" in r["gpu"].lower()),
    ("eager HF model: kernels per layer beyond torchtitan's count",
     lambda r: r.get("framework") == "hf"),
    ("step time from 3 steps of a memory measurement",
     lambda r: "median of 3" in _notes(r)),
]


def validate(stepscope, path):
    out = subprocess.run([stepscope, "plan", "validate", path, "--json", "-"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error_table.py: {stepscope} plan validate {path} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def layout(r):
    parts = [f"tp{r['tp']} pp{r['pp']} dp{r['dp']}"]
    if _int(r, "cp") > 1:
        parts.append(f"cp{r['cp']}")
    parts.append(f"mb {r['micro_batch']}")
    parts.append(f"seq {r['seq']}")
    parts.append(r["recompute"])
    parts.append(r.get("dtype") or "bf16")
    return " ".join(parts)


def table(path, result, rows):
    lines = [f"### `{path}`", ""]
    s = result["summary"]
    lines.append(f"Step time: {s['step_rows']} rows, mean |error| {s['step_mean_abs_pct']:.2f}%, "
                 f"max {s['step_max_abs_pct']:.2f}%. Memory: {s['memory_rows']} rows"
                 + (f", mean |error| {s['memory_mean_abs_pct']:.2f}%, max {s['memory_max_abs_pct']:.2f}%"
                    if s["memory_rows"] else "") + f". Not predicted: {s['skipped_rows']}.")
    lines.append("")
    lines.append("| row | source | model | GPU × n | layout | measured s | predicted s | error | memory error | "
                 "unmodelled in this row |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for x in result["rows"]:
        r = rows[x["index"]]
        if x["metric"] != "step_seconds":
            continue
        gaps = [label for label, rule in UNMODELLED if rule(r)]
        mem = f"{x['memory_error_pct']:+.1f}%" if "memory_error_pct" in x else ""
        source = r["source"].split(" ")[0]
        lines.append(f"| {x['index']} | {source} | {r['model']} | {r['gpu']} × {r['n_gpu']} | {layout(r)} | "
                     f"{x['measured']:.3f} | {x['predicted']:.3f} | {x['error_pct']:+.1f}% | {mem} | "
                     f"{'; '.join(gaps) or '—'} |")
    skipped = result.get("skipped", [])
    if skipped:
        lines.append("")
        lines.append("Not predicted:")
        lines.append("")
        lines += [f"- {s['reason']}" for s in skipped]
    lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stepscope", default="build/stepscope", help="the stepscope binary")
    ap.add_argument("files", nargs="*", default=FILES)
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = ["# `plan validate`: every row", "",
           f"Generated {datetime.date.today().isoformat()} on {platform.node() or 'this machine'} "
           f"({platform.machine()}) at commit {commit or 'unknown'} by "
           "`python3 validation/error_table.py --stepscope build/stepscope > docs/planner_validation.md`. "
           "Error = (predicted − measured) / measured. The last column lists what the models leave out for "
           "that row (rules in `validation/error_table.py`, each a limit in docs/planner.md), not how much "
           "of the error each causes.", ""]
    for path in args.files:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        out += table(path, validate(args.stepscope, path), rows)
    print("\n".join(out))


if __name__ == "__main__":
    main()
