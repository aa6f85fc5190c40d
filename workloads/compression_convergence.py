#!/usr/bin/env python3
"""Activation compression on the workloads' GPT: loss, step time, memory.

Trains the GPT of workloads/train_gpt.py (pre-norm blocks, fused QKV, cached
RoPE, causal F.scaled_dot_product_attention, bf16 parameters, fused AdamW
lr 3e-4) on byte tokens (vocab 256) of a real text corpus, per seed once
uncompressed and once per compression setting, from the same initial weights
on the same batches. The only change to train_gpt's model: its MLP calls F.gelu, so each
block's MLP is rebuilt around nn.GELU (same fc/fc2 modules, same maths) for
compress_activations to find it. Reported per run:

* final_loss: mean training loss of the last 20 steps; loss_rel_diff against
  the baseline of the same seed (target |diff| <= 1%).
* val_loss: mean loss on 64 fixed held-out batches of 16 x 1024 bytes (the
  corpus' last 10%), the same for every seed.
* step_ms: median step time of steps 50..end (CUDA events, no host sync in
  the loop); step_overhead against the baseline (target <= 10%).
* wrapped_saved_bytes: bytes of the tensors autograd saves inside the
  nn.Linear/nn.GELU/nn.LayerNorm modules (or their compressed twins) in one
  forward, counted per storage, parameters excluded
  (torch.autograd.graph.saved_tensors_hooks); wrapped_memory_ratio = baseline
  / compressed (target >= 3x at 4 bits). other_saved_bytes: everything else
  saved (attention, RoPE, loss). held_after_forward_bytes: growth of
  torch.cuda.memory_allocated over the forward (all activations kept for
  backward); forward_peak_bytes: torch.cuda.max_memory_allocated growth.

Corpus: workloads/data/debian_text.txt.gz (--build-corpus regenerates it
from the machine it runs on): text that Debian packages ship in
/usr/share/doc, one document per package, the packages in a fixed shuffled
order: the package's copyright file cut into paragraphs, each paragraph kept
only the first time it appears anywhere (licence texts repeat in hundreds of
packages), followed by the first 6 KB of its Debian changelog. 7.35 MB of
text from 515 packages (1.6 MB compressed): a 300-step run at batch 16 x 1024
bytes reads 4.9 MB, 0.74 of the training part, so the runs measure learning,
not memorising (the 229 KB licence corpus
of the first experiment, workloads/data/corpus.txt.gz, was seen 21 times and
two uncompressed runs ended 9.5% apart). Validation: the last 10% of the
text, i.e. other packages' documents.

Seeds: every configuration runs once per seed (--seeds, default 0..4); a seed
sets the initial weights and the batch order, and all configurations of one
seed share both, so compressed - baseline is a paired difference. Reported:
per configuration the mean and standard deviation over seeds of the final
training and validation losses and the step time, and per comparison the
paired relative differences against the baseline: mean, standard deviation,
standard error of the mean and a 95% confidence interval (Student t), and a
verdict on the 1% target: "shown" when the whole interval lies within
+-1%, "exceeded" when it lies beyond, "undecided" otherwise.
--time-budget-s stops starting new seeds when the next seed's runs would
not fit (every configuration of a started seed completes, so the pairs stay
complete); the seeds actually run are reported.

Determinism (--deterministic, the default): torch.use_deterministic_algorithms
with CUBLAS_WORKSPACE_CONFIG=:4096:8, which also makes PyTorch's flash
attention backward use its deterministic algorithm (without it, its dq
accumulation uses atomics and two runs of one seed drift apart by up to 3%
after 300 steps). The rerun control (--rerun, on the first --rerun-seeds
seeds) repeats configurations with the same seed and reports whether the
loss curves are identical. Should an op have no deterministic algorithm,
the script falls back to warn-only mode and says so (the control then
shows the drift). Uninitialised-memory filling is switched off (it only
helps to find reads of uninitialised memory and costs a write per
allocation).

Usage (one H200, about 14 s per run):
    python3 workloads/compression_convergence.py --json /tmp/compression.json
    python3 workloads/compression_convergence.py --runs baseline,int4 --seeds 0 --steps 100
    python3 workloads/compression_convergence.py --runs baseline,int4 --seeds 0-19 \
        --rerun baseline,int4 --rerun-seeds 1 --time-budget-s 300
"""

import argparse
import gzip
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "data", "debian_text.txt.gz")
CHANGELOG_HEAD = 6 * 1024  # bytes of each package's changelog (its newest entries)

# name -> compress_activations arguments (None: uncompressed). The rerun
# control (--rerun) repeats some of them with the same seed.
RUNS = {
    "baseline": dict(compress=None),
    "int8": dict(compress=dict(bits=8, block=64, stochastic=False)),
    "int4": dict(compress=dict(bits=4, block=64, stochastic=False)),
    "int4_sr": dict(compress=dict(bits=4, block=64, stochastic=True)),
}


def build_corpus(doc_dir="/usr/share/doc", out=CORPUS):
    """One document per package of doc_dir: its copyright paragraphs not seen
    in an earlier package, then the head of its changelog; packages in a
    shuffled order fixed by their names (so the held-out tail is a random
    sample of packages, not the end of the alphabet)."""
    import glob
    import hashlib
    import random

    seen = set()
    docs = []
    for pkg in sorted(os.listdir(doc_dir)):
        parts = []
        path = os.path.join(doc_dir, pkg, "copyright")
        if os.path.isfile(path):
            with open(path, "rb") as f:
                for para in f.read().split(b"\n\n"):
                    para = para.strip()
                    key = hashlib.sha1(b" ".join(para.split())).digest()
                    if len(para) >= 20 and key not in seen:
                        seen.add(key)
                        parts.append(para)
        for name in ("changelog.Debian.gz", "changelog.gz"):
            path = os.path.join(doc_dir, pkg, name)
            if os.path.isfile(path):
                try:
                    with gzip.open(path, "rb") as f:
                        head = f.read(CHANGELOG_HEAD)
                except (OSError, EOFError):
                    continue
                key = hashlib.sha1(head).digest()
                if key not in seen:  # packages of one source share a changelog
                    seen.add(key)
                    parts.append(head[:head.rfind(b"\n") + 1].strip())
                break
        if parts and not os.path.islink(os.path.join(doc_dir, pkg)):
            docs.append((pkg, b"\n\n".join(parts)))
    if not docs:
        raise SystemExit(f"no copyright or changelog files under {doc_dir}")
    random.Random(0).shuffle(docs)
    data = b"\n\n".join(d for _, d in docs) + b"\n"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as raw, gzip.GzipFile(filename="debian_text.txt", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(data)
    print(f"wrote {out}: {len(data)} bytes of text from {len(docs)} packages in {doc_dir} "
          f"({len(glob.glob(os.path.join(doc_dir, '*', 'copyright')))} copyright files)")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", default="baseline,int8,int4",
                   help=f"comma-separated, from {sorted(RUNS)}; the first must be baseline")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--n-heads", type=int, default=16)
    p.add_argument("--n-layers", type=int, default=8)
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seeds", default="0,1,2,3,4",
                   help="comma-separated integers or ranges (0-19); one run per configuration and seed")
    p.add_argument("--deterministic", action=argparse.BooleanOptionalAction, default=True,
                   help="deterministic GPU algorithms (default on)")
    p.add_argument("--rerun", default="",
                   help="configurations to run a second time with the same seed (the control), e.g. baseline,int4")
    p.add_argument("--rerun-seeds", type=int, default=1, help="the control runs on the first N seeds run")
    p.add_argument("--time-budget-s", type=float, default=0.0,
                   help="start no seed whose runs would end after this many seconds (0: no limit)")
    p.add_argument("--corpus", default=CORPUS)
    p.add_argument("--json", help="write the summary here")
    p.add_argument("--build-corpus", action="store_true",
                   help="regenerate workloads/data/debian_text.txt.gz from /usr/share/doc and exit")
    a = p.parse_args(argv)
    a.runs = [r.strip() for r in a.runs.split(",") if r.strip()]
    unknown = [r for r in a.runs if r not in RUNS]
    if unknown:
        p.error(f"--runs: unknown {unknown}; known: {sorted(RUNS)}")
    if not a.runs or a.runs[0] != "baseline":
        p.error("--runs must start with baseline (the others are compared with it)")
    try:
        seeds = []
        for v in (v.strip() for v in a.seeds.split(",")):
            if not v:
                continue
            lo, sep, hi = v.partition("-")
            if sep and lo:
                if int(hi) < int(lo):
                    raise ValueError(v)
                seeds += range(int(lo), int(hi) + 1)
            else:
                seeds.append(int(v))
        a.seeds = seeds
    except ValueError:
        p.error(f"--seeds: comma-separated integers or ranges (3-7) expected, got {a.seeds!r}")
    if not a.seeds:
        p.error("--seeds: at least one seed")
    if len(set(a.seeds)) != len(a.seeds):
        p.error(f"--seeds: a seed appears twice in {a.seeds}")
    a.rerun = [r.strip() for r in a.rerun.split(",") if r.strip()]
    missing = [r for r in a.rerun if r not in a.runs]
    if missing:
        p.error(f"--rerun: {missing} not in --runs {a.runs}")
    if a.rerun_seeds < 0:
        p.error("--rerun-seeds must be >= 0")
    if a.time_budget_s < 0:
        p.error("--time-budget-s must be >= 0")
    if a.steps < 70:
        p.error("--steps must be >= 70 (step times are taken from step 50 on, the loss over the last 20)")
    return a


def main(argv=None):
    args = parse_args(argv)
    if args.build_corpus:
        build_corpus()
        return 0

    if args.deterministic:
        # Read when cuBLAS creates its handle: set before torch touches the GPU.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    import torch.nn as nn

    determinism = dict(requested=args.deterministic, mode="off",
                       cublas_workspace_config=os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    if args.deterministic:
        torch.use_deterministic_algorithms(True)
        determinism["mode"] = "strict"
        try:
            import torch.utils.deterministic
            torch.utils.deterministic.fill_uninitialized_memory = False
            determinism["fill_uninitialized_memory"] = False
        except (ImportError, AttributeError):
            determinism["fill_uninitialized_memory"] = "unavailable"

    sys.path.insert(0, HERE)
    import train_gpt  # the workloads' GPT
    from stepscope_kernels import activation_compression as ac

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU")
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True

    with gzip.open(args.corpus, "rb") as f:
        text = f.read()
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8).to(dev).long()
    split = int(len(data) * 0.9)
    train, val = data[:split], data[split:]
    B, S = args.batch_size, args.seq_len
    if len(val) <= S + 1:
        raise SystemExit(f"corpus too small for seq {S}: {len(data)} bytes")
    # Held-out batches: the same for every seed and configuration.
    gv = torch.Generator(device="cpu").manual_seed(12345)
    val_offsets = torch.randint(0, len(val) - S - 1, (64, B), generator=gv).to(dev)

    def train_offsets(seed):
        g = torch.Generator(device="cpu").manual_seed(seed)
        return torch.randint(0, len(train) - S - 1, (args.steps, B), generator=g).to(dev)
    ar = torch.arange(S + 1, device=dev)

    def batch(src, offs):
        t = src[offs[:, None] + ar]  # (B, S+1)
        return t[:, :-1].contiguous(), t[:, 1:].contiguous()

    class ModuleMLP(nn.Module):
        """train_gpt.MLP with the GELU as a module (same fc/fc2)."""

        def __init__(self, mlp):
            super().__init__()
            self.fc, self.act, self.fc2 = mlp.fc, nn.GELU(approximate="tanh"), mlp.fc2

        def forward(self, x):
            return self.fc2(self.act(self.fc(x)))

    def build_model(init_seed):
        cfg = dict(train_gpt.DEFAULTS)
        cfg.update(d_model=args.d_model, n_heads=args.n_heads, n_layers=args.n_layers, seq_len=S,
                   batch_size=B, vocab=256)
        cfg = argparse.Namespace(**cfg)
        torch.manual_seed(init_seed)
        model = train_gpt.GPT(cfg)
        for blk in model.blocks:
            blk.mlp = ModuleMLP(blk.mlp)
        return model.to(device=dev, dtype=torch.bfloat16)

    tracked = (nn.Linear, nn.GELU, nn.LayerNorm, ac.CompressedLinear, ac.CompressedGELU, ac.CompressedLayerNorm)

    def measure_memory(model, x, y):
        """Saved-tensor bytes inside tracked modules vs elsewhere, and allocator growth."""
        params = {p.untyped_storage().data_ptr() for p in model.parameters()}
        depth = [0]
        seen = {}  # storage ptr -> (bytes, inside a tracked module)

        def pre(m, inp):
            depth[0] += 1

        def post(m, inp, out):
            depth[0] -= 1

        handles = []
        for m in model.modules():
            if isinstance(m, tracked):
                handles += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]

        def pack(t):
            st = t.untyped_storage()
            ptr = st.data_ptr()
            if ptr not in params and ptr not in seen:
                seen[ptr] = (st.nbytes(), depth[0] > 0)
            return t

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = model(x, y)
        torch.cuda.synchronize()
        held = torch.cuda.memory_allocated() - before
        peak = torch.cuda.max_memory_allocated() - before
        loss.backward()
        model.zero_grad(set_to_none=True)
        for h in handles:
            h.remove()
        return dict(wrapped_saved_bytes=sum(b for b, w in seen.values() if w),
                    other_saved_bytes=sum(b for b, w in seen.values() if not w),
                    held_after_forward_bytes=held, forward_peak_bytes=peak)

    def run(name, seed):
        spec = RUNS[name]
        offsets = train_offsets(seed)
        model = build_model(seed)
        n_wrapped = 0
        if spec["compress"] is not None:
            n_wrapped = ac.compress_activations(model, seed=seed, **spec["compress"])
        opt = train_gpt.make_optimizer(model, "fused")
        losses = torch.empty(args.steps, device=dev)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
        t0 = time.perf_counter()
        for i in range(args.steps):
            x, y = batch(train, offsets[i])
            starts[i].record()
            loss = model(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            ends[i].record()
            losses[i] = loss.detach()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        step_ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        curve = losses.tolist()
        model.eval()
        with torch.no_grad():
            val_loss = statistics.fmean(model(*batch(val, val_offsets[j])).item() for j in range(len(val_offsets)))
        model.train()
        mem = measure_memory(model, *batch(train, offsets[-1]))
        res = dict(n_wrapped=n_wrapped, compress=spec["compress"],
                   final_loss=statistics.fmean(curve[-20:]), val_loss=val_loss,
                   step_ms=statistics.median(step_ms[50:]), wall_s=wall,
                   loss_every_10=[round(v, 4) for v in curve[::10]], curve=curve, **mem)
        print(f"[{name} seed {seed}] wrapped={n_wrapped} final_loss={res['final_loss']:.4f} val_loss={val_loss:.4f} "
              f"step={res['step_ms']:.2f} ms wrapped_saved={mem['wrapped_saved_bytes'] / 2**20:.1f} MiB "
              f"other_saved={mem['other_saved_bytes'] / 2**20:.1f} MiB "
              f"held={mem['held_after_forward_bytes'] / 2**20:.1f} MiB ({wall:.1f} s)", flush=True)
        del model, opt
        torch.cuda.empty_cache()
        return res

    def run_checked(name, seed):
        """run(), falling back to warn-only determinism if an op has no
        deterministic algorithm (recorded; the rerun control shows the effect)."""
        try:
            return run(name, seed)
        except RuntimeError as e:
            if determinism["mode"] != "strict" or "deterministic" not in str(e):
                raise
            determinism["mode"] = "warn_only"
            determinism["fallback_reason"] = str(e).splitlines()[0][:300]
            print(f"WARNING: no deterministic algorithm: {determinism['fallback_reason']}; "
                  "continuing with warn_only=True", flush=True)
            torch.use_deterministic_algorithms(True, warn_only=True)
            torch.cuda.empty_cache()
            return run(name, seed)

    # Seed-major order: the configurations of one seed run back to back, then
    # (first --rerun-seeds seeds) the control's second runs.
    t_start = time.perf_counter()
    per_seed, reruns, run_times = {}, {}, []
    for k, seed in enumerate(args.seeds):
        names = list(args.runs)
        rerun_names = list(args.rerun) if k < args.rerun_seeds else []
        if args.time_budget_s and run_times:
            need = statistics.fmean(run_times) * (len(names) + len(rerun_names))
            if time.perf_counter() - t_start + need > args.time_budget_s:
                print(f"time budget {args.time_budget_s:.0f} s: stopping before seed {seed} "
                      f"({len(per_seed)} seeds run)", flush=True)
                break
        res = {}
        for name in names:
            t0 = time.perf_counter()
            res[name] = run_checked(name, seed)
            run_times.append(time.perf_counter() - t0)
        per_seed[seed] = res
        for name in rerun_names:
            t0 = time.perf_counter()
            reruns.setdefault(name, {})[seed] = run_checked(name, seed)
            run_times.append(time.perf_counter() - t0)
    seeds_run = list(per_seed)
    if not seeds_run:
        raise SystemExit("no seed fits in --time-budget-s")

    # Two-sided 97.5% quantiles of Student's t (95% intervals), by degrees of freedom.
    t975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
            10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
            18: 2.101, 19: 2.093, 20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048, 30: 2.042,
            40: 2.021, 60: 2.000, 120: 1.980}

    def t_quantile(df):
        if df in t975:
            return t975[df]
        above = [d for d in t975 if d > df]
        return t975[min(above)] if above else 1.960  # the next tabulated df: slightly wider, never narrower

    def stats(values):
        n = len(values)
        sd = statistics.stdev(values) if n > 1 else 0.0
        return dict(mean=statistics.fmean(values), std=sd, min=min(values), max=max(values), values=values)

    def paired(values, limit=0.01):
        """Paired differences: stats plus standard error, 95% CI and the verdict on |mean| <= limit."""
        d = stats(values)
        n = len(values)
        d["n"] = n
        if n > 1:
            d["sem"] = d["std"] / math.sqrt(n)
            half = t_quantile(n - 1) * d["sem"]
            d["ci95"] = [d["mean"] - half, d["mean"] + half]
            if -limit <= d["ci95"][0] and d["ci95"][1] <= limit:
                d["verdict"] = "shown"  # the whole interval within +-limit
            elif d["ci95"][0] > limit or d["ci95"][1] < -limit:
                d["verdict"] = "exceeded"
            else:
                d["verdict"] = "undecided"
        else:
            d["sem"], d["ci95"], d["verdict"] = None, None, "undecided"
        return d

    results = {}
    for name in args.runs:
        rs = [per_seed[seed][name] for seed in seeds_run]
        results[name] = dict(
            compress=RUNS[name]["compress"], n_wrapped=rs[0]["n_wrapped"],
            final_loss=stats([r["final_loss"] for r in rs]), val_loss=stats([r["val_loss"] for r in rs]),
            step_ms=stats([r["step_ms"] for r in rs]),
            wrapped_saved_bytes=rs[0]["wrapped_saved_bytes"], other_saved_bytes=rs[0]["other_saved_bytes"],
            held_after_forward_bytes=rs[0]["held_after_forward_bytes"])
    base = results["baseline"]
    comparisons = {}
    for name in args.runs:
        if name == "baseline":
            continue
        pairs = [(per_seed[seed][name], per_seed[seed]["baseline"]) for seed in seeds_run]
        comparisons[name] = dict(
            loss_rel_diff=paired([r["final_loss"] / b["final_loss"] - 1 for r, b in pairs]),
            val_loss_rel_diff=paired([r["val_loss"] / b["val_loss"] - 1 for r, b in pairs]),
            step_overhead=results[name]["step_ms"]["mean"] / base["step_ms"]["mean"] - 1,
            wrapped_memory_ratio=base["wrapped_saved_bytes"] / max(results[name]["wrapped_saved_bytes"], 1),
            held_memory_ratio=base["held_after_forward_bytes"] / max(results[name]["held_after_forward_bytes"], 1))
    # Seed-to-seed spread of the uncompressed runs, relative to their mean: the
    # noise floor any 1% comparison sits on.
    noise = dict(train_rel_std=base["final_loss"]["std"] / base["final_loss"]["mean"],
                 val_rel_std=base["val_loss"]["std"] / base["val_loss"]["mean"])
    targets = dict(loss_rel_diff_max=0.01, step_overhead_max=0.10, wrapped_memory_ratio_min_4bit=3.0)
    met = {}
    for name, c in comparisons.items():
        if RUNS[name]["compress"] is None:
            continue
        m = dict(loss_train=abs(c["loss_rel_diff"]["mean"]) <= targets["loss_rel_diff_max"],
                 loss_val=abs(c["val_loss_rel_diff"]["mean"]) <= targets["loss_rel_diff_max"],
                 loss_train_ci95=c["loss_rel_diff"]["verdict"], loss_val_ci95=c["val_loss_rel_diff"]["verdict"],
                 step_time=c["step_overhead"] <= targets["step_overhead_max"])
        if RUNS[name]["compress"]["bits"] == 4:
            m["memory"] = c["wrapped_memory_ratio"] >= targets["wrapped_memory_ratio_min_4bit"]
        met[name] = m

    # The rerun control: same configuration, same seed, run twice.
    control = {}
    for name, by_seed in reruns.items():
        rows = []
        for seed, r2 in by_seed.items():
            r1 = per_seed[seed][name]
            rows.append(dict(seed=seed, identical_curve=r1["curve"] == r2["curve"],
                             max_abs_curve_diff=max(abs(a - b) for a, b in zip(r1["curve"], r2["curve"])),
                             final_loss_rel_diff=r2["final_loss"] / r1["final_loss"] - 1,
                             val_loss_rel_diff=r2["val_loss"] / r1["val_loss"] - 1))
        control[name] = rows

    n = len(seeds_run)
    print(f"\ndeterminism: {determinism['mode']}; {n} seeds per configuration ({seeds_run}); mean +- std over "
          "seeds; d_* = paired relative difference to the baseline of the same seed, mean +- std")
    print(f"{'run':<10} {'train loss':>17} {'d_train':>15} {'val loss':>17} {'d_val':>15} {'step ms':>14} "
          f"{'overhead':>8} {'wrapped MiB':>11} {'ratio':>6}")
    for name, r in results.items():
        c = comparisons.get(name)
        dt = f"{c['loss_rel_diff']['mean'] * 100:+6.2f}+-{c['loss_rel_diff']['std'] * 100:.2f}%" if c else ""
        dv = f"{c['val_loss_rel_diff']['mean'] * 100:+6.2f}+-{c['val_loss_rel_diff']['std'] * 100:.2f}%" if c else ""
        ov = f"{c['step_overhead'] * 100:7.2f}%" if c else ""
        ratio = c["wrapped_memory_ratio"] if c else 1.0
        print(f"{name:<10} {r['final_loss']['mean']:8.4f}+-{r['final_loss']['std']:.4f} {dt:>15} "
              f"{r['val_loss']['mean']:8.4f}+-{r['val_loss']['std']:.4f} {dv:>15} "
              f"{r['step_ms']['mean']:7.2f}+-{r['step_ms']['std']:.2f} {ov:>8} "
              f"{r['wrapped_saved_bytes'] / 2**20:11.1f} {ratio:6.2f}")
    print(f"baseline seed-to-seed spread: train {noise['train_rel_std'] * 100:.2f}%, "
          f"val {noise['val_rel_std'] * 100:.2f}% (relative std)")
    for name, c in comparisons.items():
        for key, label in (("loss_rel_diff", "train"), ("val_loss_rel_diff", "val")):
            d = c[key]
            if d["sem"] is None:
                continue
            print(f"{name:<10} {label:<5} paired d = {d['mean'] * 100:+.3f}% +- {d['sem'] * 100:.3f}% (sem), "
                  f"95% CI [{d['ci95'][0] * 100:+.3f}%, {d['ci95'][1] * 100:+.3f}%], n={d['n']}: "
                  f"|d| <= 1% {d['verdict']}")
    for name, rows in control.items():
        for r in rows:
            print(f"rerun control {name} seed {r['seed']}: identical loss curve {r['identical_curve']}, "
                  f"max |diff| {r['max_abs_curve_diff']:.3g}, final {r['final_loss_rel_diff'] * 100:+.4f}%, "
                  f"val {r['val_loss_rel_diff'] * 100:+.4f}%")
    print("targets met (mean paired difference; ci95: verdict of the 95% interval):", json.dumps(met))
    # The full curves served the control; the JSON keeps every 10th loss.
    for by_name in per_seed.values():
        for r in by_name.values():
            r.pop("curve", None)
    for by_seed in reruns.values():
        for r in by_seed.values():
            r.pop("curve", None)

    summary = dict(
        date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        command=" ".join([os.path.basename(sys.executable), os.path.relpath(__file__)] + (argv or sys.argv[1:])),
        device=torch.cuda.get_device_name(dev), torch=torch.__version__,
        model=dict(d_model=args.d_model, n_heads=args.n_heads, n_layers=args.n_layers, seq_len=S,
                   batch_size=B, vocab=256, dtype="bf16 parameters", optimizer="fused AdamW lr 3e-4"),
        corpus=dict(path=os.path.relpath(args.corpus), bytes=len(data), train_bytes=split),
        steps=args.steps, seeds_requested=args.seeds, seeds=seeds_run, determinism=determinism,
        time_budget_s=args.time_budget_s, elapsed_s=time.perf_counter() - t_start,
        runs=results, per_seed={str(k): v for k, v in per_seed.items()},
        reruns={name: {str(k): v for k, v in by_seed.items()} for name, by_seed in reruns.items()},
        rerun_control=control, comparisons=comparisons, baseline_noise=noise, targets=targets, met=met)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
