"""Traces whose shapes the bundled examples do not have, for checking
`stepscope analyze --compat hta-0.5.0` against HTA on data the rules were not
worked out on (docs/hta_compat.md §12):

  with_stack     the GPT training step of train_gpt.py profiled with
                 with_stack=True and with_modules=True: tens of thousands of
                 python_function rows around the operators;
  side_streams   a pipelined input/compute/output loop on three CUDA streams:
                 pinned H2D copies on one stream, bf16 GEMMs on another, D2H on a
                 third, ordered by CUDA events (cudaStreamWaitEvent rows), and
                 pageable copies and memsets on the default stream;
  amp_fp16       fp16 autocast with torch.amp.GradScaler (unscale, inf checks,
                 scaler update: foreach and non-finite-check kernels);
  two_cycles     the profiler schedule repeated twice (two traces, steps 2-3
                 and 6-7), written by on_trace_ready, the second one kept;
  graphs         torch.compile(mode="reduce-overhead") training: Triton kernels
                 replayed from CUDA graphs (cudaGraphLaunch);
  inference      eager bf16 inference under torch.inference_mode, no backward;
  copies         every copy kind PyTorch issues: pageable and pinned H2D, D2H,
                 D2D, fills and zeroing, small and large.

    python3 workloads/parity_traces.py OUT_DIR [SCENARIO ...]

Writes OUT_DIR/<scenario>/rank0.json.gz (gzip by export_chrome_trace).
"""
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_gpt import DEFAULTS, GPT  # noqa: E402

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def small_gpt(dtype):
    import argparse

    cfg = dict(DEFAULTS)
    cfg.update(d_model=512, n_heads=8, n_layers=4, seq_len=512, batch_size=8, vocab=8192)
    cfg = argparse.Namespace(**cfg)
    return GPT(cfg).cuda().to(dtype), cfg


def tokens(cfg):
    return torch.randint(0, cfg.vocab, (cfg.batch_size, cfg.seq_len), device="cuda")


def profile_steps(out, step, warm_steps, **profiler_args):
    """Untraced warm-up steps, then wait 1 / warmup 1 / active 3 under the
    profiler, each step ending in a host sync on its loss (as training loops
    that log the loss do)."""
    for _ in range(warm_steps):
        step()
    torch.cuda.synchronize()
    with profile(activities=ACTIVITIES, schedule=schedule(wait=1, warmup=1, active=3), **profiler_args) as prof:
        for _ in range(5):
            step().item()
            prof.step()
    prof.export_chrome_trace(out)


def bf16_training_step(compile_mode=None):
    """One training step of the small bf16 GPT with fused AdamW on a fixed
    batch, optionally through torch.compile; returns the step's loss."""
    model, cfg = small_gpt(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    forward = torch.compile(model, mode=compile_mode) if compile_mode else model
    x, y = tokens(cfg), tokens(cfg)

    def step():
        loss = forward(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return step


def with_stack(out):
    profile_steps(out, bf16_training_step(), 3, record_shapes=True, with_stack=True, with_modules=True)


def side_streams(out):
    n, chunks = 4096, 6
    w = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    host_in = [torch.randn(n, n, dtype=torch.bfloat16).pin_memory() for _ in range(chunks)]
    host_out = [torch.empty(n, n, dtype=torch.bfloat16).pin_memory() for _ in range(chunks)]
    pageable = torch.randn(1024, 1024)
    copy_in, compute, copy_out = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()

    def step():
        for i in range(chunks):
            loaded = torch.cuda.Event()
            with torch.cuda.stream(copy_in):
                dev = host_in[i].to("cuda", non_blocking=True)
                loaded.record()
            done = torch.cuda.Event()
            with torch.cuda.stream(compute):
                compute.wait_event(loaded)
                r = F.gelu(dev @ w) @ w
                done.record()
            with torch.cuda.stream(copy_out):
                copy_out.wait_event(done)
                host_out[i].copy_(r, non_blocking=True)
            dev.record_stream(compute)
            r.record_stream(copy_out)
        side = pageable.to("cuda")  # default stream, pageable source
        side.zero_()
        return side.sum()

    profile_steps(out, step, 2, record_shapes=True, profile_memory=True)


def amp_fp16(out):
    model, cfg = small_gpt(torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
    scaler = torch.amp.GradScaler("cuda")
    x, y = tokens(cfg), tokens(cfg)

    def step():
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss

    profile_steps(out, step, 3, record_shapes=True, profile_memory=True, with_flops=True)


def two_cycles(out):
    step = bf16_training_step()
    written = []

    def ready(p):
        path = out if len(written) else out + ".first.json.gz"
        p.export_chrome_trace(path)
        written.append(path)

    with profile(activities=ACTIVITIES, record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready) as prof:
        for _ in range(9):
            step().item()
            prof.step()
    if os.path.exists(out + ".first.json.gz"):
        os.remove(out + ".first.json.gz")  # one trace per folder: HTA would take both as ranks


def graphs(out):
    profile_steps(out, bf16_training_step("reduce-overhead"), 5, record_shapes=True)


def inference(out):
    model, cfg = small_gpt(torch.bfloat16)
    model.eval()
    x, y = tokens(cfg), tokens(cfg)

    def step():
        with torch.inference_mode():
            return model(x, y)

    profile_steps(out, step, 3, record_shapes=True, with_flops=True)


def copies(out):
    small, big = 4096, 16 << 20
    pageable = [torch.randn(small), torch.randn(big // 4)]
    pinned = [t.clone().pin_memory() for t in pageable]
    dev = [torch.empty(t.numel(), device="cuda") for t in pageable]

    def step():
        for h, p, d in zip(pageable, pinned, dev):
            d.copy_(h)  # pageable H2D
            d.copy_(p, non_blocking=True)  # pinned H2D
            e = d.clone()  # D2D
            e.fill_(1.5)
            e.zero_()
            p.copy_(e, non_blocking=True)  # D2H into pinned
            h.copy_(e)  # D2H into pageable
        return dev[0].sum()

    profile_steps(out, step, 2, record_shapes=True, profile_memory=True)


SCENARIOS = {"with_stack": with_stack, "side_streams": side_streams, "amp_fp16": amp_fp16,
             "two_cycles": two_cycles, "graphs": graphs, "inference": inference, "copies": copies}


def main():
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(SCENARIOS)
    failed = []
    for name in names:
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)
        start = time.time()
        try:
            SCENARIOS[name](os.path.join(out_dir, name, "rank0.json.gz"))
            print(f"{name}: {time.time() - start:.1f} s", flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on with the others
            failed.append(name)
            print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
        torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
