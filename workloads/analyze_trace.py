#!/usr/bin/env python3
"""Quick, independent sanity numbers for a torch.profiler chrome trace.

For each ProfilerStep#N (CPU annotation) it reports the step's wall time and
the GPU busy time of the work *launched* inside that step (kernels; and also
kernels + memcpy + memset), merged as a union of intervals so that overlapping
streams are not double counted.  GPU work is tied to its step through the
launching runtime/driver call's correlation id.  It also reports the share over
the whole active window (first step start to the later of the last step end and
the last GPU activity end), which is robust when the host runs ahead of the GPU.

Plus a few counters that point at the usual bottlenecks: kernels per step and
share under 5 us, synchronising calls, cudaMalloc/cudaFree, graph launches,
DataLoader time and optimizer time per step, and the top kernels by time; and
where the GPU's idle time inside each step overlaps host activity: the
optimizer step, the DataLoader, cudaMalloc/cudaFree, or gaps that open while
the host is blocked in a synchronising call and close after it returns.

Usage: python3 workloads/analyze_trace.py TRACE.json.gz [...]  [--json OUT]
This is a plain cross-check for labels.json, not part of stepscope.
"""

import argparse
import collections
import gzip
import json
import os
import re
import sys

SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
              "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize")
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def union_len(iv):
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap(xs, ys):
    """Total overlap of two merged interval lists."""
    i = j = 0
    tot = 0.0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if b > a:
            tot += b - a
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return tot


def idle_intervals(a, b, busy):
    """Gaps in [a, b] not covered by the merged busy intervals."""
    out, cur = [], a
    for x, y in busy:
        if y <= a or x >= b:
            continue
        if x > cur:
            out.append([cur, x])
        cur = max(cur, y)
    if cur < b:
        out.append([cur, b])
    return out


def analyze(path):
    d = load(path)
    ev = [e for e in d.get("traceEvents", []) if e.get("ph") == "X"]
    steps = []
    for e in ev:
        m = STEP_RE.match(e.get("name", ""))
        if m and "gpu" not in str(e.get("cat", "")):
            steps.append((e["ts"], e["ts"] + e["dur"], int(m.group(1))))
    # keep one CPU span per step number
    seen, uniq = set(), []
    for s in sorted(steps):
        if s[2] not in seen:
            seen.add(s[2])
            uniq.append(s)
    steps = uniq

    def step_of(ts):
        for s, e, n in steps:
            if s <= ts <= e:
                return n
        return None

    launch_ts = {}
    runtime = collections.defaultdict(collections.Counter)  # step -> name -> count
    runtime_time = collections.defaultdict(collections.Counter)
    for e in ev:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_ts[corr] = e["ts"]
            n = step_of(e["ts"])
            if n is not None:
                runtime[n][e["name"]] += 1
                runtime_time[n][e["name"]] += e["dur"]

    gpu = collections.defaultdict(list)        # step -> [(s, e, cat, name)]
    all_gpu = []
    for e in ev:
        cat = e.get("cat")
        if cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        corr = (e.get("args") or {}).get("correlation")
        t = launch_ts.get(corr, e["ts"])
        n = step_of(t)
        item = (e["ts"], e["ts"] + e["dur"], cat, e["name"])
        all_gpu.append(item)
        if n is not None:
            gpu[n].append(item)

    annot = collections.defaultdict(collections.Counter)
    for e in ev:
        name = e.get("name", "")
        if "gpu" in str(e.get("cat", "")):
            continue
        if name.startswith("enumerate(DataLoader)") or name.startswith("Optimizer.step"):
            n = step_of(e["ts"])
            if n is not None:
                key = "dataloader" if name.startswith("enumerate") else "optimizer"
                annot[n][key] += e["dur"]

    # GPU idle attribution: which host activity overlaps the GPU's idle time.
    gpu_busy_all = merge([(it[0], it[1]) for it in all_gpu])

    def spans(pred):
        return merge([(x["ts"], x["ts"] + x["dur"]) for x in ev if pred(x)])

    not_gpu = lambda x: "gpu" not in str(x.get("cat", ""))  # noqa: E731
    attr_spans = {
        "optimizer": spans(lambda x: not_gpu(x) and x["name"].startswith("Optimizer.step")),
        "dataloader": spans(lambda x: not_gpu(x) and
                            x["name"].startswith("enumerate(DataLoader)")),
        "malloc_free": spans(lambda x: x["name"] in ("cudaMalloc", "cudaFree")),
    }
    syncs = sorted((x["ts"], x["ts"] + x["dur"]) for x in ev
                   if x.get("cat") in ("cuda_runtime", "cuda_driver")
                   and x["name"] in SYNC_CALLS)

    per_step = []
    for s, e, n in steps:
        idle = idle_intervals(s, e, gpu_busy_all)
        idle_attr = {k: overlap(idle, v) / 1e3 for k, v in attr_spans.items()}
        # idle gaps that open while the host is blocked in a sync call and end
        # after it returns: the GPU drained its queue and waits for new work
        post_sync = 0.0
        for x, y in idle:
            if any(ss < x + 5 and x - 20 <= se <= y for ss, se in syncs):
                post_sync += y - x
        idle_attr["after_sync"] = post_sync / 1e3
        items = gpu.get(n, [])
        kern = [(a, b) for a, b, c, _ in items if c == "kernel"]
        busy_k = union_len(kern)
        busy_all = union_len([(a, b) for a, b, _, _ in items])
        durs = [b - a for a, b in kern]
        rt = runtime.get(n, collections.Counter())
        per_step.append(dict(
            step=n, step_ms=(e - s) / 1e3, kernel_busy_ms=busy_k / 1e3,
            gpu_busy_ms=busy_all / 1e3,
            kernel_busy_share=busy_k / (e - s) if e > s else 0.0,
            n_kernels=len(kern),
            share_kernels_lt5us=(sum(1 for x in durs if x < 5) / len(durs)) if durs else 0.0,
            n_sync=sum(v for k, v in rt.items() if k in SYNC_CALLS),
            n_memcpy_dtoh=sum(1 for a, b, c, nm in items if c == "gpu_memcpy" and "DtoH" in nm),
            n_memcpy_htod=sum(1 for a, b, c, nm in items if c == "gpu_memcpy" and "HtoD" in nm),
            n_cudaMalloc=rt.get("cudaMalloc", 0), n_cudaFree=rt.get("cudaFree", 0),
            n_graph_launch=rt.get("cudaGraphLaunch", 0),
            dataloader_ms=annot[n]["dataloader"] / 1e3,
            optimizer_ms=annot[n]["optimizer"] / 1e3,
            idle_ms=sum(y - x for x, y in idle) / 1e3,
            idle_in_ms=idle_attr,
        ))

    window = None
    if steps:
        w0 = steps[0][0]
        step_ids = {n for _, _, n in steps}
        own = [it for n in step_ids for it in gpu.get(n, [])]
        w1 = max([steps[-1][1]] + [b for _, b, _, _ in own])
        kern = [(a, b) for a, b, c, _ in own if c == "kernel"]
        window = dict(window_ms=(w1 - w0) / 1e3,
                      kernel_busy_ms=union_len(kern) / 1e3,
                      kernel_busy_share=union_len(kern) / (w1 - w0) if w1 > w0 else 0.0,
                      gpu_busy_share=union_len([(a, b) for a, b, _, _ in own]) / (w1 - w0)
                      if w1 > w0 else 0.0)

    by_name = collections.Counter()
    for a, b, c, nm in all_gpu:
        if c == "kernel":
            by_name[nm] += b - a
    tot = sum(by_name.values()) or 1.0
    top = [(nm[:90], round(t / tot, 3)) for nm, t in by_name.most_common(5)]
    return dict(trace=path, n_steps=len(steps), steps=per_step, window=window,
                top_kernels=top)


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    results = []
    hdr = (f"{'trace':<28} {'step_ms':>8} {'kbusy%':>7} {'win%':>6} {'kern/st':>8} "
           f"{'<5us%':>6} {'sync':>5} {'malloc':>6} {'graphL':>6} {'dl_ms':>7} {'opt_ms':>7} "
           f"{'idle_ms':>7} | idle in: {'opt':>5} {'dl':>6} {'malloc':>6} {'aftsync':>7}")
    print(hdr)
    for p in a.traces:
        try:
            r = analyze(p)
        except Exception as e:  # keep going over the other traces
            print(f"{p}: failed: {e}")
            continue
        results.append(r)
        st = r["steps"]
        w = r["window"] or {}
        name = os.path.basename(os.path.dirname(os.path.abspath(p))) or p
        ia = lambda k: mean([s["idle_in_ms"][k] for s in st])  # noqa: E731
        print(f"{name[-28:]:<28} {mean([s['step_ms'] for s in st]):8.1f} "
              f"{100*mean([s['kernel_busy_share'] for s in st]):7.1f} "
              f"{100*w.get('kernel_busy_share', 0):6.1f} "
              f"{mean([s['n_kernels'] for s in st]):8.0f} "
              f"{100*mean([s['share_kernels_lt5us'] for s in st]):6.1f} "
              f"{mean([s['n_sync'] for s in st]):5.1f} "
              f"{mean([s['n_cudaMalloc'] for s in st]):6.1f} "
              f"{mean([s['n_graph_launch'] for s in st]):6.1f} "
              f"{mean([s['dataloader_ms'] for s in st]):7.1f} "
              f"{mean([s['optimizer_ms'] for s in st]):7.1f} "
              f"{mean([s['idle_ms'] for s in st]):7.2f} |          "
              f"{ia('optimizer'):5.2f} {ia('dataloader'):6.2f} {ia('malloc_free'):6.2f} "
              f"{ia('after_sync'):7.2f}")
        if a.verbose:
            for s in st:
                print("   ", {k: (round(v, 3) if isinstance(v, float) else v)
                              for k, v in s.items()})
            print("    top kernels:", r["top_kernels"])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
