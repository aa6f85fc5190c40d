#!/usr/bin/env python3
"""Benchmark of the fused QKV + RoPE (issue #6 item 1), bf16, on one GPU.

(a) The split + RoPE kernel alone, qkv [B, S, (H + 2 Hkv) D] -> q, k, v in
    [B, H|Hkv, S, D], forward and backward kernels, against the measured copy
    bandwidth, PyTorch eager (view/split/transpose + rotate-half RoPE with
    cached bf16 tables, as workloads/train_gpt.py's cached path writes it)
    and torch.compile of the same function, each twice: with v left a
    strided view of qkv (as train_gpt.py; fewer bytes than the kernel moves)
    and with v made contiguous (the kernel's outputs).
    Bytes moved = read qkv + write q, k, v (+ the fp32 cos/sin rows read).
(b) The module forward + backward (x requires grad, gradients for q, k, v
    given) against the baseline of workloads/train_gpt.py's unfused_qkv_rope
    scenario -- three nn.Linear (with bias), cos/sin tables rebuilt every call
    in the activation dtype, RoPE, transpose to [B, H, S, D] -- in eager mode
    and under torch.compile.

Default shape: d=4096, H=32, D=128, S=4096, B=8, with Hkv=32 (MHA) and 8 (GQA).

    python3 bench/kernels/bench_qkv_rope.py [--json out.jsonl] [--no-compile] [--batch 8 --seq 4096]
"""

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

import importlib  # noqa: E402

# the package also exports a function named qkv_rope: fetch the module itself
qr = importlib.import_module("stepscope_kernels.qkv_rope")  # noqa: E402


# ----------------------------------------------------------- the baselines
def rope_tables_rebuilt(seq_len, head_dim, device, dtype, base=10000.0):
    """workloads/train_gpt.py's rope_tables: [S, D] cos/sin, rebuilt per call."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    emb = torch.cat((torch.outer(t, inv_freq),) * 2, dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):
    return x * cos + rotate_half(x) * sin


def eager_split_rope(qkv, cos_full, sin_full, H, Hkv, D, contiguous_v=False):
    B, S, _ = qkv.shape
    q, k, v = qkv.view(B, S, H + 2 * Hkv, D).split([H, Hkv, Hkv], dim=2)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    if contiguous_v:  # the kernel's outputs: v materialised in [B, Hkv, S, D]
        v = v.contiguous()
    return apply_rope(q, cos_full[:S], sin_full[:S]), apply_rope(k, cos_full[:S], sin_full[:S]), v


class UnfusedBaseline(nn.Module):
    """Three nn.Linear + RoPE with tables rebuilt every call (train_gpt.py, unfused_qkv_rope)."""

    def __init__(self, d, H, Hkv, D, device, dtype):
        super().__init__()
        self.H, self.Hkv, self.D = H, Hkv, D
        self.q_proj = nn.Linear(d, H * D, device=device, dtype=dtype)
        self.k_proj = nn.Linear(d, Hkv * D, device=device, dtype=dtype)
        self.v_proj = nn.Linear(d, Hkv * D, device=device, dtype=dtype)

    def forward(self, x):
        B, S, _ = x.shape
        q = self.q_proj(x).view(B, S, self.H, self.D).transpose(1, 2)
        k = self.k_proj(x).view(B, S, self.Hkv, self.D).transpose(1, 2)
        v = self.v_proj(x).view(B, S, self.Hkv, self.D).transpose(1, 2)
        cos, sin = rope_tables_rebuilt(S, self.D, x.device, x.dtype)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v


def try_time(report, what, fn, iters):
    try:
        return bench_common.time_cuda(fn, iters=iters)
    except Exception as e:  # noqa: BLE001 - a failing baseline is reported, not fatal
        report.note(case=what, error=f"{type(e).__name__}: {str(e)[:300]}")
        return None


def kernel_rows(report, copy_bw, B, S, H, Hkv, D, args):
    dt = torch.bfloat16
    tag = f"B={B} S={S} H={H} Hkv={Hkv} D={D} bf16"
    report.header(f"(a) split + RoPE kernel alone, {tag}")
    nh = H + 2 * Hkv
    qkv = torch.randn(B, S, nh * D, device="cuda", dtype=dt)
    cos, sin = qr.rope_tables(S, D, 10000.0, "cuda")
    elem = qkv.element_size()
    moved = 2 * qkv.numel() * elem + 2 * S * (D // 2) * 4
    C = qr._C
    t_fwd = bench_common.time_cuda(lambda: C.qkv_rope_forward(qkv, cos, sin, H, Hkv, D), iters=args.iters)
    q, k, v = C.qkv_rope_forward(qkv, cos, sin, H, Hkv, D)
    # Correctness of what was timed: the same numbers as the reference (one bf16 ulp).
    rq, rk, rv = qr.qkv_rope_reference(qkv[:1], cos, sin, H, Hkv, D)
    max_rel = max(((a[:1].float() - b.float()).abs() / b.float().abs().clamp_min(1e-3)).max().item()
                  for a, b in ((q, rq), (k, rk), (v, rv)))
    cos_full = torch.cat((cos, cos), -1).to(dt)
    sin_full = torch.cat((sin, sin), -1).to(dt)
    # Baselines: as train_gpt.py writes it (v stays a strided view of qkv,
    # so fewer bytes move than in the kernel) and with v made contiguous
    # (the kernel's outputs, the same bytes moved).
    base = {}
    comp = None if args.no_compile else torch.compile(eager_split_rope)
    for cv, label in ((False, "v view"), (True, "v contiguous")):
        t = try_time(report, f"eager split+rope ({label}) {tag}",
                     lambda: eager_split_rope(qkv, cos_full, sin_full, H, Hkv, D, cv), args.iters)
        if t:
            base[f"eager ({label})"] = t
        if comp is not None:
            t = try_time(report, f"compiled split+rope ({label}) {tag}",
                         lambda: comp(qkv, cos_full, sin_full, H, Hkv, D, cv), args.iters)
            if t:
                base[f"compile ({label})"] = t
    report.row(f"qkv_rope_forward kernel {tag}", t_fwd, moved, copy_bw, base, max_rel_err_vs_reference=max_rel)
    for label, t in base.items():
        report.row(f"  {label}: split+transpose+rope {tag}", t, None, copy_bw, {})
    gq, gk, gv = torch.randn_like(q), torch.randn_like(k), torch.randn_like(v)
    t_bwd = bench_common.time_cuda(lambda: C.qkv_rope_backward(gq, gk, gv, cos, sin), iters=args.iters)
    report.row(f"qkv_rope_backward kernel {tag}", t_bwd, moved, copy_bw, {})


def module_rows(report, copy_bw, B, S, d, H, Hkv, D, args):
    dt = torch.bfloat16
    tag = f"d={d} B={B} S={S} H={H} Hkv={Hkv} bf16"
    report.header(f"(b) module forward + backward, {tag}")
    torch.manual_seed(0)
    baseline = UnfusedBaseline(d, H, Hkv, D, "cuda", dt)
    fused = qr.FusedQKVRoPE.from_linears(baseline.q_proj, baseline.k_proj, baseline.v_proj, H, Hkv,
                                         max_seq_len=S)
    x = torch.randn(B, S, d, device="cuda", dtype=dt, requires_grad=True)
    gq = torch.randn(B, H, S, D, device="cuda", dtype=dt)
    gk = torch.randn(B, Hkv, S, D, device="cuda", dtype=dt)
    gv = torch.randn_like(gk)

    def fwd_bwd(m):
        def run():
            x.grad = None
            for p in m.parameters():
                p.grad = None
            q, k, v = m(x)
            torch.autograd.backward((q, k, v), (gq, gk, gv))
        return run

    # The fused module equals the baseline (to bf16 rounding): checked on what is timed.
    with torch.no_grad():
        a = fused(x[:1])
        b = baseline(x[:1])
    max_rel = max(((u.float() - w.float()).abs().max() / w.float().abs().max()).item() for u, w in zip(a, b))
    iters = max(10, args.iters // 5)
    t_ours = bench_common.time_cuda(fwd_bwd(fused), warmup=3, iters=iters)
    base = {"eager": bench_common.time_cuda(fwd_bwd(baseline), warmup=3, iters=iters)}
    if not args.no_compile:
        comp = torch.compile(baseline)
        t = try_time(report, f"compiled baseline {tag}", fwd_bwd(comp), iters)
        if t:
            base["compile"] = t
    gemm_flops = 3 * 2 * B * S * d * (H + 2 * Hkv) * D  # forward + two backward GEMMs
    report.row(f"FusedQKVRoPE fwd+bwd {tag}", t_ours, None, copy_bw, base,
               gemm_tflops_per_s=gemm_flops / t_ours / 1e12, max_rel_err_vs_baseline=max_rel)
    report.row(f"  3x nn.Linear + rebuilt tables + RoPE (eager) {tag}", base["eager"], None, copy_bw, {},
               gemm_tflops_per_s=gemm_flops / base["eager"] / 1e12)
    if "compile" in base:
        report.row(f"  torch.compile of that baseline {tag}", base["compile"], None, copy_bw, {})


def main(argv=None):
    p = bench_common.common_args(__doc__)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--d-model", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, nargs="+", default=[32, 8])
    args = p.parse_args(argv)
    if not torch.cuda.is_available() or qr._C is None:
        raise SystemExit("needs a CUDA GPU and the built stepscope_kernels extension")
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    report = bench_common.Report("qkv_rope", args)
    copy_bw = bench_common.copy_bandwidth()
    report.note(case="copy bandwidth (bf16 copy_, read+write)", gbps=round(copy_bw / 1e9, 1))
    D = args.d_model // args.heads
    for hkv in args.kv_heads:
        kernel_rows(report, copy_bw, args.batch, args.seq, args.heads, hkv, D, args)
        torch.cuda.empty_cache()
    for hkv in args.kv_heads:
        module_rows(report, copy_bw, args.batch, args.seq, args.d_model, args.heads, hkv, D, args)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
