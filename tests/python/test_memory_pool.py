"""stepscope.memory_pool: FragmentationGuard's rule on the allocator's
statistics (torch.cuda's functions replaced, so it runs without a GPU), and
the arguments both tools refuse. Skips where torch is not installed; the
pools themselves need a GPU (workloads/fragmentation_pool.py)."""

import unittest
from unittest import mock

try:
    import torch
    from stepscope import memory_pool
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

GiB = 1 << 30


@unittest.skipUnless(torch is not None, "needs torch")
class FragmentationGuardTest(unittest.TestCase):
    def guard(self, stats, **kw):
        """A guard on a fake 80 GiB device whose memory_stats return `stats` (a list, one per call)."""
        calls = iter(stats)
        patches = [mock.patch.object(torch.cuda, "memory_stats", side_effect=lambda d: next(calls)),
                   mock.patch.object(torch.cuda, "get_device_properties",
                                     return_value=mock.Mock(total_memory=80 * GiB)),
                   mock.patch.object(torch.cuda, "empty_cache")]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        return memory_pool.FragmentationGuard(device="cuda:0", **kw), torch.cuda.empty_cache

    @staticmethod
    def stats(reserved, allocated, active, split):
        return {"reserved_bytes.all.current": reserved, "allocated_bytes.all.current": allocated,
                "active_bytes.all.current": active, "inactive_split_bytes.all.current": split}

    def test_releases_only_when_slack_releasable_and_pressure_all_hold(self):
        full = self.stats(75 * GiB, 50 * GiB, 50 * GiB, 5 * GiB)  # slack 1/3, 20 GiB releasable, 94% of the device
        after = self.stats(55 * GiB, 50 * GiB, 50 * GiB, 5 * GiB)
        g, empty = self.guard([full, after])
        self.assertTrue(g.step())
        empty.assert_called_once()
        self.assertEqual((g.releases, g.released_bytes), (1, 20 * GiB))

    def test_no_release_without_pressure_or_slack_or_releasable_bytes(self):
        cases = {
            "device not full": self.stats(40 * GiB, 20 * GiB, 20 * GiB, 5 * GiB),
            "cache holds tensors": self.stats(75 * GiB, 70 * GiB, 70 * GiB, 1 * GiB),
            "free bytes all in split blocks": self.stats(75 * GiB, 50 * GiB, 50 * GiB, 25 * GiB),
        }
        for name, s in cases.items():
            with self.subTest(name):
                g, empty = self.guard([s])
                self.assertFalse(g.step())
                empty.assert_not_called()
                self.assertEqual(g.releases, 0)

    def test_measures(self):
        g, _ = self.guard([self.stats(10 * GiB, 6 * GiB, 7 * GiB, 1 * GiB)])
        slack, releasable, reserved = g.measures()
        self.assertAlmostEqual(slack, 0.4)
        self.assertEqual(releasable, 2 * GiB)  # 10 - 7 active - 1 split
        self.assertEqual(reserved, 10 * GiB)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "threshold"):
            memory_pool.FragmentationGuard(threshold=1.5, device="cuda:0")
        with self.assertRaisesRegex(ValueError, "not a CUDA device"):
            memory_pool.FragmentationGuard(device="cpu")


@unittest.skipUnless(torch is not None, "needs torch")
class DedicatedPoolArgumentsTest(unittest.TestCase):
    def test_refuses_a_cpu_device_and_a_negative_reserve(self):
        with self.assertRaisesRegex(ValueError, "not a CUDA device"):
            memory_pool.DedicatedPool(device="cpu")
        with self.assertRaisesRegex(ValueError, "negative"):
            memory_pool.DedicatedPool(device="cuda:0", reserve_bytes=-1)


if __name__ == "__main__":
    unittest.main()
