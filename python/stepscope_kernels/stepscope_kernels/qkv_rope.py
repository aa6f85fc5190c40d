"""Fused QKV projection + rotary position embedding (issue #6 item 1).

The usual attention front computes Q, K and V with three GEMMs, reshapes each
to [batch, heads, seq, head_dim] with a transpose copy, and applies RoPE with
a handful of elementwise kernels, often rebuilding the cos/sin tables on every
call. Here:

* one GEMM: ``qkv = F.linear(x, W_qkv, b)`` with ``W_qkv = cat[Wq; Wk; Wv]``;
* one kernel (``stepscope_kernels._C.qkv_rope_forward``) reads ``qkv``
  [B, S, (H + 2 Hkv) * D] once and writes q [B, H, S, D], k and v
  [B, Hkv, S, D] -- the layout ``F.scaled_dot_product_attention`` takes --
  rotating q and k on the way; one kernel does the inverse in backward;
* the cos/sin tables [max_len, D / 2] are fp32, computed once in float64 and
  cached per (max_len, head_dim, base, device).

RoPE convention: rotate-half (GPT-NeoX, Hugging Face Llama). For i < D/2 with
x = v[i], y = v[i + D/2], angle = s * base^(-2i/D):
    out[i] = x cos - y sin,    out[i + D/2] = y cos + x sin.
Math is fp32 with one rounding to the activation dtype; the CUDA kernel equals
the C++ reference (src/kernels/qkv_rope_reference.h) bit for bit and the
pure-torch ``qkv_rope_reference`` to fp32 rounding (bf16/fp16: one unit in the
last place, i.e. <= 2^-8 relative for bf16).

CPU tensors and float64 go through ``qkv_rope_reference`` (autograd by torch),
so the module also runs without the extension. The kernel path is an opaque
autograd.Function: ``torch.compile`` graph-breaks around it.
"""

from __future__ import annotations

import math
import threading
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # the CUDA extension; the reference path works without it
    from stepscope_kernels import _C  # type: ignore
except ImportError:  # pragma: no cover - depends on the build
    _C = None

MAX_HEAD_DIM = 256
_KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)

_tables: Dict[Tuple[int, int, float, torch.device], Tuple[torch.Tensor, torch.Tensor]] = {}
_tables_lock = threading.Lock()


def _normalize_device(device) -> torch.device:
    device = torch.device(device if device is not None else "cpu")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def rope_tables(max_len: int, head_dim: int, base: float = 10000.0,
                device=None) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos and sin, fp32 [max_len, head_dim // 2], cached per (max_len, head_dim, base, device).

    Angles are s * base^(-2i / head_dim), evaluated in float64 and rounded once
    to fp32 (the common fp32 outer product loses accuracy as s grows). Build
    the tables (one forward) before capturing a CUDA graph: creating them
    copies from the host.
    """
    max_len, head_dim, base = int(max_len), int(head_dim), float(base)
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be even and >= 2, got {head_dim}")
    if not base > 1.0:
        raise ValueError(f"rope base must be > 1, got {base}")
    dev = _normalize_device(device)
    key = (max_len, head_dim, base, dev)
    hit = _tables.get(key)
    if hit is not None:
        return hit
    with _tables_lock:
        hit = _tables.get(key)
        if hit is None:
            inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
            angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
            hit = (angles.cos().float().to(dev).contiguous(), angles.sin().float().to(dev).contiguous())
            _tables[key] = hit
    return hit


def _check_dims(qkv: torch.Tensor, heads: int, kv_heads: int, head_dim: int, table_len: int) -> None:
    if qkv.dim() != 3:
        raise ValueError(f"qkv must have shape [batch, seq, (heads + 2 * kv_heads) * head_dim], got {tuple(qkv.shape)}")
    if heads < 1 or kv_heads < 1 or heads % kv_heads:
        raise ValueError(f"heads ({heads}) must be a positive multiple of kv_heads ({kv_heads})")
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be even and >= 2, got {head_dim}")
    if qkv.shape[2] != (heads + 2 * kv_heads) * head_dim:
        raise ValueError(f"qkv's last dimension must be (heads + 2 * kv_heads) * head_dim = "
                         f"{(heads + 2 * kv_heads) * head_dim}, got {qkv.shape[2]}")
    if qkv.shape[1] > table_len:
        raise ValueError(f"seq ({qkv.shape[1]}) exceeds the RoPE table length ({table_len})")


def qkv_rope_reference(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, heads: int, kv_heads: int,
                       head_dim: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pure-torch split + RoPE: the test oracle and the CPU/float64 path.

    Computes in fp32 (float64 for float64 input), rounds once to qkv's dtype;
    returns contiguous q [B, H, S, D], k, v [B, Hkv, S, D]. Differentiable.
    """
    _check_dims(qkv, heads, kv_heads, head_dim, cos.shape[0])
    b, s, _ = qkv.shape
    half = head_dim // 2
    compute = torch.promote_types(qkv.dtype, torch.float32)
    x = qkv.reshape(b, s, heads + 2 * kv_heads, head_dim).to(compute)
    q, k, v = x.split([heads, kv_heads, kv_heads], dim=2)
    c = cos[:s].to(device=qkv.device, dtype=compute).view(1, s, 1, half)
    n = sin[:s].to(device=qkv.device, dtype=compute).view(1, s, 1, half)

    def rotate(t: torch.Tensor) -> torch.Tensor:
        lo, hi = t[..., :half], t[..., half:]
        return torch.cat((lo * c - hi * n, hi * c + lo * n), dim=-1)

    def out(t: torch.Tensor) -> torch.Tensor:
        return t.to(qkv.dtype).transpose(1, 2).contiguous()

    return out(rotate(q)), out(rotate(k)), out(v)


class _QkvRopeFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, qkv, cos, sin, heads, kv_heads, head_dim):
        q, k, v = _C.qkv_rope_forward(qkv.contiguous(), cos, sin, heads, kv_heads, head_dim)
        ctx.save_for_backward(cos, sin)
        return q, k, v

    @staticmethod
    def backward(ctx, grad_q, grad_k, grad_v):
        cos, sin = ctx.saved_tensors
        grad_qkv = _C.qkv_rope_backward(grad_q.contiguous(), grad_k.contiguous(), grad_v.contiguous(), cos, sin)
        return grad_qkv, None, None, None, None, None


def _kernel_applies(qkv: torch.Tensor) -> bool:
    return _C is not None and qkv.is_cuda and qkv.dtype in _KERNEL_DTYPES


def qkv_rope(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, heads: int, kv_heads: int,
             head_dim: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Split qkv [B, S, (H + 2 Hkv) * D] into (q, k, v) in the attention layout, RoPE on q and k.

    CUDA fp32/fp16/bf16 tensors use the fused kernels (forward and backward);
    anything else the pure-torch reference. cos/sin: fp32 [max_len, D / 2]
    (``rope_tables``), seq <= max_len.
    """
    if _kernel_applies(qkv):
        _check_dims(qkv, heads, kv_heads, head_dim, cos.shape[0])
        if head_dim > MAX_HEAD_DIM:
            raise ValueError(f"head_dim must be <= {MAX_HEAD_DIM} for the fused kernel, got {head_dim}")
        return _QkvRopeFunction.apply(qkv, cos, sin, heads, kv_heads, head_dim)
    return qkv_rope_reference(qkv, cos, sin, heads, kv_heads, head_dim)


class FusedQKVRoPE(nn.Module):
    """Drop-in attention front: x [B, S, d_model] -> (q [B, H, S, D], k, v [B, Hkv, S, D]) with RoPE.

    One Linear(d_model, (H + 2 Hkv) * D) whose weight is [Wq; Wk; Wv], each
    slice initialised like its own ``nn.Linear`` (same RNG draws, in the order
    q weight, q bias, k weight, ...), then the fused split + RoPE kernel.
    ``from_linears`` builds one from three existing projections.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: Optional[int] = None,
                 head_dim: Optional[int] = None, bias: bool = False, max_seq_len: int = 4096,
                 rope_base: float = 10000.0, device=None, dtype=None):
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if n_heads < 1 or n_kv_heads < 1 or n_heads % n_kv_heads:
            raise ValueError(f"n_heads ({n_heads}) must be a positive multiple of n_kv_heads ({n_kv_heads})")
        if head_dim is None:
            if d_model % n_heads:
                raise ValueError(f"d_model ({d_model}) is not divisible by n_heads ({n_heads}); pass head_dim")
            head_dim = d_model // n_heads
        if head_dim < 2 or head_dim % 2 or head_dim > MAX_HEAD_DIM:
            raise ValueError(f"head_dim must be even and in [2, {MAX_HEAD_DIM}], got {head_dim}")
        if max_seq_len < 1:
            raise ValueError(f"max_seq_len must be >= 1, got {max_seq_len}")
        if not rope_base > 1.0:
            raise ValueError(f"rope_base must be > 1, got {rope_base}")
        self.d_model, self.n_heads, self.n_kv_heads, self.head_dim = d_model, n_heads, n_kv_heads, head_dim
        self.max_seq_len, self.rope_base = int(max_seq_len), float(rope_base)
        out = (n_heads + 2 * n_kv_heads) * head_dim
        factory = {"device": device, "dtype": dtype}
        self.weight = nn.Parameter(torch.empty(out, d_model, **factory))
        if bias:
            self.bias = nn.Parameter(torch.empty(out, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _split_sizes(self):
        d = self.head_dim
        return [self.n_heads * d, self.n_kv_heads * d, self.n_kv_heads * d]

    def reset_parameters(self) -> None:
        # nn.Linear's init: kaiming_uniform_(a=sqrt(5)) (bound 1/sqrt(fan_in))
        # and bias uniform(+-1/sqrt(fan_in)); every slice has fan_in = d_model.
        bound = 1.0 / math.sqrt(self.d_model)
        with torch.no_grad():  # the slices are views of the parameters, written in place
            w = self.weight.split(self._split_sizes(), dim=0)
            b = self.bias.split(self._split_sizes(), dim=0) if self.bias is not None else [None] * 3
            for wi, bi in zip(w, b):
                nn.init.kaiming_uniform_(wi, a=math.sqrt(5))
                if bi is not None:
                    nn.init.uniform_(bi, -bound, bound)

    @classmethod
    def from_linears(cls, q_proj: nn.Linear, k_proj: nn.Linear, v_proj: nn.Linear, n_heads: int,
                     n_kv_heads: Optional[int] = None, max_seq_len: int = 4096,
                     rope_base: float = 10000.0) -> "FusedQKVRoPE":
        """A module computing the same projections as three existing nn.Linear layers."""
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        head_dim = q_proj.out_features // n_heads
        has_bias = q_proj.bias is not None
        if any((p.bias is not None) != has_bias for p in (k_proj, v_proj)):
            raise ValueError("q_proj, k_proj and v_proj must all have a bias or none")
        if k_proj.out_features != n_kv_heads * head_dim or v_proj.out_features != n_kv_heads * head_dim:
            raise ValueError("k_proj/v_proj out_features must be n_kv_heads * head_dim")
        m = cls(q_proj.in_features, n_heads, n_kv_heads, head_dim, has_bias, max_seq_len, rope_base,
                device=q_proj.weight.device, dtype=q_proj.weight.dtype)
        with torch.no_grad():
            m.weight.copy_(torch.cat([q_proj.weight, k_proj.weight, v_proj.weight], dim=0))
            if has_bias:
                m.bias.copy_(torch.cat([q_proj.bias, k_proj.bias, v_proj.bias], dim=0))
        return m

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape [batch, seq, {self.d_model}], got {tuple(x.shape)}")
        if x.shape[1] > self.max_seq_len:
            raise ValueError(f"sequence length {x.shape[1]} exceeds max_seq_len {self.max_seq_len}")
        qkv = F.linear(x, self.weight, self.bias)
        cos, sin = rope_tables(self.max_seq_len, self.head_dim, self.rope_base, qkv.device)
        return qkv_rope(qkv, cos, sin, self.n_heads, self.n_kv_heads, self.head_dim)

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}, "
                f"head_dim={self.head_dim}, bias={self.bias is not None}, max_seq_len={self.max_seq_len}, "
                f"rope_base={self.rope_base}")
