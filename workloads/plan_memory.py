#!/usr/bin/env python3
"""Measured peak GPU memory of FSDP2 training steps, for issue #28 item 3.

`stepscope plan` predicts the memory per GPU of a training layout; this script
measures the real thing on one GPU so the prediction can be checked against
torch.cuda.max_memory_reserved(). It predicts nothing itself.

Every configuration runs in its own process (a fresh caching allocator, and
PYTORCH_CUDA_ALLOC_CONF can differ per row):

  model     HF transformers LlamaForCausalLM from a LlamaConfig, random init
            (no download), attn_implementation="sdpa", built directly on the
            GPU in fp32.
  sharding  FSDP2 (torch.distributed.fsdp.fully_shard), world size 1, NCCL
            process group on one GPU; every decoder layer is sharded, then
            the root. MixedPrecisionPolicy(param_dtype=bf16,
            reduce_dtype=fp32): fp32 master params, fp32 gradients, bf16
            compute. reshard_after_forward left at its default (True).
  optimizer torch.optim.AdamW(lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1),
            foreach left at its default unless a row says "fused"; the
            implementation that ran is recorded (optimizer_impl).
  recompute none     | full: checkpoint_wrapper (non-reentrant
            torch.utils.checkpoint) around every decoder layer, applied
            before fully_shard | selective: the same wrapper with
            context_fn=create_selective_checkpoint_contexts(policy), the
            policy saving the outputs of every aten.mm and SDPA op (plus
            aten._scaled_mm and aten.max for fp8) and recomputing the rest |
            selective_tt: torchtitan's "op" policy exactly, which saves only
            every second aten.mm.
  dtype     bf16 (FSDP mixed precision) | fp8: in addition torchao's
            convert_to_float8_training (tensorwise dynamic scaling, eager,
            every nn.Linear but lm_head).
  data      random token ids already on the GPU, labels = input ids (the HF
            loss shifts them and upcasts the logits to fp32).

Per configuration: 3 warm-up steps, torch.cuda.reset_peak_memory_stats(),
3 measured steps (peak over those alone; median step time), then one more
"phase" step with a reset before forward, before backward and before
optimizer.step()+zero_grad() (peak of each phase). The peak over the whole
run is the max of the per-stretch peaks. An OOM is recorded as status "OOM"
with the phase and step where it happened.

    python3 workloads/plan_memory.py --configs all --out OUT
    python3 workloads/plan_memory.py --configs l1b_s2k_none l1b_s2k_full --out OUT
    python3 workloads/plan_memory.py --list
    python3 workloads/plan_memory.py --markdown OUT/results.jsonl   (the README tables)
    python3 workloads/plan_memory.py --csv OUT/results.jsonl        (rows for `stepscope plan validate`)

Writes OUT/results.jsonl (one JSON object a configuration) and prints a
table last. Run by workloads/plan_memory.sh; data in workloads/plan_memory/.
"""

import argparse
import json
import os
import subprocess
import sys
import time

# --------------------------------------------------------------------------
# Model shapes. Llama 3.2 1B / 3B and Llama 3.1 8B as published (rope
# scaling left out: it changes no tensor's size); the 0.5B is a shape of our
# own with the Llama 3 vocabulary. tie = tied input/output embeddings.
MODELS = {
    "llama-0.5b": dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                       num_attention_heads=16, num_key_value_heads=8, vocab_size=128256,
                       tie_word_embeddings=True),
    "llama-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                     num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                     tie_word_embeddings=True),
    "llama-3b": dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                     num_attention_heads=24, num_key_value_heads=8, vocab_size=128256,
                     tie_word_embeddings=True),
    "llama-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                     num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                     tie_word_embeddings=False),
}
COMMON_ARCH = dict(rms_norm_eps=1e-5, rope_theta=500000.0, max_position_embeddings=131072,
                   hidden_act="silu", attention_bias=False, mlp_bias=False)


def C(model, seq, mb, recompute, dtype="bf16", ga=1, alloc_conf=None, optim="default", world=1):
    c = dict(model=model, seq=seq, micro_batch=mb, grad_accum=ga, recompute=recompute,
             dtype=dtype, alloc_conf=alloc_conf, optim=optim)
    if world > 1:  # FSDP2 over `world` GPUs of one host, one process each
        c["world"] = world
    return c


# --------------------------------------------------------------------------
# The configurations, in the order "all" runs them. Most differ from
# l1b_s2k_none in one thing. name -> what varies.
CONFIGS = {
    # size at seq 2048, micro-batch 4, no recompute
    "l05b_s2k_none": C("llama-0.5b", 2048, 4, "none"),
    "l1b_s2k_none": C("llama-1b", 2048, 4, "none"),
    "l3b_s2k_none": C("llama-3b", 2048, 4, "none"),
    # recompute at 1B, seq 2048
    "l1b_s2k_full": C("llama-1b", 2048, 4, "full"),
    "l1b_s2k_sel": C("llama-1b", 2048, 4, "selective"),
    "l1b_s2k_seltt": C("llama-1b", 2048, 4, "selective_tt"),
    # fp8 (torchao float8, eager)
    "l1b_s2k_none_fp8": C("llama-1b", 2048, 4, "none", dtype="fp8"),
    # gradient accumulation: same tokens per step as l1b_s2k_none
    "l1b_s2k_mb2ga2_none": C("llama-1b", 2048, 2, "none", ga=2),
    # sequence length at micro-batch 1
    "l1b_s8k_none": C("llama-1b", 8192, 1, "none"),
    "l1b_s32k_none": C("llama-1b", 32768, 1, "none"),
    "l1b_s32k_sel": C("llama-1b", 32768, 1, "selective"),
    "l1b_s32k_full": C("llama-1b", 32768, 1, "full"),
    "l3b_s8k_sel": C("llama-3b", 8192, 1, "selective"),
    # expandable segments, same as a row above otherwise
    "l1b_s2k_none_exp": C("llama-1b", 2048, 4, "none", alloc_conf="expandable_segments:True"),
    "l1b_s32k_sel_exp": C("llama-1b", 32768, 1, "selective",
                          alloc_conf="expandable_segments:True"),
    # 8B: foreach AdamW (default) needs a temporary of 4 B/param in step();
    # the fused row shows the same run without it
    "l8b_s2k_full": C("llama-8b", 2048, 1, "full"),
    "l8b_s2k_full_fused": C("llama-8b", 2048, 1, "full", optim="fused"),
    # two GPUs: FSDP2 shards the parameters, gradients and optimizer states
    # in two (predictions made before these ran: sharding was not measured
    # by any row above)
    "w2_l1b_s2k_none": C("llama-1b", 2048, 4, "none", world=2),
    "w2_l3b_s2k_none": C("llama-3b", 2048, 4, "none", world=2),
    "w2_l3b_s8k_seltt": C("llama-3b", 8192, 1, "selective_tt", world=2),
    "w2_l8b_s2k_full": C("llama-8b", 2048, 1, "full", world=2),
    "w2_l8b_s4k_seltt": C("llama-8b", 4096, 1, "selective_tt", world=2),
    "w2_l8b_s8k_full_ga2": C("llama-8b", 8192, 1, "full", ga=2, world=2),
}

WARMUP, MEASURED = 3, 3
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}


# --------------------------------------------------------------------------
# Worker: one configuration in this process.

def worker(name, out_dir, port, smoke=False):
    for k, v in MULTICAST_OFF.items():
        os.environ[k] = v
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("TORCHAO_FORCE_SKIP_LOADING_SO_FILES", "1")  # float8 needs no C++ ops
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])

    import gc
    import statistics
    import traceback
    from collections import defaultdict
    from functools import partial

    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        CheckpointImpl, checkpoint_wrapper)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = dict(CONFIGS[name])
    arch = dict(MODELS[cfg["model"]], **COMMON_ARCH)
    if smoke:  # tiny CPU run to check the script, not a measurement
        arch.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, vocab_size=512)
        cfg.update(seq=64, micro_batch=2)
    dev = torch.device("cpu" if smoke else "cuda", rank if not smoke else None)
    cuda = not smoke
    aten = torch.ops.aten

    rec = {"name": name, "config": cfg, "arch": arch, "status": "running", "rank": rank, "world_size": world,
           "alloc_conf_env": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
           "warmup_steps": WARMUP, "measured_steps": MEASURED,
           "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                        "transformers": transformers.__version__,
                        "cuda": torch.version.cuda,
                        "cudnn": torch.backends.cudnn.version() if cuda else None,
                        "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None}}
    if cuda:
        p = torch.cuda.get_device_properties(rank)
        rec["gpu"] = {"name": p.name, "total_memory": p.total_memory,
                      "mem_get_info_start": list(torch.cuda.mem_get_info())}
    points = {}
    rec["points"] = points
    state = {"phase": "init", "step": None}

    def alloc():
        return torch.cuda.memory_allocated() if cuda else 0

    def reserved():
        return torch.cuda.memory_reserved() if cuda else 0

    def point(label):
        if cuda:
            torch.cuda.synchronize()
            free, total = torch.cuda.mem_get_info()
            points[label] = {"allocated": alloc(), "reserved": reserved(),
                             "device_used": total - free}
        else:
            points[label] = {}

    def peaks():
        if not cuda:
            return {"max_allocated": 0, "max_reserved": 0}
        torch.cuda.synchronize()
        return {"max_allocated": torch.cuda.max_memory_allocated(),
                "max_reserved": torch.cuda.max_memory_reserved()}

    def reset():
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()

    STAT_KEYS = ["allocated_bytes.all.peak", "reserved_bytes.all.peak",
                 "active_bytes.all.peak", "requested_bytes.all.peak",
                 "inactive_split_bytes.all.peak", "allocated_bytes.all.current",
                 "reserved_bytes.all.current", "inactive_split_bytes.all.current",
                 "segment.all.current", "segment.all.peak",
                 "num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"]

    def stats():
        if not cuda:
            return {}
        s = torch.cuda.memory_stats()
        return {k: s.get(k) for k in STAT_KEYS}

    stretch_peaks = []  # peaks of every stretch between resets, for the whole-run peak

    def close_stretch(label):
        pk = peaks()
        pk["stretch"] = label
        stretch_peaks.append(pk)
        return pk

    try:
        t0 = time.perf_counter()
        if cuda:
            torch.cuda.set_device(dev)
            dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
        else:
            dist.init_process_group("gloo", rank=rank, world_size=world)
        mesh = init_device_mesh(dev.type, (world,))
        point("after_init_process_group")

        # ---- model
        state["phase"] = "build"
        torch.manual_seed(0)
        lcfg = LlamaConfig(**arch, attn_implementation="sdpa", use_cache=False)
        with torch.device(dev):
            model = LlamaForCausalLM(lcfg)
        model.train()
        rec["attn_implementation"] = model.config._attn_implementation
        rec["param_count"] = sum(p.numel() for p in model.parameters())  # tied counted once
        rec["param_count_non_embedding"] = rec["param_count"] - model.model.embed_tokens.weight.numel() - (
            0 if arch["tie_word_embeddings"] else model.lm_head.weight.numel())
        rec["param_dtype_master"] = str(next(model.parameters()).dtype)
        point("after_model_build_unsharded")

        if cfg["dtype"] == "fp8":
            import torchao
            from torchao.float8 import Float8LinearConfig, convert_to_float8_training
            f8cfg = Float8LinearConfig()
            convert_to_float8_training(
                model, config=f8cfg,
                module_filter_fn=lambda mod, fqn: fqn != "lm_head"
                and mod.in_features % 16 == 0 and mod.out_features % 16 == 0)
            rec["versions"]["torchao"] = torchao.__version__
            rec["fp8"] = {"recipe": "tensorwise dynamic (Float8LinearConfig())",
                          "enable_fsdp_float8_all_gather": f8cfg.enable_fsdp_float8_all_gather,
                          "float8_linears": sum(type(m).__name__ == "Float8Linear"
                                                for m in model.modules()),
                          "torch_compile": False}

        # ---- recompute
        save_ops = {aten.mm.default, aten._scaled_dot_product_flash_attention.default,
                    aten._scaled_dot_product_efficient_attention.default,
                    aten._scaled_dot_product_cudnn_attention.default,
                    aten._scaled_mm.default, aten.max.default}

        def policy_all_mm(ctx, func, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if func in save_ops else CheckpointPolicy.PREFER_RECOMPUTE

        def policy_tt(ctx, func, *args, meta, **kwargs):
            # torchtitan's "op" SAC: save the listed ops, but only every second mm
            key = ("recompute" if ctx.is_recompute else "forward") + "_mm_count"
            if func == aten.mm.default:
                meta[key] += 1
            save = func in save_ops and not (func == aten.mm.default and meta[key] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE

        rc = cfg["recompute"]
        if rc != "none":
            kw = {}
            if rc == "selective":
                kw["context_fn"] = lambda: create_selective_checkpoint_contexts(policy_all_mm)
            elif rc == "selective_tt":
                kw["context_fn"] = lambda: create_selective_checkpoint_contexts(
                    partial(policy_tt, meta=defaultdict(int)))
            elif rc != "full":
                raise ValueError(rc)
            for i, layer in enumerate(model.model.layers):
                model.model.layers[i] = checkpoint_wrapper(
                    layer, checkpoint_impl=CheckpointImpl.NO_REENTRANT,
                    preserve_rng_state=False, **kw)

        # ---- FSDP2
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh, mp_policy=mp)
        fully_shard(model, mesh=mesh, mp_policy=mp)
        rec["fsdp"] = {"world_size": world, "units": len(model.model.layers) + 1,
                       "reshard_after_forward": "default (True)",
                       "param_dtype": "bfloat16", "reduce_dtype": "float32"}
        gc.collect()
        point("after_model_build")  # fp32 master params, sharded

        # ---- optimizer
        okw = dict(lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
        if cfg["optim"] == "fused":
            okw["fused"] = True
        elif cfg["optim"] != "default":
            raise ValueError(cfg["optim"])
        opt = torch.optim.AdamW(model.parameters(), **okw)
        params = [p for g in opt.param_groups for p in g["params"]]
        if okw.get("fused"):
            impl = "fused"
        else:
            from torch.optim.optimizer import _default_to_fused_or_foreach
            _, foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
            impl = "foreach" if foreach else "for-loop"
        rec["optimizer"] = {"class": "AdamW", "kwargs": okw, "defaults_foreach": opt.defaults.get("foreach"),
                            "defaults_fused": opt.defaults.get("fused")}
        rec["optimizer_impl"] = impl
        rec["param_type"] = type(params[0]).__name__
        point("after_optimizer_init")

        # ---- data
        seq, mb, ga = cfg["seq"], cfg["micro_batch"], cfg["grad_accum"]
        g = torch.Generator(device=dev).manual_seed(1 + rank)
        batches = [torch.randint(0, arch["vocab_size"], (mb, seq), device=dev, generator=g)
                   for _ in range(2 * ga)]
        rec["tokens_per_step"] = seq * mb * ga

        # which attention / matmul ops ran, counted on the first step's forward+backward
        from torch.utils._python_dispatch import TorchDispatchMode

        class OpCount(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.counts = defaultdict(int)

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                n = str(func)
                if ("scaled_dot_product" in n or "attention" in n or n.startswith("aten.mm")
                        or "scaled_mm" in n or n.startswith("aten.addmm") or n.startswith("aten.bmm")):
                    self.counts[n] += 1
                return func(*args, **(kwargs or {}))

        def fwd_bwd(x, phased=None):
            state["phase"] = "forward"
            out = model(input_ids=x, labels=x, use_cache=False)
            loss = out.loss / ga
            del out
            if phased is not None:
                phased("forward")
            state["phase"] = "backward"
            loss.backward()
            if phased is not None:
                phased("backward")
            return loss.detach()

        def opt_step():
            state["phase"] = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)

        step_times = []
        losses = []

        def train_step(i, phased=None, count_ops=None):
            state["step"] = i
            if cuda:
                torch.cuda.synchronize()
            ts = time.perf_counter()
            tot = 0.0
            for k in range(ga):
                x = batches[(i * ga + k) % len(batches)]
                if count_ops is not None:
                    with count_ops:
                        tot = tot + fwd_bwd(x, phased)
                else:
                    tot = tot + fwd_bwd(x, phased)
            if phased is not None:
                phased("pre_optimizer")
            opt_step()
            if phased is not None:
                phased("optimizer")
            lv = float(tot)  # host sync
            if cuda:
                torch.cuda.synchronize()
            step_times.append((time.perf_counter() - ts) * 1e3)
            losses.append(lv)

        # warm-up
        oc = OpCount()
        reset()
        for i in range(WARMUP):
            train_step(i, count_ops=oc if i == 0 else None)
            if i == 0:
                point("after_first_step")  # optimizer state exists, grads freed
        rec["ops_first_step_fwd_bwd"] = dict(oc.counts)
        rec["warmup"] = {"peaks": close_stretch("warmup"), "memory_stats": stats()}
        point("after_warmup")

        # measured
        reset()
        t_meas = len(step_times)
        for i in range(WARMUP, WARMUP + MEASURED):
            train_step(i)
        rec["measured"] = {"peaks": close_stretch("measured"), "memory_stats": stats()}
        mt = step_times[t_meas:]
        rec["step_ms"] = {"median": statistics.median(mt), "all_measured": mt,
                          "warmup": step_times[:t_meas]}
        rec["tokens_per_s"] = rec["tokens_per_step"] / (statistics.median(mt) / 1e3)
        point("after_measured")

        # one phase step: peaks per phase
        phase_rec = {}
        micro = {"n": 0}

        def phased(label):
            pk = close_stretch("phase_" + label)
            pk["allocated_after"] = alloc()
            pk["reserved_after"] = reserved()
            if label in ("forward", "backward"):
                key = f"{label}_mb{micro['n']}" if ga > 1 else label
                if label == "backward":
                    micro["n"] += 1
            else:
                key = label
            phase_rec[key] = pk
            reset()

        reset()
        phase_rec["start"] = {"allocated": alloc(), "reserved": reserved()}
        train_step(WARMUP + MEASURED, phased=phased)
        rec["phase_step"] = phase_rec
        rec["phase_step_ms"] = step_times[-1]

        whole_a = max(p["max_allocated"] for p in stretch_peaks)
        whole_r = max(p["max_reserved"] for p in stretch_peaks)
        rec["peak_whole_run"] = {"max_allocated": whole_a, "max_reserved": whole_r}
        rec["peak_measured"] = rec["measured"]["peaks"]
        rec["memory_stats_end"] = stats()
        rec["losses"] = losses
        rec["status"] = "ok"
        rec["wall_s"] = time.perf_counter() - t0
    except torch.OutOfMemoryError as e:
        rec["status"] = "OOM"
        rec["oom"] = {"phase": state["phase"], "step": state["step"], "message": str(e)[:600]}
        try:
            rec["oom"]["peaks_at_oom"] = peaks()
            rec["oom"]["memory_stats_at_oom"] = stats()
            stretch_peaks.append(dict(rec["oom"]["peaks_at_oom"], stretch="oom"))
            rec["peak_whole_run"] = {
                "max_allocated": max(p["max_allocated"] for p in stretch_peaks),
                "max_reserved": max(p["max_reserved"] for p in stretch_peaks)}
        except Exception as e2:  # noqa: BLE001
            rec["oom"]["stats_error"] = repr(e2)
        print(f"[{name}] OOM in {state['phase']} step {state['step']}", flush=True)
    except Exception as e:  # noqa: BLE001
        rec["status"] = "error"
        rec["error"] = {"phase": state["phase"], "step": state["step"], "repr": repr(e)[:600],
                        "traceback": traceback.format_exc()[-3000:]}
        traceback.print_exc()
    rec["stretch_peaks"] = stretch_peaks
    with open(os.path.join(out_dir, f".row_{name}.rank{rank}.json"), "w") as f:
        json.dump(rec, f)
    # free and leave (the process ends here too)
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    try:
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass
    return 0


# --------------------------------------------------------------------------
# Driver: one process per configuration.

def gb(x):
    return "-" if x is None else f"{x / 1e9:.2f}"


def gib(x):
    return "-" if x is None else f"{x / 2**30:.2f}"


def summary(rows):
    hdr = (f"{'config':<22} {'status':<6} {'params':>7} {'opt':>7} {'peakA GB':>9} {'peakR GB':>9} "
           f"{'peakA GiB':>9} {'peakR GiB':>9} {'R/A':>5} {'measR GB':>9} {'step ms':>8}")
    lines = [hdr]
    for r in rows:
        pw = r.get("peak_whole_run") or {}
        pm = r.get("peak_measured") or {}
        a, rs = pw.get("max_allocated"), pw.get("max_reserved")
        ratio = f"{rs / a:.3f}" if a and rs else "-"
        sm = r.get("step_ms", {}).get("median")
        pc = r.get("param_count")
        lines.append(
            f"{r['name']:<22} {r['status']:<6} {(f'{pc / 1e9:.2f}B' if pc else '-'):>7} "
            f"{r.get('optimizer_impl', '-'):>7} {gb(a):>9} {gb(rs):>9} {gib(a):>9} {gib(rs):>9} "
            f"{ratio:>5} {gb(pm.get('max_reserved')):>9} {(f'{sm:.1f}' if sm else '-'):>8}")
    return "\n".join(lines)


def markdown(path):
    """The README tables from a results.jsonl."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    out = ["| config | model | params | seq x mb x ga | recompute | dtype | allocator | AdamW | "
           "peak alloc GB | peak alloc GiB | peak reserved GB | peak reserved GiB | R/A | "
           "step ms | status |",
           "| --- | --- | ---: | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        c = r["config"]
        pw = r.get("peak_whole_run") or {}
        a, rs = pw.get("max_allocated"), pw.get("max_reserved")
        sm = (r.get("step_ms") or {}).get("median")
        st = r["status"]
        if st == "OOM":
            st = f"OOM ({r['oom']['phase']}, step {r['oom']['step']}; peaks at the OOM)"
        out.append(
            f"| {r['name']} | {c['model']} | {r.get('param_count', 0) / 1e9:.3f} B | "
            f"{c['seq']} x {c['micro_batch']} x {c['grad_accum']} | {c['recompute']} | {c['dtype']} | "
            f"{'expandable' if c['alloc_conf'] else 'default'} | {r.get('optimizer_impl', '-')} | "
            f"{gb(a)} | {gib(a)} | {gb(rs)} | {gib(rs)} | "
            f"{(f'{rs / a:.3f}' if a and rs else '-')} | {(f'{sm:.0f}' if sm else '-')} | {st} |")
    out += ["", "Points and phase peaks, GB (1e9 bytes): allocated after the model is sharded; "
            "allocated once the optimizer state exists (after step 1, grads freed); "
            "live allocated at the end of forward; peak allocated in forward, backward, "
            "optimizer.step()+zero_grad() of the phase step; reserved after warm-up; "
            "device used (total - free from cudaMemGetInfo) minus reserved at the end.", "",
            "| config | params (sharded fp32) | opt state | fwd end live | fwd peak | bwd peak | opt peak | "
            "reserved after warm-up | reserved after step 1 | inactive split peak | non-PyTorch |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        pts, ph = r.get("points", {}), r.get("phase_step") or {}

        def g(d, k):
            return gb(d.get(k)) if d else "-"
        fw = ph.get("forward") or ph.get(f"forward_mb{r['config']['grad_accum'] - 1}") or {}
        bw_keys = [k for k in ph if k.startswith("backward")]
        fw_keys = [k for k in ph if k.startswith("forward")]
        fpk = max((ph[k]["max_allocated"] for k in fw_keys), default=None)
        bpk = max((ph[k]["max_allocated"] for k in bw_keys), default=None)
        ms = ((r.get("measured") or {}).get("memory_stats") or {})
        end = pts.get("after_measured") or {}
        nonpt = end["device_used"] - end["reserved"] if end else None
        out.append(
            f"| {r['name']} | {g(pts.get('after_model_build'), 'allocated')} | "
            f"{g(pts.get('after_first_step'), 'allocated')} | {gb(fw.get('allocated_after'))} | "
            f"{gb(fpk)} | {gb(bpk)} | {g(ph.get('optimizer'), 'max_allocated')} | "
            f"{g(pts.get('after_warmup'), 'reserved')} | {g(pts.get('after_first_step'), 'reserved')} | "
            f"{gb(ms.get('inactive_split_bytes.all.peak'))} | {gb(nonpt)} |")
    return "\n".join(out)


# Rows of `stepscope plan validate` (validation CSV format, docs/planner.md):
# one a measured configuration whose recomputation the planner can express.
# The "selective" rows save every matmul, a policy of this script's own that
# no framework ships, and are left out; so are runs that did not finish.
CSV_HEADER = ["source", "model", "params_B", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq",
              "gpu", "n_gpu", "tp", "pp", "dp", "cp", "vpp", "global_batch", "micro_batch", "recompute",
              "sequence_parallel", "metric", "value", "step_seconds", "sharding", "memory_gb", "dtype", "framework",
              "torch_compile", "optimizer_impl", "gated_mlp", "tied_embeddings", "notes"]
CSV_RECOMPUTE = {"none": "none", "full": "full", "selective_tt": "op"}


def csv_rows(path, source):
    import csv
    import io
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            c, a = r["config"], r.get("arch", {})
            if r.get("status") != "ok" or c["recompute"] not in CSV_RECOMPUTE:
                continue
            step_s = r["step_ms"]["median"] / 1e3
            w.writerow([source, c["model"], f"{r['param_count'] / 1e9:.3f}", a["num_hidden_layers"], a["hidden_size"],
                        a["num_attention_heads"], a["num_key_value_heads"], a["intermediate_size"], a["vocab_size"],
                        c["seq"], "H200-SXM-141GB", c.get("world", 1), 1, 1, c.get("world", 1), 1, 1,
                        c["micro_batch"] * c["grad_accum"] * c.get("world", 1),
                        c["micro_batch"], CSV_RECOMPUTE[c["recompute"]], "no", "step_seconds", f"{step_s:.4f}",
                        f"{step_s:.4f}", "fsdp", f"{r['peak_whole_run']['max_reserved'] / 1e9:.2f}", c["dtype"], "hf",
                        "no", r["optimizer_impl"], "yes", "yes" if a["tie_word_embeddings"] else "no",
                        f"{r['name']}; allocator {c['alloc_conf'] or 'default'}; peak allocated "
                        f"{r['peak_whole_run']['max_allocated'] / 1e9:.2f} GB; eager HF LlamaForCausalLM, FSDP2 on "
                        f"{c.get('world', 1)} GPU(s) (peaks: max over ranks), step = median of 3"])
    return out.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", nargs="+", default=None, help="names from CONFIGS, or 'all'")
    ap.add_argument("--out", default=None, help="output folder (results.jsonl)")
    ap.add_argument("--list", action="store_true", help="print the configurations and exit")
    ap.add_argument("--markdown", metavar="RESULTS_JSONL", help="print the README tables of a results file")
    ap.add_argument("--csv", metavar="RESULTS_JSONL", help="print the rows for `stepscope plan validate`")
    ap.add_argument("--source", default="stepscope workloads/plan_memory/h200_2026-12-04",
                    help="the CSV's source column")
    ap.add_argument("--budget-s", type=float, default=1e9,
                    help="skip configurations once less than --min-left-s of this is left")
    ap.add_argument("--min-left-s", type=float, default=45)
    ap.add_argument("--timeout-s", type=float, default=300, help="per configuration")
    ap.add_argument("--smoke", action="store_true", help="tiny model on CPU with gloo (checks the script)")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=29517, help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.list:
        for n, c in CONFIGS.items():
            print(n, json.dumps(c))
        return 0
    if a.markdown:
        print(markdown(a.markdown))
        return 0
    if a.csv:
        sys.stdout.write(csv_rows(a.csv, a.source))
        return 0
    if a.worker:
        return worker(a.worker, a.out, a.port, smoke=a.smoke)
    if not a.configs or not a.out:
        ap.error("--configs and --out are required")
    names = list(CONFIGS) if a.configs == ["all"] else a.configs
    for n in names:
        if n not in CONFIGS:
            ap.error(f"unknown configuration {n}; --list shows them")
    os.makedirs(a.out, exist_ok=True)
    res_path = os.path.join(a.out, "results.jsonl")
    start = time.monotonic()
    rows = []
    for i, n in enumerate(names):
        left = a.budget_s - (time.monotonic() - start)
        if left < a.min_left_s:
            print(f"[plan_memory] {n}: skipped, {left:.0f} s of the budget left", flush=True)
            row = {"name": n, "config": CONFIGS[n], "status": "skipped", "reason": "budget"}
            rows.append(row)
            with open(res_path, "a") as f:
                f.write(json.dumps(row) + "\n")
            continue
        env = dict(os.environ, PYTHONUNBUFFERED="1", **MULTICAST_OFF)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if CONFIGS[n]["alloc_conf"]:
            env["PYTORCH_CUDA_ALLOC_CONF"] = CONFIGS[n]["alloc_conf"]
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", n, "--out", a.out,
               "--port", str(a.port + i)] + (["--smoke"] if a.smoke else [])
        print(f"[plan_memory] {n}: {json.dumps(CONFIGS[n])}", flush=True)
        t = time.monotonic()
        world = CONFIGS[n].get("world", 1)
        procs = [subprocess.Popen(cmd, env=dict(env, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world)))
                 for r in range(world)]
        rcs = []
        for pr in procs:
            try:
                rcs.append(pr.wait(timeout=max(1.0, min(a.timeout_s, left) - (time.monotonic() - t))))
            except subprocess.TimeoutExpired:
                pr.kill()
                rcs.append("timeout")
        rc = rcs[0] if world == 1 else rcs
        ranks = []
        for r in range(world):
            tmp = os.path.join(a.out, f".row_{n}.rank{r}.json")
            if os.path.exists(tmp):
                with open(tmp) as f:
                    ranks.append(json.load(f))
                os.remove(tmp)
        if len(ranks) == world:
            # Rank 0's record; its peaks become the maxima over ranks (as torchtitan logs them).
            row = ranks[0]
            if world > 1:
                row["ranks"] = [{"rank": x["rank"], "status": x["status"], "peak_whole_run": x.get("peak_whole_run")}
                                for x in ranks]
                if all(x["status"] == "ok" for x in ranks):
                    row["peak_whole_run"] = {
                        k: max(x["peak_whole_run"][k] for x in ranks) for k in ("max_allocated", "max_reserved")}
                else:
                    row["status"] = next(x["status"] for x in ranks if x["status"] != "ok")
        else:
            row = {"name": n, "config": CONFIGS[n], "status": "crashed", "returncode": rc}
        row["process_wall_s"] = time.monotonic() - t
        row["process_returncode"] = rc
        rows.append(row)
        with open(res_path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"[plan_memory] {n}: {row['status']} in {row['process_wall_s']:.0f} s", flush=True)
        print(summary([row]).splitlines()[1], flush=True)
    print()
    print("GB = 1e9 bytes, GiB = 2^30 bytes; peakA/peakR = max_memory_allocated/reserved over the "
          "whole run; measR = max reserved over the measured steps only")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
