#!/usr/bin/env python3
"""Block-sparse attention in training (issue #29 item 6): loss, step time, memory.

Trains the GPT of workloads/train_gpt.py (pre-norm blocks, fused QKV, cached
RoPE, bf16, fused AdamW lr 3e-4) on byte tokens (vocab 256) of the
workloads' text corpus (workloads/data/debian_text.txt.gz, see
compression_convergence.py) at long sequences, once per attention, from the
same initial weights on the same batches:

* dense: causal F.scaled_dot_product_attention (what the model runs today);
* flex: FlexAttention (torch.compile'd flex_attention) with the BlockMask of
  a causal sliding window + global tokens, the dense reference of the mask;
* stepscope: stepscope_kernels.block_sparse_attention with the same mask
  (BlockSparseMask.from_mask_mod of the same mask_mod).

Reported per run: final_loss (mean training loss of the last 20 steps),
val_loss (fixed held-out batches from the corpus' last 10%), step_ms (median
CUDA-event step time after warm-up) and peak_bytes
(torch.cuda.max_memory_allocated). Targets: stepscope's final loss within 2%
of flex's; step time and peak memory against dense are reported.

    python3 workloads/block_sparse_training.py --json /tmp/bsa_train.json            # one H200
    python3 workloads/block_sparse_training.py --smoke                               # CPU, tiny: the script runs
"""

import argparse
import gzip
import importlib
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_gpt  # noqa: E402

bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")

CORPUS = os.path.join(HERE, "data", "debian_text.txt.gz")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=16384)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--window", type=int, default=1024, help="sliding window, tokens")
    p.add_argument("--global-tokens", type=int, default=128)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", default="dense,flex,stepscope")
    p.add_argument("--json", default=None)
    p.add_argument("--smoke", action="store_true", help="CPU, tiny sizes, few steps: checks the script runs")
    p.add_argument("--version", type=int, default=0,
                   help="stepscope kernel version, forward and backward (0: the fastest measured)")
    args = p.parse_args(argv)
    if args.smoke:
        args.seq, args.batch, args.d_model, args.heads, args.layers = 256, 2, 64, 2, 2
        args.window, args.global_tokens, args.block, args.steps = 64, 16, 32, 25
        args.runs = ",".join(r for r in args.runs.split(",") if r != "flex")
    return args


def load_bytes():
    with gzip.open(CORPUS, "rb") as f:
        data = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).to(torch.int64)
    cut = int(0.9 * data.numel())
    return data[:cut], data[cut:]


def batches(data, seq, batch, steps, seed):
    g = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, data.numel() - seq - 1, (steps, batch), generator=g)
    for row in starts:
        x = torch.stack([data[s:s + seq] for s in row.tolist()])
        y = torch.stack([data[s + 1:s + seq + 1] for s in row.tolist()])
        yield x, y


def attention_for(run, args, device):
    """The attention_fn of a run (None: the model's causal SDPA). Both masked
    runs take one mask_mod: a causal window plus global tokens."""
    if run == "dense":
        return None
    w, g = args.window, args.global_tokens

    def mask_mod(b, h, q, k):
        return (q >= k) & ((q - k < w) | (q < g) | (k < g))

    if run == "stepscope":
        mask = bsa.BlockSparseMask.from_mask_mod(mask_mod, args.seq, args.block, device, causal=True, window=w,
                                                 global_tokens=g)
        return lambda q, k, v: bsa.block_sparse_attention(q, k, v, mask)
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    block_mask = create_block_mask(mask_mod, 1, 1, args.seq, args.seq, device=device, BLOCK_SIZE=args.block)
    flex = torch.compile(flex_attention)
    return lambda q, k, v: flex(q, k, v, block_mask=block_mask)


def train(run, args, train_data, val_data, device, dtype):
    cfg = argparse.Namespace(d_model=args.d_model, n_heads=args.heads, n_layers=args.layers, seq_len=args.seq,
                             vocab=256, fused_qkv=True, cache_rope=True, item_sync=False)
    torch.manual_seed(args.seed)
    model = train_gpt.GPT(cfg).to(device=device, dtype=dtype)
    fn = attention_for(run, args, device)
    for blk in model.blocks:
        blk.attn.attention_fn = fn
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=device.type == "cuda")
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    losses, times = [], []
    for step, (x, y) in enumerate(batches(train_data, args.seq, args.batch, args.steps, args.seed)):
        x, y = x.to(device), y.to(device)
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            end.record()
            times.append((start, end))
        losses.append(loss.detach())
    if cuda:
        torch.cuda.synchronize()
    losses = [float(l) for l in losses]
    step_ms = statistics.median(s.elapsed_time(e) for s, e in times[10:]) if len(times) > 10 else None
    with torch.no_grad():
        val = [float(model(x.to(device), y.to(device)))
               for x, y in batches(val_data, args.seq, args.batch, 8, 1234)]
    return dict(run=run, final_loss=statistics.mean(losses[-20:]), val_loss=statistics.mean(val),
                first_loss=losses[0], step_ms=step_ms,
                peak_bytes=torch.cuda.max_memory_allocated() if cuda else None)


def main(argv=None):
    args = parse_args(argv)
    bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = args.version
    device = torch.device("cpu" if args.smoke else "cuda")
    dtype = torch.float32 if args.smoke else torch.bfloat16
    train_data, val_data = load_bytes()
    results = [train(r, args, train_data, val_data, device, dtype) for r in args.runs.split(",")]
    by = {r["run"]: r for r in results}
    for r in results:
        print(json.dumps(r))
    if "stepscope" in by and "flex" in by:
        diff = by["stepscope"]["final_loss"] / by["flex"]["final_loss"] - 1
        print(f"stepscope vs flex final loss: {diff:+.2%} (target within 2%)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(args=vars(args), results=results), f, indent=1)


if __name__ == "__main__":
    main()
