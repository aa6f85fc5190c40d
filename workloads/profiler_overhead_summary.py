#!/usr/bin/env python3
"""Tables of issue #26 items 2 and 6 from a profiler_overhead.sh run.

    python3 workloads/profiler_overhead_summary.py RUN_DIR --stepscope BIN [--calibrate]

RUN_DIR holds results.jsonl and the traces <job>/<setting>.json.gz (unpack
the run's traces_*.tar there). Item 2: per job and profiler setting, the
profiled step (the trace's mean ProfilerStep), stepscope's estimate of the
unprofiled step (ranks[0].replay.unprofiled) and the measured unprofiled
median, with the error. Item 6: per job with a fix, the measured saving
(median unprofiled step of the job minus that of its fix, as a share of the
job's), stepscope's replay saving and bound for the fix's finding category,
on the trace of the examples' setting. --calibrate passes the measured
unprofiled median as --unprofiled-step-ms (what the recorder will give).
"""
import argparse
import json
import os
import subprocess
import sys


def analyze(binary, path, unprofiled_ms=None):
    cmd = [binary, "analyze", "-q", "--json", "-", path]
    if unprofiled_ms is not None:
        cmd += ["--unprofiled-step-ms", f"{unprofiled_ms:.6f}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run_dir")
    p.add_argument("--stepscope", required=True)
    p.add_argument("--calibrate", action="store_true")
    a = p.parse_args()
    jobs = [json.loads(l) for l in open(os.path.join(a.run_dir, "results.jsonl"))]
    jobs = [j for j in jobs if j["job"] != "micro"]

    print("| job | setting | profiled ms | estimated unprofiled ms | measured unprofiled ms | error % |")
    print("|---|---|---|---|---|---|")
    errors = []
    for j in jobs:
        measured = j["median_ms"]["none"]
        for setting in ("base", "shapes", "memory", "stack", "flops", "examples"):
            path = os.path.join(a.run_dir, j["job"], f"{setting}.json.gz")
            if not os.path.exists(path):
                continue
            u = analyze(a.stepscope, path, measured if a.calibrate else None)["ranks"][0]["replay"]["unprofiled"]
            est = u["estimated_unprofiled_step_us"] / 1e3
            err = 100.0 * (est - measured) / measured
            errors.append(abs(err))
            print(f"| {j['job']} | {setting} | {u['profiled_step_us'] / 1e3:.2f} | {est:.2f} | {measured:.2f} | {err:+.1f} |")
    if errors:
        within = sum(e <= 10.0 for e in errors)
        print(f"\n{within} of {len(errors)} estimates within ±10%; largest |error| {max(errors):.1f}%\n")

    print("| job | fix | category | measured saving % | replay saving % | bound % | within ±25% |")
    print("|---|---|---|---|---|---|---|")
    for j in jobs:
        if not j.get("fix") or "fix" not in j["median_ms"]:
            continue
        step, fixed = j["median_ms"]["none"], j["median_ms"]["fix"]
        measured_pct = 100.0 * (step - fixed) / step
        path = os.path.join(a.run_dir, j["job"], "examples.json.gz")
        if not os.path.exists(path):
            continue
        d = analyze(a.stepscope, path, step if a.calibrate else None)["diagnosis"]
        found = [f for f in d["findings"] + d["minor_findings"] if f["category"] == j["category"]]
        replay = found[0]["replay_saving_pct"] if found and found[0]["replay_saving_pct"] is not None else None
        bound = found[0]["estimated_saving_pct"] if found else None
        fix = ", ".join(f"{k}={v}" for k, v in j["fix"].items())
        r = "-" if replay is None else f"{replay:.1f}"
        b = "-" if bound is None else f"{bound:.1f}"
        ok = "-" if replay is None else ("yes" if abs(replay - measured_pct) <= 0.25 * measured_pct else "no")
        print(f"| {j['job']} | {fix} | {j['category']} | {measured_pct:.1f} | {r} | {b} | {ok} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
