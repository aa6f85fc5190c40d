#!/usr/bin/env python3
"""What the Python front costs over the CLI (issue #27, "Performance"):

    python bench/python_overhead.py [--rounds 5] [FOLDER ...]

Run with the interpreter of an environment where the wheel is installed
(scripts/check_wheel.sh leaves one in .venv-wheel-test/); the CLI compared is
that wheel's own `stepscope` (same build flags). Folders default to the
conformance set (../shared/conformance/*/*).

Per folder, interleaved over the rounds, the median of:
  cli     wall time of `stepscope analyze FOLDER -q` (a process: start, read,
          analyse, diagnose, exit);
  python  wall time of `stepscope.analyze(FOLDER).primary_bottleneck` in this
          process (read, analyse, diagnose, then the JSON report built in C++
          and parsed by Python for the attribute).
The total of each over the set, and their ratio. Also the import time of
`stepscope` in a fresh interpreter without pandas (median of --rounds runs)
and whether importing loaded pandas, torch or the native module.
Exit status 0 whatever the figures: this measures, it does not test.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time

import stepscope

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(os.path.dirname(HERE), "..", "shared", "conformance")


def cli_seconds(cli, folder):
    t = time.perf_counter()
    subprocess.run([cli, "analyze", folder, "-q"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def python_seconds(folder):
    import warnings

    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stepscope.analyze(folder).primary_bottleneck
    return time.perf_counter() - t


def import_seconds():
    code = ("import time, sys; t = time.perf_counter(); import stepscope; d = time.perf_counter() - t; "
            "print(d, sorted(m for m in ('pandas', 'torch', 'stepscope._stepscope') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split(" ", 1)
    return float(out[0]), out[1].strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    cli = shutil.which("stepscope", path=os.path.dirname(sys.executable)) or shutil.which("stepscope")
    folders = args.folders or sorted(p for p in glob.glob(os.path.join(SHARED, "*", "*")) if os.path.isdir(p))
    usable = []
    for f in folders:
        try:
            python_seconds(f)
            usable.append(f)
        except stepscope.Error as e:  # a folder stepscope refuses is left out, and said
            print(f"skipped {os.path.relpath(f)}: {e}")
    times = {f: {"cli": [], "python": []} for f in usable}
    for _ in range(args.rounds):
        for f in usable:
            times[f]["cli"].append(cli_seconds(cli, f))
            times[f]["python"].append(python_seconds(f))
    print(f"CLI: {cli}\n")
    print("| folder | CLI s | Python s | ratio |")
    print("|---|---|---|---|")
    total_cli = total_py = 0.0
    for f in usable:
        c, p = statistics.median(times[f]["cli"]), statistics.median(times[f]["python"])
        total_cli += c
        total_py += p
        rel = os.path.relpath(os.path.abspath(f), os.path.abspath(SHARED))
        print(f"| {f if rel.startswith('..') else rel} | {c:.3f} | {p:.3f} | {p / c:.2f} |")
    print(f"| **total ({len(usable)} folders)** | {total_cli:.3f} | {total_py:.3f} | {total_py / total_cli:.3f} |")
    imports = [import_seconds() for _ in range(args.rounds)]
    print(f"\nimport stepscope: median {1000 * statistics.median(t for t, _ in imports):.1f} ms "
          f"over {args.rounds} fresh interpreters; modules loaded by the import: {imports[0][1]}")


if __name__ == "__main__":
    main()
