#!/usr/bin/env python3
"""One block-sparse attention forward (and with --backward its backward)
between cudaProfilerStart/Stop, after warm-up launches, for Nsight Compute:

    ncu --profile-from-start off --set full --import-source yes \\
        python3 bench/kernels/profile_block_sparse.py --seq 16384 --head-dim 64 --version 4

The mask is bench_block_sparse_attention.py's causal sliding window (blocks
of 128) at --share of the sequence, on random bf16 inputs (never zeros).
--flex profiles FlexAttention (compiled) on the same BlockMask instead, so
that Nsight Compute sees both kernels on one shape.
"""

import argparse
import importlib

import torch

bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=16384)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--share", type=float, default=0.25, help="window as a share of the sequence")
    p.add_argument("--version", type=int, default=0)
    p.add_argument("--backward", action="store_true")
    p.add_argument("--flex", action="store_true", help="FlexAttention instead of stepscope's kernels")
    args = p.parse_args()
    w = max(128, int(args.share * args.seq))
    mask = bsa.BlockSparseMask.from_mask_mod(lambda b, h, q, k: (q >= k) & (q - k < w), args.seq, 128, "cuda",
                                             causal=True, window=w)
    shape = (1, args.heads, args.seq, args.head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=args.backward)
               for _ in range(3))
    bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = args.version

    dout = torch.randn(shape, device="cuda", dtype=torch.bfloat16)  # a random upstream gradient, not a constant

    attend = lambda q, k, v: bsa.block_sparse_attention(q, k, v, mask)  # noqa: E731
    if args.flex:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        mod = lambda b, h, qi, ki: (qi >= ki) & (qi - ki < w)  # noqa: E731
        flex_mask = create_block_mask(mod, 1, 1, args.seq, args.seq, device="cuda", BLOCK_SIZE=128)
        flex = torch.compile(flex_attention)
        attend = lambda q, k, v: flex(q, k, v, block_mask=flex_mask)  # noqa: E731

    def once():
        out = attend(q, k, v)
        if args.backward:
            out.backward(dout)

    for _ in range(3):
        once()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    once()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"profiled: seq {args.seq}, head dim {args.head_dim}, window {w}, "
          f"{'FlexAttention' if args.flex else f'version {args.version}'}")


if __name__ == "__main__":
    main()
