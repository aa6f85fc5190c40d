#!/usr/bin/env python3
"""Compares commands by running them in alternation, round after round.

On the development VM a single run differs from the next by 10-20% (the
machine's speed moves within minutes), so two builds are compared only in
alternating runs: each round runs every command once, and the medians and
minima of wall time and CPU time (user + system of the process and the
children it waited for, from wait4) are printed per command.

usage: bench/alternate_runs.py ROUNDS 'LABEL=COMMAND' ['LABEL=COMMAND' ...]
example:
  bench/alternate_runs.py 10 \\
    "old=for f in ../shared/conformance/hta/*/; do /tmp/old/stepscope analyze \\$f; done" \\
    "new=for f in ../shared/conformance/hta/*/; do build/stepscope analyze \\$f; done"
"""
import os
import statistics
import subprocess
import sys
import time


def run_once(command):
    start = time.perf_counter()
    proc = subprocess.Popen(command, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall_ms = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"alternate_runs: command failed (exit {os.waitstatus_to_exitcode(status)}): {command}")
    return wall_ms, (usage.ru_utime + usage.ru_stime) * 1000


def main(argv):
    if len(argv) < 3 or not argv[1].isdigit():
        sys.exit(__doc__)
    rounds = int(argv[1])
    configs = []
    for arg in argv[2:]:
        label, sep, command = arg.partition("=")
        if not sep or not label:
            sys.exit(f"alternate_runs: expected LABEL=COMMAND, got {arg!r}")
        configs.append((label, command))
    results = {label: [] for label, _ in configs}
    for _ in range(rounds):
        for label, command in configs:
            results[label].append(run_once(command))
    print(f"{'command':20s} {'wall ms median':>15s} {'min':>9s} {'CPU ms median':>14s} {'min':>9s}   ({rounds} rounds)")
    for label, runs in results.items():
        walls = [w for w, _ in runs]
        cpus = [c for _, c in runs]
        print(f"{label:20s} {statistics.median(walls):15.1f} {min(walls):9.1f} "
              f"{statistics.median(cpus):14.1f} {min(cpus):9.1f}")


if __name__ == "__main__":
    main(sys.argv)
