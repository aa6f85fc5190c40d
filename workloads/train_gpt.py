#!/usr/bin/env python3
"""Small self-contained GPT training script that writes a torch.profiler trace.

It is the reference workload generator for stepscope: every ``--scenario``
injects one well-known, realistic way of writing slow PyTorch training code,
so that the resulting trace has a known bottleneck.  See workloads/README.md
and workloads/labels.json for what each scenario is expected to show.

Model: token embedding -> N pre-norm transformer blocks (LayerNorm, causal
self-attention with rotary position embeddings (RoPE) through
F.scaled_dot_product_attention, LayerNorm, GELU MLP) -> LayerNorm -> LM head,
trained with cross-entropy on synthetic random tokens.

Usage (one scenario):
    python3 workloads/train_gpt.py --scenario baseline_compiled \
        --out examples/baseline_compiled/rank0.json.gz

Every scenario uses the same profiler settings: activities CPU + CUDA,
record_shapes, profile_memory, with_flops, and
schedule(wait=1, warmup=1, active=3) after a few untraced warm-up steps.
"""

import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------------------
# Scenarios.  Each entry only lists what differs from DEFAULTS.
# ---------------------------------------------------------------------------

DEFAULTS = dict(
    d_model=1024,
    n_heads=16,
    n_layers=6,
    seq_len=1024,
    batch_size=8,
    vocab=32768,
    dtype="bf16",
    tf32=True,             # allow TF32 for fp32 matmuls (ignored for bf16 models)
    fused_qkv=True,        # one Linear(d, 3d) instead of three Linear(d, d)
    cache_rope=True,       # RoPE cos/sin tables built once and kept as buffers
    optimizer="fused",     # AdamW implementation: fused | foreach | forloop
    compile=None,          # torch.compile mode, or None for eager
    cuda_graph=None,       # None | "full" (whole-step capture) | "compile" (reduce-overhead)
    dataloader=False,      # feed batches through a slow single-process DataLoader
    loader_cpu_ms=100.0,   # CPU work per batch inside the DataLoader
    item_sync=False,       # per-layer .item() of an activation norm (logging)
    empty_cache=False,     # torch.cuda.empty_cache() after every step
)

SCENARIOS = {
    "baseline_compiled": dict(
        compile="default", batch_size=32,
        doc="Healthy reference: bf16, fused QKV, cached RoPE tables, torch.compile "
            "(mode='default'), fused AdamW; batch 32 x 1024 so that the GPU, not the "
            "profiler-inflated launch path, sets the step time.",
    ),
    "dataloader_stall": dict(
        dataloader=True,
        doc="DataLoader(num_workers=0, pin_memory=False) whose __getitem__ does about "
            "100 ms of Python CPU work per batch; pageable host tensors copied with "
            ".to('cuda').",
    ),
    "host_bound_tiny": dict(
        d_model=256, n_heads=4, n_layers=4, seq_len=128, batch_size=2, dtype="fp32",
        optimizer="forloop",
        doc="Tiny fp32 model (d=256, 4 layers, batch 2x128) with a for-loop AdamW "
            "(foreach=False, fused=False): thousands of tiny kernels, launch bound.",
    ),
    "item_sync": dict(
        item_sync=True, batch_size=16,
        doc="Per-layer monitoring with .item(): every block logs its output activation "
            "norm, and after backward every parameter's gradient norm is logged, each "
            "with .item() (one blocking device-to-host copy per call, about 80 host "
            "syncs per step); batch 16 so that the model alone keeps the GPU busy.",
    ),
    "fp32_no_tf32": dict(
        dtype="fp32", tf32=False,
        doc="fp32 model with torch.backends.cuda.matmul.allow_tf32=False: all GEMMs run "
            "in full fp32 (no tensor-core TF32/bf16 path).",
    ),
    "empty_cache": dict(
        empty_cache=True, batch_size=16,
        doc="torch.cuda.empty_cache() after every optimizer step: the caching allocator "
            "gives its blocks back (cudaFree), so every step does cudaMalloc again; "
            "batch 16 so that the model alone keeps the GPU busy.",
    ),
    "unfused_qkv_rope": dict(
        fused_qkv=False, cache_rope=False,
        doc="Separate Q/K/V nn.Linear layers and RoPE sin/cos tables rebuilt in every "
            "layer of every forward (arange/outer/cos/sin each time); fused AdamW.",
    ),
    "foreach_off_adamw": dict(
        optimizer="forloop",
        doc="bf16 GPT with AdamW(foreach=False, fused=False): one chain of small "
            "kernels per parameter tensor in the optimizer step.",
    ),
    "cuda_graph": dict(
        cuda_graph="full", optimizer="fused",
        doc="Same model as the healthy baseline (eager kernels), the whole training "
            "step (forward, backward, fused capturable AdamW) captured once with "
            "torch.cuda.graph and replayed: one cudaGraphLaunch per step.",
    ),
    "eager_bf16_baseline": dict(
        fused_qkv=False, cache_rope=False, optimizer="foreach",
        doc="The common 'before' version: eager bf16, separate Q/K/V Linear layers, "
            "RoPE tables rebuilt every layer, default (foreach) AdamW.",
    ),
}


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------

def rope_tables(seq_len, head_dim, device, dtype, base=10000.0):
    """cos/sin tables of shape (seq_len, head_dim)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device,
                                            dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):
    # x: (B, H, S, hd); cos/sin: (S, hd)
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, h = cfg.d_model, cfg.n_heads
        assert d % h == 0
        self.n_heads, self.head_dim = h, d // h
        self.fused_qkv = cfg.fused_qkv
        self.cache_rope = cfg.cache_rope
        if self.fused_qkv:
            self.qkv = nn.Linear(d, 3 * d)
        else:
            self.q_proj = nn.Linear(d, d)
            self.k_proj = nn.Linear(d, d)
            self.v_proj = nn.Linear(d, d)
        self.proj = nn.Linear(d, d)

    def forward(self, x, rope):
        B, S, D = x.shape
        H, hd = self.n_heads, self.head_dim
        if self.fused_qkv:
            q, k, v = self.qkv(x).split(D, dim=-1)
        else:
            q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        q = q.view(B, S, H, hd).transpose(1, 2)
        k = k.view(B, S, H, hd).transpose(1, 2)
        v = v.view(B, S, H, hd).transpose(1, 2)
        if self.cache_rope:
            cos, sin = rope
            cos, sin = cos[:S], sin[:S]
        else:
            # Anti-pattern: rebuild the constant tables in every layer, every step.
            cos, sin = rope_tables(S, hd, x.device, x.dtype)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        # attention_fn (set by workloads/block_sparse_training.py) replaces the
        # causal SDPA with another attention over the same q, k, v.
        attention_fn = getattr(self, "attention_fn", None)
        y = attention_fn(q, k, v) if attention_fn is not None else F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, S, D)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg, layer_idx):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg.d_model)
        self.layer_idx = layer_idx
        self.item_sync = cfg.item_sync
        self.act_norms = []  # filled only by the item_sync scenario

    def forward(self, x, rope):
        x = x + self.attn(self.ln1(x), rope)
        x = x + self.mlp(self.ln2(x))
        if self.item_sync:
            # Anti-pattern: "log the activation norm of every layer" with .item(),
            # which blocks the host until the GPU has caught up.
            self.act_norms.append(x.detach().float().norm().item())
        return x


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        hd = cfg.d_model // cfg.n_heads
        if cfg.cache_rope:
            cos, sin = rope_tables(cfg.seq_len, hd, "cpu", torch.float32)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
        else:
            self.rope_cos = self.rope_sin = None
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets):
        x = self.tok_emb(idx)
        rope = (self.rope_cos, self.rope_sin)
        for blk in self.blocks:
            x = blk(x, rope)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)),
                               targets.reshape(-1))


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

class SlowTokenDataset(torch.utils.data.Dataset):
    """Synthetic token dataset whose __getitem__ does real (pure Python) CPU work,
    standing in for on-the-fly tokenization / augmentation in the main process."""

    WORDS = ["the", "model", "token", "trace", "kernel", "step", "batch", "gpu",
             "host", "launch", "memory", "stream", "profile", "layer", "sync"]

    def __init__(self, n_items, seq_len, vocab, cpu_ms_per_item):
        self.n_items, self.seq_len, self.vocab = n_items, seq_len, vocab
        self.cpu_s = cpu_ms_per_item / 1000.0

    def __len__(self):
        return self.n_items

    def _fake_tokenize(self, rng):
        # Busy Python work until the per-item budget is spent: build "text",
        # split it and map words to ids through a dict, as a naive tokenizer would.
        vocab_map = {w: i for i, w in enumerate(self.WORDS)}
        deadline = time.perf_counter() + self.cpu_s
        acc = 0
        while time.perf_counter() < deadline:
            text = " ".join(rng.choice(self.WORDS) for _ in range(256))
            acc += sum(vocab_map[w] for w in text.split())
        return acc

    def __getitem__(self, i):
        rng = random.Random(i)
        self._fake_tokenize(rng)
        g = torch.Generator().manual_seed(i)
        toks = torch.randint(0, self.vocab, (self.seq_len + 1,), generator=g)
        return toks[:-1], toks[1:]


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------

def make_optimizer(model, kind, capturable=False):
    params = [p for p in model.parameters() if p.requires_grad]
    kw = dict(lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    if kind == "fused":
        return torch.optim.AdamW(params, fused=True, capturable=capturable, **kw)
    if kind == "foreach":
        return torch.optim.AdamW(params, foreach=True, **kw)
    if kind == "forloop":
        return torch.optim.AdamW(params, foreach=False, fused=False, capturable=capturable, **kw)
    raise ValueError(kind)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    p.add_argument("--out", default=None,
                   help="trace path (.json.gz); default examples/<scenario>/rank0.json.gz")
    p.add_argument("--d-model", type=int)
    p.add_argument("--n-heads", type=int)
    p.add_argument("--n-layers", type=int)
    p.add_argument("--seq-len", type=int)
    p.add_argument("--batch-size", type=int)
    p.add_argument("--vocab", type=int)
    p.add_argument("--dtype", choices=["bf16", "fp32"])
    p.add_argument("--loader-cpu-ms", type=float)
    p.add_argument("--compile", dest="compile_mode",
                   help="override the torch.compile mode (e.g. default, "
                        "max-autotune-no-cudagraphs); 'none' for eager")
    p.add_argument("--cuda-graph", dest="cuda_graph_mode", choices=["full", "compile"],
                   help="for the cuda_graph scenario: whole-step capture (full) or "
                        "torch.compile(mode='reduce-overhead') (compile)")
    p.add_argument("--log-every", type=int, default=1,
                   help="log the loss with loss.item() every N steps (one host sync, "
                        "as nanoGPT-style loops do); 0 = never")
    p.add_argument("--pre-steps", type=int, default=3,
                   help="untraced warm-up steps before the profiler starts "
                        "(compilation, graph capture, allocator warm-up)")
    p.add_argument("--wait", type=int, default=1)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--active", type=int, default=3)
    p.add_argument("--device", default="cuda")
    p.add_argument("--no-profile", action="store_true", help="run without the profiler")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--monitor", metavar="HOST:PORT", default=None,
                   help="push step, loss, step time and tokens of every untraced step to "
                        "`stepscope monitor` (python/stepscope/monitor.py); off by default")
    return p.parse_args(argv)


def build_config(args):
    cfg = dict(DEFAULTS)
    cfg.update({k: v for k, v in SCENARIOS[args.scenario].items() if k != "doc"})
    for k in ("d_model", "n_heads", "n_layers", "seq_len", "batch_size", "vocab",
              "dtype", "loader_cpu_ms"):
        v = getattr(args, k)
        if v is not None:
            cfg[k] = v
    if args.compile_mode is not None:
        cfg["compile"] = None if args.compile_mode == "none" else args.compile_mode
    if args.cuda_graph_mode is not None:
        cfg["cuda_graph"] = args.cuda_graph_mode
    return argparse.Namespace(**cfg)


def open_monitor(address):
    """A stepscope.monitor client for --monitor, or None (the option is optional)."""
    if not address:
        return None
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from stepscope.monitor import MonitorClient  # pure Python, no extension needed
    return MonitorClient(address)


def build_training(args, cfg, n_batches):
    """The model, optimizer, data and one training step of a configuration.

    Returns a namespace: train_step() runs one step and returns the loss
    tensor; model, grad_norms (item_sync's logged norms), dev, on_cuda.
    n_batches is how many batches the DataLoader must be able to give.
    """
    dev = torch.device(args.device)
    on_cuda = dev.type == "cuda"
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    dtype = torch.bfloat16 if cfg.dtype == "bf16" else torch.float32

    # Matmul precision for fp32 tensors.
    torch.backends.cuda.matmul.allow_tf32 = bool(cfg.tf32)
    torch.backends.cudnn.allow_tf32 = bool(cfg.tf32)

    model = GPT(cfg).to(device=dev, dtype=dtype)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"[{args.scenario}] params={n_params/1e6:.1f}M cfg={vars(cfg)}", flush=True)

    capturable = cfg.cuda_graph == "full"
    opt = make_optimizer(model, cfg.optimizer, capturable=capturable)

    fwd = model
    if cfg.compile:
        fwd = torch.compile(model, mode=cfg.compile)
    if cfg.cuda_graph == "compile":
        fwd = torch.compile(model, mode="reduce-overhead")

    B, S, V = cfg.batch_size, cfg.seq_len, cfg.vocab

    # ---- data ------------------------------------------------------------
    if cfg.dataloader:
        ds = SlowTokenDataset(n_batches * B, S, V, cfg.loader_cpu_ms / B)
        loader = torch.utils.data.DataLoader(ds, batch_size=B, shuffle=True,
                                             num_workers=0, pin_memory=False,
                                             drop_last=True)
        loader_it = iter(loader)

        def next_batch():
            x, y = next(loader_it)
            # pageable host memory -> device: a synchronous staged copy
            return x.to(dev), y.to(dev)
    else:
        # Synthetic data already resident on the device (a few rotating batches).
        gen = torch.Generator(device=dev).manual_seed(args.seed)
        pool = []
        for _ in range(4):
            t = torch.randint(0, V, (B, S + 1), device=dev, generator=gen)
            pool.append((t[:, :-1].contiguous(), t[:, 1:].contiguous()))
        counter = [0]

        def next_batch():
            xy = pool[counter[0] % len(pool)]
            counter[0] += 1
            return xy

    # ---- one training step ------------------------------------------------
    grad_norms = {}
    named_params = list(model.named_parameters())

    def train_step():
        if cfg.cuda_graph == "compile":
            torch.compiler.cudagraph_mark_step_begin()
        x, y = next_batch()
        loss = fwd(x, y)
        loss.backward()
        if cfg.item_sync:
            # Anti-pattern: per-parameter gradient-norm monitoring, one .item()
            # (a blocking device-to-host copy) per parameter tensor.
            for name, p in named_params:
                grad_norms[name] = p.grad.norm().item()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cfg.empty_cache and on_cuda:
            # Anti-pattern: release all cached blocks every step.
            torch.cuda.empty_cache()
        return loss

    if cfg.cuda_graph == "full":
        if not on_cuda:
            raise SystemExit("cuda_graph=full needs a CUDA device")
        static_x = torch.empty(B, S, dtype=torch.long, device=dev)
        static_y = torch.empty(B, S, dtype=torch.long, device=dev)

        def load_static():
            x, y = next_batch()
            static_x.copy_(x)
            static_y.copy_(y)

        # Warm up on a side stream (required before capture).
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                load_static()
                opt.zero_grad(set_to_none=True)
                loss = model(static_x, static_y)
                loss.backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(s)

        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            static_loss = model(static_x, static_y)
            static_loss.backward()
            opt.step()
        torch.cuda.synchronize()
        print(f"[{args.scenario}] captured the whole training step in a CUDA graph",
              flush=True)

        def train_step():  # noqa: F811  (graph-replay version)
            load_static()
            g.replay()
            return static_loss

    return argparse.Namespace(train_step=train_step, model=model, grad_norms=grad_norms,
                              dev=dev, on_cuda=on_cuda, batch_tokens=B * S)


def main(argv=None):
    args = parse_args(argv)
    cfg = build_config(args)
    out = args.out or os.path.join("examples", args.scenario, "rank0.json.gz")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    run = build_training(args, cfg, args.pre_steps + args.wait + args.warmup + args.active + 2)
    train_step, model, grad_norms = run.train_step, run.model, run.grad_norms
    dev, on_cuda, B, S = run.dev, run.on_cuda, cfg.batch_size, cfg.seq_len

    # ---- untraced warm-up (compile, allocator, cuBLAS handles) -------------
    logged = []

    def log_loss(i, loss):
        # Loss logging as most training loops do it: loss.item() (one host sync).
        if args.log_every and i % args.log_every == 0:
            logged.append(loss.item())

    monitor = open_monitor(args.monitor)
    last_push = [time.perf_counter()]

    def push_step(i, loss):
        # Monitored runs only: the loss read syncs the host, so step time is wall time per step.
        if monitor is None:
            return
        value = float(loss.item())
        now = time.perf_counter()
        monitor.push(step=i, loss=value, step_time=max(now - last_push[0], 1e-9), tokens=B * S)
        last_push[0] = now

    t0 = time.perf_counter()
    for i in range(args.pre_steps):
        loss = train_step()
        log_loss(i, loss)
        push_step(i, loss)
    if on_cuda:
        torch.cuda.synchronize()
    print(f"[{args.scenario}] {args.pre_steps} warm-up steps in "
          f"{time.perf_counter() - t0:.1f}s, loss={float(loss):.3f}", flush=True)

    n_prof = args.wait + args.warmup + args.active
    if args.no_profile:
        t0 = time.perf_counter()
        for i in range(n_prof):
            loss = train_step()
            log_loss(i, loss)
            push_step(args.pre_steps + i, loss)
        if on_cuda:
            torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / n_prof
        print(f"[{args.scenario}] {dt*1e3:.1f} ms/step (no profiler)")
        return 0

    # ---- profiled steps ------------------------------------------------------
    from torch.profiler import ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU]
    if on_cuda:
        activities.append(ProfilerActivity.CUDA)

    meta = {"scenario": args.scenario, "doc": SCENARIOS[args.scenario]["doc"],
            "config": vars(cfg), "log_every": args.log_every,
            "profiler": {"pre_steps": args.pre_steps, "wait": args.wait,
                         "warmup": args.warmup, "active": args.active,
                         "record_shapes": True, "profile_memory": True,
                         "with_flops": True},
            "torch": torch.__version__,
            "device": torch.cuda.get_device_name(dev) if on_cuda else "cpu"}

    def on_ready(prof):
        prof.export_chrome_trace(out)  # a .gz suffix makes PyTorch gzip it

    step_times = []
    with profile(activities=activities,
                 schedule=schedule(wait=args.wait, warmup=args.warmup,
                                   active=args.active, repeat=1),
                 on_trace_ready=on_ready, record_shapes=True, profile_memory=True,
                 with_flops=True) as prof:
        for i in range(n_prof):
            if i == args.wait + args.warmup:
                try:
                    prof.add_metadata_json("stepscope_workload", json.dumps(meta))
                except Exception as e:  # metadata is optional
                    print(f"[{args.scenario}] add_metadata_json failed: {e}")
            t = time.perf_counter()
            loss = train_step()
            log_loss(i, loss)
            step_times.append(time.perf_counter() - t)
            prof.step()
    if on_cuda:
        torch.cuda.synchronize()
    host_ms = ", ".join(f"{s*1e3:.1f}" for s in step_times)
    size = os.path.getsize(out) if os.path.exists(out) else -1
    print(f"[{args.scenario}] host step times (ms): {host_ms}; final loss "
          f"{float(loss):.3f}; trace {out} ({size} bytes)", flush=True)
    if cfg.item_sync:
        print(f"[{args.scenario}] logged {len(model.blocks[0].act_norms)} norms "
              f"per layer, last layer-0 norm {model.blocks[0].act_norms[-1]:.2f}, "
              f"{len(grad_norms)} grad norms per step")
    return 0 if size > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
