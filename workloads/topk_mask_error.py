#!/usr/bin/env python3
"""Error of the input-dependent block mask on a trained model's activations
(issue #29 item 4), on the CPU.

Trains the GPT of workloads/train_gpt.py with dense causal attention on byte
tokens of the workloads' corpus (as block_sparse_training.py does), then runs
held-out batches through it and, at every layer, takes the q, k, v the
attention sees. For each setting it builds the top-k mask from them
(BlockSparseMask.topk_pooled: window blocks, the leading global block, and
the top-k other blocks by pooled q̄·k̄) and a static causal window of the same
blocks per row (window_blocks + topk, no choice), and reports the attention
output's relative error against dense causal attention,
||o_mask - o_dense||_F / ||o_dense||_F, per layer and overall, with the
masks' density and the selection's CPU time. The same is done on the
untrained model (its activations carry no structure to choose by).

    python3 workloads/topk_mask_error.py --json /tmp/topk_error.json    # ~1 min on 2 cores

The GPU cost of the selection is not measured here.
"""

import argparse
import importlib
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import block_sparse_training as bst  # noqa: E402
import train_gpt  # noqa: E402

bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--block", type=int, default=64)
    p.add_argument("--settings", default="1:1,2:1,4:1,2:2",
                   help="top-k:window_blocks pairs; every mask also keeps the leading block")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    return p.parse_args(argv)


def model_for(args):
    cfg = argparse.Namespace(d_model=args.d_model, n_heads=args.heads, n_layers=args.layers, seq_len=args.seq,
                             vocab=256, fused_qkv=True, cache_rope=True, item_sync=False)
    torch.manual_seed(args.seed)
    return train_gpt.GPT(cfg)


def train(model, args, data):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for x, y in bst.batches(data, args.seq, args.batch, args.steps, args.seed):
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
    return losses


def activations(model, x, y):
    """(q, k, v) of every layer's attention on batch x (targets y: the model
    computes its loss)."""
    seen = []

    def record(q, k, v):
        seen.append((q.detach(), k.detach(), v.detach()))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    for blk in model.blocks:
        blk.attn.attention_fn = record
    with torch.no_grad():
        model(x, y)
    for blk in model.blocks:
        blk.attn.attention_fn = None
    return seen


def errors(acts, args, topk, window_blocks):
    rows = []
    for layer, (q, k, v) in enumerate(acts):
        dense = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t = time.perf_counter()
        chosen = bsa.BlockSparseMask.topk_pooled(q, k, block=args.block, topk=topk, window_blocks=window_blocks,
                                                 global_blocks=1, causal=True)
        select_ms = (time.perf_counter() - t) * 1e3
        static = bsa.BlockSparseMask.topk_pooled(q, k, block=args.block, topk=0,
                                                 window_blocks=window_blocks + topk, global_blocks=1, causal=True)
        norm = float(dense.norm())
        err = lambda m: float((bsa.block_sparse_attention_reference(q, k, v, m) - dense).norm()) / norm  # noqa: E731
        rows.append(dict(layer=layer, topk_error=err(chosen), window_error=err(static),
                         topk_density=chosen.density, window_density=static.density, select_ms=select_ms))
    return rows


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    train_data, val_data = bst.load_bytes()
    x, y = next(bst.batches(val_data, args.seq, args.batch, 1, 1234))
    settings = [tuple(int(n) for n in s.split(":")) for s in args.settings.split(",")]
    out = dict(config=vars(args), results=[])
    model = model_for(args)
    for state in ("untrained", "trained"):
        if state == "trained":
            t = time.perf_counter()
            losses = train(model, args, train_data)
            out["train"] = dict(first_loss=losses[0], final_loss=statistics.mean(losses[-20:]),
                                seconds=time.perf_counter() - t)
            print(f"trained {args.steps} steps: loss {losses[0]:.3f} -> {out['train']['final_loss']:.3f}")
        acts = activations(model, x, y)
        for topk, window_blocks in settings:
            rows = errors(acts, args, topk, window_blocks)
            mean = lambda key: statistics.mean(r[key] for r in rows)  # noqa: E731
            res = dict(state=state, topk=topk, window_blocks=window_blocks, layers=rows,
                       topk_error=mean("topk_error"), window_error=mean("window_error"),
                       topk_density=mean("topk_density"), window_density=mean("window_density"),
                       select_ms=mean("select_ms"))
            out["results"].append(res)
            print(f"{state:9s} top-{topk} + window {window_blocks} + 1 global: error {res['topk_error']:.4f} "
                  f"(density {res['topk_density']:.3f}); static window {window_blocks + topk}: "
                  f"{res['window_error']:.4f} (density {res['window_density']:.3f}); selection "
                  f"{res['select_ms']:.2f} ms on the CPU")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
