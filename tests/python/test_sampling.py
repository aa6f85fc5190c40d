"""The Python front of the length-bucketing sampler: it returns what the C++
core computes, checks its options, and meets the padding target on a
long-tailed length distribution (fresh lengths each run, seed printed)."""

import math
import random
import unittest

from stepscope import _stepscope
from stepscope.sampling import LengthBucketingBatchSampler


def long_tail(n, seed):
    rng = random.Random(seed)
    return [int(min(8192, max(8, rng.lognormvariate(math.log(300), 1.0)))) for _ in range(n)]


class SamplingTest(unittest.TestCase):
    def test_hand_computed_small_case(self):
        # Lengths 5, 1, 3, 3 with budget 6: batches {1, 2}, {3}, {0}; 12 real of 14 padded.
        batches, stats = _stepscope.bucket_batches([5, 1, 3, 3], max_tokens=6)
        self.assertEqual(sorted(map(tuple, batches)), [(0,), (1, 2), (3,)])
        self.assertEqual((stats["tokens"], stats["padded_tokens"]), (12, 14))

    def test_padding_target_and_every_sample_once(self):
        seed = random.randrange(2**32)
        lengths = long_tail(100_000, seed)
        _, random_waste = _stepscope.random_batches(lengths, 16384, seed=seed)
        seen, tokens, padded = [0] * len(lengths), 0, 0
        for rank in range(4):
            s = LengthBucketingBatchSampler(lengths, 16384, seed=seed, rank=rank, world_size=4, even_ranks=False)
            for batch in s:
                longest = max(lengths[i] for i in batch)
                self.assertTrue(len(batch) == 1 or longest * len(batch) <= 16384)
                for i in batch:
                    seen[i] += 1
                tokens += sum(lengths[i] for i in batch)
                padded += longest * len(batch)
        self.assertEqual(set(seen), {1}, f"seed {seed}")
        waste = 100.0 * (padded - tokens) / padded
        self.assertGreater(random_waste, 40.0, f"seed {seed}")
        self.assertLess(waste, 2.0, f"seed {seed}")

    def test_epochs_reshuffle_deterministically(self):
        lengths = long_tail(5000, 3)
        a = LengthBucketingBatchSampler(lengths, 4096, seed=7)
        b = LengthBucketingBatchSampler(lengths, 4096, seed=7)
        self.assertEqual(list(a), list(b))
        first = list(a)
        a.set_epoch(1)
        self.assertNotEqual(list(a), first)
        self.assertEqual(len(a), len(list(a)))

    def test_bad_options_raise_value_error(self):
        with self.assertRaisesRegex(ValueError, "rank 2 out of range for world_size 2"):
            LengthBucketingBatchSampler([3, 4], 8, rank=2, world_size=2)
        with self.assertRaisesRegex(ValueError, "max_tokens must be positive"):
            LengthBucketingBatchSampler([3, 4], 0)
        with self.assertRaisesRegex(ValueError, "sample 1 has length 0"):
            LengthBucketingBatchSampler([3, 0], 8)


try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the environment
    np = None


@unittest.skipUnless(np is not None, "needs numpy")
class ArrayPlanTest(unittest.TestCase):
    def test_array_in_buffers_out_equal_the_list_path(self):
        # An int32 numpy array is read in place (a strided one is made
        # contiguous first) and as_arrays=True returns the same plan as two
        # int64 buffers; any other array goes through the strict list path.
        seed = random.randrange(2**32)
        lengths = np.array(long_tail(20000, seed), dtype=np.int32)
        want, stats = _stepscope.bucket_batches(lengths.tolist(), max_tokens=8192, seed=3, rank=1, world_size=2)
        for given in (lengths, lengths.astype(np.int64)):
            (ib, ob), got_stats = _stepscope.bucket_batches(given, max_tokens=8192, seed=3, rank=1, world_size=2,
                                                            as_arrays=True)
            ix, off = np.frombuffer(ib, dtype="<i8"), np.frombuffer(ob, dtype="<i8")
            self.assertEqual(got_stats, stats)
            self.assertEqual([ix[off[b]:off[b + 1]].tolist() for b in range(len(off) - 1)], want, f"seed {seed}")
        strided, _ = _stepscope.bucket_batches(lengths[::2], max_tokens=8192)
        self.assertEqual(strided, _stepscope.bucket_batches(lengths[::2].tolist(), max_tokens=8192)[0])
        with self.assertRaises(TypeError):
            _stepscope.bucket_batches(np.array([1.5, 2.0]), max_tokens=8)
        with self.assertRaises(TypeError):
            _stepscope.bucket_batches([1.5, 2], max_tokens=8)


if __name__ == "__main__":
    unittest.main()
