"""stepscope.block_mask: the builders through Python, and against PyTorch
FlexAttention's own block classification (create_block_mask on CPU) for the
patterns both can express — an independent implementation of the same
"live / whole / partial" rule."""

import unittest

from stepscope import block_mask as bm

try:
    import torch
    from torch.nn.attention.flex_attention import create_block_mask
except Exception:  # noqa: BLE001 - any import failure means: no FlexAttention here
    create_block_mask = None


class BuildersTest(unittest.TestCase):
    def test_causal_counts_and_sizes(self):
        m = bm.causal(1024, block=128)
        self.assertEqual(m.live_blocks, 36)
        self.assertEqual(sum(m.partial), 8)
        self.assertEqual(bm.validate(m), "")
        self.assertEqual(m.csr_bytes, 4 * 9 + 5 * 36)
        self.assertEqual(list(bm.to_bitmap(m))[:8], [2, 0, 0, 0, 0, 0, 0, 0])

    def test_topk_pooled_by_hand(self):
        # Two blocks of 16 tokens, one head, head_dim 1: query block 1 keeps
        # itself (window 1) and picks block 0, the only one before it; the
        # diagonal blocks are partial under causal.
        q = [[[[1.0]] * 32]]
        k = [[[[float(t % 3)] for t in range(32)]]]
        m = bm.topk_pooled(q, k, block=16, topk=1, window_blocks=1, causal=True)
        self.assertEqual(list(m.row_offsets), [0, 1, 3])
        self.assertEqual(list(m.col_indices), [0, 0, 1])
        self.assertEqual(list(m.partial), [1, 0, 1])
        # Four blocks, top-1 by pooled score: key block 2 holds the largest keys.
        k4 = [[[[5.0 if 32 <= t < 48 else 1.0] for t in range(64)]]]
        m4 = bm.topk_pooled([[[[1.0]] * 64]], k4, block=16, topk=1, window_blocks=1, causal=True)
        self.assertEqual(list(m4.col_indices), [0, 0, 1, 0, 2, 2, 3])
        with self.assertRaisesRegex(ValueError, "4 dimensions"):
            bm.topk_pooled([[1.0]], k, block=16)
        with self.assertRaisesRegex(ValueError, "k has shape"):
            bm.topk_pooled(q, [[[[1.0]] * 16]], block=16)

    def test_bad_arguments_are_value_errors(self):
        with self.assertRaisesRegex(ValueError, "window \\(0\\) must be positive"):
            bm.sliding_window(256, 0, block=64)
        with self.assertRaisesRegex(ValueError, "block \\(100\\)"):
            bm.causal(256, block=100)
        broken = bm.from_bitmap(128, 128, [1, 0, 0, 0], block=64)
        self.assertEqual(bm.validate(broken), "row 1 (query block 1) has no live key block")


@unittest.skipUnless(create_block_mask, "needs torch with FlexAttention")
class FlexAgreementTest(unittest.TestCase):
    def flex(self, mask_mod, seq, block=128):
        return create_block_mask(mask_mod, 1, 1, seq, seq, device="cpu", BLOCK_SIZE=block)

    def assert_same(self, ours, flex_mask, element_rule):
        theirs = bm.from_flex(flex_mask, element_rule)
        self.assertEqual(list(theirs.row_offsets), list(ours.row_offsets))
        self.assertEqual(list(theirs.col_indices), list(ours.col_indices))
        self.assertEqual(list(theirs.partial), list(ours.partial))

    def test_causal(self):
        self.assert_same(bm.causal(1024), self.flex(lambda b, h, q, k: q >= k, 1024), bm.rule(causal=True))

    def test_sliding_window(self):
        w = 300
        self.assert_same(bm.sliding_window(2048, w), self.flex(lambda b, h, q, k: (q >= k) & (q - k < w), 2048),
                         bm.rule(causal=True, window=w))

    def test_documents(self):
        lengths = [100, 700, 30, 1218]
        doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
        self.assert_same(bm.documents(lengths), self.flex(lambda b, h, q, k: (q >= k) & (doc[q] == doc[k]), 2048),
                         bm.rule(causal=True, doc_ids=doc.tolist()))


if __name__ == "__main__":
    unittest.main()
