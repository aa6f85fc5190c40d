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

    def test_joined_with_a_trace_of_the_same_run(self):
        # The story's allocations (snapshot time 1 s + n ms) in a trace whose
        # clock runs 2.5 ms ahead: one step around everything, one op around
        # the first 8 MiB allocation (event 1).
        base, mib = 0x7F0000000000, 1 << 20
        events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0,
                   "dur": 20000},
                  {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 3400, "dur": 200}]
        for n, addr, size in ((1, base, 8 * mib), (2, base + 8 * mib, 4 * mib), (3, base + 12 * mib, 6 * mib)):
            events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
                           "ts": 1000 * n + 2500,
                           "args": {"Addr": addr, "Bytes": size, "Total Allocated": 0, "Total Reserved": 0,
                                    "Device Id": 0, "Device Type": 1}})
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "rank0.json")
            with open(trace, "w") as f:
                json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1000000000, "traceEvents": events}, f)
            rep = stepscope.memory(os.path.join(SNAPSHOTS, "snapshot_p4.pickle"), trace)
        join = rep.to_dict()["devices"][0]["trace_join"]
        self.assertTrue(join["aligned_by_allocations"], join["note"])
        self.assertEqual(join["offset_ns"], 2500000)
        steps = list(rep.steps)
        self.assertEqual([(s["step"], s["allocs"]) for s in steps], [(7, 4)])
        self.assertEqual(list(rep.ops)[0]["op"], "aten::empty")
        self.assertEqual(list(rep.ops)[0]["alloc_bytes"], 8 * mib)
        # The story's OOM is one of capacity: its finding, from the report and
        # in analyze's diagnosis of the trace, placed in the trace's step.
        self.assertEqual([(f.detector, f.severity) for f in rep.findings], [("memory_snapshot", "high")])
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "rank0.json")
            with open(trace, "w") as f:
                json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1000000000, "traceEvents": events}, f)
            report = stepscope.analyze(trace, memory_snapshots=[(0, os.path.join(SNAPSHOTS, "snapshot_p4.pickle"))])
        found = [f for f in report.findings if f.detector == "memory_snapshot"]
        self.assertEqual(len(found), 1)
        self.assertIn("for lack of memory", found[0].title)
        self.assertEqual(found[0].evidence["examples"][0]["step"], 7)

    def test_findings_of_a_fragmentation_oom(self):
        rep = stepscope.memory(os.path.join(SNAPSHOTS, "paged_oom_p4.pickle"))
        [f] = rep.findings
        self.assertEqual(f.category, "memory_capacity")
        self.assertIn("was fragmentation", f.title)
        self.assertTrue(f.remedy.startswith("(1) PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it would have "
                                            "served 1 of these 1"), f.remedy)

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
