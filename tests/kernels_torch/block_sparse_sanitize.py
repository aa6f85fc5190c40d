"""Run under compute-sanitizer (issue #29, bad input): the block-sparse
attention kernels, forward and backward, on a ragged sequence (300 tokens,
blocks of 128, 64 and 32), grouped-query heads, head dims 64 and 128, a
causal window, a document mask and a two-way window, every version with a
backward (v1, v3, v4, v5, v12 to v17; v2's and v6's to v11's forward), with
and without GQA, packed and interleaved documents; exits 0 when every
launch completed. Used as

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/kernels_torch/block_sparse_sanitize.py [VERSION...]

(PYTHONPATH=python/stepscope_kernels with the extension built in place).
"""

import importlib
import itertools
import sys

import torch

bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")
doc = torch.repeat_interleave(torch.arange(3, device="cuda"), torch.tensor([100, 150, 50], device="cuda"))
masks = [
    bsa.BlockSparseMask.from_mask_mod(lambda b, h, q, k: (q >= k) & (q - k < 100), 300, 64, "cuda",
                                      causal=True, window=100),
    bsa.BlockSparseMask.from_mask_mod(lambda b, h, q, k: (q >= k) & (doc[q] == doc[k]), 300, 32, "cuda",
                                      causal=True, doc_ids=doc.tolist()),
    bsa.BlockSparseMask.from_mask_mod(lambda b, h, q, k: (q - k).abs() < 150, 300, 128, "cuda", window=150),
    bsa.BlockSparseMask.from_mask_mod(lambda b, h, q, k: (q >= k) & (q % 3 == k % 3), 300, 64, "cuda",
                                      causal=True, doc_ids=[t % 3 for t in range(300)]),
]
# Forward versions to run (default all): python3 block_sparse_sanitize.py 6 7
chosen = [int(a) for a in sys.argv[1:]] or list(range(1, 18))
for forward, backward in ((f, 1 if f == 2 else f) for f in chosen):
    bsa.FORWARD_VERSION, bsa.BACKWARD_VERSION = forward, backward
    for d, kv in itertools.product((64, 128), (2, 4)):
        for m in masks:
            q = torch.randn(2, 4, 300, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn(2, kv, 300, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn(2, kv, 300, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            out = bsa.block_sparse_attention(q, k, v, m)
            out.backward(torch.randn_like(out))
    torch.cuda.synchronize()
print("block-sparse attention: every launch completed")
