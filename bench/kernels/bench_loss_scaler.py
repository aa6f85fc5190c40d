#!/usr/bin/env python3
"""Benchmark of the graph-safe loss scaler (issue #6 item 3).

Gradients of a GPT-like model of about one billion parameters split over
about 300 tensors (24 blocks of d=1792: qkv, proj, fc, fc2 weights and
biases, two LayerNorms; embedding; head), fp32 (AMP with fp32 master
weights) and bf16. Rows:

* unscale + check, one fused launch (stepscope) vs
  torch._amp_foreach_non_finite_check_and_unscale_ (what GradScaler runs,
  eager) and vs torch.compile of the same maths; bytes moved = read + write
  of every gradient;
* check only (what GradScaler does before a fused optimizer step): read only;
* host latency of scaler.step + update with a fused AdamW, stepscope vs
  torch.amp.GradScaler, and whether either synchronised with the device
  (run under torch.cuda.set_sync_debug_mode("error")).

    python3 bench/kernels/bench_loss_scaler.py [--json out.jsonl] [--no-compile]
"""

import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

from stepscope_kernels import loss_scaler as ls  # noqa: E402


def gpt_like_shapes(layers=24, d=1792, vocab=32000):
    shapes = [(vocab, d)]
    for _ in range(layers):
        shapes += [(3 * d, d), (3 * d,), (d, d), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,),
                   (d,), (d,), (d,), (d,)]
    shapes += [(d,), (d,), (vocab, d)]
    return shapes


def compiled_unscale(grads, inv, found):
    bad = torch.stack([(~torch.isfinite(g)).any() for g in grads]).any()
    for g in grads:
        g.mul_(inv)
    found.copy_(torch.maximum(found, bad.float()))


def main(argv=None):
    p = bench_common.common_args(__doc__)
    p.add_argument("--layers", type=int, default=24)
    args = p.parse_args(argv)
    if not torch.cuda.is_available() or ls._C is None:
        raise SystemExit("needs a CUDA GPU and the built stepscope_kernels extension")
    report = bench_common.Report("loss_scaler", args)
    copy_bw = bench_common.copy_bandwidth()
    report.note(case="copy bandwidth (bf16 copy_, read+write)", gbps=round(copy_bw / 1e9, 1))
    shapes = gpt_like_shapes(args.layers)
    n_params = sum(torch.Size(s).numel() for s in shapes)
    report.note(case="gradient set", tensors=len(shapes), parameters=n_params)

    for dtype in (torch.float32, torch.bfloat16):
        tag = f"{len(shapes)} tensors, {n_params / 1e9:.2f}B params, {str(dtype).replace('torch.', '')}"
        report.header(f"unscale + check, {tag}")
        grads = [torch.randn(s, device="cuda", dtype=dtype) for s in shapes]
        victim = max(range(len(grads)), key=lambda i: grads[i].numel())  # the inf goes into the largest tensor
        nbytes = sum(g.numel() * g.element_size() for g in grads)
        inv = torch.full((), 1.0 - 2 ** -20, device="cuda")  # keeps values stable, but != 1: every element is written
        found = torch.zeros((), device="cuda")
        counts = torch.zeros(len(grads), dtype=torch.int64, device="cuda")
        host_table, tiles = ls._C.plan_grad_table(grads)
        table = host_table.cuda()

        def ours():
            ls._C.unscale_and_check(table, len(grads), tiles, None, inv, found, counts)

        def ours_check_only():
            ls._C.unscale_and_check(table, len(grads), tiles, None, None, found, counts)

        def torch_foreach():
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)

        t_ours = bench_common.time_cuda(ours, iters=args.iters)
        try:
            t_eager = bench_common.time_cuda(torch_foreach, iters=args.iters)
        except NotImplementedError as e:  # torch has no bf16 unscale kernel on CUDA
            report.note(case=f"torch foreach unscale {tag}", error=str(e)[:200])
            t_eager = None
        # The timed kernel is also checked: one inf must be found and counted where it was put.
        found.zero_()
        grads[victim].view(-1)[12345] = float("inf")
        ours()
        located = counts.tolist()
        ok = found.item() == 1.0 and located[victim] == 1 and sum(located) == 1
        report.row(f"stepscope unscale_and_check (1 launch) {tag}", t_ours, 2 * nbytes, copy_bw,
                   {"eager": t_eager} if t_eager else {}, correct=ok)
        if t_eager:
            report.row(f"  torch._amp_foreach_non_finite_check_and_unscale_ {tag}", t_eager, 2 * nbytes, copy_bw, {})
        grads[victim].view(-1)[12345] = 0.0
        found.zero_()
        if not args.no_compile:  # last: compiling ~300 in-place inputs takes a while
            try:
                comp = torch.compile(compiled_unscale)
                t_comp = bench_common.time_cuda(lambda: comp(grads, inv, found), warmup=3, iters=args.iters)
                report.row(f"  torch.compile(isfinite + mul_) {tag}", t_comp, 2 * nbytes, copy_bw, {})
                report.note(case=f"stepscope vs torch.compile {tag}", speedup=round(t_comp / t_ours, 3))
            except Exception as e:  # noqa: BLE001
                report.note(case=f"compiled unscale {tag}", error=f"{type(e).__name__}: {str(e)[:300]}")
        grads[victim].view(-1)[12345] = 0.0
        t_chk = bench_common.time_cuda(ours_check_only, iters=args.iters)
        report.row(f"stepscope check only (read only) {tag}", t_chk, nbytes, copy_bw, {})
        grads = table = host_table = None  # free before the next dtype
        torch.cuda.empty_cache()

    # Host latency of step + update with a fused optimizer: no sync means the
    # host returns long before the device finishes the optimizer kernels.
    report.header("scaler.step(fused AdamW) + update: host latency and syncs")
    params = [torch.nn.Parameter(torch.randn(s, device="cuda")) for s in shapes[: 1 + 12 * 4]]
    n = sum(p.numel() for p in params)
    for name, make in (("stepscope GraphSafeGradScaler", lambda: ls.GraphSafeGradScaler("cuda")),
                       ("torch.amp.GradScaler", lambda: torch.amp.GradScaler("cuda"))):
        opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
        scaler = make()
        loss = sum(p.float().sum() for p in params[:2])
        scaler.scale(loss)
        for p in params:
            p.grad = torch.randn_like(p)
        host, device_s = [], []
        synced = False
        for i in range(12):
            torch.cuda.synchronize()
            if i >= 2:
                torch.cuda.set_sync_debug_mode("error")
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            try:
                t0 = time.perf_counter()
                start.record()
                scaler.step(opt)
                scaler.update()
                end.record()
                host.append(time.perf_counter() - t0)
            except RuntimeError as e:
                if "synchroniz" not in str(e):
                    raise
                synced = True
            finally:
                torch.cuda.set_sync_debug_mode("default")
            if synced:
                break
            torch.cuda.synchronize()
            device_s.append(start.elapsed_time(end) / 1e3)
        h = sorted(host[2:])[len(host[2:]) // 2] if len(host) > 2 else float("nan")
        dv = sorted(device_s[2:])[len(device_s[2:]) // 2] if len(device_s) > 2 else float("nan")
        report.row(f"{name}: step+update host latency ({n / 1e6:.0f}M params)", h, None, copy_bw, {},
                   device_seconds=dv, host_synced=synced)


if __name__ == "__main__":
    main()
