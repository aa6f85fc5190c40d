#!/usr/bin/env python3
"""Mutation fuzzer of stepscope.data's shard reader (docs/fuzzing.md).

Writes a small shard folder in each format (Arrow IPC with ZSTD, uncompressed
Arrow IPC, Parquet with ZSTD), then again and again damages one shard (bit
flips, overwritten runs, a truncation, a duplicated block), records its new
size in the manifest so the reader gets past the size check, and reads every
row. The only outcomes allowed are a ShardError or rows that match the
manifest's lengths; any other exception is a finding. Each round runs in a
child process, so a crash or hang of the reader (pyarrow included) is a
finding too, not the end of the fuzzer.

  python3 fuzz/fuzz_token_shards.py --rounds 2000 --seed 1
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

CHILD = r"""
import sys, traceback
import numpy as np
from stepscope.data import ShardError, TokenShards
try:
    s = TokenShards(sys.argv[1])
    out = np.zeros((len(s), int(s.lengths.max())), dtype=np.int32)
    s.gather(np.arange(len(s)), out)
    assert (out >= 0).all() and (out < 65536).all(), "an id outside uint16"
    print("ok", len(s))
except ShardError as e:
    print("error", str(e).replace("\n", " ")[:200])
except Exception:
    print("FINDING", traceback.format_exc().replace("\n", " | ")[-800:])
"""


def make_folders(root):
    import numpy as np

    from stepscope.data import write_token_shards

    rng = np.random.default_rng(0)
    docs = [{"input_ids": rng.integers(0, 60000, size=int(rng.integers(1, 300))).tolist(), "source": f"s{i % 3}"}
            for i in range(400)]
    folders = []
    for fmt, comp in (("arrow", "zstd"), ("arrow", None), ("parquet", "zstd")):
        out = os.path.join(root, f"{fmt}-{comp}")
        write_token_shards(docs, out, columns=("source",), vocab_size=65536, format=fmt, compression=comp,
                           chunk_tokens=4000, shard_tokens=20000)
        folders.append(out)
    return folders


def mutate(data, rnd):
    data = bytearray(data)
    how = rnd.randrange(4)
    if how == 0:  # bit flips
        for _ in range(rnd.randint(1, 16)):
            i = rnd.randrange(len(data))
            data[i] ^= 1 << rnd.randrange(8)
    elif how == 1:  # an overwritten run
        i = rnd.randrange(len(data))
        n = rnd.randint(1, 64)
        data[i:i + n] = bytes(rnd.randrange(256) for _ in range(min(n, len(data) - i)))
    elif how == 2:  # truncated
        data = data[: rnd.randrange(1, len(data))]
    else:  # a block duplicated
        i = rnd.randrange(len(data))
        n = rnd.randint(1, 256)
        data[i:i] = data[i:i + n]
    return bytes(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    counts = {"ok": 0, "error": 0}
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        folders = make_folders(os.path.join(tmp, "clean"))
        work = os.path.join(tmp, "work")
        for r in range(args.rounds):
            src = folders[r % len(folders)]
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(src, work)
            with open(os.path.join(work, "manifest.json")) as f:
                manifest = json.load(f)
            entry = rnd.choice(manifest["shards"])
            path = os.path.join(work, entry["file"])
            with open(path, "rb") as f:
                data = mutate(f.read(), rnd)
            with open(path, "wb") as f:
                f.write(data)
            entry["bytes"] = len(data)
            with open(os.path.join(work, "manifest.json"), "w") as f:
                json.dump(manifest, f)
            try:
                p = subprocess.run([sys.executable, "-c", CHILD, work], capture_output=True, text=True,
                                   timeout=args.timeout)
                line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
                if p.returncode != 0 or not line:
                    findings.append(f"round {r}: the reader's process died (status {p.returncode}): "
                                    f"{p.stderr.strip()[-300:]}")
                elif line.startswith("FINDING"):
                    findings.append(f"round {r}: {line}")
                else:
                    counts[line.split()[0]] += 1
            except subprocess.TimeoutExpired:
                findings.append(f"round {r}: the reader hung (> {args.timeout} s)")
    print(json.dumps({"rounds": args.rounds, "seed": args.seed, **counts, "findings": len(findings)}))
    for f in findings[:20]:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
