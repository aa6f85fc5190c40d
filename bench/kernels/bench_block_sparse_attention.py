#!/usr/bin/env python3
"""Benchmark of block-sparse attention (issue #29 item 5) on one GPU, bf16.

For sequence lengths 4k-64k, causal sliding-window masks at densities of
about 5, 12, 25 and 50% of the block pairs and a document mask, head dims 64
and 128: forward and forward + backward of

  * stepscope's kernels (stepscope_kernels.block_sparse_attention),
  * FlexAttention with the same BlockMask (create_block_mask over the same
    mask_mod, flex_attention under torch.compile, compiled anew for each
    shape with static shapes), and
  * dense causal SDPA (F.scaled_dot_product_attention(is_causal=True): what a
    model runs without a mask) on the same shapes, and
  * other versions of our kernels (--compare 1,2: speedup keys "v1",
    "v2"; up to 16k tokens, where v1 still finishes; v2 has no backward),
    so the versions are compared on the same inputs. --version picks the
    one timed as ours (default 0, the fastest measured).

Times are the GPU's work alone: the GPU spins before each call while the
host launches it (bench_common.time_cuda hide_host), so a call whose launch
takes longer than its kernels is not timed as its launch; --with-host times
the launch too (the only way before 2026-12-05 evening: FlexAttention's 4k
times moved up to 3.7x between two runs so).

TFLOP/s are counted on live blocks only: 4 · batch · heads · head_dim ·
block² per live block forward, 2.5× that backward (FlashAttention-2's count);
SDPA's on the causal half. Each row also prints the mask's CSR bytes against
FlexAttention's int32 index table. The issue's targets: faster than
FlexAttention at density <= 25% (forward and backward), and >= 60% of dense
SDPA's TFLOP/s at head dim 128.

    python3 bench/kernels/bench_block_sparse_attention.py [--json out.jsonl] [--seqs 4096,16384,65536]
        [--version 3] [--compare 1,2] [--heads 16] [--iters 50] [--no-compile]
"""

import contextlib
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")  # noqa: E402

try:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
except ImportError:  # older torch: no FlexAttention baseline
    create_block_mask = flex_attention = None

BLOCK = 128


def patterns(seq):
    """(name, BlockSparseMask, FlexAttention mask_mod) for this length: the same mask both ways."""
    out = []
    for share in (0.05, 0.125, 0.25, 0.5):
        w = max(BLOCK, int(share * seq))
        mod = lambda b, h, q, k, w=w: (q >= k) & (q - k < w)  # noqa: E731
        out.append((f"window {w} ({share:.0%})",
                    bsa.BlockSparseMask.from_mask_mod(mod, seq, BLOCK, "cuda", causal=True, window=w), mod))
    docs = [seq // 8] * 8
    doc = torch.repeat_interleave(torch.arange(8, device="cuda"), torch.tensor(docs, device="cuda"))
    mod = lambda b, h, q, k: (q >= k) & (doc[q] == doc[k])  # noqa: E731
    out.append(("8 documents",
                bsa.BlockSparseMask.from_mask_mod(mod, seq, BLOCK, "cuda", causal=True, doc_ids=doc.tolist()), mod))
    return out


@contextlib.contextmanager
def versions(v):
    """Runs the kernels of version v (forward and backward; v2 has only a
    forward, its backward is the default's)."""
    bsa.FORWARD_VERSION, bsa.BACKWARD_VERSION = v, (0 if v == 2 else v)
    try:
        yield
    finally:
        bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = 0


def main():
    p = bench_common.common_args(__doc__.splitlines()[0])
    p.add_argument("--seqs", default="4096,16384,65536")
    p.add_argument("--head-dims", default="64,128")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--version", type=int, default=0, help="kernel version timed as ours (0: the fastest measured)")
    p.add_argument("--with-host", action="store_true",
                   help="time each call with its host launch time (before 2026-12-05 evening: always); default: "
                        "the GPU's work alone (bench_common.time_cuda hide_host)")
    p.add_argument("--compare", default="", help="other versions timed beside it, up to 16k tokens (e.g. 1,2)")
    args = p.parse_args()
    compare = [int(x) for x in args.compare.split(",") if x]
    report = bench_common.Report("block_sparse_attention", args)
    if bsa._C is None:
        report.note(error="stepscope_kernels._C is not built: nothing to time")
        return
    use_flex = flex_attention is not None and not args.no_compile
    # FlexAttention compiled anew for each shape with static shapes, as a
    # training run of one sequence length gets it: one compiled function
    # reused across shapes recompiles with dynamic sizes from the second
    # shape on, and those kernels were up to 1.4x slower (H100, 64k tokens,
    # head dim 64, 2026-12-06). One compile per mask_mod within a shape.
    cfg = torch._dynamo.config
    limit = "recompile_limit" if hasattr(cfg, "recompile_limit") else "cache_size_limit"  # renamed in torch 2.6
    setattr(cfg, limit, max(getattr(cfg, limit), 16))
    copy_bw = bench_common.copy_bandwidth()

    def timed(fn):
        return bench_common.time_cuda(fn, iters=args.iters, hide_host=not args.with_host)
    for d in (int(x) for x in args.head_dims.split(",")):
        for seq in (int(s) for s in args.seqs.split(",")):
            shape = (1, args.heads, seq, d)
            flex = None
            if use_flex:
                torch._dynamo.reset()
                flex = bench_common.compiled_or_none(flex_attention, report, "flex_attention", dynamic=False)
            q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
            grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
            dense_flops = 4 * args.heads * d * seq * seq / 2
            t_sdpa = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
            t_sdpa_fb = timed(
                lambda: torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), grad))
            report.header(f"d {d}, seq {seq}, {args.heads} heads, bf16")
            report.row("dense causal SDPA fwd", t_sdpa, None, copy_bw, tflops=dense_flops / t_sdpa / 1e12)
            report.row("dense causal SDPA fwd+bwd", t_sdpa_fb, None, copy_bw,
                       tflops=3.5 * dense_flops / t_sdpa_fb / 1e12)
            for name, m, mask_mod in patterns(seq):
                live = m.col_indices.numel()
                live_flops = 4 * args.heads * d * live * BLOCK * BLOCK
                ours = lambda: bsa.block_sparse_attention(q, k, v, m)  # noqa: E731
                ours_fb = lambda: torch.autograd.grad(ours(), (q, k, v), grad)  # noqa: E731
                with versions(args.version):
                    t = timed(ours)
                    t_fb = timed(ours_fb)
                base, base_fb = {"SDPA": t_sdpa}, {"SDPA": t_sdpa_fb}
                for other in compare if seq <= 16384 else []:
                    with versions(other):
                        base[f"v{other}"] = timed(ours)
                        if other != 2:  # v2 is a forward only
                            base_fb[f"v{other}"] = timed(ours_fb)
                if flex is not None:
                    fmask = create_block_mask(mask_mod, 1, 1, seq, seq, device="cuda", BLOCK_SIZE=BLOCK)
                    theirs = lambda: flex(q, k, v, block_mask=fmask)  # noqa: E731
                    base["flex"] = timed(theirs)
                    base_fb["flex"] = timed(lambda: torch.autograd.grad(theirs(), (q, k, v), grad))
                extra = dict(seq=seq, head_dim=d, density=m.density, version=args.version,
                             csr_bytes=4 * (m.row_offsets.numel()) + 5 * live,
                             index_table_bytes=4 * m.q_blocks * m.k_blocks)
                r = report.row(f"{name} fwd", t, None, copy_bw, base, tflops=live_flops / t / 1e12, **extra)
                r_fb = report.row(f"{name} fwd+bwd", t_fb, None, copy_bw, base_fb,
                                  tflops=3.5 * live_flops / t_fb / 1e12, **extra)
                report.note(case=name, seq=seq, head_dim=d,
                            share_of_sdpa_tflops_fwd=r["tflops"] / (dense_flops / t_sdpa / 1e12),
                            share_of_sdpa_tflops_fwd_bwd=r_fb["tflops"] / (3.5 * dense_flops / t_sdpa_fb / 1e12))


if __name__ == "__main__":
    main()
