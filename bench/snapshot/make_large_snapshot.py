#!/usr/bin/env python3
"""Writes a large synthetic memory snapshot for the reader's benchmark
(issue #30: a 1 GB snapshot read and analysed in <= 10 s with peak RSS <=
0.5x the file), streaming the pickle opcodes so the file can be any size
without building the dict in memory.

The file has the shape torch.cuda.memory._dump_snapshot() writes at pickle
protocol 4: {'segments': [...], 'device_traces': [[entry, ...]],
'allocator_settings': {...}}. Each trace entry is a dict of action, addr,
size, stream, time_us, frames, compile_context and user_metadata, the
action text written anew per entry (as distinct str objects pickle), the
keys and the frame dicts memoized once and referenced afterwards (frames
are shared objects in a real snapshot). Stacks of 10-40 frames are drawn
from a fixed pool; allocations are freed in LIFO runs so the history stays
consistent with the final state (every block freed by the end).

    python3 bench/snapshot/make_large_snapshot.py OUT.pickle --mib 1024 [--seed 0]
"""

import argparse
import random
import struct

MiB = 1 << 20


class Writer:
    def __init__(self, f):
        self.f = f
        self.memo = 0
        self.keys = {}
        self.buf = []

    def out(self, b):
        self.buf.append(b)
        if len(self.buf) > 4096:
            self.f.write(b"".join(self.buf))
            self.buf.clear()

    def flush(self):
        self.f.write(b"".join(self.buf))
        self.buf.clear()

    def memoize(self):
        self.out(b"\x94")
        self.memo += 1
        return self.memo - 1

    def get(self, index):
        self.out(b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index))

    def text(self, s):
        b = s.encode()
        self.out((b"\x8c" + bytes([len(b)]) if len(b) < 256 else b"X" + struct.pack("<I", len(b))) + b)
        return self.memoize()

    def key(self, s):
        if s in self.keys:
            self.get(self.keys[s])
        else:
            self.keys[s] = self.text(s)

    def int(self, v):
        if 0 <= v < 256:
            self.out(b"K" + bytes([v]))
        elif 0 <= v < 65536:
            self.out(b"M" + struct.pack("<H", v))
        elif -(1 << 31) <= v < (1 << 31):
            self.out(b"J" + struct.pack("<i", v))
        else:
            n = (v.bit_length() + 8) // 8
            self.out(b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--mib", type=float, default=1024, help="stop adding trace entries past this size")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rng = random.Random(args.seed)
    files = [f"/home/user/project/model/layer_{i}.py" for i in range(40)] + \
            [f"/usr/lib/python3/site-packages/torch/nn/modules/m{i}.py" for i in range(40)]
    with open(args.out, "wb") as f:
        w = Writer(f)
        w.out(b"\x80\x04")
        w.out(b"}")
        w.memoize()
        w.out(b"(")
        w.key("segments")
        w.out(b"]")
        w.memoize()  # no segments: every block is freed by the end
        w.key("device_traces")
        w.out(b"]")
        w.memoize()
        w.out(b"]")
        w.memoize()
        # The frame pool: 600 distinct frames, memoized as they first appear.
        frame_memo = {}

        def frame(i):
            if i in frame_memo:
                w.get(frame_memo[i])
                return
            w.out(b"}")
            frame_memo[i] = w.memoize()
            w.out(b"(")
            w.key("filename")
            w.text(files[i % len(files)])
            w.key("line")
            w.int(10 + i)
            w.key("name")
            w.text(f"fn_{i}")
            w.out(b"u")

        stacks = [[rng.randrange(600) for _ in range(rng.randrange(10, 41))] for _ in range(300)]
        target = int(args.mib * MiB)
        base = 0x7F0000000000
        t = 1_700_000_000_000_000
        live = []
        entries = 0

        def entry(action, addr, size, stack):
            nonlocal t, entries
            t += rng.randrange(1, 50)
            entries += 1
            w.out(b"}")
            w.memoize()
            w.out(b"(")
            w.key("action")
            w.text(action)
            w.key("addr")
            w.int(addr)
            w.key("frames")
            w.out(b"]")
            w.memoize()
            w.out(b"(")
            for i in stacks[stack]:
                frame(i)
            w.out(b"e")
            w.key("size")
            w.int(size)
            w.key("stream")
            w.int(0)
            w.key("time_us")
            w.int(t)
            w.key("compile_context")
            w.text("N/A")
            w.key("user_metadata")
            w.text("")
            w.out(b"u")

        w.out(b"(")  # the entries of device 0, appended in batches of 1000 as pickle does
        in_batch = 0
        seg = (base, 2048 * MiB)
        entry("segment_alloc", seg[0], seg[1], 0)
        cursor = base
        while f.tell() < target:
            if live and (rng.random() < 0.45 or cursor + 64 * MiB > base + seg[1]):
                addr, size, stack = live.pop()
                entry("free_requested", addr, size, stack)
                entry("free_completed", addr, size, stack)
                cursor = addr
            else:
                size = rng.choice([512, 4096, 1 * MiB, 2 * MiB, 8 * MiB, 32 * MiB])
                stack = rng.randrange(len(stacks))
                entry("alloc", cursor, size, stack)
                live.append((cursor, size, stack))
                cursor += size
            in_batch += 1
            if in_batch >= 500:
                w.out(b"e(")
                in_batch = 0
                w.flush()
        while live:
            addr, size, stack = live.pop()
            entry("free_requested", addr, size, stack)
            entry("free_completed", addr, size, stack)
        entry("segment_free", seg[0], seg[1], 0)
        w.out(b"e")      # APPENDS of the last batch into device 0's list
        w.out(b"a")      # device 0's list into device_traces
        w.key("allocator_settings")
        w.out(b"}")
        w.memoize()
        w.out(b"(")
        w.key("PYTORCH_CUDA_ALLOC_CONF")
        w.text("")
        w.key("expandable_segments")
        w.out(b"\x89")
        w.out(b"u")
        w.out(b"u.")     # SETITEMS of the top-level dict, STOP
        w.flush()
    print(f"{args.out}: {entries} trace entries")


if __name__ == "__main__":
    main()
