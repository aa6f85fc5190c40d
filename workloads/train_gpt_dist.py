#!/usr/bin/env python3
"""Multi-rank GPT training (DDP or FSDP) that writes one torch.profiler trace per rank.

The data-parallel counterpart of train_gpt.py (same model code, imported from it).
Each ``--scenario`` has one known communication behaviour, so that the traces
test stepscope's communication, overlap, load-imbalance and straggler findings:

  healthy            DDP with its default 25 MB buckets: gradient all-reduce
                     overlaps the rest of backward.
  fsdp_healthy       FSDP FULL_SHARD with backward prefetch: all-gather and
                     reduce-scatter overlap compute.
  straggler          like healthy, but one rank (--slow-rank) spends
                     --straggler-ms more host time before every forward (a slow
                     input pipeline on one node): every other rank waits in its
                     first all-reduce of the step.
  no_overlap         DDP with one bucket larger than the model: the whole
                     gradient is all-reduced after backward ends (exposed).
  small_collectives  DDP with 0.05 MB buckets: hundreds of small all-reduces per
                     step, latency bound.

Run with torchrun, one process per GPU (NCCL), or on CPU with gloo:
    torchrun --nproc-per-node 8 workloads/train_gpt_dist.py --scenario straggler --out-dir /tmp/straggler
    torchrun --nproc-per-node 4 workloads/train_gpt_dist.py --scenario healthy --device cpu \
        --d-model 64 --n-heads 4 --n-layers 2 --seq-len 64 --batch-size 2 --vocab 512 --out-dir /tmp/cpu
Traces land in OUT_DIR/rank<R>.json.gz; OUT_DIR/meta.json records the run.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_gpt import DEFAULTS, GPT, make_optimizer  # noqa: E402  (same model as the single-GPU scenarios)

SCENARIOS = {
    "healthy": dict(wrap="ddp", bucket_mb=25.0),
    "fsdp_healthy": dict(wrap="fsdp", bucket_mb=None),
    "straggler": dict(wrap="ddp", bucket_mb=25.0, straggle=True),
    "no_overlap": dict(wrap="ddp", bucket_mb=1.0e5),
    "small_collectives": dict(wrap="ddp", bucket_mb=0.05),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    p.add_argument("--out-dir", required=True)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--d-model", type=int, default=DEFAULTS["d_model"])
    p.add_argument("--n-heads", type=int, default=DEFAULTS["n_heads"])
    p.add_argument("--n-layers", type=int, default=DEFAULTS["n_layers"])
    p.add_argument("--seq-len", type=int, default=DEFAULTS["seq_len"])
    p.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"])
    p.add_argument("--vocab", type=int, default=DEFAULTS["vocab"])
    p.add_argument("--slow-rank", type=int, default=-1, help="straggler rank (default: the last)")
    p.add_argument("--straggler-ms", type=float, default=40.0)
    p.add_argument("--pre-steps", type=int, default=3)
    p.add_argument("--active", type=int, default=3)
    return p.parse_args(argv)


def model_config(args, on_cuda):
    cfg = dict(DEFAULTS)
    cfg.update(d_model=args.d_model, n_heads=args.n_heads, n_layers=args.n_layers,
               seq_len=args.seq_len, batch_size=args.batch_size, vocab=args.vocab,
               dtype="bf16" if on_cuda else "fp32")
    return argparse.Namespace(**cfg)


def wrap_model(model, sc, dev, on_cuda):
    if sc["wrap"] == "fsdp":
        from torch.distributed.fsdp import BackwardPrefetch, FullyShardedDataParallel, ShardingStrategy
        return FullyShardedDataParallel(model, sharding_strategy=ShardingStrategy.FULL_SHARD,
                                        backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                                        device_id=dev, use_orig_params=True)
    from torch.nn.parallel import DistributedDataParallel
    return DistributedDataParallel(model, device_ids=[dev.index] if on_cuda else None,
                                   bucket_cap_mb=sc["bucket_mb"])


def main(argv=None):
    args = parse_args(argv)
    sc = SCENARIOS[args.scenario]
    on_cuda = args.device == "cuda"
    if on_cuda and not torch.cuda.is_available():
        raise SystemExit("--device cuda but no CUDA device; use --device cpu (gloo)")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local_rank) if on_cuda else torch.device("cpu")
    if on_cuda:
        torch.cuda.set_device(dev)
    dist.init_process_group("nccl" if on_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    slow_rank = args.slow_rank if args.slow_rank >= 0 else world - 1

    cfg = model_config(args, on_cuda)
    torch.manual_seed(0)  # same initial weights on every rank
    dtype = torch.bfloat16 if cfg.dtype == "bf16" else torch.float32
    model = GPT(cfg).to(device=dev, dtype=dtype)
    model = wrap_model(model, sc, dev, on_cuda)
    opt = make_optimizer(model, "fused" if on_cuda else "foreach")

    gen = torch.Generator(device=dev).manual_seed(1000 + rank)  # each rank its own shard
    B, S = cfg.batch_size, cfg.seq_len
    tokens = torch.randint(0, cfg.vocab, (B, S + 1), device=dev, generator=gen)
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    def step():
        if sc.get("straggle") and rank == slow_rank:
            time.sleep(args.straggler_ms / 1000.0)  # this rank's input arrives late
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(args.pre_steps):
        loss = step()
    if on_cuda:
        torch.cuda.synchronize()
    dist.barrier()

    from torch.profiler import ProfilerActivity, profile, schedule
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_cuda else [])
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.join(args.out_dir, f"rank{rank}.json.gz")
    times = []
    with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=args.active, repeat=1),
                 on_trace_ready=lambda prof: prof.export_chrome_trace(out), record_shapes=True) as prof:
        for _ in range(2 + args.active):
            t = time.perf_counter()
            loss = step()
            if on_cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
            prof.step()
    dist.barrier()
    if rank == 0:
        meta = {"scenario": args.scenario, "world_size": world, "backend": dist.get_backend(),
                "slow_rank": slow_rank if sc.get("straggle") else None,
                "straggler_ms": args.straggler_ms if sc.get("straggle") else None,
                "config": vars(cfg), "wrap": sc["wrap"], "bucket_cap_mb": sc["bucket_mb"],
                "torch": torch.__version__,
                "device": torch.cuda.get_device_name(dev) if on_cuda else "cpu"}
        with open(os.path.join(args.out_dir, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
    print(f"[{args.scenario} rank {rank}/{world}] step ms: "
          + ", ".join(f"{t * 1e3:.1f}" for t in times) + f"; loss {float(loss):.3f}; {out}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
