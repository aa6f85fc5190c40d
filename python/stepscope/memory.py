"""``stepscope.memory``: a PyTorch memory snapshot read by the C++ library
(docs/memory.md): peaks, fragmentation, live memory by allocation site, and
the cause of each OOM."""

import os

from .errors import raise_for, warn_all
from .report import Finding, JsonDocument
from .table import Table


class MemoryReport(JsonDocument):
    """What ``stepscope memory SNAPSHOT`` reports (docs/json_schema.md, ``stepscope memory``)."""

    def to_text(self, top=10):
        """The terminal report."""
        return self._native.text(top)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        d = self.to_dict()
        peaks = ", ".join(f"device {x['device']}: peak {x['peak']['allocated_bytes'] / 2**30:.2f} GiB"
                          for x in d["devices"])
        return f"<stepscope.MemoryReport {peaks or 'no device'}>"

    @property
    def findings(self):
        """Fragmentation and OOM findings (docs/memory.md, "Findings"), highest severity first."""
        return [Finding.from_json(f) for f in self.to_dict()["findings"]]

    @property
    def devices(self):
        """One row per device: peaks, levels at the snapshot, churn, OOMs."""
        rows = []
        for x in self.to_dict()["devices"]:
            s = x["at_snapshot"]
            rows.append({"device": x["device"], "events": x["events"],
                         "peak_allocated_bytes": x["peak"]["allocated_bytes"],
                         "peak_reserved_bytes": x["peak"]["reserved_bytes"],
                         "allocated_bytes": s["allocated_bytes"], "reserved_bytes": s["reserved_bytes"],
                         "largest_free_block_bytes": s["largest_free_block_bytes"],
                         "fragmentation": s["fragmentation"], "cuda_mallocs": x["churn"]["segment_allocs"],
                         "cuda_frees": x["churn"]["segment_frees"], "ooms": x["churn"]["ooms"]})
        cols = ["device", "events", "peak_allocated_bytes", "peak_reserved_bytes", "allocated_bytes",
                "reserved_bytes", "largest_free_block_bytes", "fragmentation", "cuda_mallocs", "cuda_frees", "ooms"]
        return Table("memory_devices", cols, rows)

    @property
    def ooms(self):
        """One row per OOM: device, request, what was free, the cause and why."""
        rows = []
        for x in self.to_dict()["devices"]:
            for o in x["ooms"]:
                rows.append({"device": x["device"], "event": o["event"], "requested_bytes": o["requested_bytes"],
                             "device_free_bytes": o["device_free_bytes"],
                             "free_in_segments_bytes": o["before"]["free_bytes"],
                             "largest_free_block_in_pool_bytes": o["largest_free_block_in_pool_bytes"],
                             "cause": o["cause"], "explanation": o["explanation"]})
        cols = ["device", "event", "requested_bytes", "device_free_bytes", "free_in_segments_bytes",
                "largest_free_block_in_pool_bytes", "cause", "explanation"]
        return Table("memory_ooms", cols, rows)

    @property
    def steps(self):
        """With a trace: the allocator's events per training step, per device."""
        rows = []
        for x in self.to_dict()["devices"]:
            for s in (x.get("trace_join") or {}).get("steps", []):
                rows.append(dict(device=x["device"], **s))
        cols = ["device", "step", "allocs", "alloc_bytes", "frees", "segment_allocs", "segment_frees", "ooms"]
        return Table("memory_steps", cols, rows)

    @property
    def ops(self):
        """With a trace: allocated bytes by the CPU op they were allocated in, per device."""
        rows = []
        for x in self.to_dict()["devices"]:
            for o in (x.get("trace_join") or {}).get("ops", []):
                rows.append(dict(device=x["device"], **o))
        return Table("memory_ops", ["device", "op", "allocs", "alloc_bytes"], rows)

    def live_by_site(self, where="at_peak_allocated"):
        """Live memory by allocation site, per device, ``at_peak_allocated`` or ``at_snapshot``."""
        rows = []
        for x in self.to_dict()["devices"]:
            for s in x[where]["live_by_site"]:
                rows.append({"device": x["device"], "site": s["site"], "bytes": s["bytes"], "blocks": s["blocks"],
                             "stack": s["stack"]})
        return Table("memory_live_by_site", ["device", "site", "bytes", "blocks", "stack"], rows)


def memory(path, trace=None, *, top=20):
    """Reads a memory snapshot (``torch.cuda.memory._dump_snapshot()``'s pickle, plain or gzip).

    ``trace``: a profiler trace of the same run (one rank); the history's
    events are then put in their steps and ops (``steps`` and ``ops`` tables;
    docs/memory.md, "Joined with a trace").

    The file is read by stepscope's restricted unpickler: plain data only, a
    file that asks for anything else is a :class:`TraceError` naming the
    offset, never code that runs. Rows it skips are issued as warnings.
    """
    from . import _stepscope

    native = _stepscope.memory(os.fspath(path), top=top, trace="" if trace is None else os.fspath(trace))
    raise_for(native)
    warn_all(native.warnings)
    return MemoryReport(native)
