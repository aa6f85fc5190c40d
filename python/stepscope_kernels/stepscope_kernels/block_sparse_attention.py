"""Block-sparse attention (issue #29): a CSR block mask, the attention it
defines, and the autograd function over the CUDA kernels.

A :class:`BlockSparseMask` holds, per group (one mask shared by every head,
one per head, or one per batch × head) and query block, the ascending live
key blocks (``row_offsets``, ``col_indices``, int32) with a ``partial`` flag
each: a whole block is attended entirely, inside a partial one the mask's
token rule decides each pair (causal, window, same document, global tokens;
see src/kernels/block_mask.h). The mask is checked on the host when it is
made, so the attention call itself never synchronises with the GPU (CUDA
graphs capture it).

``block_sparse_attention(q, k, v, mask)`` takes the layout of
``F.scaled_dot_product_attention`` (q [B, H, S, D], k and v [B, Hkv, S, D],
H a multiple of Hkv) and returns the attention output. CUDA tensors run the
kernels of src/kernels/gpu/block_sparse_attention.cu (fp16/bf16, head_dim 64
or 128, blocks up to 128; anything else is a ValueError naming the
argument); CPU tensors run the dense reference below, which materialises the
token mask (for tests and CPU use, not for long sequences). A query with no
attended key gets a zero output.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Optional, Sequence

import torch
import torch.nn as nn

try:  # the CUDA extension; the reference path works without it
    from stepscope_kernels import _C  # type: ignore
except ImportError:  # pragma: no cover - depends on the build
    _C = None

# The kernels' versions (src/kernels/gpu/block_sparse_attention.h): 0 the
# fastest measured, 1 the SIMT baseline, 2 WMMA tensor cores (forward only),
# 3 mma.sync with register-resident fragments (forward and backward), 4 the
# same with a mask-free path for tiles the mask keeps whole, 5 that with
# fewer instructions (fast exponents, no division per tile), 6 to 10 forwards
# on Hopper's warpgroup products (wgmma; their backward is v5's; v5 off
# Hopper): 6 v5's loop, 7 two warpgroups sharing each K/V tile, 8 the
# softmax under the products, 9 K swizzled, 10 K and V swizzled, 11 those
# tiles copied by the tensor memory accelerator; 12 v11's forward with the
# backward's dK/dV pass on wgmma, 13 its dQ pass too, 14 v13 with the
# forward's mask tested as bits, 15 v14 with two blocks per SM at head dim 64,
# 16 v15 storing dK/dV without GQA, 17 v16 with packed documents as intervals.
# Tests and benchmarks set them to compare versions on the same inputs.
FORWARD_VERSION = 0
BACKWARD_VERSION = 0

_KERNEL_DTYPES = (torch.float16, torch.bfloat16)
_KERNEL_HEAD_DIMS = (64, 128)


class _TopkLayout(NamedTuple):
    candidate: torch.Tensor  # [n, n] bool: blocks a row may pick
    forced: torch.Tensor     # [n, n] bool: blocks a row keeps whatever the input
    ranked: torch.Tensor     # [1, 1, n, n] bool: rank r < how many row i picks
    rows: torch.Tensor       # [nnz] int64: each live block's row
    slot: torch.Tensor       # [nnz] int64: its place in the row
    offsets: torch.Tensor    # [groups · n + 1] int32: the row offsets


@functools.lru_cache(maxsize=64)
def _topk_layout(n: int, topk: int, window_blocks: int, global_blocks: int, causal: bool, groups: int,
                 device: str) -> _TopkLayout:
    """What topk_pooled keeps whatever the input, from the shapes alone, made
    on the host and copied to the device once per shape: copies from the host
    synchronise, so later calls (and CUDA graph captures after a warm-up call)
    reuse these tensors and never wait for the device."""
    qb = torch.arange(n).view(-1, 1)
    kb = torch.arange(n).view(1, -1)
    allowed = kb <= qb if causal else torch.ones(n, n, dtype=torch.bool)
    near = (qb - kb < window_blocks) if causal else (2 * (qb - kb).abs() < window_blocks)
    forced = allowed & (near | (kb < global_blocks))
    candidate = allowed & ~forced
    keep = candidate.sum(1).clamp(max=topk)
    row_len = forced.sum(1) + keep
    nnz = int(row_len.sum())
    ranked = torch.arange(n).view(1, 1, 1, n) < keep.view(1, 1, n, 1)
    rows = torch.repeat_interleave(torch.arange(n), row_len)
    slot = torch.arange(nnz) - torch.repeat_interleave(torch.cumsum(row_len, 0) - row_len, row_len)
    offsets = torch.zeros(groups * n + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(row_len.repeat(groups), 0)
    dev = torch.device(device)
    return _TopkLayout(candidate.to(dev), forced.to(dev), ranked.to(dev), rows.to(dev), slot.to(dev),
                       offsets.to(torch.int32).to(dev))


def _transpose(row_offsets: torch.Tensor, col_indices: torch.Tensor, partial: torch.Tensor, groups: int,
               q_blocks: int, k_blocks: int):
    """The same live blocks listed by key block (what dK/dV walk). Runs on the
    arrays' device with sizes known from their shapes, so a mask made on the
    GPU is transposed there without waiting for it."""
    dev = col_indices.device
    nnz = col_indices.numel()
    counts = (row_offsets[1:] - row_offsets[:-1]).to(torch.int64)
    rows = torch.repeat_interleave(torch.arange(groups * q_blocks, dtype=torch.int64, device=dev), counts,
                                   output_size=nnz)
    group, qb = rows // q_blocks, rows % q_blocks
    key = (group * k_blocks + col_indices.to(torch.int64)) * q_blocks + qb
    order = torch.argsort(key, stable=True)
    t_rows = key[order] // q_blocks
    t_counts = torch.zeros(groups * k_blocks, dtype=torch.int64, device=dev)
    t_counts.scatter_add_(0, t_rows, torch.ones_like(t_rows))
    t_offsets = torch.zeros(groups * k_blocks + 1, dtype=torch.int32, device=dev)
    t_offsets[1:] = torch.cumsum(t_counts, 0).to(torch.int32)
    return t_offsets, qb[order].to(torch.int32), partial[order]


class BlockSparseMask:
    """A CSR block mask and its token rule; see the module docstring."""

    def __init__(self, seq: int, block: int, groups: int, row_offsets, col_indices, partial, *, causal: bool = False,
                 window: int = 0, global_tokens: int = 0, doc_ids: Optional[Sequence[int]] = None):
        if seq < 1 or not (16 <= block <= 256 and block % 16 == 0) or groups < 1:
            raise ValueError(f"mask: seq ({seq}) must be positive, block ({block}) a multiple of 16 from 16 to 256, "
                             f"groups ({groups}) positive")
        self.seq, self.block, self.groups = int(seq), int(block), int(groups)
        self.q_blocks = self.k_blocks = (self.seq + self.block - 1) // self.block
        self.row_offsets = torch.as_tensor(row_offsets, dtype=torch.int32).cpu().contiguous()
        self.col_indices = torch.as_tensor(col_indices, dtype=torch.int32).cpu().contiguous()
        self.partial = torch.as_tensor(partial, dtype=torch.uint8).cpu().contiguous()
        self.causal, self.window, self.global_tokens = bool(causal), int(window), int(global_tokens)
        self.doc_ids = None if doc_ids is None else torch.as_tensor(doc_ids, dtype=torch.int32).cpu().contiguous()
        self._check()
        # Each token's document as [first, last] where documents are packed whole (v17's kernels cut
        # their mask intervals to it); None otherwise or without the extension.
        self.doc_spans = None if self.doc_ids is None or _C is None else _C.document_spans(self.doc_ids)
        self.t_offsets, self.t_indices, self.t_partial = _transpose(
            self.row_offsets, self.col_indices, self.partial, self.groups, self.q_blocks, self.k_blocks)
        self._device_copies = {}

    @classmethod
    def from_stepscope(cls, mask) -> "BlockSparseMask":
        """From a ``stepscope.block_mask.BlockMask`` (seq_q must equal seq_k)."""
        if mask.seq_q != mask.seq_k:
            raise ValueError(f"mask: seq_q ({mask.seq_q}) and seq_k ({mask.seq_k}) differ")
        rule = mask.rule
        return cls(mask.seq_q, mask.block, mask.groups, list(mask.row_offsets), list(mask.col_indices),
                   list(mask.partial), causal=rule.causal, window=rule.window, global_tokens=rule.global_tokens,
                   doc_ids=list(rule.doc_ids) or None)

    @classmethod
    def from_mask_mod(cls, mask_mod, seq: int, block: int = 128, device=None, **rule) -> "BlockSparseMask":
        """From a FlexAttention-style ``mask_mod(b, h, q_idx, kv_idx)`` (one mask for all heads).

        Each block is classified by evaluating mask_mod on every token pair of
        its block row (on `device`): live when some pair is allowed, whole when
        all are. ``rule`` (causal, window, global_tokens, doc_ids) must say in
        ElementRule terms what mask_mod says, since the kernels apply it inside
        partial blocks.
        """
        device = torch.device(device or "cpu")
        n = (seq + block - 1) // block
        pad = n * block
        zero = torch.zeros((), dtype=torch.int64, device=device)
        kv = torch.arange(pad, device=device)
        offsets, cols, partial = [0], [], []
        for qb in range(n):
            q = torch.arange(qb * block, (qb + 1) * block, device=device)
            # Positions past the end are clamped for mask_mod (it may index
            # per-token tables) and masked out below.
            allowed = mask_mod(zero, zero, q.clamp(max=seq - 1).view(-1, 1), kv.clamp(max=seq - 1).view(1, -1))
            allowed = allowed.expand(block, pad)
            valid = (q.view(-1, 1) < seq) & (kv.view(1, -1) < seq)
            blocks = allowed.reshape(block, n, block).transpose(0, 1).reshape(n, -1)
            valid_b = valid.reshape(block, n, block).transpose(0, 1).reshape(n, -1)
            live = (blocks & valid_b).any(dim=1)
            whole = (blocks | ~valid_b).all(dim=1)
            idx = torch.nonzero(live).flatten().cpu()
            cols += idx.tolist()
            partial += (~whole[live]).to(torch.uint8).cpu().tolist()
            offsets.append(len(cols))
        return cls(seq, block, 1, offsets, cols, partial, **rule)

    @classmethod
    def topk_pooled(cls, q: torch.Tensor, k: torch.Tensor, block: int = 128, topk: int = 4, window_blocks: int = 1,
                    global_blocks: int = 0, causal: bool = True) -> "BlockSparseMask":
        """A mask chosen from the input (issue #29 item 4), one per batch × head,
        made on q's device without waiting for it (no host synchronisation:
        CUDA graphs can capture it).

        Each block of q and k is mean-pooled over its tokens; query block r
        keeps its ``window_blocks`` nearest key blocks (ending at itself under
        causal, centred otherwise), the ``global_blocks`` leading ones, and
        the ``topk`` other key blocks with the largest pooled score q̄·k̄
        (ties to the lower index; under causal only blocks at or before r).
        Which blocks are forced and how many others each row keeps depend
        only on the shapes, so the row offsets are known on the host and only
        the chosen columns are computed on the device. The semantics are
        those of the library's CPU reference, ``stepscope.block_mask.topk_pooled``
        (src/kernels/block_mask_builders.h), which the tests compare with.
        """
        if q.dim() != 4 or k.dim() != 4:
            raise ValueError("q and k must have 4 dimensions [batch, heads, seq, head_dim]")
        b, h, seq, d = q.shape
        hk = k.shape[1]
        if k.shape[0] != b or k.shape[2] != seq or k.shape[3] != d or h % hk != 0:
            raise ValueError(f"k has shape {tuple(k.shape)}, expected [{b}, kv_heads dividing {h}, {seq}, {d}]")
        if seq < 1 or d < 1:
            raise ValueError(f"q: seq ({seq}) and head_dim ({d}) must be positive")
        if topk < 0 or window_blocks < 1 or global_blocks < 0:
            raise ValueError(f"topk ({topk}) and global_blocks ({global_blocks}) must not be negative, "
                             f"window_blocks ({window_blocks}) must be positive")
        if not (16 <= block <= 256 and block % 16 == 0):
            raise ValueError(f"mask: block ({block}) must be a multiple of 16 from 16 to 256")
        dev = q.device
        n = (seq + block - 1) // block
        lay = _topk_layout(n, topk, window_blocks, global_blocks, bool(causal), b * h, str(dev))
        # The choice: on the device.
        wide = torch.float64 if dev.type == "cpu" else torch.float32

        def pooled(x):
            x = x.to(wide)
            if n * block != seq:
                x = torch.nn.functional.pad(x, (0, 0, 0, n * block - seq))
            # Tokens per block (the last may be short), made on the device:
            # assigning a Python number into a CUDA tensor copies from the
            # host, a synchronisation that CUDA graph capture refuses.
            counts = (seq - block * torch.arange(n, device=dev, dtype=wide)).clamp(max=float(block))
            return x.view(x.shape[0], x.shape[1], n, block, d).sum(3) / counts.view(1, 1, n, 1)

        scores = pooled(q) @ pooled(k).repeat_interleave(h // hk, dim=1).transpose(-1, -2)
        scores = scores.masked_fill(~lay.candidate, float("-inf"))
        order = torch.sort(scores, dim=-1, descending=True, stable=True).indices
        chosen = torch.zeros(scores.shape, dtype=torch.bool, device=dev)
        chosen.scatter_(-1, order, lay.ranked.expand(order.shape))
        chosen |= lay.forced
        cols = torch.arange(n, device=dev).view(1, 1, 1, n)
        ascending = torch.where(chosen, cols, cols + n).sort(dim=-1).values.view(b * h, n, n)
        col = ascending[:, lay.rows, lay.slot]
        partial = ((col == lay.rows.view(1, -1)) & causal).to(torch.uint8)
        offsets = lay.offsets

        mask = cls.__new__(cls)
        mask.seq, mask.block, mask.groups = int(seq), int(block), int(b * h)
        mask.q_blocks = mask.k_blocks = n
        mask.row_offsets = offsets
        mask.col_indices = col.reshape(-1).to(torch.int32).contiguous()
        mask.partial = partial.reshape(-1).contiguous()
        mask.causal, mask.window, mask.global_tokens, mask.doc_ids, mask.doc_spans = bool(causal), 0, 0, None, None
        mask.t_offsets, mask.t_indices, mask.t_partial = _transpose(
            mask.row_offsets, mask.col_indices, mask.partial, mask.groups, n, n)
        mask._device_copies = {str(dev): (mask.row_offsets, mask.col_indices, mask.partial, mask.t_offsets,
                                          mask.t_indices, mask.t_partial, None, None)}
        return mask

    def _check(self):
        rows = self.groups * self.q_blocks
        if self.row_offsets.numel() != rows + 1:
            raise ValueError(f"mask: row_offsets has {self.row_offsets.numel()} entries, expected {rows + 1}")
        if self.partial.numel() != self.col_indices.numel():
            raise ValueError(f"mask: partial has {self.partial.numel()} entries, col_indices {self.col_indices.numel()}")
        if int(self.row_offsets[0]) != 0 or int(self.row_offsets[-1]) != self.col_indices.numel():
            raise ValueError("mask: row_offsets must start at 0 and end at the number of col_indices")
        counts = self.row_offsets[1:] - self.row_offsets[:-1]
        if bool((counts < 0).any()):
            raise ValueError("mask: row_offsets must not fall")
        if bool((counts == 0).any()):
            r = int(torch.nonzero(counts == 0)[0])
            raise ValueError(f"mask: row {r} (query block {r % self.q_blocks}) has no live key block")
        c = self.col_indices.to(torch.int64)
        if c.numel() and (bool((c < 0).any()) or bool((c >= self.k_blocks).any())):
            raise ValueError(f"mask: col_indices must lie in 0..{self.k_blocks - 1}")
        first = torch.zeros_like(c, dtype=torch.bool)
        first[self.row_offsets[:-1].to(torch.int64)] = True
        if c.numel() > 1 and bool(((c[1:] <= c[:-1]) & ~first[1:]).any()):
            raise ValueError("mask: col_indices must be strictly ascending within each row")
        if self.doc_ids is not None and self.doc_ids.numel() != self.seq:
            raise ValueError(f"mask: doc_ids has {self.doc_ids.numel()} entries, expected seq = {self.seq}")
        if self.window < 0 or self.global_tokens < 0:
            raise ValueError("mask: window and global_tokens must not be negative")

    @property
    def density(self) -> float:
        return self.col_indices.numel() / float(self.groups * self.q_blocks * self.k_blocks)

    def token_mask(self, device=None) -> torch.Tensor:
        """bool [groups, seq, seq]: whether query i attends key j (dense; for the reference and tests)."""
        g, n, b = self.groups, self.q_blocks, self.block
        offsets, cols, partial = self.row_offsets.cpu(), self.col_indices.cpu(), self.partial.cpu()
        bitmap = torch.zeros(g * n * n, dtype=torch.uint8)
        rows = torch.repeat_interleave(torch.arange(g * n), (offsets[1:] - offsets[:-1]).to(torch.int64))
        bitmap[rows * n + cols.to(torch.int64)] = torch.where(partial > 0, 2, 1).to(torch.uint8)
        cells = bitmap.view(g, n, n).repeat_interleave(b, 1).repeat_interleave(b, 2)[:, :self.seq, :self.seq]
        i = torch.arange(self.seq).view(-1, 1)
        j = torch.arange(self.seq).view(1, -1)
        backward = (j <= i) if self.causal else torch.ones(self.seq, self.seq, dtype=torch.bool)
        rule = backward.clone()
        if self.window > 0:
            distance = (i - j) if self.causal else (i - j).abs()
            rule &= distance < self.window
        if self.doc_ids is not None:
            d = self.doc_ids.to(torch.int64)
            rule &= d.view(-1, 1) == d.view(1, -1)
        if self.global_tokens > 0:
            rule |= ((i < self.global_tokens) | (j < self.global_tokens)) & backward
        allowed = (cells == 1) | ((cells == 2) & rule.unsqueeze(0))
        return allowed.to(device) if device is not None else allowed

    def on(self, device: torch.device):
        """The CSR tensors on `device`, copied once per device."""
        key = str(device)
        if key not in self._device_copies:
            move = lambda t: None if t is None else t.to(device)  # noqa: E731
            self._device_copies[key] = tuple(move(t) for t in (self.row_offsets, self.col_indices, self.partial,
                                                               self.t_offsets, self.t_indices, self.t_partial,
                                                               self.doc_ids, self.doc_spans))
        return self._device_copies[key]


def _check_inputs(q, k, v, mask: BlockSparseMask):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"q, k, v must be [batch, heads, seq, head_dim], got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(f"k and v must match q's batch and head_dim, got q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"v {tuple(v.shape)}")
    if q.shape[1] % k.shape[1] != 0:
        raise ValueError(f"q's heads ({q.shape[1]}) must be a multiple of k's ({k.shape[1]})")
    if q.shape[2] != mask.seq or k.shape[2] != mask.seq:
        raise ValueError(f"mask: seq {mask.seq} does not match q/k sequence lengths {q.shape[2]}, {k.shape[2]}")
    if mask.groups not in (1, q.shape[1], q.shape[0] * q.shape[1]):
        raise ValueError(f"mask: groups ({mask.groups}) must be 1, heads ({q.shape[1]}) or batch × heads "
                         f"({q.shape[0] * q.shape[1]})")


def block_sparse_attention_reference(q, k, v, mask: BlockSparseMask, scale: Optional[float] = None):
    """Dense, differentiable definition: softmax over the attended keys, zero where there are none."""
    _check_inputs(q, k, v, mask)
    b, h, s, d = q.shape
    rep = h // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    scale = d ** -0.5 if scale is None else scale
    allowed = mask.token_mask(q.device)
    if mask.groups == 1:
        allowed = allowed.view(1, 1, s, s)
    elif mask.groups == h:
        allowed = allowed.view(1, h, s, s)
    else:
        allowed = allowed.view(b, h, s, s)
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    scores = scores.masked_fill(~allowed, float("-inf"))
    # 16-bit scores are softmaxed in fp32; fp32 and fp64 in their own precision.
    wide = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    probs = torch.softmax(scores.to(wide), dim=-1).nan_to_num(0.0).to(q.dtype)
    return torch.matmul(probs, v)


class _BlockSparseAttentionFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask: BlockSparseMask, scale: float):
        tensors = mask.on(q.device)
        out, lse = _C.block_sparse_attention_forward(q, k, v, *tensors, mask.block, mask.groups, mask.causal,
                                                     mask.window, mask.global_tokens, scale, FORWARD_VERSION)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.mask, ctx.scale = mask, scale
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, lse = ctx.saved_tensors
        tensors = ctx.mask.on(q.device)
        dq, dk, dv = _C.block_sparse_attention_backward(q, k, v, out, grad_out.contiguous(), lse, *tensors,
                                                        ctx.mask.block, ctx.mask.groups, ctx.mask.causal,
                                                        ctx.mask.window, ctx.mask.global_tokens, ctx.scale,
                                                        BACKWARD_VERSION)
        return dq, dk, dv, None, None


def _check_kernel_inputs(q, k, v):
    """CUDA tensors go to the kernels; what they cannot take is refused, naming the argument
    (never a silent fall back to the dense reference, whose memory grows with seq²)."""
    if _C is None:
        raise ValueError("q: CUDA tensors need the stepscope_kernels extension, which is not built "
                         "(python/stepscope_kernels: python setup.py build_ext --inplace)")
    if q.dtype not in _KERNEL_DTYPES:
        raise ValueError(f"q: dtype {q.dtype} is not supported by the kernels (float16 or bfloat16)")
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"k, v: dtypes {k.dtype}, {v.dtype} must equal q's ({q.dtype})")
    if q.shape[-1] not in _KERNEL_HEAD_DIMS:
        raise ValueError(f"q: head_dim {q.shape[-1]} is not supported by the kernels (64 or 128)")
    for name, t in (("k", k), ("v", v)):
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device} but q is on {q.device}")


def block_sparse_attention(q, k, v, mask: BlockSparseMask, scale: Optional[float] = None):
    """Attention of q over k, v restricted to the mask's live pairs (see the module docstring).

    CUDA tensors run the kernels (made contiguous first); CPU tensors the dense reference.
    """
    _check_inputs(q, k, v, mask)
    scale = q.shape[-1] ** -0.5 if scale is None else float(scale)
    if q.is_cuda:
        _check_kernel_inputs(q, k, v)
        if mask.block > 128:
            raise ValueError(f"mask: block {mask.block} is not supported by the kernels (16..128)")
        return _BlockSparseAttentionFn.apply(q.contiguous(), k.contiguous(), v.contiguous(), mask, scale)
    return block_sparse_attention_reference(q, k, v, mask, scale)


class BlockSparseAttention(nn.Module):
    """``block_sparse_attention`` with a fixed mask: a drop-in for ``F.scaled_dot_product_attention(q, k, v)``."""

    def __init__(self, mask: BlockSparseMask, scale: Optional[float] = None):
        super().__init__()
        self.mask, self.scale = mask, scale

    def forward(self, q, k, v):
        return block_sparse_attention(q, k, v, self.mask, self.scale)
