#!/usr/bin/env python3
"""Cost of choosing a block mask from the input on the GPU (issue #29 item 4).

BlockSparseMask.topk_pooled(q, k, ...) pools q and k per block, scores the
pooled blocks and keeps per query block its window, the global blocks and
the top-k others. For sequence lengths 4k-64k, bf16, block 128, this times

  * the selection run eagerly (CUDA events; the host part is cached per
    shape after the first call),
  * the same selection captured once in a CUDA graph and replayed (the mask
    from the replay is checked equal to the eager one),
  * the attention forward and forward + backward over the chosen mask with
    our kernels (--version), the cost the selection adds to,

and checks that a call after the first makes no host synchronisation
(torch.cuda.set_sync_debug_mode("error")).

    python3 bench/kernels/bench_topk_mask.py [--json out.jsonl] [--seqs 4096,16384,65536] [--version 3]
"""

import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")  # noqa: E402

BLOCK = 128


def select(q, k, topk, window, glob):
    return bsa.BlockSparseMask.topk_pooled(q, k, block=BLOCK, topk=topk, window_blocks=window,
                                           global_blocks=glob, causal=True)


def host_syncs_after_warmup(fn):
    """"none" if fn() runs under sync debug mode "error", else the error."""
    fn()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        fn()
        return "none"
    except RuntimeError as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    finally:
        torch.cuda.set_sync_debug_mode("default")


def graph_of(fn):
    """(graph, its output) of fn captured after a warm-up on a side stream."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


def main():
    p = bench_common.common_args(__doc__.splitlines()[0])
    p.add_argument("--seqs", default="4096,16384,65536")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--version", type=int, default=0, help="attention kernel version timed beside the selection")
    args = p.parse_args()
    report = bench_common.Report("topk_mask", args)
    copy_bw = bench_common.copy_bandwidth()
    d = args.head_dim
    for seq in (int(s) for s in args.seqs.split(",")):
        g = torch.Generator(device="cuda").manual_seed(seq)
        q = torch.randn(1, args.heads, seq, d, device="cuda", dtype=torch.bfloat16, generator=g)
        k = torch.randn(1, args.kv_heads, seq, d, device="cuda", dtype=torch.bfloat16, generator=g)
        v = torch.randn(1, args.kv_heads, seq, d, device="cuda", dtype=torch.bfloat16, generator=g)
        report.header(f"seq {seq}, {args.heads} heads on {args.kv_heads} K/V heads, d {d}, bf16, block {BLOCK}")
        for topk, window, glob in ((4, 2, 1), (8, 2, 1)):
            fn = lambda: select(q, k, topk, window, glob)  # noqa: E731
            eager = fn()
            syncs = host_syncs_after_warmup(fn)
            t_eager = bench_common.time_cuda(fn, iters=args.iters)
            try:
                graph, captured = graph_of(fn)
                graph.replay()
                torch.cuda.synchronize()
                same = bool(torch.equal(captured.col_indices, eager.col_indices) and
                            torch.equal(captured.t_indices, eager.t_indices))
                t_graph = bench_common.time_cuda(graph.replay, iters=args.iters)
                graph_note = "captured"
            except RuntimeError as e:  # a capture failure is a result to report, not a crash
                same, t_graph, graph_note = None, None, f"capture failed: {str(e).splitlines()[0]}"
            qa, ka, va = (x.clone().requires_grad_(True) for x in (q, k, v))
            bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = args.version
            try:
                attn = lambda: bsa.block_sparse_attention(qa, ka, va, eager)  # noqa: E731
                t_attn = bench_common.time_cuda(attn, iters=args.iters)
                grad = torch.randn_like(qa)
                t_attn_fb = bench_common.time_cuda(lambda: torch.autograd.grad(attn(), (qa, ka, va), grad),
                                                   iters=args.iters)
            finally:
                bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = 0
            name = f"top-{topk} + window {window} + global {glob} (density {eager.density:.3f})"
            extra = dict(seq=seq, topk=topk, window_blocks=window, global_blocks=glob, density=eager.density,
                         host_syncs=syncs, graph=graph_note, graph_equal=same, version=args.version)
            report.row(f"{name} select", t_eager, None, copy_bw, {"attn fwd": t_attn, "attn fwd+bwd": t_attn_fb},
                       **extra)
            if t_graph is not None:
                report.row(f"{name} select, graph replay", t_graph, None, copy_bw, {"eager": t_eager}, **extra)
            report.note(case=name, seq=seq, host_syncs=syncs, graph=graph_note, graph_equal=same,
                        select_share_of_fwd=t_eager / t_attn, select_share_of_fwd_bwd=t_eager / t_attn_fb)


if __name__ == "__main__":
    main()
