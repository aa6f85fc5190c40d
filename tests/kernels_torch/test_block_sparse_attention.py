"""Block-sparse attention through PyTorch (issue #29 item 3), on fresh random
inputs (the seed is printed on failure).

CPU (the reference path; needs torch and, for the masks, the stepscope
package): the mask's token mask against the pattern written directly as a
mask_mod (causal, window, documents, global tokens); the reference's output
and gradients against F.scaled_dot_product_attention with that boolean mask
(float64, 1e-9) and grouped-query heads; malformed masks and shapes raise
ValueError naming what is wrong.

GPU (the kernel path; needs the extension and a CUDA GPU): the kernels
against the reference path on the same bf16/fp16 inputs, output within
2e-2 and gradients within 4e-2 of (1 + |ref|) for bf16 (fp16: a quarter),
the bound of one rounding to the dtype plus fp32 accumulation.
"""

import itertools
import os
import unittest

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # no torch here
    torch = None

bsa = None
bm = None
if torch is not None:
    import importlib

    try:
        bsa = importlib.import_module("stepscope_kernels.block_sparse_attention")
    except ImportError:
        bsa = None
    try:  # the library's builders; the kernel tests do without them (from_mask_mod)
        from stepscope import block_mask as bm
    except ImportError:
        bm = None

HAS_KERNELS = bsa is not None and bsa._C is not None and torch.cuda.is_available()


def fresh_seed():
    return int.from_bytes(os.urandom(4), "little")


def mod_patterns(seq, device="cpu"):
    """(name, FlexAttention-style mask_mod, ElementRule keywords, block) for from_mask_mod."""
    lengths = [37, 100, 5, seq - 142]
    doc = torch.repeat_interleave(torch.arange(4, device=device), torch.tensor(lengths, device=device))
    return [
        ("causal", lambda b, h, q, k: q >= k, dict(causal=True), 64),
        ("window", lambda b, h, q, k: (q >= k) & (q - k < 100), dict(causal=True, window=100), 64),
        ("documents", lambda b, h, q, k: (q >= k) & (doc[q] == doc[k]),
         dict(causal=True, doc_ids=doc.tolist()), 32),
        ("global + window", lambda b, h, q, k: (q >= k) & ((q - k < 50) | (q < 20) | (k < 20)),
         dict(causal=True, window=50, global_tokens=20), 32),
        ("bidirectional window", lambda b, h, q, k: (q - k).abs() < 100, dict(causal=False, window=100), 64),
        # v17 takes packed documents as intervals (cut by a window here) and
        # interleaved ones, no run each, pair by pair.
        ("documents + window", lambda b, h, q, k: (q >= k) & (doc[q] == doc[k]) & (q - k < 60),
         dict(causal=True, window=60, doc_ids=doc.tolist()), 32),
        ("interleaved documents", lambda b, h, q, k: (q >= k) & (q % 3 == k % 3),
         dict(causal=True, doc_ids=[t % 3 for t in range(seq)]), 32),
    ]


def patterns(seq):
    """(name, stepscope mask, mask_mod-style boolean [seq, seq]) triples."""
    i = torch.arange(seq).view(-1, 1)
    j = torch.arange(seq).view(1, -1)
    lengths = [37, 100, 5, seq - 142]
    doc = torch.repeat_interleave(torch.arange(4), torch.tensor(lengths))
    return [
        ("causal", bm.causal(seq, block=32), j <= i),
        ("window", bm.sliding_window(seq, 45, block=32), (j <= i) & (i - j < 45)),
        ("bidirectional window", bm.sliding_window(seq, 45, block=32, causal=False), (i - j).abs() < 45),
        ("documents", bm.documents(lengths, block=32), (j <= i) & (doc.view(-1, 1) == doc.view(1, -1))),
        ("global + window", bm.global_window(seq, 20, 33, block=32),
         (j <= i) & ((i - j < 33) | (i < 20) | (j < 20))),
    ]


@unittest.skipUnless(bsa is not None and bm is not None, "needs torch, stepscope_kernels and stepscope")
class ReferencePathTest(unittest.TestCase):
    def test_from_mask_mod_is_the_librarys_builder(self):
        built = {"causal": bm.causal(300, block=64), "window": bm.sliding_window(300, 100, block=64),
                 "documents": bm.documents([37, 100, 5, 158], block=32),
                 "global + window": bm.global_window(300, 20, 50, block=32),
                 "bidirectional window": bm.sliding_window(300, 100, block=64, causal=False)}
        for name, mod, rule, block in mod_patterns(300):
            if name not in built:  # the library has no builder for these
                continue
            with self.subTest(name):
                m = bsa.BlockSparseMask.from_mask_mod(mod, 300, block, **rule)
                self.assertEqual(m.row_offsets.tolist(), list(built[name].row_offsets))
                self.assertEqual(m.col_indices.tolist(), list(built[name].col_indices))
                if name == "global + window":
                    # The library keeps partial the blocks only the union of window and
                    # global tokens covers; what it calls whole is whole.
                    for mine, lib in zip(m.partial.tolist(), built[name].partial):
                        self.assertTrue(lib or not mine)
                else:
                    self.assertEqual(m.partial.tolist(), list(built[name].partial))

    def test_token_mask_is_the_pattern(self):
        for name, mask, want in patterns(200):
            with self.subTest(name):
                got = bsa.BlockSparseMask.from_stepscope(mask).token_mask()
                self.assertTrue(torch.equal(got[0], want))

    def test_matches_sdpa_with_the_boolean_mask(self):
        seed = fresh_seed()
        g = torch.Generator().manual_seed(seed)
        for name, mask, want in patterns(200):
            with self.subTest(name, seed=seed):
                q = torch.randn(2, 4, 200, 16, generator=g, dtype=torch.float64, requires_grad=True)
                k = torch.randn(2, 2, 200, 16, generator=g, dtype=torch.float64, requires_grad=True)
                v = torch.randn(2, 2, 200, 16, generator=g, dtype=torch.float64, requires_grad=True)
                out = bsa.block_sparse_attention(q, k, v, bsa.BlockSparseMask.from_stepscope(mask))
                ref = F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1),
                                                     attn_mask=want)
                torch.testing.assert_close(out, ref, rtol=1e-9, atol=1e-9)
                grad = torch.randn(out.shape, generator=g, dtype=torch.float64)
                mine = torch.autograd.grad(out, (q, k, v), grad)
                theirs = torch.autograd.grad(ref, (q, k, v), grad)
                for a, b in zip(mine, theirs):
                    torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)

    def test_transposed_csr_is_the_librarys(self):
        for name, mask, _ in patterns(200):
            with self.subTest(name):
                m = bsa.BlockSparseMask.from_stepscope(mask)
                t = bm.transpose(mask)
                self.assertEqual(m.t_offsets.tolist(), list(t.row_offsets))
                self.assertEqual(m.t_indices.tolist(), list(t.col_indices))
                self.assertEqual(m.t_partial.tolist(), list(t.partial))

    def test_module_and_queries_without_keys(self):
        # Block 0 sees only block 1, marked partial under a causal rule: no pair is allowed.
        mask = bsa.BlockSparseMask(32, 16, 1, [0, 1, 3], [1, 0, 1], [1, 1, 1], causal=True)
        q = torch.ones(1, 1, 32, 4)
        v = torch.full((1, 1, 32, 4), 2.0)
        out = bsa.BlockSparseAttention(mask)(q, q, v)
        self.assertTrue(torch.equal(out[0, 0, :16], torch.zeros(16, 4)))
        torch.testing.assert_close(out[0, 0, 16:], torch.full((16, 4), 2.0))

    def test_topk_pooled_is_the_librarys_reference(self):
        # The device-side selection against the C++ reference, on fresh random
        # q and k: GQA heads, a ragged last block, global blocks, top-k above
        # what a row can pick; the transposed arrays too.
        seed = fresh_seed()
        g = torch.Generator().manual_seed(seed)
        for causal in (True, False):
            for (b, h, hk, seq, d, block, topk, window, glob) in ((2, 4, 2, 300, 16, 32, 3, 2, 1),
                                                                  (1, 2, 1, 256, 8, 16, 20, 1, 0),
                                                                  (1, 3, 3, 129, 8, 64, 1, 3, 2)):
                with self.subTest(causal=causal, seq=seq, block=block, topk=topk, seed=seed):
                    q = torch.randn(b, h, seq, d, generator=g)
                    k = torch.randn(b, hk, seq, d, generator=g)
                    ref = bm.topk_pooled(q, k, block=block, topk=topk, window_blocks=window, global_blocks=glob,
                                         causal=causal)
                    m = bsa.BlockSparseMask.topk_pooled(q, k, block=block, topk=topk, window_blocks=window,
                                                        global_blocks=glob, causal=causal)
                    self.assertEqual(m.groups, b * h)
                    self.assertEqual(m.row_offsets.tolist(), list(ref.row_offsets))
                    self.assertEqual(m.col_indices.tolist(), list(ref.col_indices))
                    self.assertEqual(m.partial.tolist(), list(ref.partial))
                    t = bm.transpose(ref)
                    self.assertEqual(m.t_offsets.tolist(), list(t.row_offsets))
                    self.assertEqual(m.t_indices.tolist(), list(t.col_indices))
                    self.assertEqual(m.t_partial.tolist(), list(t.partial))

    def test_topk_pooled_ties_go_to_the_lower_block_and_bad_arguments_raise(self):
        # Every key block alike: each row's pick among equal scores is the
        # lowest candidate, as in the reference.
        q = torch.randn(1, 1, 128, 8)
        k = torch.ones(1, 1, 128, 8)
        m = bsa.BlockSparseMask.topk_pooled(q, k, block=16, topk=1, window_blocks=1, causal=True)
        ref = bm.topk_pooled(q, k, block=16, topk=1, window_blocks=1, causal=True)
        self.assertEqual(m.col_indices.tolist(), list(ref.col_indices))
        # Row 0 keeps itself; rows 1 and 2 keep themselves and pick block 0.
        self.assertEqual(m.col_indices.tolist()[:5], [0, 0, 1, 0, 2])
        with self.assertRaisesRegex(ValueError, "k has shape"):
            bsa.BlockSparseMask.topk_pooled(q, torch.ones(1, 1, 64, 8), block=16)
        with self.assertRaisesRegex(ValueError, "window_blocks"):
            bsa.BlockSparseMask.topk_pooled(q, k, block=16, window_blocks=0)
        with self.assertRaisesRegex(ValueError, "block"):
            bsa.BlockSparseMask.topk_pooled(q, k, block=24)
        with self.assertRaisesRegex(ValueError, "seq"):
            bsa.BlockSparseMask.topk_pooled(q[:, :, :0], k[:, :, :0], block=16)

    def test_bad_masks_and_shapes_raise(self):
        with self.assertRaisesRegex(ValueError, "strictly ascending"):
            bsa.BlockSparseMask(64, 16, 1, [0, 1, 3, 4, 5], [0, 1, 0, 2, 3], [1, 0, 1, 1, 1])
        with self.assertRaisesRegex(ValueError, "row 1 \\(query block 1\\) has no live key block"):
            bsa.BlockSparseMask(64, 16, 1, [0, 1, 1, 2, 3], [0, 2, 3], [1, 1, 1])
        with self.assertRaisesRegex(ValueError, "col_indices must lie in 0..3"):
            bsa.BlockSparseMask(64, 16, 1, [0, 1, 2, 3, 4], [0, 1, 2, 4], [1, 1, 1, 1])
        mask = bsa.BlockSparseMask.from_stepscope(bm.causal(64, block=16))
        q = torch.randn(1, 3, 64, 8)
        k = torch.randn(1, 2, 64, 8)
        with self.assertRaisesRegex(ValueError, "multiple of k's"):
            bsa.block_sparse_attention(q, k, k, mask)
        with self.assertRaisesRegex(ValueError, "does not match q/k sequence lengths"):
            bsa.block_sparse_attention(torch.randn(1, 2, 32, 8), k[:, :, :32], k[:, :, :32], mask)


@unittest.skipUnless(HAS_KERNELS, "needs the extension and a CUDA GPU")
class KernelPathTest(unittest.TestCase):
    def test_cuda_inputs_the_kernels_cannot_take_are_refused(self):
        m = bsa.BlockSparseMask.from_mask_mod(lambda b, h, q, k: q >= k, 256, 64, "cuda", causal=True)
        q32 = torch.randn(1, 2, 256, 64, device="cuda")
        with self.assertRaisesRegex(ValueError, "q: dtype torch.float32 is not supported"):
            bsa.block_sparse_attention(q32, q32, q32, m)
        q96 = torch.randn(1, 2, 256, 96, device="cuda", dtype=torch.bfloat16)
        with self.assertRaisesRegex(ValueError, "q: head_dim 96 is not supported"):
            bsa.block_sparse_attention(q96, q96, q96, m)
        # Non-contiguous inputs (the [B, S, H, D] -> [B, H, S, D] transpose of a model) run the kernels too.
        x = torch.randn(1, 256, 2, 64, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        self.assertFalse(x.is_contiguous())
        torch.testing.assert_close(bsa.block_sparse_attention(x, x, x, m),
                                   bsa.block_sparse_attention(x.contiguous(), x.contiguous(), x.contiguous(), m))

    def test_kernels_match_the_reference(self):
        seed = fresh_seed()
        g = torch.Generator(device="cuda").manual_seed(seed)
        for dtype, tol in ((torch.bfloat16, 2e-2), (torch.float16, 5e-3)):
            for d in (64, 128):
                for name, mod, rule, block in mod_patterns(300, "cuda"):
                    with self.subTest(name, dtype=dtype, d=d, seed=seed):
                        m = bsa.BlockSparseMask.from_mask_mod(mod, 300, block, "cuda", **rule)
                        q = torch.randn(2, 4, 300, d, device="cuda", dtype=dtype, generator=g, requires_grad=True)
                        k = torch.randn(2, 2, 300, d, device="cuda", dtype=dtype, generator=g, requires_grad=True)
                        v = torch.randn(2, 2, 300, d, device="cuda", dtype=dtype, generator=g, requires_grad=True)
                        out = bsa.block_sparse_attention(q, k, v, m)
                        ref = bsa.block_sparse_attention_reference(q.float(), k.float(), v.float(), m)
                        torch.testing.assert_close(out.float(), ref, rtol=tol, atol=tol)
                        grad = torch.randn(out.shape, device="cuda", dtype=dtype, generator=g)
                        mine = torch.autograd.grad(out, (q, k, v), grad)
                        theirs = torch.autograd.grad(ref, (q, k, v), grad.float())
                        for a, b in zip(mine, theirs):
                            torch.testing.assert_close(a.float(), b.float(), rtol=2 * tol, atol=2 * tol)

    def test_each_forward_version_matches_the_reference(self):
        # v1 (SIMT), v2 (WMMA), v3 (mma.sync), v4 (v3 with a mask-free
        # path for whole tiles), v5 (v4 with fewer instructions), v6 to v9 (v5
        # on wgmma; v8 overlapping softmax and products, v9 with K swizzled) on the same inputs, blocks of 16 to 128 and a
        # sequence that ends inside a 64-key tile.
        seed = fresh_seed()
        g = torch.Generator(device="cuda").manual_seed(seed)
        seq = 500
        try:
            for version in range(1, 18):
                bsa.FORWARD_VERSION = version
                for dtype, tol in ((torch.bfloat16, 2e-2), (torch.float16, 5e-3)):
                    for d in (64, 128):
                        for block in (16, 128):
                            for name, mod, rule, _ in mod_patterns(seq, "cuda"):
                                with self.subTest(name, version=version, dtype=dtype, d=d, block=block, seed=seed):
                                    m = bsa.BlockSparseMask.from_mask_mod(mod, seq, block, "cuda", **rule)
                                    q = torch.randn(1, 4, seq, d, device="cuda", dtype=dtype, generator=g)
                                    k = torch.randn(1, 2, seq, d, device="cuda", dtype=dtype, generator=g)
                                    v = torch.randn(1, 2, seq, d, device="cuda", dtype=dtype, generator=g)
                                    out = bsa.block_sparse_attention(q, k, v, m)
                                    ref = bsa.block_sparse_attention_reference(q.float(), k.float(), v.float(), m)
                                    torch.testing.assert_close(out.float(), ref, rtol=tol, atol=tol)
        finally:
            bsa.FORWARD_VERSION = 0

    def _check_forward_backward(self, m, q, k, v, tol, g):
        out = bsa.block_sparse_attention(q, k, v, m)
        ref = bsa.block_sparse_attention_reference(q.float(), k.float(), v.float(), m)
        torch.testing.assert_close(out.float(), ref, rtol=tol, atol=tol)
        grad = torch.randn(out.shape, device="cuda", dtype=q.dtype, generator=g)
        mine = torch.autograd.grad(out, (q, k, v), grad)
        theirs = torch.autograd.grad(ref, (q, k, v), grad.float())
        for name, a, b in zip("qkv", mine, theirs):
            torch.testing.assert_close(a.float(), b.float(), rtol=2 * tol, atol=2 * tol, msg=lambda e: f"d{name}: {e}")

    def test_topk_pooled_waits_for_nothing_and_replays_in_a_graph(self):
        # Item 3/4: the input-chosen mask is made without a host
        # synchronisation once its shape was seen, so a CUDA graph captures
        # it, and the replay on new inputs chooses what an eager call does.
        g = torch.Generator(device="cuda").manual_seed(fresh_seed())
        q, k = (torch.randn(2, h, 1000, 64, device="cuda", dtype=torch.bfloat16, generator=g) for h in (4, 2))

        def select():
            return bsa.BlockSparseMask.topk_pooled(q, k, block=64, topk=3, window_blocks=2, global_blocks=1)
        select()
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            select()
        finally:
            torch.cuda.set_sync_debug_mode("default")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            select()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = select()
        q.copy_(torch.randn(q.shape, device="cuda", dtype=q.dtype, generator=g))
        k.copy_(torch.randn(k.shape, device="cuda", dtype=k.dtype, generator=g))
        graph.replay()
        eager = select()
        self.assertEqual(captured.col_indices.tolist(), eager.col_indices.tolist())
        self.assertEqual(captured.t_indices.tolist(), eager.t_indices.tolist())

    def test_tensor_core_versions_forward_and_backward_match_the_reference(self):
        # The tensor-core kernels, v3-v14 (v6 to v11: their forward, v5's
        # backward; v12: v11's forward, the dK/dV pass on wgmma; v13: the dQ
        # pass too; v14: its forward's mask as bits; v15: two blocks per SM
        # at head dim 64; v16: dK/dV stored without GQA, so v16 and v17 run
        # without GQA too; v17: documents as intervals; forward and both
        # backward passes), on blocks that are below, at, between and above the 64-row
        # tile, a ragged sequence, GQA, and per-(batch, head) masks chosen
        # from the input; a longer sequence gives the whole-tile paths most
        # of the tiles.
        seed = fresh_seed()
        g = torch.Generator(device="cuda").manual_seed(seed)
        cases = [(330, block) for block in (16, 48, 64, 128)] + [(1000, 64), (1000, 128)]
        try:
            for version, kv, (dtype, tol), d, (seq, block) in itertools.product(
                    range(3, 18), (2, 4), ((torch.bfloat16, 2e-2), (torch.float16, 5e-3)), (64, 128), cases):
                if kv == 4 and version < 16:
                    continue
                bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = version

                def inputs():
                    return [torch.randn(2, h, seq, d, device="cuda", dtype=dtype, generator=g, requires_grad=True)
                            for h in (4, kv, kv)]
                for name, mod, rule, _ in mod_patterns(seq, "cuda"):
                    with self.subTest(name, version=version, kv=kv, dtype=dtype, d=d, seq=seq, block=block,
                                      seed=seed):
                        m = bsa.BlockSparseMask.from_mask_mod(mod, seq, block, "cuda", **rule)
                        self._check_forward_backward(m, *inputs(), tol, g)
                with self.subTest("topk_pooled", version=version, kv=kv, dtype=dtype, d=d, seq=seq, block=block,
                                  seed=seed):
                    q, k, v = inputs()
                    m = bsa.BlockSparseMask.topk_pooled(q.detach(), k.detach(), block=block, topk=2,
                                                        window_blocks=1, global_blocks=1, causal=True)
                    self._check_forward_backward(m, q, k, v, tol, g)
        finally:
            bsa.FORWARD_VERSION = bsa.BACKWARD_VERSION = 0


if __name__ == "__main__":
    unittest.main()
