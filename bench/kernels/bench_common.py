"""Shared helpers of the kernel benchmarks (bench/kernels/bench_*.py).

Every benchmark prints, per row: median time, achieved GB/s, % of the
measured device copy bandwidth, and the speedup against each baseline
(baseline time / row time), and appends the same as one JSON object per line
to --json FILE so the results can be quoted in docs/performance.md.

Conventions: bytes_moved counts every byte a kernel must read plus every byte
it must write (a copy of N bytes moves 2N); times are medians over CUDA-event
timed iterations, with the L2 cache flushed before each iteration (a 256 MB
buffer is overwritten; the H200's L2 is 50 MB) so no run profits from data
left by the previous one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
from typing import Callable, Dict, Optional

import torch

_FLUSH_BYTES = 256 << 20
_flush_buf: Optional[torch.Tensor] = None


def _flush_l2() -> None:
    global _flush_buf
    if _flush_buf is None:
        _flush_buf = torch.empty(_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    _flush_buf.fill_(1)


# GPU cycles of the spin that hides the host's launch time (hide_host): 2 ms
# at the H200's 1.98 GHz boost clock, longer than the host takes to launch
# one call of the benchmarks' functions (FlexAttention's compiled wrapper and
# our autograd Function take well under a millisecond).
_HIDE_HOST_CYCLES = 4_000_000


def time_cuda(fn: Callable[[], object], warmup: int = 10, iters: int = 50, flush: bool = True,
              hide_host: bool = False) -> float:
    """Median seconds of fn() on the current stream, measured with CUDA events.

    hide_host: before each timed call the GPU spins (torch.cuda._sleep) while
    the host launches the call's kernels behind it, so the events time the
    GPU's work alone, not the gaps a slow launch would leave in a short call
    (a kernel of 70 us behind 100 us of Python times as 100 us otherwise)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        if flush:
            _flush_l2()
        if hide_host:
            torch.cuda._sleep(_HIDE_HOST_CYCLES)
        starts[i].record()
        fn()
        ends[i].record()
        if hide_host:
            ends[i].synchronize()  # each call starts behind its own spin, not behind the last call's queue
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) / 1e3


def copy_bandwidth(nbytes: int = 1 << 30) -> float:
    """Device copy bandwidth in bytes/s, read + write counted (dst.copy_(src) of bf16 buffers)."""
    n = nbytes // 2
    src = torch.empty(n, dtype=torch.bfloat16, device="cuda").normal_()
    dst = torch.empty_like(src)
    t = time_cuda(lambda: dst.copy_(src), warmup=5, iters=30)
    return 2 * n * 2 / t


class Report:
    """Prints rows and collects them as JSON lines (--json)."""

    def __init__(self, bench: str, args: argparse.Namespace):
        self.bench = bench
        self.json_path = getattr(args, "json", None)
        self.records = []
        self.meta = {
            "bench": bench,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "python": platform.python_version(),
            "command": " ".join([sys.executable] + sys.argv),
        }
        print(f"# {bench}: {self.meta['gpu']}, torch {self.meta['torch']}, CUDA {self.meta['cuda']}, "
              f"{self.meta['date']}")

    def header(self, title: str) -> None:
        print(f"\n## {title}")
        print(f"{'case':58s} {'time':>10s} {'GB/s':>8s} {'%copy':>6s}  speedups")

    def row(self, name: str, seconds: float, bytes_moved: Optional[float], copy_bw: float,
            baselines: Optional[Dict[str, float]] = None, **extra) -> dict:
        rec = print_row(name, seconds, bytes_moved, copy_bw, baselines or {})
        rec.update(extra)
        rec.update({k: self.meta[k] for k in ("bench", "date", "gpu", "torch")})
        self.records.append(rec)
        if self.json_path:
            with open(self.json_path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        return rec

    def note(self, **fields) -> None:
        rec = dict(fields)
        rec.update({k: self.meta[k] for k in ("bench", "date", "gpu", "torch", "command")})
        print("  " + ", ".join(f"{k}={v}" for k, v in fields.items()))
        if self.json_path:
            with open(self.json_path, "a") as f:
                f.write(json.dumps(rec) + "\n")


def print_row(name: str, seconds: float, bytes_moved: Optional[float], copy_bw: float,
              baselines: Dict[str, float]) -> dict:
    """One result line: time, GB/s, % of copy bandwidth, speedup vs each baseline (their time / ours)."""
    gbps = bytes_moved / seconds / 1e9 if bytes_moved else None
    pct = 100.0 * bytes_moved / seconds / copy_bw if bytes_moved else None
    speed = {k: v / seconds for k, v in baselines.items()}
    t = f"{seconds * 1e6:9.1f}us" if seconds < 1e-2 else f"{seconds * 1e3:8.2f}ms"
    g = f"{gbps:8.0f}" if gbps is not None else f"{'-':>8s}"
    p = f"{pct:5.1f}%" if pct is not None else f"{'-':>6s}"
    s = "  ".join(f"{v:.2f}x vs {k}" for k, v in speed.items())
    print(f"{name:58s} {t:>10s} {g} {p}  {s}")
    return {"case": name, "seconds": seconds, "bytes": bytes_moved, "gbps": gbps, "pct_of_copy": pct,
            "speedup": speed}


def common_args(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", help="append one JSON object per result row to this file")
    p.add_argument("--iters", type=int, default=50, help="timed iterations per case (median reported)")
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile baselines")
    return p


def compiled_or_none(fn, report: Report, what: str, **options):
    """torch.compile(fn, **options), or None (with a note) when compilation fails on this setup."""
    try:
        return torch.compile(fn, **options)
    except Exception as e:  # noqa: BLE001 - any failure means no compiled baseline, reported
        report.note(case=what, error=f"torch.compile failed: {type(e).__name__}: {e}")
        return None
