"""stepscope.data: token shards written and read back exactly in every format,
filters that never decode the rows they drop, the host copies counted,
batches split across ranks and workers without loss or overlap, a mid-epoch
resume, and bad shards named. Skips without pyarrow (and the dataset's
tests without torch): python/requirements-test.txt installs both."""

import json
import os
import tempfile
import unittest
import warnings

try:
    import numpy as np
    import pyarrow.compute as pc

    from stepscope.data import ShardError, TokenShards, write_token_shards
except ImportError:  # pragma: no cover - depends on the environment
    pc = None

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def documents(n=300, seed=1):
    """n documents with known ids: lengths 1-200 (long-tailed), id 0 never used, a source per document."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        length = int(min(200, 1 + rng.pareto(1.5) * 20))
        ids = rng.integers(1, 50000, size=length).tolist()
        docs.append({"input_ids": ids, "source": "wiki" if i % 3 == 0 else "web", "doc": i})
    return docs


@unittest.skipUnless(pc is not None, "needs pyarrow")
class ShardsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.docs = documents()

    def write(self, name="s", **kw):
        out = os.path.join(self.tmp.name, name)
        kw.setdefault("chunk_tokens", 2000)
        kw.setdefault("shard_tokens", 7000)
        return out, write_token_shards(self.docs, out, columns=("source", "doc"), vocab_size=50000, **kw)

    def all_rows(self, shards):
        width = int(shards.lengths.max())
        out = np.full((len(shards), width), -1, dtype=np.int32)
        return shards.gather(np.arange(len(shards)), out, pad_id=0)

    def test_every_format_reads_back_exactly(self):
        for fmt, comp in (("arrow", "zstd"), ("arrow", None), ("parquet", "zstd"), ("arrow", "lz4")):
            with self.subTest(format=fmt, compression=comp):
                out, m = self.write(f"{fmt}-{comp}", format=fmt, compression=comp)
                self.assertEqual(m["rows"], len(self.docs))
                self.assertEqual(m["tokens"], sum(len(d["input_ids"]) for d in self.docs))
                self.assertGreater(len(m["shards"]), 1)
                self.assertGreater(sum(s["chunks"] for s in m["shards"]), len(m["shards"]))
                self.assertEqual(m["id_type"], "uint16")
                shards = TokenShards(out)
                rows = self.all_rows(shards)
                for i, d in enumerate(self.docs):
                    n = len(d["input_ids"])
                    self.assertEqual(shards.lengths[i], n)
                    self.assertEqual(rows[i, :n].tolist(), d["input_ids"])
                    self.assertTrue((rows[i, n:] == 0).all())

    def test_native_and_python_gather_agree(self):
        # int32 out goes through the C++ gather, int64 through the Python loop.
        out, _ = self.write("both")
        shards = TokenShards(out)
        rows = np.random.default_rng(3).permutation(len(shards))[:64]
        width = int(shards.lengths[rows].max())
        a = shards.gather(rows, np.empty((64, width), np.int32), pad_id=7)
        b = shards.gather(rows, np.empty((64, width), np.int64), pad_id=7)
        self.assertEqual(a.tolist(), b.tolist())
        from stepscope import _stepscope

        offsets, values = shards._chunk(0)
        with self.assertRaises(ValueError):  # a row index past the chunk: refused, not read
            _stepscope.gather_token_rows(np.empty((1, 300), np.int32), [(offsets, values)], [0], [len(offsets)], 0)
        with self.assertRaises(ValueError):  # a chunk index past the list
            _stepscope.gather_token_rows(np.empty((1, 300), np.int32), [(offsets, values)], [1], [0], 0)

    def test_tokenizer_over_jsonl(self):
        path = os.path.join(self.tmp.name, "docs.jsonl")
        texts = ["hello world", "a", "stepscope reads shards", "ünïcode ok"]
        with open(path, "w", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps({"text": t, "source": "x"}) + "\n")
            f.write("\n")  # blank lines are skipped, not documents

        def encode(s):
            return [b + 1 for b in s.encode("utf-8")]
        out = os.path.join(self.tmp.name, "tok")
        m = write_token_shards(path, out, tokenizer=encode, columns=("source",))
        self.assertEqual(m["rows"], 4)
        self.assertEqual(m["id_type"], "int32")  # no vocab_size: int32
        shards = TokenShards(out)
        rows = self.all_rows(shards)
        for i, t in enumerate(texts):
            self.assertEqual(rows[i, :shards.lengths[i]].tolist(), encode(t))

    def test_filter_reads_only_the_chunks_it_keeps(self):
        # Parquet: a chunk (row group) is decoded only when one of its rows is
        # gathered; documents 0-9 are all in the first row group.
        out, m = self.write("pq", format="parquet")
        shards = TokenShards(out, filter=pc.field("doc") < 10)
        self.assertEqual(len(shards), 10)
        self.all_rows(shards)
        first = shards._chunk(0)
        self.assertEqual(shards.copies["decoded_bytes"], first[0].nbytes + first[1].nbytes)
        # Length bounds combine with the filter.
        wiki_long = TokenShards(out, filter=pc.field("source") == "wiki", min_length=20, max_length=100)
        want = [d for d in self.docs if d["source"] == "wiki" and 20 <= len(d["input_ids"]) <= 100]
        self.assertEqual(wiki_long.lengths.tolist(), [len(d["input_ids"]) for d in want])
        rows = self.all_rows(wiki_long)
        self.assertEqual(rows[0, :len(want[0]["input_ids"])].tolist(), want[0]["input_ids"])

    def test_copies_counted(self):
        tokens = sum(len(d["input_ids"]) for d in self.docs)
        out, _ = self.write("raw", compression=None)
        shards = TokenShards(out)
        self.all_rows(shards)
        # Memory-mapped, uncompressed: nothing decoded; each token packed once (int32 out).
        self.assertEqual(shards.copies, {"decoded_bytes": 0, "packed_bytes": 4 * tokens})
        out, _ = self.write("zstd")
        shards = TokenShards(out)
        self.all_rows(shards)
        self.assertEqual(shards.copies["packed_bytes"], 4 * tokens)
        # Decoded once per chunk: 2 bytes per uint16 id plus 4 per offset.
        self.assertEqual(shards.copies["decoded_bytes"], 2 * tokens + 4 * (len(self.docs) + shards._sel_chunk.max() + 1))

    def test_a_flipped_bit_in_uncompressed_ids_is_caught(self):
        # Uncompressed Arrow passes every format check with a changed id; the
        # manifest's per-chunk checksum does not.
        out, m = self.write("raw", compression=None)
        first = os.path.join(out, m["shards"][0]["file"])
        with open(first, "rb") as f:
            data = bytearray(f.read())
        ids = self.docs[0]["input_ids"]
        at = data.find(np.asarray(ids[:4], dtype="<u2").tobytes())
        self.assertGreater(at, 0)
        data[at] ^= 0x01
        with open(first, "wb") as f:
            f.write(data)
        shards = TokenShards(out)  # opening reads only the small columns
        with self.assertRaises(ShardError) as e:
            self.all_rows(shards)
        self.assertIn("shard-00000.arrow chunk 0", str(e.exception))
        self.assertIn("checksum", str(e.exception))

    def test_bad_documents_named_or_skipped(self):
        path = os.path.join(self.tmp.name, "bad.jsonl")
        with open(path, "w") as f:
            f.write('{"input_ids": [1, 2]}\n{not json\n{"input_ids": [70000]}\n{"input_ids": []}\n')
        out = os.path.join(self.tmp.name, "bad")
        with self.assertRaises(ShardError) as e:
            write_token_shards(path, out, vocab_size=50000)
        self.assertEqual(e.exception.where, f"{path}:2")
        m = write_token_shards(path, out, vocab_size=50000, skip_bad=True)
        self.assertEqual((m["rows"], m["skipped"]), (1, 3))
        self.assertIn(f"{path}:3: token id 70000 outside [0, 50000)", m["skipped_examples"])
        with self.assertRaises(ShardError):
            write_token_shards([{"text": "no tokenizer"}], os.path.join(self.tmp.name, "none"))

    def test_truncated_corrupt_and_foreign_shards(self):
        out, m = self.write("t")
        first = os.path.join(out, m["shards"][0]["file"])
        with open(first, "rb") as f:
            data = f.read()
        with open(first, "wb") as f:
            f.write(data[: len(data) // 2])
        with self.assertRaises(ShardError) as e:
            TokenShards(out)
        self.assertIn("shard-00000.arrow", str(e.exception))
        self.assertIn("truncated", str(e.exception))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            rest = TokenShards(out, skip_bad=True)
        self.assertEqual(len(rest.skipped_shards), 1)
        self.assertEqual(len(rest), m["rows"] - m["shards"][0]["rows"])
        self.assertTrue(any("shard skipped" in str(x.message) for x in w))
        # Same size, bytes flipped inside the compressed ids: an error naming the chunk when it is read.
        with open(first, "wb") as f:
            f.write(data[:200] + bytes(b ^ 0x5A for b in data[200:1200]) + data[1200:])
        try:
            shards = TokenShards(out)
            self.all_rows(shards)
            self.fail("a corrupt shard was read without an error")
        except ShardError as err:
            self.assertIn("shard-00000.arrow", str(err))
        # A manifest that says another id type: the shard's schema disagrees.
        with open(first, "wb") as f:
            f.write(data)
        mpath = os.path.join(out, "manifest.json")
        with open(mpath) as f:
            manifest = json.load(f)
        manifest["id_type"] = "int32"
        with open(mpath, "w") as f:
            json.dump(manifest, f)
        with self.assertRaises(ShardError) as e:
            TokenShards(out)
        self.assertIn("column 'input_ids' is list<item: uint16>", str(e.exception))
        with self.assertRaises(ShardError):
            TokenShards(self.tmp.name)  # no manifest
        manifest["id_type"] = "uint16"
        with open(mpath, "w") as f:
            json.dump(manifest, f)
        with self.assertRaises(ShardError) as e:
            TokenShards(out, min_length=100000)
        self.assertIn("no row to read", str(e.exception))


@unittest.skipUnless(pc is not None, "needs pyarrow")
class FuzzSmokeTest(unittest.TestCase):
    def test_forty_damaged_shards(self):
        # fuzz/fuzz_token_shards.py: each damaged shard is a ShardError or reads
        # ids in range; never another exception, a crash or a hang.
        import subprocess
        import sys

        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz", "fuzz_token_shards.py")
        p = subprocess.run([sys.executable, script, "--rounds", "40", "--seed", "7"], capture_output=True, text=True,
                           timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn('"findings": 0', p.stdout)


@unittest.skipUnless(pc is not None and torch is not None, "needs pyarrow and torch")
class DatasetTest(unittest.TestCase):
    def setUp(self):
        from stepscope.data import TokenShardDataset

        self.Dataset = TokenShardDataset
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.docs = documents(400)
        self.path = os.path.join(self.tmp.name, "s")
        write_token_shards(self.docs, self.path, columns=("doc",), vocab_size=50000, chunk_tokens=3000,
                           shard_tokens=9000)
        self.by_ids = {tuple(d["input_ids"]): d["doc"] for d in self.docs}

    def doc_ids(self, batch):
        out = []
        for row, n in zip(batch["input_ids"], batch["lengths"]):
            out.append(self.by_ids[tuple(row[: int(n)].tolist())])
        return out

    def test_ranks_and_workers_cover_every_document_once(self):
        seen = []
        for rank in range(2):
            ds = self.Dataset(self.path, 1024, seed=3, rank=rank, world_size=2, even_ranks=False)
            loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
            for batch in loader:
                self.assertEqual(batch["input_ids"].dtype, torch.int32)
                rows, width = batch["input_ids"].shape
                self.assertTrue(rows * width <= 1024 or rows == 1)
                self.assertEqual(width, int(batch["lengths"].max()))
                seen += self.doc_ids(batch)
        self.assertEqual(sorted(seen), list(range(len(self.docs))))

    def test_deterministic_per_epoch_and_resumable(self):
        ds = self.Dataset(self.path, 1024, seed=5)
        full = [self.doc_ids(b) for b in ds]
        self.assertEqual([self.doc_ids(b) for b in self.Dataset(self.path, 1024, seed=5)], full)
        ds.set_epoch(1)
        self.assertNotEqual([self.doc_ids(b) for b in ds], full)
        # In-process: stop after 5 batches, save, resume in a fresh dataset.
        ds = self.Dataset(self.path, 1024, seed=5)
        it = iter(ds)
        for _ in range(5):
            next(it)
        state = ds.state_dict()
        self.assertEqual(state, {"epoch": 0, "batches_consumed": 5})
        again = self.Dataset(self.path, 1024, seed=5)
        again.load_state_dict(state)
        self.assertEqual([self.doc_ids(b) for b in again], full[5:])
        # With two workers the loader keeps plan order, so resume(7) yields the rest.
        again = self.Dataset(self.path, 1024, seed=5)
        again.resume(7)
        loader = torch.utils.data.DataLoader(again, batch_size=None, num_workers=2)
        self.assertEqual([self.doc_ids(b) for b in loader], full[7:])
        self.assertEqual(len(again), len(full))

    def test_skip_bad_leaves_out_a_damaged_chunk_and_counts_it(self):
        # One flipped id in an uncompressed shard's first chunk: with skip_bad
        # the epoch goes on without that chunk's documents, counted and warned.
        raw = os.path.join(self.tmp.name, "raw")
        m = write_token_shards(self.docs, raw, columns=("doc",), vocab_size=50000, compression=None,
                               chunk_tokens=3000, shard_tokens=9000)
        first = os.path.join(raw, m["shards"][0]["file"])
        with open(first, "rb") as f:
            data = bytearray(f.read())
        at = data.find(np.asarray(self.docs[0]["input_ids"][:4], dtype="<u2").tobytes())
        data[at] ^= 0x01
        with open(first, "wb") as f:
            f.write(data)
        with self.assertRaises(ShardError):
            list(self.Dataset(raw, 1024))
        ds = self.Dataset(raw, 1024, skip_bad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            seen = [d for b in ds for d in self.doc_ids(b)]
        skipped = ds.shards.skipped_rows
        self.assertGreater(skipped, 0)
        self.assertEqual(len(seen) + skipped, len(self.docs))
        self.assertNotIn(0, seen)  # the damaged document's chunk is out
        self.assertEqual(sum("its rows skipped" in str(x.message) for x in w), 1)

    def test_persistent_workers_follow_set_epoch_and_resume(self):
        # Persistent workers keep their copy of the dataset across epochs; the
        # epoch and resume point reach them through shared memory.
        import copy
        import pickle

        want = {}
        for epoch in (0, 1):
            ds = self.Dataset(self.path, 1024, seed=9)
            ds.set_epoch(epoch)
            want[epoch] = [self.doc_ids(b) for b in ds]
        self.assertNotEqual(want[0], want[1])
        ds = self.Dataset(self.path, 1024, seed=9)
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
        for epoch in (0, 1):
            ds.set_epoch(epoch)
            self.assertEqual([self.doc_ids(b) for b in loader], want[epoch])
        ds.resume(4, epoch=0)
        self.assertEqual([self.doc_ids(b) for b in loader], want[0][4:])
        # Pickled or copied outside a worker's start: a dataset of its own at the same position.
        other = pickle.loads(pickle.dumps(ds))
        self.assertEqual(other.state_dict(), {"epoch": 0, "batches_consumed": 4})
        other.set_epoch(1)
        self.assertEqual(ds.epoch, 0)
        self.assertEqual(copy.deepcopy(ds).state_dict(), ds.state_dict())


if __name__ == "__main__":
    unittest.main()
