#!/usr/bin/env python3
"""Summarises workloads/paired_savings.sh: per configuration and round, the
mean ProfilerStep time of the trace and how fast its host ran (the median host
time of aten::view and cudaLaunchKernel, calls whose work does not depend on
the configuration); per variant/counterfactual pair, the saving in each round
and its median.

    python3 workloads/paired_savings.py OUTDIR [--stepscope BIN] [VARIANT:COUNTERFACTUAL ...]

Without pairs it uses the held-out check's (heldout_variants.sh). With
--stepscope, each variant's trace of each round is also diagnosed, and the
table gives the primary and the saving stepscope estimates for the cause the
variant injects (its expected primary in heldout_labels.json).
"""
import gzip
import json
import os
import statistics
import subprocess
import sys

PAIRS = [("empty_cache_deep", "cf_12_layers"), ("dataloader_light", "cf_12_layers"),
         ("item_sync_wide", "cf_wide"), ("no_caching_allocator", "cf_eager"),
         ("fp32_small", "cf_bf16_small"), ("tf32_fp32", "cf_bf16_b16"),
         ("empty_cache_compiled", "cf_compiled_b16"), ("tf32_small", "cf_bf16_small"),
         ("tf32_b32", "cf_bf16_b32"), ("tf32_long", "cf_bf16_long")]
PROBES = ("aten::view", "cudaLaunchKernel")


def summarise(path):
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    steps = [e["dur"] for e in events
             if e.get("ph") == "X" and e.get("cat") == "user_annotation"
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    probes = {}
    for name in PROBES:
        durs = [e["dur"] for e in events if e.get("ph") == "X" and e.get("name") == name]
        probes[name] = statistics.median(durs) if durs else float("nan")
    return {"step_ms": statistics.mean(steps) / 1e3 if steps else float("nan"), "probes": probes}


def diagnose(stepscope, folder, category):
    """(primary, estimated saving in ms of `category`) of stepscope's diagnosis."""
    out = subprocess.run([stepscope, "analyze", "-q", "--json", "-", folder],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)["diagnosis"]
    found = d.get("findings", []) + d.get("minor", [])
    saving = next((f["estimated_saving_us"] / 1e3 for f in found if f["category"] == category), 0.0)
    primary = found[0]["category"] if d.get("findings") else "none"
    return primary, saving


def main():
    args = sys.argv[1:]
    stepscope = None
    if "--stepscope" in args:
        i = args.index("--stepscope")
        stepscope = args[i + 1]
        del args[i:i + 2]
    if not args:
        sys.exit("usage: paired_savings.py OUTDIR [--stepscope BIN] [VARIANT:COUNTERFACTUAL ...]")
    outdir = args[0]
    pairs = [tuple(p.split(":", 1)) for p in args[1:]] or PAIRS
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "heldout_labels.json")) as f:
        expected = {k: v["primary"] for k, v in json.load(f).items() if not k.startswith("_")}
    rounds = sorted(d for d in os.listdir(outdir) if d.startswith("round"))
    runs = {}
    for r in rounds:
        for name in sorted(os.listdir(os.path.join(outdir, r))):
            trace = os.path.join(outdir, r, name, "rank0.json.gz")
            if os.path.isfile(trace):
                runs.setdefault(name, {})[r] = summarise(trace)
    print("| configuration | round | step ms | " + " | ".join(f"{p} us" for p in PROBES) + " |")
    print("|---|---|---:|" + "---:|" * len(PROBES))
    for name in sorted(runs):
        for r, s in sorted(runs[name].items()):
            print(f"| {name} | {r} | {s['step_ms']:.1f} | "
                  + " | ".join(f"{s['probes'][p]:.2f}" for p in PROBES) + " |")
    print()
    print("| variant | counterfactual | round | measured saving ms | primary | estimated saving ms of the injected cause |")
    print("|---|---|---|---:|---|---:|")
    for variant, cf in pairs:
        if variant not in runs or cf not in runs:
            continue
        savings = []
        for r in sorted(set(runs[variant]) & set(runs[cf])):
            saving = runs[variant][r]["step_ms"] - runs[cf][r]["step_ms"]
            savings.append(saving)
            primary, estimate = "", ""
            if stepscope and variant in expected:
                primary, est = diagnose(stepscope, os.path.join(outdir, r, variant), expected[variant])
                estimate = f"{est:.1f} ({expected[variant]})"
            print(f"| {variant} | {cf} | {r} | {saving:.1f} | {primary} | {estimate} |")
        if savings:
            print(f"| {variant} | {cf} | median | {statistics.median(savings):.1f} | | |")

if __name__ == "__main__":
    main()
