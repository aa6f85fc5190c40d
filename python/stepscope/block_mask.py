"""Block-sparse attention masks (docs/kernels.md, "Block-sparse attention").

A :class:`BlockMask` lists, per query block, the live key blocks in CSR form
(``row_offsets``, ``col_indices``) and whether each must be masked token by
token (``partial``) by its :class:`ElementRule`. The builders here are the
C++ library's; :func:`from_flex` reads PyTorch FlexAttention's ``BlockMask``.
Bad arguments raise ``ValueError`` naming what is wrong.
"""

from . import _stepscope

BlockMask = _stepscope.BlockMask
ElementRule = _stepscope.ElementRule


def rule(causal=False, window=0, global_tokens=0, doc_ids=None):
    """The token rule inside partial blocks (see ElementRule in src/kernels/block_mask.h)."""
    r = ElementRule()
    r.causal, r.window, r.global_tokens = causal, window, global_tokens
    if doc_ids is not None:
        r.doc_ids = list(doc_ids)
    return r


def causal(seq, block=128):
    return _stepscope.block_mask_causal(seq, block)


def sliding_window(seq, window, block=128, causal=True):
    return _stepscope.block_mask_sliding_window(seq, block, window, causal)


def documents(lengths, block=128, causal=True):
    """Packed sequences: attention inside each document of the given lengths."""
    return _stepscope.block_mask_documents(list(lengths), block, causal)


def global_window(seq, global_tokens, window, block=128, causal=True):
    return _stepscope.block_mask_global_window(seq, block, global_tokens, window, causal)


def strided(seq, local_blocks, stride_blocks, block=128, causal=True):
    return _stepscope.block_mask_strided(seq, block, local_blocks, stride_blocks, causal)


def dilated(seq, window_blocks, dilation, block=128, causal=True):
    return _stepscope.block_mask_dilated(seq, block, window_blocks, dilation, causal)


def bigbird(seq, global_blocks, window_blocks, random_blocks, seed=0, block=128):
    return _stepscope.block_mask_bigbird(seq, block, global_blocks, window_blocks, random_blocks, seed)


def topk_pooled(q, k, block=128, topk=4, window_blocks=1, global_blocks=0, causal=True):
    """The mask chosen from the input (CPU reference): q [batch, heads, seq,
    head_dim] and k [batch, kv_heads, seq, head_dim] as nested lists or
    arrays with .shape and .reshape (torch, numpy); one mask per batch × head.
    A ragged nested list is refused by the library's size check."""
    shape_q = _shape(q, "q")
    shape_k = _shape(k, "k")
    b, h, s, d = shape_q
    if shape_k[0] != b or shape_k[2] != s or shape_k[3] != d:
        raise ValueError(f"k has shape {tuple(shape_k)}, expected [{b}, kv_heads, {s}, {d}]")
    return _stepscope.block_mask_topk_pooled(_flat(q), _flat(k), b, h, shape_k[1], s, d, block, topk,
                                             window_blocks, global_blocks, causal)


def _shape(x, name):
    if hasattr(x, "shape"):
        shape = [int(n) for n in x.shape]
    else:  # nested sequences: the first element's lengths, checked by the size below
        shape, y = [], x
        while isinstance(y, (list, tuple)):
            shape.append(len(y))
            y = y[0] if y else None
    if len(shape) != 4:
        raise ValueError(f"{name} must have 4 dimensions [batch, heads, seq, head_dim]")
    return shape


def _flat(x):
    if hasattr(x, "reshape"):
        return [float(v) for v in x.reshape(-1).tolist()]
    out = []
    stack = [x]
    while stack:
        y = stack.pop()
        if isinstance(y, (list, tuple)):
            stack.extend(reversed(y))
        else:
            out.append(float(y))
    return out


def from_rule(seq, element_rule, block=128):
    return _stepscope.block_mask_from_rule(seq, block, element_rule)


def to_bitmap(mask):
    """groups × q_blocks × k_blocks bytes, row-major: 0 dead, 1 attended whole, 2 partial."""
    return _stepscope.block_mask_to_bitmap(mask)


def from_bitmap(seq_q, seq_k, bitmap, block=128, groups=1, element_rule=None):
    return _stepscope.block_mask_from_bitmap(seq_q, seq_k, block, groups, list(bitmap), element_rule or ElementRule())


def transpose(mask):
    """The same live blocks listed by key block (rows: key blocks; columns: query blocks)."""
    return _stepscope.block_mask_transpose(mask)


def validate(mask):
    """'' when the mask is well formed, else what is wrong."""
    return _stepscope.block_mask_validate(mask)


def from_flex(block_mask, element_rule=None):
    """A FlexAttention ``BlockMask`` (torch.nn.attention.flex_attention) as a BlockMask.

    Its ``kv_num_blocks``/``kv_indices`` are the blocks its ``mask_mod`` must
    mask (partial here), ``full_kv_num_blocks``/``full_kv_indices`` the ones
    attended whole. ``element_rule`` is the mask_mod's rule in the terms of
    :class:`ElementRule` (a Python mask_mod cannot be read); groups are
    batch × heads as the tensors give them (1 × 1: one shared mask).
    """
    q_block, kv_block = block_mask.BLOCK_SIZE
    if q_block != kv_block:
        raise ValueError(f"block_mask: BLOCK_SIZE {block_mask.BLOCK_SIZE}: query and key blocks must be equal")
    seq_q, seq_k = block_mask.seq_lengths
    num = block_mask.kv_num_blocks
    groups = num.shape[0] * num.shape[1]

    def flat(t):
        return [] if t is None else [int(x) for x in t.reshape(-1).tolist()]

    k_blocks = (seq_k + kv_block - 1) // kv_block

    def rows(t):
        # kv_indices may carry more columns than key blocks (padding); keep the first k_blocks.
        return None if t is None else t[..., :k_blocks]

    return _stepscope.block_mask_from_flex(seq_q, seq_k, q_block, groups, flat(num), flat(rows(block_mask.kv_indices)),
                                           flat(block_mask.full_kv_num_blocks), flat(rows(block_mask.full_kv_indices)),
                                           element_rule or ElementRule())
