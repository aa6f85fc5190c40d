#!/usr/bin/env python3
"""Token batches from disk to a PyTorch batch: stepscope's shards against a
pandas Dataset and Hugging Face `datasets` on the same data and the same
batches (issue #31 item 2; docs/data.md, "Benchmark").

Data: the paragraphs of workloads/data/debian_text.txt.gz (real text) as
documents, byte-tokenised (id = byte + 1), repeated --repeat times in a
shuffled order. All three paths read the same documents and build the same
batches: the length-bucketing plan of stepscope.sampling (seed 0, epoch 0,
--max-tokens padded tokens per batch), padded int32 [B, L].

  (a) pandas: one Parquet file (ZSTD) read by pandas.read_parquet into a
      DataFrame; a map-style Dataset returns torch.tensor(row) per document
      and the batch is padded by torch.nn.utils.rnn.pad_sequence.
  (b) HF datasets: the same Parquet loaded as an Arrow-backed, memory-mapped
      datasets.Dataset in numpy format; a batch is ds[rows], padded into a
      numpy array, then torch.from_numpy.
  (c) stepscope: TokenShardDataset over Arrow IPC shards (ZSTD), in process.

Per batch: wall latency (p50/p99) from asking to having the batch; per path:
CPU seconds per 1M tokens (process time over the measured batches), the
one-time load (setup_s), and the host copies each token goes through after
the file is decoded: the stages of each path's code, and for stepscope the
bytes its counters saw (docs/data.md, "Copies").

  python3 bench/data/bench_token_pipeline.py --json out.json
"""

import argparse
import gzip
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def corpus_documents(repeat, seed=0):
    with gzip.open(os.path.join(ROOT, "workloads", "data", "debian_text.txt.gz"), "rt", encoding="utf-8") as f:
        paragraphs = [p.strip() for p in f.read().split("\n\n") if p.strip()]
    docs = [p for _ in range(repeat) for p in paragraphs]
    random.Random(seed).shuffle(docs)
    return docs


def byte_ids(text):
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int32) + 1


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def measure(name, make_batch, plan, copies, tokens_per_batch, setup_s):
    lat = []
    cpu0 = time.process_time()
    for rows in plan:
        t0 = time.perf_counter()
        make_batch(rows)
        lat.append(time.perf_counter() - t0)
    cpu = time.process_time() - cpu0
    tokens = sum(tokens_per_batch)
    return {"path": name, "batches": len(plan), "tokens": tokens, "setup_s": setup_s,
            "p50_ms": 1e3 * statistics.median(lat), "p99_ms": 1e3 * percentile(lat, 99),
            "mean_ms": 1e3 * statistics.fmean(lat), "cpu_s_per_mtok": cpu / tokens * 1e6,
            "host_copies_after_decode": copies}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=8, help="copies of the corpus (default 8)")
    ap.add_argument("--max-tokens", type=int, default=16384)
    ap.add_argument("--batches", type=int, default=0, help="batches measured per path, the same ones (0: the epoch)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    import torch

    import datasets
    from stepscope import _stepscope
    from stepscope.data import TokenShardDataset, write_token_shards

    texts = corpus_documents(args.repeat)
    ids = [byte_ids(t) for t in texts]
    lengths = np.array([len(x) for x in ids], dtype=np.int32)
    tmp = tempfile.TemporaryDirectory()
    # The same data in each path's own format.
    t0 = time.perf_counter()
    manifest = write_token_shards(({"input_ids": x} for x in ids), os.path.join(tmp.name, "shards"),
                                  vocab_size=257)
    write_s = time.perf_counter() - t0
    parquet = os.path.join(tmp.name, "docs.parquet")
    offsets = np.zeros(len(ids) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    table = pa.table({"input_ids": pa.ListArray.from_arrays(pa.array(offsets),
                                                            pa.array(np.concatenate(ids).astype(np.uint16))),
                      "length": pa.array(lengths)})
    pq.write_table(table, parquet, compression="zstd", row_group_size=4096)

    plan_all, _ = _stepscope.bucket_batches(lengths.tolist(), max_tokens=args.max_tokens, seed=0, epoch=0)
    plan = plan_all[: args.batches] if args.batches > 0 else plan_all
    tokens_per_batch = [int(lengths[r].sum()) for r in plan]
    results = []

    # (a) pandas
    t0 = time.perf_counter()
    df = pd.read_parquet(parquet)
    column = df["input_ids"]
    setup = time.perf_counter() - t0

    def pandas_batch(rows):
        seqs = [torch.tensor(column.iat[r], dtype=torch.int32) for r in rows]
        return torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=0)
    # After read_parquet: torch.tensor (always a copy) and pad_sequence (a new tensor).
    results.append(measure("pandas Dataset", pandas_batch, plan, 2, tokens_per_batch, setup))
    del df, column

    # (b) Hugging Face datasets (Arrow, memory-mapped cache)
    t0 = time.perf_counter()
    hf = datasets.Dataset.from_parquet(parquet, cache_dir=os.path.join(tmp.name, "hf")).with_format("numpy")
    setup = time.perf_counter() - t0

    def hf_batch(rows):
        seqs = hf[rows]["input_ids"]
        width = max(len(s) for s in seqs)
        out = np.zeros((len(seqs), width), dtype=np.int32)
        for k, s in enumerate(seqs):
            out[k, : len(s)] = s
        return torch.from_numpy(out)
    # Arrow take (new buffers), numpy formatting (at least views), the pad copy: 2 or more.
    results.append(measure("HF datasets (numpy)", hf_batch, plan, 2, tokens_per_batch, setup))
    del hf

    # (c) stepscope shards
    t0 = time.perf_counter()
    ds = TokenShardDataset(os.path.join(tmp.name, "shards"), args.max_tokens, seed=0)
    setup = time.perf_counter() - t0
    shards = ds.shards

    def ours(rows):
        out = torch.empty((len(rows), int(lengths[rows].max())), dtype=torch.int32)
        shards.gather(rows, out.numpy(), 0)
        return out
    before = dict(shards.copies)
    res = measure("stepscope shards", ours, plan, None, tokens_per_batch, setup)
    decoded = shards.copies["decoded_bytes"] - before["decoded_bytes"]
    packed = shards.copies["packed_bytes"] - before["packed_bytes"]
    # Counted: the packed bytes over the batches' int32 tokens (1: each token
    # copied once, into the batch); the decode of each chunk, once, besides.
    res["host_copies_after_decode"] = round(packed / (4 * res["tokens"]), 3)
    res["counted"] = {"decoded_bytes": decoded, "packed_bytes": packed,
                      "decoded_per_stored_token_byte": round(decoded / (2 * res["tokens"]), 3)}
    results.append(res)
    # The same plan through the dataset's own iterator (bucketing, buffers).
    it = iter(ds)
    t0 = time.perf_counter()
    for _ in range(len(plan)):
        next(it)
    results[-1]["dataset_iter_mean_ms"] = 1e3 * (time.perf_counter() - t0) / len(plan)

    out = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.node()} ({os.cpu_count()} cores)",
           "command": " ".join(sys.argv), "documents": len(ids), "corpus_tokens": int(lengths.sum()),
           "max_tokens": args.max_tokens, "shards": len(manifest["shards"]),
           "shard_bytes": sum(s["bytes"] for s in manifest["shards"]), "parquet_bytes": os.path.getsize(parquet),
           "write_shards_s": write_s, "versions": {"pyarrow": pa.__version__, "pandas": pd.__version__,
                                                    "datasets": datasets.__version__, "torch": torch.__version__},
           "results": results}
    base = {r["path"]: r for r in results}
    ours_p50 = base["stepscope shards"]["p50_ms"]
    out["docs_per_batch_median"] = statistics.median(len(r) for r in plan)
    out["p50_speedup_vs_pandas"] = base["pandas Dataset"]["p50_ms"] / ours_p50
    out["p50_speedup_vs_hf"] = base["HF datasets (numpy)"]["p50_ms"] / ours_p50
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
