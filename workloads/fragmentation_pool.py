#!/usr/bin/env python3
"""The memory-pool experiment of issue #30 item 4: a training loop whose
sequence lengths vary, and how each allocator setting copes with it under a
fixed memory budget.

The workloads' GPT (workloads/train_gpt.py; RoPE tables computed per length,
SDPA attention) trains on batches of a fixed token budget. Each batch takes a
length from buckets of 1k-32k tokens (seeded, the same sequence for every
setting). That mix of tensor sizes is what fragments the caching allocator.
Each setting runs in its own process, so that PYTORCH_CUDA_ALLOC_CONF
applies:

  default      the caching allocator as it comes
  expandable   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  pool         each attention block's forward in a stepscope DedicatedPool
               (python/stepscope/memory_pool.py), reserved up front with
               --pool-reserve-gib
  guard        a stepscope FragmentationGuard stepped after every step

For each setting, with torch.cuda.set_per_process_memory_fraction(--budget):

- the OOM rate over --steps steps at --tokens tokens per batch (an OOM skips
  the step: gradients dropped, the loop goes on);
- peak reserved and peak allocated memory, and the median step time of the
  steps that ran;
- with --search, the largest token budget (bisection over --search-steps
  steps per try) with no OOM.

With --snapshot-dir, each setting also writes a memory snapshot at its end
(torch.cuda.memory._dump_snapshot; history recorded from the start): the
H200 snapshots `stepscope memory` is to be tested on. With --trace-dir, its
first --trace-steps steps also run under torch.profiler with
profile_memory=True, one ProfilerStep#N range each, and the trace is
written: a trace and a snapshot of the same run, for
`stepscope memory SNAPSHOT TRACE`.

    python3 workloads/fragmentation_pool.py --json OUT.json [--settings default,expandable,pool,guard]
        [--steps 200] [--tokens 65536] [--budget 0.5] [--search] [--snapshot-dir DIR] [--trace-dir DIR]
    python3 workloads/fragmentation_pool.py --smoke     # CPU, tiny: checks the loop runs

Nothing is measured here yet: the script waits for a GPU (docs/memory.md).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = ("default", "expandable", "pool", "guard")
BUCKETS = (1024, 2048, 4096, 8192, 16384, 32768)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--settings", default=",".join(SETTINGS))
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--tokens", type=int, default=65536, help="tokens per batch (batch = tokens // length)")
    p.add_argument("--budget", type=float, default=0.5, help="set_per_process_memory_fraction")
    p.add_argument("--d-model", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pool-reserve-gib", type=float, default=8.0)
    p.add_argument("--search", action="store_true", help="find the largest token budget without OOM")
    p.add_argument("--search-steps", type=int, default=40)
    p.add_argument("--snapshot-dir")
    p.add_argument("--trace-dir")
    p.add_argument("--trace-steps", type=int, default=5)
    p.add_argument("--json")
    p.add_argument("--smoke", action="store_true", help="CPU, tiny sizes, default setting only")
    p.add_argument("--child", help=argparse.SUPPRESS)  # internal: run one setting in this process
    args = p.parse_args(argv)
    if args.smoke:
        args.settings, args.steps, args.tokens = "default", 6, 512
        args.d_model, args.heads, args.layers = 64, 2, 2
    return args


def lengths(seed, n, tokens):
    """The seeded sequence of lengths, the same for every setting; none above the token budget."""
    rng = random.Random(seed)
    usable = [b for b in BUCKETS if b <= tokens] or [tokens]
    return [rng.choice(usable) for _ in range(n)]


def run_steps(train_step, lens, tokens):
    """Runs one step per length; returns (step times of the steps that ran in ms, OOM count)."""
    import torch

    times, ooms = [], 0
    for seq in lens:
        batch = max(1, tokens // seq)
        try:
            t0 = time.perf_counter()
            train_step(batch, seq)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        except torch.OutOfMemoryError:
            # The step is lost; its gradients go, the allocator keeps what the OOM left.
            ooms += 1
            train_step.model.zero_grad(set_to_none=True)
    return times, ooms


def build(args, device):
    import torch

    sys.path.insert(0, HERE)
    import train_gpt  # noqa: E402

    cfg = argparse.Namespace(d_model=args.d_model, n_heads=args.heads, n_layers=args.layers, seq_len=max(BUCKETS),
                             vocab=256, fused_qkv=True, cache_rope=False, item_sync=False)
    torch.manual_seed(args.seed)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    model = train_gpt.GPT(cfg).to(device=device, dtype=dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    gen = torch.Generator(device="cpu").manual_seed(args.seed)

    def train_step(batch, seq):
        x = torch.randint(0, 256, (batch, seq + 1), generator=gen).to(device)
        loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    train_step.model = model
    return model, train_step


def child(args):
    """One setting in this process: the results as a dict."""
    import torch

    setting = args.child
    cuda = torch.cuda.is_available() and not args.smoke
    device = torch.device("cuda" if cuda else "cpu")
    out = {"setting": setting, "device": torch.cuda.get_device_name(0) if cuda else "cpu",
           "torch": torch.__version__, "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
    if cuda:
        torch.cuda.set_per_process_memory_fraction(args.budget)
        if args.snapshot_dir:
            torch.cuda.memory._record_memory_history(max_entries=200000)
    model, train_step = build(args, device)
    guard = None
    if setting == "pool" and cuda:
        from stepscope.memory_pool import DedicatedPool

        pool = DedicatedPool(reserve_bytes=int(args.pool_reserve_gib * (1 << 30)))
        for blk in model.blocks:
            pool.route(blk.attn)
        out["pool_reserved_bytes"] = pool.reserved_bytes()
    if setting == "guard" and cuda:
        from stepscope.memory_pool import FragmentationGuard

        guard = FragmentationGuard()
        inner = train_step

        def train_step(batch, seq):  # noqa: F811 - the same step, guarded
            inner(batch, seq)
            guard.step()

        train_step.model = model
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    lens = lengths(args.seed, args.steps, args.tokens)
    times, ooms = [], 0
    if args.trace_dir:
        # The first steps under the profiler, each in its ProfilerStep#N range.
        os.makedirs(args.trace_dir, exist_ok=True)
        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
        with torch.profiler.profile(activities=acts, profile_memory=True) as prof:
            for i, seq in enumerate(lens[:args.trace_steps]):
                with torch.profiler.record_function(f"ProfilerStep#{i}"):
                    t, o = run_steps(train_step, [seq], args.tokens)
                times += t
                ooms += o
        prof.export_chrome_trace(os.path.join(args.trace_dir, f"{setting}.json"))
        lens = lens[args.trace_steps:]
    t, o = run_steps(train_step, lens, args.tokens)
    times, ooms = times + t, ooms + o
    out.update(steps=args.steps, tokens=args.tokens, ooms=ooms, oom_rate=ooms / args.steps,
               median_step_ms=statistics.median(times) if times else None)
    if cuda:
        out.update(peak_reserved_bytes=torch.cuda.max_memory_reserved(),
                   peak_allocated_bytes=torch.cuda.max_memory_allocated(),
                   budget_bytes=int(args.budget * torch.cuda.get_device_properties(0).total_memory))
        if guard is not None:
            out.update(guard_releases=guard.releases, guard_released_bytes=guard.released_bytes)
        if args.snapshot_dir:
            os.makedirs(args.snapshot_dir, exist_ok=True)
            torch.cuda.memory._dump_snapshot(os.path.join(args.snapshot_dir, f"{setting}.pickle"))
    if args.search and cuda:
        lo, hi = 0, args.tokens * 4
        while hi - lo > args.tokens // 16:
            mid = (lo + hi) // 2
            torch.cuda.empty_cache()
            _, o = run_steps(train_step, lengths(args.seed + 1, args.search_steps, mid), mid)
            lo, hi = (mid, hi) if o == 0 else (lo, mid)
        out["largest_tokens_without_oom"] = lo
    return out


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    results = []
    for setting in args.settings.split(","):
        if setting not in SETTINGS:
            raise SystemExit(f"--settings: unknown setting {setting!r} (one of {', '.join(SETTINGS)})")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", "python"), env.get("PYTHONPATH", "")])
        if setting == "expandable":
            env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        cmd = [sys.executable, os.path.abspath(__file__), "--child", setting] + (argv if argv is not None else sys.argv[1:])
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            results.append({"setting": setting, "error": r.stderr.strip().splitlines()[-1:] or ["failed"]})
        else:
            results.append(json.loads(r.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
