"""stepscope.memory from Python: the CLI's memory report, its tables, and bad
snapshots raised as TraceError."""

import json
import os
import subprocess
import tempfile
import unittest

import stepscope
from stepscope_testing import cli

SNAPSHOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "snapshots")


class MemoryTest(unittest.TestCase):
    def test_same_document_as_the_cli(self):
        path = os.path.join(SNAPSHOTS, "fragmented_p4.pickle")
        rep = stepscope.memory(path)
        out = subprocess.run([cli(), "memory", path, "--json", "-", "--top", "20"], check=True, capture_output=True,
                             text=True).stdout
        self.assertEqual(rep.to_dict(), json.loads(out))
        self.assertIn("fragmentation: 8.0 MiB requested", rep.to_text())

    def test_tables(self):
        rep = stepscope.memory(os.path.join(SNAPSHOTS, "fragmented_p4.pickle"))
        devices = list(rep.devices)
        self.assertEqual(len(devices), 1)
        self.assertEqual(devices[0]["peak_allocated_bytes"], 40 << 20)
        self.assertAlmostEqual(devices[0]["fragmentation"], 0.8)
        ooms = list(rep.ooms)
        self.assertEqual([o["cause"] for o in ooms], ["fragmentation"])
        self.assertEqual(ooms[0]["free_in_segments_bytes"], 20 << 20)
        sites = list(rep.live_by_site())
        self.assertEqual(sites[0]["site"], "model.py:42 forward")
        self.assertEqual(sites[0]["bytes"], 40 << 20)

    def test_a_pickle_that_asks_for_code_is_a_trace_error(self):
        with tempfile.TemporaryDirectory() as d:
            evil = os.path.join(d, "evil.pickle")
            with open(evil, "wb") as f:
                f.write(b"\x80\x02cposix\nsystem\nq\x00.")
            with self.assertRaises(stepscope.TraceError) as e:
                stepscope.memory(evil)
            self.assertIn("GLOBAL at offset 2", str(e.exception))
            self.assertEqual(e.exception.path, evil)


if __name__ == "__main__":
    unittest.main()
