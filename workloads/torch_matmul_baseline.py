#!/usr/bin/env python3
"""PyTorch's side of the `stepscope bench` comparison (docs/performance.md).

Measures, in the same device session as `stepscope bench`, what PyTorch
reaches on the same GPU with the same method: matmul TFLOP/s per dtype over
the same shapes (warm-up, L2 flushed before every timed call, CUDA events,
median of the repeats, random inputs), device-to-device copy bandwidth
(bytes read + written), host-to-device copies from pinned and pageable
memory, and the per-op cost of a tiny eager op and of the same op replayed
from a CUDA graph.

    python3 workloads/torch_matmul_baseline.py [--quick] [--json OUT.json]
"""
import argparse
import json
import statistics
import time

import torch

CUBES = [2048, 4096, 6144, 8192, 12288, 16384]
LAYERS = [(16384, 4096, 4096), (16384, 16384, 4096), (16384, 4096, 16384), (16384, 14336, 4096)]


def timed(fn, flush, warmup=3, repeats=10):
    """Median seconds of fn() between CUDA events, L2 flushed before each call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        if flush is not None:
            flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    return statistics.median(times)


def matmul_tflops(dtype, m, n, k, flush, repeats):
    dev = "cuda"
    if dtype == "fp8":
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm needs
        one = torch.ones((), device=dev)
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        t = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}[dtype]
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        a = torch.randn(m, k, device=dev, dtype=t)
        b = torch.randn(k, n, device=dev, dtype=t)
        fn = lambda: torch.matmul(a, b)
    s = timed(fn, flush, repeats=repeats)
    return 2.0 * m * n * k / s / 1e12, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * props.L2_cache_size // 4 + (16 << 20), dtype=torch.float32, device="cuda")
    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": props.name,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gemm": [], "notes": []}
    plan = {"bf16": [(c, c, c) for c in CUBES] + LAYERS, "fp16": [(8192,) * 3, (16384,) * 3],
            "fp8": [(8192,) * 3, (16384,) * 3], "tf32": [(8192,) * 3, (16384,) * 3], "fp32": [(8192,) * 3]}
    if args.quick:
        plan = {"bf16": [(8192,) * 3]}
    for dtype, shapes in plan.items():
        for (m, n, k) in shapes:
            try:
                tf, s = matmul_tflops(dtype, m, n, k, flush, 8 if m * n * k > 2e12 else 15)
            except Exception as e:  # an unsupported dtype on this build: say so, keep going
                out["notes"].append(f"{dtype} {m}x{n}x{k}: {type(e).__name__}: {e}")
                continue
            out["gemm"].append({"dtype": dtype, "m": m, "n": n, "k": k, "seconds": s, "tflops": tf})
            print(f"torch gemm {dtype:5} {m:6}x{n:6}x{k:6} {tf:8.1f} TFLOP/s", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False

    n = 1 << 28  # 1 GiB of float32
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    s = timed(lambda: y.copy_(x), flush, repeats=20)
    out["copy_gbps"] = 2 * 4 * n / s / 1e9
    print(f"torch d2d copy {out['copy_gbps']:.1f} GB/s (read + write)")

    host_bytes = 256 << 20
    dev = torch.empty(host_bytes // 4, device="cuda")
    for kind, pin in (("pinned", True), ("pageable", False)):
        h = torch.rand(host_bytes // 4).pin_memory() if pin else torch.rand(host_bytes // 4)
        s = timed(lambda: dev.copy_(h, non_blocking=True), None, warmup=1, repeats=7)
        out[f"h2d_{kind}_gbps"] = host_bytes / s / 1e9
        print(f"torch h2d {kind} {out[f'h2d_{kind}_gbps']:.1f} GB/s")

    tiny = torch.rand(256, device="cuda")
    ops = 10000
    for _ in range(100):
        tiny.add_(1e-3)
    torch.cuda.synchronize()
    per = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(ops):
            tiny.add_(1e-3)
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / ops)
    out["eager_tiny_op_us"] = statistics.median(per) * 1e6
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            tiny.add_(1e-3)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        for _ in range(1000):
            tiny.add_(1e-3)
    g.replay()
    torch.cuda.synchronize()
    s = timed(g.replay, None, warmup=2, repeats=10)
    out["graph_tiny_op_us"] = s / 1000 * 1e6
    print(f"torch tiny op: eager {out['eager_tiny_op_us']:.2f} µs, graph replay {out['graph_tiny_op_us']:.2f} µs")
    best = {}
    for r in out["gemm"]:
        best[r["dtype"]] = max(best.get(r["dtype"], 0), r["tflops"])
    out["gemm_max_tflops"] = best
    print("torch max TFLOP/s:", json.dumps(best))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
