#!/usr/bin/env python3
"""Per-row error table of `stepscope plan validate` on the validation files.

Runs the CLI on each CSV, joins its JSON with the rows, and writes the
markdown of docs/planner_validation.md: every predicted row with its
measured and predicted step time (and memory where published), the error,
and the features of that row the models do not express. Those features are
read from the row itself (its columns and its source notes) by the rules in
UNMODELLED below, each of which names a documented gap of docs/planner.md
("Known limits"). Where a publication ran a row with and without a feature
(PAIRED), the part of the row's error that feature causes is measured from
the pair (measured_parts).

    python3 validation/error_table.py --stepscope build/stepscope > docs/planner_validation.md
"""

import argparse
import csv
import datetime
import json
import platform
import re
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


# Features a source publishes both ways, the rest of the row held fixed: the
# pair measures what the feature does to the step, and the model's two
# predictions what it thinks it does. (label, has it, row without it).
PAIRED = [
    ("float8 rowwise (vs tensorwise)", lambda r: "rowwise" in _notes(r),
     lambda r, p: "rowwise" not in _notes(p) and p.get("dtype") == r.get("dtype")),
    ("async TP (vs off)", lambda r: _has(r, "tp_overlap", "yes"),
     lambda r, p: not _has(p, "tp_overlap", "yes")),
    ("torch.compile (vs eager)", lambda r: _has(r, "torch_compile", "yes"),
     lambda r, p: _has(p, "torch_compile", "no")),
    # Tensorwise only: a rowwise row's partner must be rowwise too, which a
    # bf16 row is not.
    ("float8 (vs bf16)", lambda r: _has(r, "dtype", "fp8"),
     lambda r, p: _has(p, "dtype", "bf16")),
    # The same GPUs and tokens per GPU at a longer sequence, split by ring
    # attention (torchtitan's long-context table).
    ("context parallel at a longer sequence (vs cp 1)", lambda r: _int(r, "cp") > 1,
     lambda r, p: _int(p, "cp") == 1 and _int(p, "seq", 0) < _int(r, "seq", 0)),
    # The same model on the same GPUs at 16k+ tokens against a shorter
    # sequence, with the batch and recomputation each row publishes (both
    # modelled): what is left is how attention and its recomputation run at
    # that length (llm-foundry's and torchtitan's long-sequence rows).
    ("long sequence (vs a shorter one)", lambda r: _int(r, "seq", 0) >= 16384 and _int(r, "cp") == 1,
     lambda r, p: _int(p, "seq", 0) < 16384 and _int(p, "cp") == 1),
]
# Columns that do not say what ran (the measurement, its unit, prose).
_NOT_THE_RUN = {"value", "step_seconds", "memory_gb", "notes", "metric", "flops_convention"}
_FEATURE_COLUMNS = {"float8 rowwise (vs tensorwise)": set(), "async TP (vs off)": {"tp_overlap"},
                    "torch.compile (vs eager)": {"torch_compile"}, "float8 (vs bf16)": {"dtype", "fp8_all_gather"},
                    "context parallel at a longer sequence (vs cp 1)": {"cp", "seq", "dp", "global_batch"},
                    "long sequence (vs a shorter one)": {"seq", "micro_batch", "global_batch", "recompute",
                                                         "recompute_layers"}}


# Both say how long the sequence is: pairing one may change the other.
_SEQUENCE_FEATURES = {"context parallel at a longer sequence (vs cp 1)", "long sequence (vs a shorter one)"}


def _publication(row):
    """The source without its table: two tables of one benchmark page ran on
    the same machines and software."""
    return re.sub(r"\s+Table\s+\S+$", "", row.get("source", "").strip())


def partner(rows, errors, i, label, without):
    """The row of the same publication that runs row i without the feature,
    everything else equal, with a prediction (of several, the longest
    sequence); None if the source has none."""
    r = rows[i]
    skip = _NOT_THE_RUN | _FEATURE_COLUMNS[label] | {"source"}
    found = []
    for j, p in enumerate(rows):
        if j == i or j not in errors or not without(r, p):
            continue
        if _publication(p) != _publication(r):
            continue
        same_features = all(has(r) == has(p) for other, has, _ in PAIRED
                            if other != label and {label, other} != _SEQUENCE_FEATURES)
        if same_features and all(r.get(c, "") == p.get(c, "") for c in r if c not in skip):
            found.append(j)
    # The nearest sequence length first (a 32k partner for a 64k row, not 8k).
    return max(found, key=lambda j: (_int(rows[j], "seq", 0), -j)) if found else None


def measured_parts(rows, errors, i):
    """Row i's error split along published pairs: for each feature the row
    has and its source also ran without (the rest equal), the part of the
    error that feature causes, (1 + e_row) / (1 + e_partner) - 1 (the
    model's predicted effect of the feature against the measured one); then
    the same for the partner, down to a row with no such pair, whose error
    is the residual. Returns ([(label, part %, partner index)], residual
    row index)."""
    parts, at, used = [], i, set()
    progress = True
    while progress:  # a partner can open a pair the row itself had none for
        progress = False
        for label, has, without in PAIRED:
            if label in used or not has(rows[at]):
                continue
            j = partner(rows, errors, at, label, without)
            if j is None:
                continue
            parts.append((label, 100.0 * ((1 + errors[at] / 100.0) / (1 + errors[j] / 100.0) - 1), j))
            used.add(label)
            at, progress = j, True
            break
    return parts, at


def parts_table(result, rows, target_pct=10.0):
    """Every row above the step-time target, its error split into the
    measured parts of paired features and the residual with what the
    residual row leaves out."""
    errors = {x["index"]: x["error_pct"] for x in result["rows"] if x["metric"] == "step_seconds"}
    lines = [f"Rows above ±{target_pct:.0f}%, their error split along published pairs "
             "(each part: the model's effect of the feature against the measured one; the residual: the error "
             "of the row at the end of the chain, with what that row leaves out):", "",
             "| row | error | measured parts (vs row) | residual | residual row leaves out |",
             "|---|---|---|---|---|"]
    explained = 0
    above = [i for i, e in errors.items() if abs(e) > target_pct]
    for i in above:
        parts, at = measured_parts(rows, errors, i)
        explained += abs(errors[at]) <= target_pct
        text = "; ".join(f"{label} {part:+.1f}% (vs {j})" for label, part, j in parts) or "— (no pair)"
        gaps = [label for label, rule in UNMODELLED if rule(rows[at])]
        lines.append(f"| {i} | {errors[i]:+.1f}% | {text} | {errors[at]:+.1f}% (row {at}) | {'; '.join(gaps) or '—'} |")
    lines += ["", f"{len(above)} rows above ±{target_pct:.0f}%; in {explained} of them the paired parts take "
              f"the residual within ±{target_pct:.0f}%.", ""]
    return lines if above else []


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
    lines.append("")
    lines += parts_table(result, rows)
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
           "that row (rules in `validation/error_table.py`, each a limit in docs/planner.md). Below each "
           "table, every row above ±10% has its error split along pairs the same publication ran with and "
           "without a feature (float8 rowwise, async TP, torch.compile, float8, context parallelism at a "
           "longer sequence, a long sequence): each part is what the feature's mis-modelled effect costs that row, measured; "
           "the residual is the error of the row the chain ends at, with what it leaves out, named but not "
           "measured.", ""]
    for path in args.files:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        out += table(path, validate(args.stepscope, path), rows)
    print("\n".join(out))


if __name__ == "__main__":
    main()
