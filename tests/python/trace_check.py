"""Reading a recorder's trace back, for the recorder and callback tests."""

import glob
import gzip
import json
import os


def trace_files(out_dir, rank=0):
    return sorted(glob.glob(os.path.join(out_dir, f"rank{rank}.*.pt.trace.json.gz")))


def load_trace(path):
    with open(path, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", f"{path} is not gzip"
    with gzip.open(path, "rt") as f:
        return json.load(f)


def profiler_steps(trace):
    """The N of every ProfilerStep#N event."""
    return sorted({int(e["name"].split("#", 1)[1]) for e in trace["traceEvents"]
                   if e.get("name", "").startswith("ProfilerStep#")})


def has_shapes(trace):
    return any("Input Dims" in e.get("args", {}) for e in trace["traceEvents"])


def has_python_stacks(trace):
    return any(e.get("cat") == "python_function" for e in trace["traceEvents"])


class StepClock:
    """The test's own host clock at each step boundary, to check the recorder's figure."""

    def __init__(self):
        import time

        self._now = time.perf_counter
        self.marks = []

    def mark(self):
        self.marks.append(self._now())

    def intervals_ms(self, first, last):
        """Steps first..last (each from the previous step's boundary), in ms."""
        return [(self.marks[i] - self.marks[i - 1]) * 1e3 for i in range(first, last + 1)]
