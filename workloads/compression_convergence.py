#!/usr/bin/env python3
"""Activation compression on the workloads' GPT: loss, step time, memory.

Trains the GPT of workloads/train_gpt.py (pre-norm blocks, fused QKV, cached
RoPE, causal F.scaled_dot_product_attention, bf16 parameters, fused AdamW
lr 3e-4) on byte tokens (vocab 256) of a real text corpus, once uncompressed
and once per compression setting, from the same initial weights on the same
batches. The only change to train_gpt's model: its MLP calls F.gelu, so each
block's MLP is rebuilt around nn.GELU (same fc/fc2 modules, same maths) for
compress_activations to find it. Reported per run:

* final_loss: mean training loss of the last 20 steps; loss_rel_diff against
  the baseline (target |diff| <= 1%). baseline_init1 (another initialisation,
  same batches) shows how much two uncompressed runs differ anyway.
* val_loss: mean loss on 8 fixed held-out batches (the corpus' last 10%).
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

Corpus: workloads/data/corpus.txt.gz, the licence texts Debian ships in
/usr/share/common-licenses (base-files), verbatim copying of which the texts
themselves permit; --build-corpus regenerates it. 229 KB: at batch 16 x 1024
bytes a 300-step run sees it about 21 times, so the training loss goes well
below what new text would give; all runs see the same batches.

Usage (one H200, about 1 minute of training per run):
    python3 workloads/compression_convergence.py --json /tmp/compression.json
    python3 workloads/compression_convergence.py --runs baseline,int4 --steps 100
"""

import argparse
import gzip
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "data", "corpus.txt.gz")
LICENCES = ["GPL-1", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1", "LGPL-3", "GFDL-1.2", "GFDL-1.3",
            "Artistic", "Apache-2.0", "MPL-1.1", "MPL-2.0"]

# name -> compress_activations arguments (None: uncompressed); init_seed_offset
# changes only the initial weights.
RUNS = {
    "baseline": dict(compress=None),
    "baseline_init1": dict(compress=None, init_seed_offset=1),
    "int8": dict(compress=dict(bits=8, block=64, stochastic=False)),
    "int4": dict(compress=dict(bits=4, block=64, stochastic=False)),
    "int4_sr": dict(compress=dict(bits=4, block=64, stochastic=True)),
}


def build_corpus(src_dir="/usr/share/common-licenses", out=CORPUS):
    parts = []
    for name in LICENCES:
        with open(os.path.join(src_dir, name), "rb") as f:
            parts.append(f.read())
    data = b"\n\n".join(parts)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as raw, gzip.GzipFile(filename="corpus.txt", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(data)
    print(f"wrote {out}: {len(data)} bytes of text from {len(parts)} licences in {src_dir}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", default="baseline,baseline_init1,int8,int4,int4_sr",
                   help=f"comma-separated, from {sorted(RUNS)}; the first must be baseline")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--n-heads", type=int, default=16)
    p.add_argument("--n-layers", type=int, default=8)
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--corpus", default=CORPUS)
    p.add_argument("--json", help="write the summary here")
    p.add_argument("--build-corpus", action="store_true",
                   help="regenerate workloads/data/corpus.txt.gz from /usr/share/common-licenses and exit")
    a = p.parse_args(argv)
    a.runs = [r.strip() for r in a.runs.split(",") if r.strip()]
    unknown = [r for r in a.runs if r not in RUNS]
    if unknown:
        p.error(f"--runs: unknown {unknown}; known: {sorted(RUNS)}")
    if not a.runs or a.runs[0] != "baseline":
        p.error("--runs must start with baseline (the others are compared with it)")
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
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    offsets = torch.randint(0, len(train) - S - 1, (args.steps, B), generator=g).to(dev)
    val_offsets = torch.randint(0, len(val) - S - 1, (8, B), generator=g).to(dev)
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

    def run(name):
        spec = RUNS[name]
        model = build_model(args.seed + spec.get("init_seed_offset", 0))
        n_wrapped = 0
        if spec["compress"] is not None:
            n_wrapped = ac.compress_activations(model, seed=args.seed, **spec["compress"])
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
        print(f"[{name}] wrapped={n_wrapped} final_loss={res['final_loss']:.4f} val_loss={val_loss:.4f} "
              f"step={res['step_ms']:.2f} ms wrapped_saved={mem['wrapped_saved_bytes'] / 2**20:.1f} MiB "
              f"other_saved={mem['other_saved_bytes'] / 2**20:.1f} MiB "
              f"held={mem['held_after_forward_bytes'] / 2**20:.1f} MiB ({wall:.1f} s)", flush=True)
        del model, opt
        torch.cuda.empty_cache()
        return res

    results = {name: run(name) for name in args.runs}
    base = results["baseline"]
    comparisons = {}
    for name, r in results.items():
        if name == "baseline":
            continue
        comparisons[name] = dict(
            loss_rel_diff=r["final_loss"] / base["final_loss"] - 1,
            val_loss_rel_diff=r["val_loss"] / base["val_loss"] - 1,
            step_overhead=r["step_ms"] / base["step_ms"] - 1,
            wrapped_memory_ratio=base["wrapped_saved_bytes"] / max(r["wrapped_saved_bytes"], 1),
            held_memory_ratio=base["held_after_forward_bytes"] / max(r["held_after_forward_bytes"], 1))
    targets = dict(loss_rel_diff_max=0.01, step_overhead_max=0.10, wrapped_memory_ratio_min_4bit=3.0)
    met = {}
    for name, c in comparisons.items():
        if RUNS[name]["compress"] is None:
            continue
        m = dict(loss=abs(c["loss_rel_diff"]) <= targets["loss_rel_diff_max"],
                 step_time=c["step_overhead"] <= targets["step_overhead_max"])
        if RUNS[name]["compress"]["bits"] == 4:
            m["memory"] = c["wrapped_memory_ratio"] >= targets["wrapped_memory_ratio_min_4bit"]
        met[name] = m

    print(f"\n{'run':<15} {'loss':>8} {'d_loss':>8} {'val':>8} {'step ms':>8} {'overhead':>9} "
          f"{'wrapped MiB':>12} {'ratio':>6} {'held MiB':>9}")
    for name, r in results.items():
        c = comparisons.get(name, {})
        print(f"{name:<15} {r['final_loss']:8.4f} {c.get('loss_rel_diff', 0) * 100:7.2f}% {r['val_loss']:8.4f} "
              f"{r['step_ms']:8.2f} {c.get('step_overhead', 0) * 100:8.2f}% "
              f"{r['wrapped_saved_bytes'] / 2**20:12.1f} {c.get('wrapped_memory_ratio', 1):6.2f} "
              f"{r['held_after_forward_bytes'] / 2**20:9.1f}")
    print("targets met:", json.dumps(met))

    summary = dict(
        date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        command=" ".join([os.path.basename(sys.executable), os.path.relpath(__file__)] + (argv or sys.argv[1:])),
        device=torch.cuda.get_device_name(dev), torch=torch.__version__,
        model=dict(d_model=args.d_model, n_heads=args.n_heads, n_layers=args.n_layers, seq_len=S,
                   batch_size=B, vocab=256, dtype="bf16 parameters", optimizer="fused AdamW lr 3e-4"),
        corpus=dict(path=os.path.relpath(args.corpus), bytes=len(data), train_bytes=split),
        steps=args.steps, seed=args.seed, runs=results, comparisons=comparisons, targets=targets, met=met)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
