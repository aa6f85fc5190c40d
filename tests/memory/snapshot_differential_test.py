#!/usr/bin/env python3
"""`stepscope memory --json` against a second, independent reading of the
same snapshots: Python's own unpickler (after pickletools has shown the file
holds no global or object-building opcode) and the definitions of
docs/metrics.md ("Memory snapshots") recomputed here. For every snapshot
under tests/data/snapshots (synthetic and public, plain and gzip) and every
device: the levels at the snapshot, the peak of allocated memory and the
event it happens at, and the counts of each kind of event must agree exactly.

    python3 tests/memory/snapshot_differential_test.py path/to/stepscope tests/data/snapshots
"""

import glob
import gzip
import io
import json
import os
import pickle
import pickletools
import subprocess
import sys

UNSAFE = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "PERSID", "BINPERSID",
          "EXT1", "EXT2", "EXT4", "NEXT_BUFFER", "READONLY_BUFFER"}
DELTA = {"alloc": (1, 1, 0), "free_requested": (-1, 0, 0), "free_completed": (0, -1, 0),
         "segment_alloc": (0, 0, 1), "segment_map": (0, 0, 1), "segment_free": (0, 0, -1), "segment_unmap": (0, 0, -1)}


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    bad = {op.name for op, _, _ in pickletools.genops(io.BytesIO(raw))} & UNSAFE
    if bad:
        raise SystemExit(f"{path}: refuses to unpickle a file with {sorted(bad)}")
    return pickle.loads(raw)


def expected(snap):
    segments = snap if isinstance(snap, list) else snap.get("segments", [])
    traces = [] if isinstance(snap, list) else snap.get("device_traces", [])
    devices = {}
    for seg in segments:
        d = devices.setdefault(seg.get("device", 0), {"reserved": 0, "allocated": 0, "active": 0})
        d["reserved"] += seg["total_size"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                d["allocated"] += b["size"]
            if b["state"] in ("active_allocated", "active_pending_free"):
                d["active"] += b["size"]
    out = {}
    starts, first = {}, 0  # each device's first row in the flattened history
    for dev, entries in enumerate(traces):
        starts[dev] = first
        first += len(entries)
    for dev, entries in enumerate(traces):
        if entries:  # a device with neither segments nor history is left out
            devices.setdefault(dev, {"reserved": 0, "allocated": 0, "active": 0})
    for dev in sorted(devices):
        end = devices[dev]
        entries = traces[dev] if dev < len(traces) else []
        level = [end["allocated"], end["active"], end["reserved"]]
        for e in entries:
            for k, sign in enumerate(DELTA.get(e["action"], (0, 0, 0))):
                level[k] -= sign * e.get("size", 0)
        start = [max(v, 0) for v in level]
        peak, peak_event = start[0], None
        first = starts.get(dev, 0)
        for n, e in enumerate(entries):
            for k, sign in enumerate(DELTA.get(e["action"], (0, 0, 0))):
                level[k] += sign * e.get("size", 0)
            if max(level[0], 0) > peak:
                peak, peak_event = max(level[0], 0), first + n
        counts = {a: sum(1 for e in entries if e["action"] == a)
                  for a in ("segment_alloc", "segment_free", "alloc", "free_completed", "oom")}
        out[dev] = {"end": end, "start_allocated": start[0], "peak_allocated": peak, "peak_event": peak_event,
                    "events": len(entries), "counts": counts}
    return out


def main():
    cli, root = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(os.path.join(root, "*.pickle")) + glob.glob(os.path.join(root, "public", "*.pickle.gz")))
    assert len(files) >= 10, files
    failures = 0
    for path in files:
        want = expected(load(path))
        got = json.loads(subprocess.run([cli, "memory", path, "--json", "-"], check=True, capture_output=True,
                                        text=True).stdout)
        have = {d["device"]: d for d in got["devices"]}
        problems = []
        if sorted(have) != sorted(want):
            problems.append(f"devices {sorted(have)} != {sorted(want)}")
        for dev, w in want.items():
            g = have.get(dev)
            if g is None:
                continue
            pairs = [("end allocated", g["end"]["allocated_bytes"], w["end"]["allocated"]),
                     ("end active", g["end"]["active_bytes"], w["end"]["active"]),
                     ("end reserved", g["end"]["reserved_bytes"], w["end"]["reserved"]),
                     ("start allocated", g["start"]["allocated_bytes"], w["start_allocated"]),
                     ("peak allocated", g["peak"]["allocated_bytes"], w["peak_allocated"]),
                     ("peak event", g["peak_allocated_event"], w["peak_event"]),
                     ("events", g["events"], w["events"]),
                     ("segment_allocs", g["churn"]["segment_allocs"], w["counts"]["segment_alloc"]),
                     ("segment_frees", g["churn"]["segment_frees"], w["counts"]["segment_free"]),
                     ("allocs", g["churn"]["allocs"], w["counts"]["alloc"]),
                     ("frees", g["churn"]["frees"], w["counts"]["free_completed"]),
                     ("ooms", g["churn"]["ooms"], w["counts"]["oom"])]
            problems += [f"device {dev} {name}: stepscope {a} != python {b}" for name, a, b in pairs if a != b]
        print(f"{'ok  ' if not problems else 'FAIL'} {os.path.relpath(path, root)}")
        for p in problems:
            print("     " + p)
        failures += bool(problems)
    print(f"{len(files) - failures}/{len(files)} snapshots agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
