#!/usr/bin/env python3
"""Paired runs with and without torch.profiler, for issue #26 (items 2 and 6).

Two jobs, both on one CUDA GPU:

  micro      what the profiler costs the host per recorded event: loops of one
             kind of event (a CPU op, an op that launches a kernel, an
             allocation, a Python call), each run without the profiler and
             under every profiler setting, in interleaved rounds. The traces
             of the first round are kept so the events per iteration are
             counted, not assumed.
  SCENARIO   a train_gpt.py scenario. In each round (the order rotated per
             round) it runs its fix (when it has one, see FIXES) without the
             profiler and the scenario under each profiler setting, with a
             block of the scenario without the profiler before and after each
             of them. Unprofiled step times are the time
             between consecutive step starts (each step ends with the loss
             read, loss.item(), so the host waits for the GPU every step).

    python3 workloads/profiler_overhead.py OUT micro host_bound_tiny item_sync ...
        [--rounds 3] [--steps 20] [--active 4] [--budget-s 500]

Writes OUT/results.jsonl (one line per job) and, for the first round, the
traces OUT/<job>/<setting>.json.gz. Nothing measured is written into a trace:
the estimate must not see the answer. Method: docs/whatif.md.
"""

import argparse
import gzip
import json
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_gpt  # noqa: E402

# Profiler settings: the four options one at a time, and the set the
# examples were recorded with.
SETTINGS = {
    "base": {},
    "shapes": {"record_shapes": True},
    "memory": {"profile_memory": True},
    "stack": {"with_stack": True},
    "flops": {"with_flops": True},
    "examples": {"record_shapes": True, "profile_memory": True, "with_flops": True},
}

# A scenario's fix: the config change that removes its injected cause, and
# the finding category whose saving it measures.
FIXES = {
    "host_bound_tiny": ({"cuda_graph": "full"}, "host_overhead"),
    "item_sync": ({"item_sync": False}, "host_sync"),
    "empty_cache": ({"empty_cache": False}, "memory_allocator"),
    "dataloader_stall": ({"dataloader": False}, "data_pipeline"),
    "fp32_no_tf32": ({"dtype": "bf16", "tf32": True}, "compute_efficiency"),
    "foreach_off_adamw": ({"optimizer": "fused"}, "unfused_optimizer"),
    "unfused_qkv_rope": ({"fused_qkv": True, "cache_rope": True}, "recomputed_constants"),
}
# Second fixes of a scenario, run as the job "<scenario>__<name>": the same
# scenario measured against another finding's fix (only the examples'
# profiler setting is traced: the scenario's own job has the others).
# "compile" is torch.compile(mode="reduce-overhead") of the model, CUDA
# graphs included; the optimizer stays as the scenario has it. It is the
# remedy host_overhead names.
ALT_FIXES = {
    "compile": ({"cuda_graph": "compile"}, "host_overhead"),
}
# Held-out variants (workloads/heldout_variants.sh) as jobs: a scenario with
# other sizes; its fixes are the scenario's.
VARIANTS = {
    "forloop_wide": ("foreach_off_adamw", {"d_model": 2048, "n_heads": 16, "n_layers": 4, "batch_size": 4}),
    "item_sync_wide": ("item_sync", {"d_model": 2048, "n_heads": 16, "n_layers": 4, "batch_size": 4}),
    "empty_cache_deep": ("empty_cache", {"n_layers": 12, "batch_size": 8}),
    "tiny_deeper": ("host_bound_tiny", {"d_model": 128, "n_heads": 4, "n_layers": 8, "batch_size": 4}),
    "eager_small_host_bound": ("eager_bf16_baseline",
                               {"d_model": 512, "n_heads": 8, "n_layers": 8, "batch_size": 2, "seq_len": 256}),
}


def sync():
    torch.cuda.synchronize()


def set_precision(cfg):
    # Process-wide flags: set before every block, since a scenario and its
    # fix can differ in them.
    torch.backends.cuda.matmul.allow_tf32 = bool(cfg.tf32)
    torch.backends.cudnn.allow_tf32 = bool(cfg.tf32)


def profiled(kwargs, active, trace_path):
    def on_ready(prof):
        if trace_path:
            prof.export_chrome_trace(trace_path)
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   schedule=schedule(wait=1, warmup=1, active=active, repeat=1),
                   on_trace_ready=on_ready, **kwargs)


# ---------------------------------------------------------------------------
# micro: cost per event
# ---------------------------------------------------------------------------

def micro_loops():
    dev = torch.device("cuda")
    x_gpu = torch.zeros(64, device=dev)
    x_cpu = torch.zeros(64)

    def gpu_op():  # one aten op, one cudaLaunchKernel, one kernel
        x_gpu.add_(1.0)

    def cpu_op():  # one aten op, no launch
        x_cpu.add_(1.0)

    def alloc():  # one aten::empty, one allocation and one free of the caching allocator
        torch.empty(256, device=dev)

    def leaf():
        x_cpu.add_(1.0)

    def mid():
        leaf()

    def py_calls():  # Python calls around one op (what with_stack's tracer records)
        mid()

    return {"gpu_op": gpu_op, "cpu_op": cpu_op, "alloc": alloc, "py_calls": py_calls}


def time_loop(fn, iters):
    sync()
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t) / iters


def run_micro(out, rounds, iters, log):
    loops = micro_loops()
    configs = ["none"] + list(SETTINGS)
    res = {name: {c: [] for c in configs} for name in loops}
    os.makedirs(os.path.join(out, "micro"), exist_ok=True)
    for name, fn in loops.items():
        time_loop(fn, iters)  # warm-up: allocator, CUDA context
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for name, fn in loops.items():
            for c in order:
                if c == "none":
                    res[name][c].append(time_loop(fn, iters) * 1e6)
                    continue
                path = os.path.join(out, "micro", f"{name}.{c}.json.gz") if r == 0 else None
                # One step, the loop: wait and warm-up steps run the loop too.
                with profiled(SETTINGS[c], 1, path) as prof:
                    for i in range(3):
                        t = time_loop(fn, iters)
                        if i == 2:
                            res[name][c].append(t * 1e6)
                        prof.step()
        log(f"micro round {r}: " + ", ".join(
            f"{n}/{c}={res[n][c][-1]:.2f}us" for n in loops for c in ("none", "base", "examples")))
    return {"job": "micro", "iters": iters, "us_per_iter": res}


# ---------------------------------------------------------------------------
# a training scenario and its fix
# ---------------------------------------------------------------------------

def config(scenario, overrides, device):
    args = train_gpt.parse_args(["--scenario", scenario, "--device", device])
    cfg = train_gpt.build_config(args)
    for k, v in overrides.items():
        setattr(cfg, k, v)
    return args, cfg


def unprofiled_steps(run, cfg, n, warm=2):
    """Times of n steps, start to start (each step ends with loss.item()), and
    the host's enqueue time of each: from the step's start until train_step()
    returns, before the loss read waits for the GPU."""
    set_precision(cfg)
    for _ in range(warm):
        run.train_step().item()
    times, enqueue = [], []
    t = time.perf_counter()
    for _ in range(n):
        loss = run.train_step()
        enqueue.append((time.perf_counter() - t) * 1e3)
        loss.item()
        now = time.perf_counter()
        times.append((now - t) * 1e3)
        t = now
    return times, enqueue


def profiled_steps(run, cfg, setting, active, trace_path, meta):
    """Host times of the active profiled steps (train step + loss read +
    prof.step), and their enqueue times as above."""
    set_precision(cfg)
    times, enqueue = [], []
    with profiled(SETTINGS[setting], active, trace_path) as prof:
        for i in range(2 + active):
            if i == 2 and trace_path:
                prof.add_metadata_json("stepscope_workload", json.dumps(meta))
            t = time.perf_counter()
            loss = run.train_step()
            q = time.perf_counter()
            loss.item()
            if i >= 2:
                times.append((time.perf_counter() - t) * 1e3)
                enqueue.append((q - t) * 1e3)
            prof.step()
    sync()
    return times, enqueue


def trace_steps_ms(path):
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    return [e["dur"] / 1e3 for e in events if e.get("ph") == "X"
            and e.get("cat") != "gpu_user_annotation"
            and str(e.get("name", "")).startswith("ProfilerStep#")]


def run_scenario(out, job, rounds, steps, active, log):
    name, _, alt = job.partition("__")
    scenario, sizes = VARIANTS.get(name, (name, {}))
    fix, category = ALT_FIXES[alt] if alt else FIXES.get(scenario, (None, None))
    settings = ["examples"] if alt else list(SETTINGS)
    args, cfg = config(scenario, sizes, "cuda")
    n_blocks = len(settings) + (1 if fix is not None else 0)  # blocks beside the unprofiled ones, per round
    n_batches = rounds * ((n_blocks + 1) * (steps + 2) + len(settings) * (2 + active)) + 8
    run = train_gpt.build_training(args, cfg, n_batches)
    for _ in range(3):  # untimed warm-up: compilation, capture, allocator
        run.train_step().item()
    fixed = None
    if fix is not None:
        fargs, fcfg = config(scenario, {**sizes, **fix}, "cuda")
        try:
            fixed = train_gpt.build_training(fargs, fcfg, rounds * (steps + 2) + 8)
            for _ in range(3):
                fixed.train_step().item()
        except Exception as e:  # a fix that cannot run here is reported, not faked
            log(f"{scenario}: fix {fix} failed: {e!r}")
            fixed = None
    os.makedirs(os.path.join(out, job), exist_ok=True)
    meta = {"scenario": scenario, "config": vars(cfg), "torch": torch.__version__,
            "device": torch.cuda.get_device_name(0)}
    # Every block of the scenario under the profiler or of its fix sits
    # between two blocks of the scenario without it: the host's speed drifts
    # (a host-bound step moved by 40% between rounds of one run), so a trace
    # is compared with the unprofiled steps run just before and after it
    # (`adjacent_ms`), not only with the run's median.
    blocks = ["none"] + (["fix"] if fixed else []) + settings
    res = {b: [] for b in blocks}
    enq = {b: [] for b in blocks}
    adjacent = {b: [] for b in settings}  # per round: median of the unprofiled steps around the block
    trace_ms = {}

    def unprofiled_block():
        t, q = unprofiled_steps(run, cfg, steps)
        res["none"].extend(t)
        enq["none"].extend(q)
        return t

    for r in range(rounds):
        others = blocks[1:]
        order = others[r % len(others):] + others[:r % len(others)]
        before = unprofiled_block()
        for b in order:
            if b == "fix":
                t, q = unprofiled_steps(fixed, fcfg, steps)
            else:
                path = os.path.join(out, job, f"{b}.json.gz") if r == 0 else None
                t, q = profiled_steps(run, cfg, b, active, path, dict(meta, profiler=SETTINGS[b]))
                if path:
                    trace_ms[b] = trace_steps_ms(path)
            res[b] += t
            enq[b] += q
            after = unprofiled_block()
            if b != "fix":
                adjacent[b].append(statistics.median(before + after))
            before = after
        log(f"{job} round {r}: " + ", ".join(
            f"{b}={statistics.median(res[b]):.1f}" for b in blocks))
    med = {b: statistics.median(v) for b, v in res.items()}
    return {"job": job, "scenario": scenario, "fix": fix, "category": category, "rounds": rounds,
            "step_ms": res, "median_ms": med, "trace_step_ms": trace_ms, "enqueue_ms": enq,
            "median_enqueue_ms": {b: statistics.median(v) for b, v in enq.items()},
            "adjacent_ms": adjacent,
            "config": vars(cfg)}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("jobs", nargs="+")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10,
                   help="steps per unprofiled block (one before and after every other block) and per fix block")
    p.add_argument("--active", type=int, default=4, help="profiled steps per round")
    p.add_argument("--micro-iters", type=int, default=2000)
    p.add_argument("--budget-s", type=float, default=1e9,
                   help="skip jobs once this much wall time is spent")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    logf = open(os.path.join(a.out, "log.txt"), "a")

    def log(msg):
        line = f"[{time.time() - t0:6.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    log(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, jobs {a.jobs}")
    rc = 0
    for job in a.jobs:
        if time.time() - t0 > a.budget_s:
            log(f"{job}: skipped, budget spent")
            continue
        try:
            if job == "micro":
                rec = run_micro(a.out, a.rounds, a.micro_iters, log)
            else:
                rec = run_scenario(a.out, job, a.rounds, a.steps, a.active, log)
        except Exception as e:
            log(f"{job}: failed: {e!r}")
            rc = 1
            continue
        with open(os.path.join(a.out, "results.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        torch.cuda.empty_cache()
    log("done")
    return rc


if __name__ == "__main__":
    sys.exit(main())
