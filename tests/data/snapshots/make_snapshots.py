#!/usr/bin/env python3
"""Writes the synthetic memory snapshots the reader's tests use (committed
beside this script; rerun it to regenerate them byte for byte).

They are not snapshots of a real run: each is a dict of the shape
torch.cuda.memory._snapshot() returns (torch/cuda/memory.py: Segment, Block,
Frame, TraceEntry; allocator_settings from PyTorch 2.4 on), pickled the way
_dump_snapshot() does (pickle.dump), at every pickle protocol 0-5. The story
they tell is known, so tests can assert exact numbers:

  device 0: one 20 MiB large segment (3 blocks: 8 MiB allocated by
  model.py:forward, 4 MiB allocated by attn.py:softmax, 8 MiB inactive) and
  one 2 MiB small segment (one 512-byte block allocated by data.py:collate,
  the rest inactive). The history (time_us from 1,000,000): segment_alloc
  20 MiB, alloc 8 MiB (forward), alloc 4 MiB (softmax), alloc 6 MiB
  (softmax), free_requested/free_completed of the 6 MiB, segment_alloc 2 MiB,
  alloc 512 B (collate, in data_\u00e9.py), then an oom for 12 MiB with 1 MiB free on the device.
  Frames are shared dicts (pickled once, then memo references), as the
  allocator's interned frames are.

  snapshot_v21_p2.pickle: the PyTorch 2.1 shape (no block addresses, no
  time_us, no allocator_settings, no is_expandable), protocol 2.
  snapshot_p{0,1,2,3,4,5}.pickle: the current shape at each protocol.

  fragmented_p4.pickle: an OOM caused by fragmentation. One 40 MiB large
  segment; ten 4 MiB tensors allocated one after another (model.py:forward),
  then every other one freed (blocks 1, 3, 5, 7, 9): 20 MiB free in the
  segment but no free run longer than 4 MiB. An 8 MiB request then fails
  with 2 MiB free on the device: 22 MiB free in total, no block of 8 MiB.

  paged_oom_p4.pickle: a fragmentation OOM that expandable segments would
  have served. One 120 MiB large segment holding, from its start, A 10 MiB
  (forward), B 36 MiB (softmax), C 14 MiB (forward), D 44 MiB (softmax), E
  16 MiB (forward); B and D freed. Free runs of 36 and 44 MiB hold 60 MiB of
  whole 20 MiB pages ([20,40), [60,80), [80,100) MiB from the start). A
  50 MiB request fails with 4 MiB free on the device: 84 MiB free, no 50 MiB
  block, but 60 MiB of pages + 4 MiB cover it rounded up to 60 MiB.

  fragmented_risk_p4.pickle: the same segment and frees without the OOM,
  then a 60 MiB segment with F, 50 MiB (forward): the peak of allocated
  memory (90 MiB of 180 MiB reserved; 90 MiB free inside segments, the
  largest free run 44 MiB, smaller than the 50 MiB request).
"""

import os
import pickle

MiB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))


def frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


FWD = [frame("model.py", 42, "forward"), frame("train.py", 10, "step")]
SOFTMAX = [frame("attn.py", 7, "softmax"), frame("model.py", 40, "forward"), frame("train.py", 10, "step")]
COLLATE = [frame("data_\u00e9.py", 3, "collate")]  # non-ASCII: UTF-8 in every protocol
STREAM = 0
BASE, SMALL = 0x7F0000000000, 0x7F0100000000


def snapshot(old=False):
    def block(addr, size, requested, state, frames):
        b = {"size": size, "requested_size": requested, "state": state, "frames": frames}
        if not old:
            b["address"] = addr
        return b

    large = {"address": BASE, "total_size": 20 * MiB, "stream": STREAM, "segment_type": "large",
             "allocated_size": 12 * MiB, "active_size": 12 * MiB, "requested_size": 12 * MiB - 100,
             "blocks": [block(BASE, 8 * MiB, 8 * MiB - 100, "active_allocated", FWD),
                        block(BASE + 8 * MiB, 4 * MiB, 4 * MiB, "active_allocated", SOFTMAX),
                        block(BASE + 12 * MiB, 8 * MiB, 0, "inactive", [])]}
    small = {"address": SMALL, "total_size": 2 * MiB, "stream": STREAM, "segment_type": "small",
             "allocated_size": 512, "active_size": 512, "requested_size": 500,
             "blocks": [block(SMALL, 512, 500, "active_allocated", COLLATE),
                        block(SMALL + 512, 2 * MiB - 512, 0, "inactive", [])]}
    if not old:
        for s in (large, small):
            s.update(device=0, is_expandable=False, segment_pool_id=(0, 0), frames=[])

    events = [("segment_alloc", BASE, 20 * MiB, FWD), ("alloc", BASE, 8 * MiB, FWD),
              ("alloc", BASE + 8 * MiB, 4 * MiB, SOFTMAX), ("alloc", BASE + 12 * MiB, 6 * MiB, SOFTMAX),
              ("free_requested", BASE + 12 * MiB, 6 * MiB, SOFTMAX), ("free_completed", BASE + 12 * MiB, 6 * MiB, SOFTMAX),
              ("segment_alloc", SMALL, 2 * MiB, COLLATE), ("alloc", SMALL, 512, COLLATE)]
    trace = []
    for n, (action, addr, size, frames) in enumerate(events):
        e = {"action": action, "addr": addr, "size": size, "stream": STREAM, "frames": frames}
        if not old:
            e["time_us"] = 1_000_000 + 1000 * n
        trace.append(e)
    oom = {"action": "oom", "size": 12 * MiB, "stream": STREAM, "device_free": 1 * MiB, "frames": SOFTMAX}
    if not old:
        oom["time_us"] = 1_000_000 + 1000 * len(events)
    trace.append(oom)
    snap = {"segments": [large, small], "device_traces": [trace, []]}
    if not old:
        snap["allocator_settings"] = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:256", "max_split_size": 256 * MiB,
                                      "garbage_collection_threshold": 0.0, "expandable_segments": False,
                                      "roundup_power2_divisions": [1] * 16}
    return snap


def fragmented():
    seg = {"address": BASE, "total_size": 40 * MiB, "stream": STREAM, "segment_type": "large",
           "allocated_size": 20 * MiB, "active_size": 20 * MiB, "requested_size": 20 * MiB, "device": 0,
           "is_expandable": False, "segment_pool_id": (0, 0), "frames": [], "blocks": []}
    for i in range(10):
        live = i % 2 == 0
        seg["blocks"].append({"address": BASE + 4 * MiB * i, "size": 4 * MiB, "requested_size": 4 * MiB if live else 0,
                              "state": "active_allocated" if live else "inactive", "frames": FWD if live else []})
    trace = [{"action": "segment_alloc", "addr": BASE, "size": 40 * MiB, "stream": STREAM, "frames": FWD}]
    for i in range(10):
        trace.append({"action": "alloc", "addr": BASE + 4 * MiB * i, "size": 4 * MiB, "stream": STREAM, "frames": FWD})
    for i in range(1, 10, 2):
        for action in ("free_requested", "free_completed"):
            trace.append({"action": action, "addr": BASE + 4 * MiB * i, "size": 4 * MiB, "stream": STREAM,
                          "frames": FWD})
    trace.append({"action": "oom", "size": 8 * MiB, "stream": STREAM, "device_free": 2 * MiB, "frames": SOFTMAX})
    for n, e in enumerate(trace):
        e["time_us"] = 5_000_000 + 100 * n
    return {"segments": [seg], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False}}


def replay(ops, settings):
    """A snapshot from allocator operations on device 0, stream 0: ("segment",
    addr, size), ("alloc", addr, size, frames), ("free", addr), ("oom", size,
    device_free). The history is the operations; the segments and blocks are
    the state they leave (free runs as inactive blocks)."""
    segments, blocks, trace = {}, {}, []
    for op in ops:
        if op[0] == "segment":
            segments[op[1]] = op[2]
            trace.append({"action": "segment_alloc", "addr": op[1], "size": op[2], "stream": STREAM, "frames": FWD})
        elif op[0] == "alloc":
            blocks[op[1]] = (op[2], op[3])
            trace.append({"action": "alloc", "addr": op[1], "size": op[2], "stream": STREAM, "frames": op[3]})
        elif op[0] == "free":
            size, frames = blocks.pop(op[1])
            for action in ("free_requested", "free_completed"):
                trace.append({"action": action, "addr": op[1], "size": size, "stream": STREAM, "frames": frames})
        else:
            trace.append({"action": "oom", "size": op[1], "stream": STREAM, "device_free": op[2], "frames": SOFTMAX})
    for n, e in enumerate(trace):
        e["time_us"] = 7_000_000 + 100 * n
    out = []
    for addr, total in sorted(segments.items()):
        seg = {"address": addr, "total_size": total, "stream": STREAM, "segment_type": "large", "device": 0,
               "is_expandable": False, "segment_pool_id": (0, 0), "frames": [], "blocks": []}
        cursor = addr
        for b in sorted(a for a in blocks if addr <= a < addr + total):
            if b > cursor:
                seg["blocks"].append({"address": cursor, "size": b - cursor, "requested_size": 0,
                                      "state": "inactive", "frames": []})
            size, frames = blocks[b]
            seg["blocks"].append({"address": b, "size": size, "requested_size": size, "state": "active_allocated",
                                  "frames": frames})
            cursor = b + size
        if addr + total > cursor:
            seg["blocks"].append({"address": cursor, "size": addr + total - cursor, "requested_size": 0,
                                  "state": "inactive", "frames": []})
        live = sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
        seg.update(allocated_size=live, active_size=live, requested_size=live)
        out.append(seg)
    return {"segments": out, "device_traces": [trace], "allocator_settings": settings}


def split_segment():
    """The 120 MiB segment of paged_oom / fragmented_risk, B and D freed."""
    at = lambda mib: BASE + mib * MiB  # noqa: E731
    return [("segment", BASE, 120 * MiB), ("alloc", at(0), 10 * MiB, FWD), ("alloc", at(10), 36 * MiB, SOFTMAX),
            ("alloc", at(46), 14 * MiB, FWD), ("free", at(10)), ("alloc", at(60), 44 * MiB, SOFTMAX),
            ("alloc", at(104), 16 * MiB, FWD), ("free", at(60))]


def main():
    with open(os.path.join(HERE, "snapshot_v21_p2.pickle"), "wb") as f:
        pickle.dump(snapshot(old=True), f, protocol=2)
    for p in (0, 1, 2, 3, 4, 5):
        with open(os.path.join(HERE, f"snapshot_p{p}.pickle"), "wb") as f:
            pickle.dump(snapshot(), f, protocol=p)
    with open(os.path.join(HERE, "fragmented_p4.pickle"), "wb") as f:
        pickle.dump(fragmented(), f, protocol=4)
    off = {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False}
    with open(os.path.join(HERE, "paged_oom_p4.pickle"), "wb") as f:
        pickle.dump(replay(split_segment() + [("oom", 50 * MiB, 4 * MiB)], off), f, protocol=4)
    with open(os.path.join(HERE, "fragmented_risk_p4.pickle"), "wb") as f:
        pickle.dump(replay(split_segment() + [("segment", SMALL, 60 * MiB), ("alloc", SMALL, 50 * MiB, FWD)], off), f,
                    protocol=4)


if __name__ == "__main__":
    main()
