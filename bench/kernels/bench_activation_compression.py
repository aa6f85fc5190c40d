#!/usr/bin/env python3
"""Benchmark of activation quantize/dequantize (issue #6 item 2).

A 1 GiB bf16 activation (2^29 elements, N(0,1)) quantized and dequantized at
4 and 8 bits, blocks of 64 and 128 (and stochastic rounding at block 64),
by the CUDA kernels, by the same maths in PyTorch eager
(activation_compression.quantize_reference_tensors, the test oracle) and by
torch.compile of that function. Per row: median time (CUDA events, L2
flushed), GB/s, % of the measured device copy bandwidth, speedup over eager
and compile, and `wrong`: mismatching code bytes + scales + zero points
(quantize) or elements (dequantize) between the kernel and eager; the script
exits non-zero when any is wrong.

Bytes moved per element (bf16): quantize reads 2 and writes bits/8 + 4/block
(codes, bf16 scale and zero); dequantize reads those and writes 2.

    python3 bench/kernels/bench_activation_compression.py [--json out.jsonl] [--no-compile]
"""

import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

from stepscope_kernels import activation_compression as ac  # noqa: E402

CONFIGS = [(4, 64, False), (4, 128, False), (8, 64, False), (8, 128, False), (4, 64, True), (8, 64, True)]


def moved_bytes(n, elem, bits, block):
    return n * elem + (n * bits + 7) // 8 + 4 * (-(-n // block))


def first_call(fn, report, what):
    """Runs a compiled function once (compiling it); None if that fails."""
    t0 = time.perf_counter()
    try:
        fn()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - reported, the row keeps its other baselines
        report.note(case=what, error=f"torch.compile failed: {type(e).__name__}: {e}")
        return None
    print(f"  ({what}: compiled in {time.perf_counter() - t0:.1f} s)")
    return fn


def main(argv=None):
    p = bench_common.common_args(__doc__.splitlines()[0])
    p.add_argument("--gib", type=float, default=1.0, help="activation size in GiB of bf16 (default 1)")
    args = p.parse_args(argv)
    if not torch.cuda.is_available() or ac._C is None:
        raise SystemExit("needs a CUDA GPU and the built stepscope_kernels extension")
    for name in ("recompile_limit", "cache_size_limit"):  # one compiled variant per configuration
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)

    report = bench_common.Report("activation_compression", args)
    n = int(args.gib * (1 << 30)) // 2
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    copy_bw = bench_common.copy_bandwidth()
    report.note(case="setup", elements=n, input_gib=n * 2 / 2**30, copy_gbps=round(copy_bw / 1e9, 1))
    eager_iters = max(5, args.iters // 5)
    wrong_total = 0

    report.header("quantize (kernel vs eager reference vs torch.compile of it)")
    qs = {}
    for bits, block, stochastic in CONFIGS:
        tag = f"bits={bits} block={block}" + (" stochastic" if stochastic else "")
        seed = 12345
        kernel = lambda: ac.quantize(x, bits, block, stochastic, seed)  # noqa: E731
        eager = lambda: ac.quantize_reference_tensors(x, bits, block, stochastic, seed)  # noqa: E731
        q = kernel()
        codes, scale, zero = eager()
        wrong = (int((q.codes != codes).sum())
                 + int((q.scale.view(torch.int16) != scale.view(torch.int16)).sum())
                 + int((q.zero.view(torch.int16) != zero.view(torch.int16)).sum()))
        del codes, scale, zero
        if not stochastic:
            qs[(bits, block)] = q
        baselines = {"eager": bench_common.time_cuda(eager, warmup=2, iters=eager_iters)}
        if not args.no_compile:
            fn = torch.compile(lambda t: ac.quantize_reference_tensors(t, bits, block, stochastic, seed))
            if first_call(lambda: fn(x), report, f"torch.compile quantize {tag}"):
                baselines["compile"] = bench_common.time_cuda(lambda: fn(x), iters=args.iters)
        t = bench_common.time_cuda(kernel, iters=args.iters)
        report.row(f"act_quantize {tag}", t, moved_bytes(n, 2, bits, block), copy_bw, baselines,
                   kernel="act_quantize", bits=bits, block=block, stochastic=stochastic, wrong=wrong)
        if wrong:
            print(f"  WRONG: {wrong} mismatches against the eager reference")
        wrong_total += wrong
        torch.cuda.empty_cache()

    report.header("dequantize")
    for (bits, block), q in qs.items():
        tag = f"bits={bits} block={block}"
        kernel = lambda: ac.dequantize(q)  # noqa: E731
        eager = lambda: ac.dequantize_reference_tensors(q.codes, q.scale, q.zero, n, bits, block,  # noqa: E731
                                                        torch.bfloat16)
        wrong = int((kernel().view(torch.int16) != eager().view(torch.int16)).sum())
        baselines = {"eager": bench_common.time_cuda(eager, warmup=2, iters=eager_iters)}
        if not args.no_compile:
            fn = torch.compile(lambda c, s, z: ac.dequantize_reference_tensors(c, s, z, n, bits, block,
                                                                               torch.bfloat16))
            if first_call(lambda: fn(q.codes, q.scale, q.zero), report, f"torch.compile dequantize {tag}"):
                baselines["compile"] = bench_common.time_cuda(lambda: fn(q.codes, q.scale, q.zero),
                                                              iters=args.iters)
        t = bench_common.time_cuda(kernel, iters=args.iters)
        report.row(f"act_dequantize {tag}", t, moved_bytes(n, 2, bits, block), copy_bw, baselines,
                   kernel="act_dequantize", bits=bits, block=block, stochastic=False, wrong=wrong)
        if wrong:
            print(f"  WRONG: {wrong} mismatches against the eager reference")
        wrong_total += wrong
        torch.cuda.empty_cache()

    if wrong_total:
        print(f"FAILED: {wrong_total} mismatches between the kernels and the eager reference")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
