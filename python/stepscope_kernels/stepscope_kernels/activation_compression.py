"""Block-wise activation compression (issue #6 item 2).

Training keeps every layer's input alive until backward; these autograd
functions keep a 4- or 8-bit copy instead and dequantize it in backward:

* ``quantize(x, bits, block, stochastic, seed)`` / ``dequantize(q)``: the CUDA
  kernels (``stepscope_kernels._C``), ``QuantizedTensor`` holds the result.
* ``quantize_reference`` / ``dequantize_reference``: the same format in plain
  torch ops, on any device (the test oracle, the eager and ``torch.compile``
  baselines of the benchmark, and the CPU fallback of the autograd functions).
* ``CompressedLinearFunction``, ``CompressedGELUFunction``,
  ``CompressedLayerNormFunction``: forward computes with the exact input (the
  output is bit-identical to the uncompressed layer), only the tensor saved for
  backward is compressed.
* ``CompressedLinear``/``CompressedGELU``/``CompressedLayerNorm`` wrap an
  existing module's parameters (the same ``Parameter`` objects), and
  ``compress_activations(model, ...)`` swaps them in place.

Format (src/kernels/activation_quant_format.h has the full definition): x is
flattened and cut into blocks of 64 or 128 elements; per block a zero point
(the block minimum rounded DOWN to bf16) and a scale (range times the fp32
nearest 1 / (2^bits - 1), rounded UP to bf16) are stored, 4 bytes per block,
i.e. 0.5 (block 64) or 0.25 (block 128) extra bits per element. A bf16
activation at 4 bits, block 64, takes 4.5 bits per element: 3.56x smaller.
Dequantization is zero + code * scale; the error is at most scale / 2 with
round-to-nearest and below one scale with stochastic rounding (unbiased). A
block holding a NaN or inf dequantizes to NaN.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # the CUDA extension; the reference functions work without it
    from stepscope_kernels import _C  # type: ignore
except ImportError:  # pragma: no cover - depends on the build
    _C = None

SUPPORTED_BITS = (4, 8)
SUPPORTED_BLOCKS = (64, 128)
_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_MIN_SCALE = 2.0 ** -126  # smallest normal float: 1 / scale stays finite


@dataclasses.dataclass
class QuantizedTensor:
    """A tensor in the compressed format.

    codes: uint8, ceil(numel * bits / 8) bytes (4-bit: even element in the low nibble)
    scale: bfloat16, one per block (NaN for a block holding NaN/inf)
    zero:  bfloat16, one per block: the block's minimum rounded down
    """

    codes: torch.Tensor
    scale: torch.Tensor
    zero: torch.Tensor
    shape: torch.Size
    dtype: torch.dtype
    bits: int
    block: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def nbytes(self) -> int:
        """Bytes held by codes, scales and zero points."""
        return sum(t.numel() * t.element_size() for t in (self.codes, self.scale, self.zero))


def _check_options(bits: int, block: int) -> None:
    if bits not in SUPPORTED_BITS:
        raise ValueError(f"bits must be 4 or 8, got {bits!r}")
    if block not in SUPPORTED_BLOCKS:
        raise ValueError(f"block must be 64 or 128, got {block!r}")


def _check_input(x: torch.Tensor, name: str = "x") -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in _DTYPES:
        raise ValueError(f"{name} must be bfloat16, float16 or float32, got {x.dtype}")


def _have_kernels() -> bool:
    return _C is not None


def _random_seed() -> int:
    # From torch's CPU generator: torch.manual_seed makes it reproducible.
    return int(torch.randint(0, 2 ** 62, (1,)).item())


# ---------------------------------------------------------------------------
# The CUDA kernels
# ---------------------------------------------------------------------------

def quantize(x: torch.Tensor, bits: int = 4, block: int = 64, stochastic: bool = False,
             seed: Optional[int] = None) -> QuantizedTensor:
    """Quantizes a contiguous CUDA tensor with the CUDA kernel.

    ``seed`` only matters for stochastic rounding: equal seeds give equal
    codes; None draws one from torch's CPU generator.
    """
    _check_options(bits, block)
    _check_input(x)
    if not x.is_cuda:
        raise ValueError(f"x must be a CUDA tensor, got one on {x.device} "
                         "(quantize_reference runs on any device)")
    if not x.is_contiguous():
        raise ValueError("x must be contiguous (call .contiguous() first)")
    if _C is None:
        raise RuntimeError("stepscope_kernels._C is not built: pip install --no-build-isolation "
                           "-e python/stepscope_kernels (quantize_reference needs no build)")
    if seed is None:
        seed = _random_seed() if stochastic else 0
    codes, scale, zero = _C.act_quantize(x.detach(), bits, block, bool(stochastic), int(seed) & _MASK64)
    return QuantizedTensor(codes, scale, zero, x.shape, x.dtype, bits, block)


def dequantize(q: QuantizedTensor) -> torch.Tensor:
    """The tensor back in its shape and dtype, with the CUDA kernel."""
    if not q.codes.is_cuda:
        raise ValueError(f"the codes are on {q.codes.device}: use dequantize_reference")
    if _C is None:
        raise RuntimeError("stepscope_kernels._C is not built")
    out = torch.empty(q.shape, dtype=q.dtype, device=q.codes.device)
    _C.act_dequantize(q.codes, q.scale, q.zero, out, q.bits, q.block)
    return out


# ---------------------------------------------------------------------------
# The reference in torch ops (same codes as the kernels, bit for bit)
# ---------------------------------------------------------------------------

def _mix_seed(seed: int) -> int:
    """splitmix64 of the seed: the two 32-bit keys of the counter hash."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _mul32(a, c: int):
    """(a * c) mod 2^32 for a in [0, 2^32) without int64 overflow (c split in
    16-bit halves). Works on int64 tensors and on Python ints alike."""
    return (a * (c & 0xFFFF) + (((a * (c >> 16)) & 0xFFFF) << 16)) & _MASK32


def _fmix32(h):
    h = h ^ (h >> 16)
    h = _mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = _mul32(h, 0xC2B2AE35)
    return h ^ (h >> 16)


def _quad_hash(key: int, quad):
    """32 uniform bits per element quad (see quad_hash in the C++ header)."""
    h = (_mul32(quad & _MASK32, 0x9E3779B9) + (key & _MASK32)) & _MASK32
    h = h ^ ((_mul32(quad >> 32, 0x85EBCA6B) + (key >> 32)) & _MASK32)
    return _fmix32(h)


def _uniform8(key: int, index):
    """8 uniform bits per element: byte index % 4 of its quad's hash."""
    return (_quad_hash(key, index >> 2) >> ((index & 3) * 8)) & 0xFF


def _bf16_round_down(v: torch.Tensor) -> torch.Tensor:
    """Largest bf16 <= v, as float32 (NaN stays NaN)."""
    u = v.view(torch.int32)
    t = u & -65536  # keep the high half: rounds toward zero
    t = torch.where((u < 0) & ((u & 0xFFFF) != 0), t + 65536, t)  # negative: one step further down
    return torch.where(torch.isnan(v), v, t.view(torch.float32))


def _bf16_round_up_nonneg(v: torch.Tensor) -> torch.Tensor:
    """Smallest bf16 >= v for v >= 0, as float32."""
    u = v.view(torch.int32)
    t = u & -65536
    t = torch.where((u & 0xFFFF) != 0, t + 65536, t)
    return torch.where(torch.isnan(v), v, t.view(torch.float32))


def _inv_qmax(qmax: float) -> float:
    """fl32(1 / qmax): 1 / qmax rounded once to float32."""
    return float(torch.tensor(1.0 / qmax, dtype=torch.float64).to(torch.float32))


def _block_params(xb: torch.Tensor, valid: Optional[torch.Tensor], qmax: float):
    """Per-block (zero, scale, inv_scale, poisoned) from xb [nblocks, block]
    (float32), following block_params() in activation_quant_format.h."""
    if valid is None:
        mn, mx = xb.amin(1), xb.amax(1)
        bad = ~torch.isfinite(xb).all(1)
    else:
        inf = torch.tensor(float("inf"), device=xb.device)
        mn = torch.where(valid, xb, inf).amin(1)
        mx = torch.where(valid, xb, -inf).amax(1)
        bad = ~(torch.isfinite(xb) | ~valid).all(1)
    mn = mn + 0.0  # -0 -> +0
    mx = mx + 0.0
    zero = _bf16_round_down(mn)
    rng = mx - zero
    # range * fl32(1 / qmax), the fp32 nearest 1 / qmax (as inv_qmax() in C++)
    scale = _bf16_round_up_nonneg(rng * torch.full_like(rng, _inv_qmax(qmax)))
    scale = torch.where((scale > 0) & (scale < _MIN_SCALE), torch.full_like(scale, _MIN_SCALE), scale)
    bad = bad | ~torch.isfinite(rng) | ~torch.isfinite(scale)
    inv = torch.where(scale > 0, torch.ones_like(scale) / scale, torch.zeros_like(scale))
    return zero, scale, inv, bad


def _to_bf16(v: torch.Tensor, poisoned: torch.Tensor) -> torch.Tensor:
    """float32 values that are exact bf16 -> bf16 tensor, the poisoned entries
    as the kernel's NaN pattern 0x7FC0 (a .to(bfloat16) on CUDA gives 0x7FFF)."""
    bits = v.view(torch.int32)
    bits = torch.where(poisoned, torch.full_like(bits, 0x7FC00000), bits)
    return (bits >> 16).to(torch.int16).view(torch.bfloat16)


def quantize_reference(x: torch.Tensor, bits: int = 4, block: int = 64, stochastic: bool = False,
                       seed: int = 0) -> QuantizedTensor:
    """The format in torch ops: same codes, scales and zero points as the kernel."""
    _check_options(bits, block)
    _check_input(x)
    codes, scale, zero = quantize_reference_tensors(x.detach(), bits, block, stochastic, seed)
    return QuantizedTensor(codes, scale, zero, x.shape, x.dtype, bits, block)


def quantize_reference_tensors(x: torch.Tensor, bits: int, block: int, stochastic: bool = False,
                               seed: int = 0) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(codes, scale, zero) of quantize_reference, tensors only (torch.compile-friendly)."""
    xf = x.reshape(-1).float()
    n = xf.numel()
    nb = -(-n // block)
    pad = nb * block - n
    qmax = float((1 << bits) - 1)
    xb = F.pad(xf, (0, pad)).view(nb, block)
    valid = None
    if pad:
        valid = (torch.arange(nb * block, device=xf.device) < n).view(nb, block)
    zero, scale, inv, bad = _block_params(xb, valid, qmax)
    t = (xb - zero[:, None]) * inv[:, None]
    t = torch.clamp(t, 0.0, qmax)  # no-op on real elements (zero <= x); tames the tail padding
    if stochastic:
        # floor(fl(t + v)) - 1, v = 1 + (u8 + 1/2) * 2^-8 (stochastic_biased in
        # C++; never above qmax, the clamp only tames the tail padding)
        key = _mix_seed(int(seed) & _MASK64)
        idx = torch.arange(nb * block, device=xf.device, dtype=torch.int64).view(nb, block)
        u8 = _uniform8(key, idx)
        v = ((u8 << 15) + 0x3F804000).to(torch.int32).view(torch.float32)
        c = torch.clamp(torch.floor(t + v) - 1.0, 0.0, qmax)
    else:
        # half to even, as the kernels' add of 1.5 * 2^23 (exact for t < 2^22)
        c = torch.round(t)
    c = torch.where(bad[:, None], torch.zeros_like(c), c)
    c = torch.nan_to_num(c, nan=0.0).to(torch.uint8).view(-1)[:n]
    if bits == 4:
        if n % 2:
            c = torch.cat([c, c.new_zeros(1)])
        c = c.view(-1, 2)
        c = c[:, 0] | (c[:, 1] << 4)
    return c.contiguous(), _to_bf16(scale, bad), _to_bf16(zero, bad)


def _unpack(codes: torch.Tensor, n: int, bits: int) -> torch.Tensor:
    if bits == 8:
        return codes[:n]
    return torch.stack([codes & 0xF, codes >> 4], dim=1).view(-1)[:n]


def unpack_codes(q: QuantizedTensor) -> torch.Tensor:
    """One code per element (uint8, flat)."""
    return _unpack(q.codes, q.numel, q.bits)


def dequantize_reference(q: QuantizedTensor) -> torch.Tensor:
    """zero + code * scale in float32 (code * scale is exact: 8 x 8 significant
    bits), rounded once to the original dtype, as the kernel's fma."""
    _check_options(q.bits, q.block)
    return dequantize_reference_tensors(q.codes, q.scale, q.zero, q.numel, q.bits, q.block,
                                        q.dtype).view(q.shape)


def dequantize_reference_tensors(codes: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, n: int,
                                 bits: int, block: int, dtype: torch.dtype) -> torch.Tensor:
    """Flat dequantized tensor from the parts (torch.compile-friendly)."""
    nb = -(-n // block)
    c = _unpack(codes, n, bits).float()
    c = F.pad(c, (0, nb * block - n)).view(nb, block)
    v = c * scale.float()[:, None] + zero.float()[:, None]
    return v.view(-1)[:n].to(dtype)


# ---------------------------------------------------------------------------
# Autograd functions
# ---------------------------------------------------------------------------

class CompressionConfig:
    """Options shared by the wrapped modules of one model; hands out a fresh,
    reproducible seed for every stochastic quantization (a private counter:
    torch's global generators are not consumed)."""

    def __init__(self, bits: int = 4, block: int = 64, stochastic: bool = False,
                 seed: Optional[int] = None):
        _check_options(bits, block)
        self.bits, self.block, self.stochastic = bits, block, bool(stochastic)
        self.base_seed = int(torch.initial_seed() if seed is None else seed) & _MASK64
        self.calls = 0

    def next_seed(self) -> int:
        self.calls += 1
        return _mix_seed((self.base_seed + self.calls) & _MASK64)

    def __repr__(self) -> str:
        return f"CompressionConfig(bits={self.bits}, block={self.block}, stochastic={self.stochastic})"


def _pack(x: torch.Tensor, cfg: CompressionConfig) -> QuantizedTensor:
    x = x.detach()
    if not x.is_contiguous():
        x = x.contiguous()
    seed = cfg.next_seed() if cfg.stochastic else 0
    if x.is_cuda and _have_kernels():
        return quantize(x, cfg.bits, cfg.block, cfg.stochastic, seed)
    return quantize_reference(x, cfg.bits, cfg.block, cfg.stochastic, seed)


def _save_quantized(ctx, q: QuantizedTensor, *others: Optional[torch.Tensor]) -> None:
    # Through save_for_backward, so saved-tensor hooks and memory accounting see them.
    ctx.save_for_backward(q.codes, q.scale, q.zero, *others)
    ctx.q_meta = (q.shape, q.dtype, q.bits, q.block)


def _load_quantized(ctx) -> Tuple[torch.Tensor, tuple]:
    saved = ctx.saved_tensors
    shape, dtype, bits, block = ctx.q_meta
    q = QuantizedTensor(saved[0], saved[1], saved[2], shape, dtype, bits, block)
    x = dequantize(q) if q.codes.is_cuda and _have_kernels() else dequantize_reference(q)
    return x, saved[3:]


def _autocast_dtype(x: torch.Tensor) -> Optional[torch.dtype]:
    if x.device.type == "cuda" and torch.is_autocast_enabled("cuda"):
        return torch.get_autocast_dtype("cuda")
    return None


class CompressedLinearFunction(torch.autograd.Function):
    """y = x W^T + b; saves x quantized (needed only for grad_weight = g^T x)."""

    @staticmethod
    def forward(ctx, x, weight, bias, cfg):
        cdt = _autocast_dtype(x)  # under autocast: compute as F.linear would
        if cdt is not None:
            x, weight_c = x.to(cdt), weight.to(cdt)
            bias_c = bias.to(cdt) if bias is not None else None
            with torch.autocast("cuda", enabled=False):
                out = F.linear(x, weight_c, bias_c)
        else:
            weight_c = weight
            out = F.linear(x, weight, bias)
        ctx.compute_dtype = cdt
        ctx.has_bias = bias is not None
        if ctx.needs_input_grad[1]:
            _save_quantized(ctx, _pack(x, cfg), weight)
            ctx.stored_x = True
        else:
            ctx.save_for_backward(weight)
            ctx.stored_x = False
        return out

    @staticmethod
    def backward(ctx, grad_out):
        if ctx.stored_x:
            x, (weight,) = _load_quantized(ctx)
        else:
            x, (weight,) = None, ctx.saved_tensors
        if ctx.compute_dtype is not None:
            weight = weight.to(ctx.compute_dtype)
            grad_out = grad_out.to(ctx.compute_dtype)
        grad_x = grad_w = grad_b = None
        g2 = grad_out.reshape(-1, grad_out.shape[-1])
        if ctx.needs_input_grad[0]:
            grad_x = grad_out.matmul(weight)
        if ctx.needs_input_grad[1]:
            grad_w = g2.t().matmul(x.reshape(-1, x.shape[-1]))
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = g2.sum(0)
        return grad_x, grad_w, grad_b, None


class CompressedGELUFunction(torch.autograd.Function):
    """y = gelu(x); saves x quantized and recomputes gelu'(x) in backward with
    aten's own gelu_backward (same approximation mode)."""

    @staticmethod
    def forward(ctx, x, approximate, cfg):
        out = F.gelu(x, approximate=approximate)
        ctx.approximate = approximate
        if ctx.needs_input_grad[0]:
            _save_quantized(ctx, _pack(x, cfg))
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, _ = _load_quantized(ctx)
        if grad_out.dtype != x.dtype:
            grad_out = grad_out.to(x.dtype)
        return torch.ops.aten.gelu_backward(grad_out, x, approximate=ctx.approximate), None, None


class CompressedLayerNormFunction(torch.autograd.Function):
    """LayerNorm; saves x quantized plus the fp32 per-row mean/rstd of the exact
    x, and runs aten's native_layer_norm_backward on the dequantized x."""

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps, cfg):
        # Under autocast layer_norm runs in float32 (its autocast policy).
        cdt = torch.float32 if _autocast_dtype(x) is not None else None
        if cdt is not None:
            with torch.autocast("cuda", enabled=False):
                out, mean, rstd = torch.ops.aten.native_layer_norm(
                    x.to(cdt), normalized_shape, None if weight is None else weight.to(cdt),
                    None if bias is None else bias.to(cdt), eps)
        else:
            out, mean, rstd = torch.ops.aten.native_layer_norm(x, normalized_shape, weight, bias, eps)
        ctx.compute_dtype = cdt
        ctx.normalized_shape = normalized_shape
        ctx.has_weight, ctx.has_bias = weight is not None, bias is not None
        params = [p for p in (weight, bias) if p is not None]
        _save_quantized(ctx, _pack(x, cfg), mean, rstd, *params)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, rest = _load_quantized(ctx)
        mean, rstd = rest[0], rest[1]
        params = list(rest[2:])
        weight = params.pop(0) if ctx.has_weight else None
        bias = params.pop(0) if ctx.has_bias else None
        cdt = ctx.compute_dtype
        if cdt is not None:
            x = x.to(cdt)
            weight = None if weight is None else weight.to(cdt)
            bias = None if bias is None else bias.to(cdt)
        if grad_out.dtype != x.dtype:
            grad_out = grad_out.to(x.dtype)
        mask = [ctx.needs_input_grad[0], ctx.has_weight and ctx.needs_input_grad[2],
                ctx.has_bias and ctx.needs_input_grad[3]]
        gx, gw, gb = torch.ops.aten.native_layer_norm_backward(
            grad_out, x, ctx.normalized_shape, mean, rstd, weight, bias, mask)
        return gx, None, gw, gb, None, None


# ---------------------------------------------------------------------------
# Modules and the model wrapper
# ---------------------------------------------------------------------------

def _needs_saving(x: torch.Tensor, *params: Optional[torch.Tensor]) -> bool:
    return torch.is_grad_enabled() and (x.requires_grad or any(p is not None and p.requires_grad
                                                               for p in params))


class CompressedLinear(nn.Module):
    """nn.Linear's parameters (the same objects) with a compressed saved input."""

    def __init__(self, linear: nn.Linear, config: CompressionConfig):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.register_parameter("weight", linear.weight)
        self.register_parameter("bias", linear.bias)
        self.config = config

    def forward(self, x):
        if not _needs_saving(x, self.weight, self.bias):
            return F.linear(x, self.weight, self.bias)
        return CompressedLinearFunction.apply(x, self.weight, self.bias, self.config)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, {self.config}")


class CompressedGELU(nn.Module):
    def __init__(self, gelu: nn.GELU, config: CompressionConfig):
        super().__init__()
        self.approximate = gelu.approximate
        self.config = config

    def forward(self, x):
        if not _needs_saving(x):
            return F.gelu(x, approximate=self.approximate)
        return CompressedGELUFunction.apply(x, self.approximate, self.config)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}, {self.config}"


class CompressedLayerNorm(nn.Module):
    def __init__(self, ln: nn.LayerNorm, config: CompressionConfig):
        super().__init__()
        self.normalized_shape = tuple(ln.normalized_shape)
        self.eps = ln.eps
        self.elementwise_affine = ln.elementwise_affine
        self.register_parameter("weight", ln.weight)
        self.register_parameter("bias", ln.bias)
        self.config = config

    def forward(self, x):
        if not _needs_saving(x, self.weight, self.bias):
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return CompressedLayerNormFunction.apply(x, list(self.normalized_shape), self.weight, self.bias,
                                                 self.eps, self.config)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, {self.config}"


_WRAPPERS = ((nn.Linear, CompressedLinear), (nn.GELU, CompressedGELU), (nn.LayerNorm, CompressedLayerNorm))


def _wrapper_for(module: nn.Module, types: Tuple[type, ...]):
    for base, wrapper in _WRAPPERS:
        # Subclasses that override forward (LoRA layers, ...) compute something
        # else: left alone.
        if base in types and isinstance(module, base) and type(module).forward is base.forward:
            return wrapper
    return None


def compress_activations(model: nn.Module, bits: int = 4, block: int = 64, stochastic: bool = False,
                         types: Sequence[type] = (nn.Linear, nn.GELU, nn.LayerNorm),
                         seed: Optional[int] = None) -> int:
    """Replaces, in place, every nn.Linear / nn.GELU / nn.LayerNorm submodule
    of `model` (those listed in `types`) by its compressed twin sharing the
    same parameters. Returns how many modules were replaced.

    Children of nn.MultiheadAttention are skipped: it reads out_proj.weight
    directly instead of calling the module.
    """
    _check_options(bits, block)
    types = tuple(types)
    unknown = [t for t in types if t not in (nn.Linear, nn.GELU, nn.LayerNorm)]
    if unknown:
        raise ValueError(f"types may only hold nn.Linear, nn.GELU and nn.LayerNorm, got {unknown}")
    if _wrapper_for(model, types) is not None:
        raise ValueError(f"model is itself a {type(model).__name__}: pass a module that contains it "
                         "(compress_activations replaces submodules in place)")
    config = CompressionConfig(bits, block, stochastic, seed)
    count = 0
    for parent in list(model.modules()):
        if isinstance(parent, nn.MultiheadAttention):
            continue
        for name, child in list(parent._modules.items()):
            if child is None:
                continue
            wrapper = _wrapper_for(child, types)
            if wrapper is not None:
                parent._modules[name] = wrapper(child, config)
                count += 1
    return count
