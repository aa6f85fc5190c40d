#!/usr/bin/env python3
"""Adversarial run of `stepscope analyze` and `diff` over mutated real traces.

Each case takes one of the repository's example traces (or the 8-rank gloo
set), applies one mutation of a known class of bad input, runs the CLI under a
time and memory bound and checks the promises of docs/robustness.md, whatever
the mutation:

  * the process exits by itself (no signal, no time-out) with 0 or 2;
  * every stderr line is one `stepscope: <level>: ...` line free of control
    characters, and a non-zero exit has exactly one `error:` line;
  * stdout (the terminal report) holds no control character but newline;
  * with exit 0 the JSON report is strict JSON (no NaN/Infinity) whose
    numbers obey the conventions of docs/json_schema.md: `*_pct` in [0, 100],
    `*_ratio` in [0, 1], durations (`*_us`) and byte counts (`*_bytes`) not
    negative, except the signed fields listed in SIGNED_FIELDS.

The cases are drawn from a seeded generator: CI runs a few seeds
(tests/CMakeLists.txt); the held-out seeds of docs/robustness.md are run at
each stop and never used while fixing. Standard library only.

  run_adversarial.py --stepscope BUILD/stepscope --seed 1 --cases 40
"""
import argparse
import gzip
import json
import math
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
GLOO = os.path.join(ROOT, "tests", "data", "dist_gloo_cpu", "healthy")

# Fields that docs/json_schema.md defines as signed differences (a launch
# delay can be negative when clocks of host and GPU disagree; deltas and
# changes are differences of two runs).
SIGNED_FIELDS = re.compile(r"(change|delta|diff|offset|negative_launch|launch_delay|slack|gain|lateness|_vs_|error_pct)")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
TIME_LIMIT_S = 60
MEMORY_LIMIT_BYTES = 4 << 30


# ---------------------------------------------------------------------------
# Inputs

def load_trace(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def example_paths():
    out = []
    for name in sorted(os.listdir(EXAMPLES)):
        p = os.path.join(EXAMPLES, name, "rank0.json.gz")
        if os.path.isfile(p):
            out.append(p)
    return out


def events_of(doc, pred):
    return [e for e in doc.get("traceEvents", []) if isinstance(e, dict) and pred(e)]


def is_kernel(e):
    return e.get("cat") == "kernel" and e.get("ph") == "X"


# ---------------------------------------------------------------------------
# Mutations: each takes (rng, doc) and returns a Case: the files written as
# its inputs, extra CLI flags, and what the outcome must show beyond the
# common checks: `must_show`, the bad value must be visible (an error, or a
# warning the unmutated trace does not give), never a silent number;
# `must_read`, the input is valid and must be read as the plain trace is;
# `must_fail`, nothing in it can be analysed, so the exit code must say so;
# `check`, a function of (report, stderr lines) returning problems.


class Case:
    def __init__(self, files, flags=None, must_show=False, must_read=False, must_fail=False, check=None):
        self.files, self.flags = files, list(flags or [])
        self.must_show, self.must_read, self.must_fail, self.check = must_show, must_read, must_fail, check


def clock_skew_check(report, _err):
    # The gloo set's real collective skew is tens of ms; a rank moved by a
    # clock offset of 1000 s or more must not read as a straggler that late.
    skew = ((report.get("multi_rank") or {}).get("collective_skew") or {})
    late = skew.get("max_skew_us")
    if late is not None and late > 60e6:
        return [f"collective skew {late:.0f} us after a clock offset: the offset was not removed"]
    return []


def one_rank_check(report, _err):
    n = len(report.get("ranks", []))
    return [] if n == 1 else [f"one file named twice became {n} ranks"]

# Durations and times in µs that cannot be a real event's: the end does not
# fit in int64 ns, or the value itself does not, or it is negative.
HUGE_DUR = [2**63 // 1000 - 1, 2**62, 9.2e15, 1e18, 1e300, -1, -(2**62)]
HUGE_TS = [2**63 // 1000 + 5, 2**62, 1e18, 1e300]


def dumps(doc):
    return json.dumps(doc).encode()


def m_huge_dur(rng, doc):
    for e in rng.sample(events_of(doc, is_kernel), k=min(3, len(events_of(doc, is_kernel)))):
        e["dur"] = rng.choice(HUGE_DUR)
    return Case([("rank0.json", dumps(doc))], must_show=True)


def m_huge_ts(rng, doc):
    evs = events_of(doc, lambda e: "ts" in e)
    for e in rng.sample(evs, k=min(3, len(evs))):
        e["ts"] = rng.choice(HUGE_TS)
    kernels = events_of(doc, is_kernel)
    if kernels and rng.random() < 0.5:
        rng.choice(kernels)["ts"] = -rng.choice([1, 2**40])
    return Case([("rank0.json", dumps(doc))], must_show=True)


def m_negative_values(rng, doc):
    # "Bytes" of a [memory] event is negative for a free: not a bad value.
    changed = False
    for e in events_of(doc, lambda e: isinstance(e.get("args"), dict)):
        a = e["args"]
        for key in ("bytes", "Total Allocated", "Total Reserved", "memory bandwidth (GB/s)"):
            if key in a and rng.random() < 0.3:
                a[key] = -rng.choice([1, 5, 1 << 20, 1 << 40])
                changed = True
    return Case([("rank0.json", dumps(doc))], must_show=changed)


def m_duplicate_correlation(rng, doc):
    evs = events_of(doc, lambda e: isinstance(e.get("args"), dict) and "correlation" in e["args"])
    value = evs[0]["args"]["correlation"] if evs else 1
    for e in evs:
        if rng.random() < 0.8:
            e["args"]["correlation"] = value
    return Case([("rank0.json", dumps(doc))], must_show=len(evs) > 2)


def m_step_number(rng, doc):
    big = rng.choice(["99999999999999999999999", "18446744073709551617", "9223372036854775808"])
    steps = events_of(doc, lambda e: str(e.get("name", "")).startswith("ProfilerStep#"))
    for e in steps[: max(1, len(steps) // 2)]:
        e["name"] = "ProfilerStep#" + big
    return Case([("rank0.json", dumps(doc))], must_show=bool(steps))


def m_control_names(rng, doc):
    evil = ["\x1b]0;owned\x07", "\x1b[2J\x1b[H", "line\nbreak", "\r", "\x00nul", "\x9b31m", "\u202e"]
    for e in events_of(doc, lambda e: "name" in e):
        if rng.random() < 0.3:
            e["name"] = rng.choice(evil) + str(e["name"]) + rng.choice(evil)
    return Case([("rank\n0\x1b[2J.json", dumps(doc))])


def m_duplicate_key(rng, doc):
    text = dumps(doc)
    body = text[1:]
    inner = json.dumps(doc["traceEvents"][: len(doc["traceEvents"]) // 2]).encode()
    return Case([("rank0.json", b'{"traceEvents": ' + inner + b", " + body)], must_show=True)


def m_begin_end(rng, doc):
    out = []
    for e in doc["traceEvents"]:
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and rng.random() < 0.7:
            b = dict(e, ph="B")
            b.pop("dur", None)
            end = {"ph": "E", "pid": e.get("pid"), "tid": e.get("tid"), "ts": e["ts"] + e.get("dur", 0)}
            out += [b, end]
        else:
            out.append(e)
    doc["traceEvents"] = out
    return Case([("rank0.json", dumps(doc))])


def m_truncate(rng, doc):
    text = dumps(doc)
    cut = int(len(text) * rng.uniform(0.05, 0.98))
    flags = rng.choice([[], ["--salvage"]])
    return Case([("rank0.json", text[:cut])], flags, must_show=True)


def m_gzip_tail(rng, doc):
    data = gzip.compress(dumps(doc))
    kind = rng.randrange(3)
    tail = [b"\0" * rng.randint(1, 4096), b"garbage", gzip.compress(b"")][kind]
    # Zero padding and an empty second member are valid gzip (gzip -t, Python):
    # they must be read as the plain file is; trailing garbage must be said.
    return Case([("rank0.json.gz", data + tail)], must_show=kind == 1, must_read=kind != 1)


def m_byte_flips(rng, doc):
    text = bytearray(dumps(doc))
    for _ in range(rng.randint(1, 50)):
        i = rng.randrange(len(text))
        text[i] = rng.choice(b'{}[],:"\\0123456789-.eE \n\x00\xff')
    return Case([("rank0.json", bytes(text))], ["--salvage"] if rng.random() < 0.5 else [])


def m_type_swap(rng, doc):
    evs = events_of(doc, lambda e: True)
    for e in rng.sample(evs, k=min(30, len(evs))):
        key = rng.choice([k for k in e.keys()] or ["ts"])
        e[key] = rng.choice([None, "abc", [], {}, True, -0.0, 1e308, "1e309", [1, 2], {"a": {"b": []}}])
    return Case([("rank0.json", dumps(doc))])


def m_non_finite(rng, doc):
    evs = events_of(doc, is_kernel)
    text = dumps(doc)
    for e in rng.sample(evs, k=min(3, len(evs))):
        key = rng.choice(["ts", "dur"])
        old = json.dumps({key: e[key]})[1:-1].encode()
        new = (json.dumps(key) + ": " + rng.choice(["NaN", "Infinity", "-Infinity", "1e309", "-1e309"])).encode()
        text = text.replace(old, new, 1)
    return Case([("rank0.json", text)], must_show=bool(evs))


def m_deep_nesting(rng, doc):
    depth = rng.choice([100, 1000, 2000, 100000])
    doc["traceEvents"][0] = {"ph": "X", "name": "deep", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"a": None}}
    text = dumps(doc).replace(b'{"a": null}', b'{"a": ' + b"[" * depth + b"]" * depth + b"}", 1)
    return Case([("rank0.json", text)])


def m_empty_and_odd(rng, doc):
    body = rng.choice([b"", b"{}", b"[]", b'{"traceEvents": []}', b'{"traceEvents": {}}', b"null", b"\xef\xbb\xbf",
                       b'{"traceEvents": [1, 2, "x", null]}', b"\x1f\x8b\x08\x00"])
    # Nothing in any of these can be analysed: the exit code must say so.
    return Case([("rank0.json", body)], must_fail=True)


def m_clock_skew(rng, _doc):
    files = []
    shift = rng.choice([1e6, 1e9, -1e9, 3.6e9])
    victim = rng.randrange(8)
    for r in range(8):
        d = load_trace(os.path.join(GLOO, f"rank{r}.json.gz"))
        if r == victim:
            for e in d["traceEvents"]:
                if isinstance(e, dict) and isinstance(e.get("ts"), (int, float)):
                    e["ts"] = e["ts"] + shift
        files.append((f"rank{r}.json", dumps(d)))
    return Case(files, check=clock_skew_check)


def m_all_near_limit(rng, doc):
    # Valid, but every sum overflows int64: each event (on one rank, or on
    # four copies of it) lasts nearly the whole 2^61 ns range, so that sums
    # over events, steps and ranks must saturate, never wrap.
    limit_us = 2**61 / 1000
    evs = events_of(doc, lambda e: isinstance(e.get("ts"), (int, float)))
    t0 = min((e["ts"] for e in evs), default=0)
    for e in evs:
        e["ts"] = e["ts"] - t0
        if isinstance(e.get("dur"), (int, float)):
            e["dur"] = limit_us - e["ts"] - rng.uniform(0, 1000)
    ranks = rng.choice([1, 4])
    if ranks == 1:
        return Case([("rank0.json", dumps(doc))], must_read=True)
    files = []
    for r in range(ranks):
        doc["distributedInfo"] = {"rank": r, "world_size": ranks, "backend": "nccl"}
        files.append((f"rank{r}.json", dumps(doc)))
    return Case(files)


def m_same_file_twice(rng, doc):
    return Case([("rank0.json", dumps(doc))], ["@same"], check=one_rank_check)


MUTATIONS = {
    "huge_dur": m_huge_dur,
    "huge_ts": m_huge_ts,
    "negative_values": m_negative_values,
    "duplicate_correlation": m_duplicate_correlation,
    "step_number": m_step_number,
    "control_names": m_control_names,
    "duplicate_key": m_duplicate_key,
    "begin_end": m_begin_end,
    "truncate": m_truncate,
    "gzip_tail": m_gzip_tail,
    "byte_flips": m_byte_flips,
    "type_swap": m_type_swap,
    "non_finite": m_non_finite,
    "deep_nesting": m_deep_nesting,
    "empty_and_odd": m_empty_and_odd,
    "clock_skew": m_clock_skew,
    "same_file_twice": m_same_file_twice,
    "all_near_limit": m_all_near_limit,
}


# ---------------------------------------------------------------------------
# Checks

def strict_json(text):
    def refuse(token):
        raise ValueError(f"non-finite number {token}")
    return json.loads(text, parse_constant=refuse)


def check_numbers(node, path, problems):
    if isinstance(node, dict):
        for k, v in node.items():
            check_numbers(v, path + [str(k)], problems)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            check_numbers(v, path + [str(i)], problems)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        key = next((p for p in reversed(path) if not p.isdigit()), "")
        where = ".".join(path)
        if isinstance(node, float) and not math.isfinite(node):
            problems.append(f"{where} = {node}")
        elif SIGNED_FIELDS.search(where):
            return
        elif key.endswith("_pct") and not -1e-6 <= node <= 100 + 1e-6:
            problems.append(f"{where} = {node} outside [0, 100]")
        elif key.endswith("_ratio") and not -1e-9 <= node <= 1 + 1e-9:
            problems.append(f"{where} = {node} outside [0, 1]")
        elif (key.endswith("_us") or key.endswith("_ns") or key.endswith("_bytes")) and node < 0:
            problems.append(f"{where} = {node} negative")


def run_cli(stepscope, workdir, case):
    """Writes the case's files, runs analyze; returns (rc, stderr lines, report or None, problems, seconds)."""
    paths = []
    for name, data in case.files:
        p = os.path.join(workdir, name)
        with open(p, "wb") as f:
            f.write(data)
        paths.append(p)
    flags = [f for f in case.flags if f != "@same"]
    if "@same" in case.flags:
        paths.append(os.path.join(workdir, ".", os.path.basename(paths[0])))
    json_out = os.path.join(workdir, "report.json")
    cmd = [stepscope, "analyze", *paths, *flags, "--json", json_out]

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))

    sanitized = "asan" in os.path.basename(os.path.dirname(stepscope))
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=TIME_LIMIT_S * (4 if sanitized else 1),
                           preexec_fn=None if sanitized else limit)
    except subprocess.TimeoutExpired:
        return None, [], None, ["time-out"], 0.0
    seconds = time.monotonic() - t0
    problems = []
    if p.returncode not in (0, 2):
        problems.append(f"exit code {p.returncode}")
    err_lines = p.stderr.decode("utf-8", "replace").split("\n")
    if err_lines and err_lines[-1] == "":
        err_lines.pop()
    for line in err_lines:
        if not re.match(r"stepscope: ((error|warning|note): |wrote )", line):
            problems.append(f"stderr line not of the one-line form: {line[:120]!r}")
        if CONTROL.search(line):
            problems.append(f"control character on stderr: {line[:120]!r}")
    errors = [l for l in err_lines if l.startswith("stepscope: error: ")]
    if p.returncode != 0 and len(errors) != 1:
        problems.append(f"exit {p.returncode} with {len(errors)} error lines")
    report = None
    if p.returncode == 0:
        try:
            with open(json_out, encoding="utf-8") as f:
                report = strict_json(f.read())
            check_numbers(report, [], problems)
        except (OSError, ValueError) as exc:
            problems.append(f"JSON report: {exc}")
        term = subprocess.run([stepscope, "analyze", *paths, *flags], capture_output=True, timeout=TIME_LIMIT_S * 4)
        if CONTROL.search(term.stdout.decode("utf-8", "replace").replace("\n", "")):
            problems.append("control character in the terminal report")
        # The same input as both runs of `diff`: it must end as cleanly.
        d = subprocess.run([stepscope, "diff", paths[0], paths[0]], capture_output=True, timeout=TIME_LIMIT_S * 4)
        if d.returncode not in (0, 2):
            problems.append(f"diff: exit code {d.returncode}")
        for line in d.stderr.decode("utf-8", "replace").splitlines():
            if not re.match(r"stepscope: ((error|warning|note): |wrote )", line) or CONTROL.search(line):
                problems.append(f"diff: stderr line not of the one-line form: {line[:120]!r}")
    elif os.path.exists(json_out):
        problems.append("a JSON report was left behind by a failed run")
    # Messages name the case's folder: compare them without it.
    err_lines = [l.replace(workdir, "<dir>") for l in err_lines]
    return p.returncode, err_lines, report, problems, seconds


def events_read(report):
    return [r.get("import", {}).get("events") for r in (report or {}).get("ranks", [])]


def run_case(stepscope, case, baseline):
    with tempfile.TemporaryDirectory(prefix="stepscope-adv-") as d:
        rc, err, report, problems, seconds = run_cli(stepscope, d, case)
    if rc is None:
        return problems, seconds
    if case.must_show and rc == 0 and set(err) <= set(baseline[1]):
        problems.append("a bad value passed without an error or a new warning")
    if case.must_fail and rc == 0:
        problems.append("nothing could be analysed, yet the exit code is 0")
    if case.must_read and (rc != 0 or events_read(report) != events_read(baseline[2])):
        problems.append(f"a valid input was not read as the plain trace (rc {rc}, events {events_read(report)} "
                        f"against {events_read(baseline[2])})")
    if case.check and report is not None:
        problems += case.check(report, err)
    return problems, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--seed", type=int, action="append", required=True)
    ap.add_argument("--cases", type=int, default=40, help="cases per seed")
    ap.add_argument("--only", help="comma-separated mutation names")
    args = ap.parse_args()
    names = sorted(MUTATIONS) if not args.only else args.only.split(",")
    bases = example_paths()
    cache, baselines = {}, {}
    failures = passed = 0
    for seed in args.seed:
        rng = random.Random(seed)
        for i in range(args.cases):
            name = names[i % len(names)] if i < len(names) else rng.choice(names)
            base = rng.choice(bases)
            if base not in cache:
                cache[base] = json.dumps(load_trace(base))
            if base not in baselines:
                with tempfile.TemporaryDirectory(prefix="stepscope-adv-") as d:
                    plain = Case([("rank0.json", cache[base].encode())])
                    baselines[base] = run_cli(args.stepscope, d, plain)[:3]
            doc = json.loads(cache[base])
            case = MUTATIONS[name](rng, doc)
            problems, seconds = run_case(args.stepscope, case, baselines[base])
            label = f"seed {seed} case {i} {name} on {os.path.basename(os.path.dirname(base))} {' '.join(case.flags)}"
            if problems:
                failures += 1
                print(f"FAIL {label}: " + "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))
            else:
                passed += 1
                print(f"ok   {label} ({seconds:.2f} s)")
            sys.stdout.flush()
    print(f"adversarial: {passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
