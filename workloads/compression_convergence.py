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
training and validation losses and the step time, and the mean and spread of
the paired relative differences against the baseline.

Usage (one H200, about 15 s of training per run):
    python3 workloads/compression_convergence.py --json /tmp/compression.json
    python3 workloads/compression_convergence.py --runs baseline,int4 --seeds 0 --steps 100
"""

import argparse
import gzip
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "data", "debian_text.txt.gz")
CHANGELOG_HEAD = 6 * 1024  # bytes of each package's changelog (its newest entries)

# name -> compress_activations arguments (None: uncompressed). baseline_rerun
# repeats the baseline with the same seed: how far two identical runs drift
# apart (the GPU's nondeterministic reductions), the floor under any paired
# difference.
RUNS = {
    "baseline": dict(compress=None),
    "baseline_rerun": dict(compress=None),
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
    p.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated; one run per configuration and seed")
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
        a.seeds = [int(v) for v in a.seeds.split(",") if v.strip()]
    except ValueError:
        p.error(f"--seeds: comma-separated integers expected, got {a.seeds!r}")
    if not a.seeds:
        p.error("--seeds: at least one seed")
    if a.steps < 70:
        p.error("--steps must be >= 70 (step times are taken from step 50 on, the loss over the last 20)")
    return a


def main(argv=None):
    args = parse_args(argv)
    if args.build_corpus:
        build_corpus()
        return 0

    import torch
    import torch.nn as nn

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
                   loss_every_10=[round(v, 4) for v in curve[::10]], **mem)
        print(f"[{name} seed {seed}] wrapped={n_wrapped} final_loss={res['final_loss']:.4f} val_loss={val_loss:.4f} "
              f"step={res['step_ms']:.2f} ms wrapped_saved={mem['wrapped_saved_bytes'] / 2**20:.1f} MiB "
              f"other_saved={mem['other_saved_bytes'] / 2**20:.1f} MiB "
              f"held={mem['held_after_forward_bytes'] / 2**20:.1f} MiB ({wall:.1f} s)", flush=True)
        del model, opt
        torch.cuda.empty_cache()
        return res

    # Seed-major order: the configurations of one seed run back to back.
    per_seed = {seed: {name: run(name, seed) for name in args.runs} for seed in args.seeds}

    def stats(values):
        return dict(mean=statistics.fmean(values), std=statistics.stdev(values) if len(values) > 1 else 0.0,
                    min=min(values), max=max(values), values=values)

    results = {}
    for name in args.runs:
        rs = [per_seed[seed][name] for seed in args.seeds]
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
        pairs = [(per_seed[seed][name], per_seed[seed]["baseline"]) for seed in args.seeds]
        comparisons[name] = dict(
            loss_rel_diff=stats([r["final_loss"] / b["final_loss"] - 1 for r, b in pairs]),
            val_loss_rel_diff=stats([r["val_loss"] / b["val_loss"] - 1 for r, b in pairs]),
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
                 step_time=c["step_overhead"] <= targets["step_overhead_max"])
        if RUNS[name]["compress"]["bits"] == 4:
            m["memory"] = c["wrapped_memory_ratio"] >= targets["wrapped_memory_ratio_min_4bit"]
        met[name] = m

    n = len(args.seeds)
    print(f"\n{n} seeds per configuration ({args.seeds}); mean +- std over seeds; d_* = paired relative "
          "difference to the baseline of the same seed")
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
    print("targets met (mean paired difference):", json.dumps(met))

    summary = dict(
        date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        command=" ".join([os.path.basename(sys.executable), os.path.relpath(__file__)] + (argv or sys.argv[1:])),
        device=torch.cuda.get_device_name(dev), torch=torch.__version__,
        model=dict(d_model=args.d_model, n_heads=args.n_heads, n_layers=args.n_layers, seq_len=S,
                   batch_size=B, vocab=256, dtype="bf16 parameters", optimizer="fused AdamW lr 3e-4"),
        corpus=dict(path=os.path.relpath(args.corpus), bytes=len(data), train_bytes=split),
        steps=args.steps, seeds=args.seeds, runs=results, per_seed={str(k): v for k, v in per_seed.items()},
        comparisons=comparisons, baseline_noise=noise, targets=targets, met=met)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
