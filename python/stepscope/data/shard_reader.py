"""Reads token shards (docs/data.md): every shard checked against the
manifest when opened; the rows a filter keeps found from the small columns
alone (``length`` and the filter's), so the ids of other rows are never
decoded; the ids of a chunk (record batch / row group) decoded once when a
row of it is first asked for, then viewed, not copied, by numpy; rows
gathered straight into the caller's batch buffer, the one copy a token makes
on the host."""

import collections
import json
import os
import warnings

from .shard_checksum import column_crc, ids_crc
from .shard_errors import ShardError
from .shard_writer import FORMAT_VERSION, MANIFEST


def _read_errors(pa):
    """What reading a damaged file can raise: every Arrow error (a corrupt
    length asks for an impossible allocation: ArrowMemoryError), I/O errors,
    and the ValueError / MemoryError bases they share. Found by
    fuzz/fuzz_token_shards.py."""
    return (pa.ArrowException, OSError, ValueError, MemoryError)


class _Shard:
    """One opened shard: its chunks' row counts and lengths, and how to decode a chunk's ids."""

    def __init__(self, pa, root, entry, manifest, extra_columns):
        self.name = entry["file"]
        self.path = os.path.join(root, self.name)
        self.format = manifest["format"]
        if not os.path.isfile(self.path):
            raise ShardError(self.name, "missing")
        size = os.path.getsize(self.path)
        if size != entry.get("bytes", size):
            raise ShardError(self.name, f"{size} bytes where the manifest says {entry['bytes']}: truncated or "
                                        "rewritten")
        try:
            if self.format == "arrow":
                self._map = pa.memory_map(self.path, "r")
                self._file = pa.ipc.open_file(self._map)
                schema, self.chunks = self._file.schema, self._file.num_record_batches
            else:
                import pyarrow.parquet as pq

                self._file = pq.ParquetFile(self.path, memory_map=True)
                schema, self.chunks = self._file.schema_arrow, self._file.num_row_groups
        except _read_errors(pa) as e:
            raise ShardError(self.name, f"cannot be opened as {self.format} ({e})") from e
        self._check_schema(pa, schema, manifest, extra_columns)
        self.schema = schema
        crc = entry.get("crc32")
        if not isinstance(crc, dict) or any(not isinstance(crc.get(n), list) or len(crc[n]) != self.chunks
                                            for n in schema.names):
            raise ShardError(self.name, f"the manifest has no checksum for each of its {self.chunks} chunks")
        self.crc = crc
        self.compressed = manifest.get("compression") is not None

    def _check_schema(self, pa, schema, manifest, extra_columns):
        want = {"input_ids": pa.list_(pa.type_for_alias(manifest["id_type"])), "length": pa.int32()}
        for name, typ in want.items():
            idx = schema.get_field_index(name)
            if idx < 0:
                raise ShardError(self.name, f"no column '{name}'")
            if schema.field(idx).type != typ:
                raise ShardError(self.name, f"column '{name}' is {schema.field(idx).type}, the manifest says {typ}")
        for c in extra_columns:
            if schema.get_field_index(c) < 0:
                raise ShardError(self.name, f"no column '{c}'")

    def small_columns(self, pa, chunk, names):
        """The chunk's columns `names` (not the ids), their checksums checked: a pyarrow Table."""
        try:
            if self.format == "arrow":
                fields = [self.schema.get_field_index(n) for n in names]
                reader = pa.ipc.open_file(self._map, options=pa.ipc.IpcReadOptions(included_fields=fields))
                table = pa.Table.from_batches([reader.get_batch(chunk)])
            else:
                table = self._file.read_row_group(chunk, columns=names)
            for n in names:
                if column_crc(table.column(n)) != self.crc[n][chunk]:
                    raise ShardError(f"{self.name} chunk {chunk}", f"column '{n}' does not match its checksum")
            return table
        except _read_errors(pa) as e:
            raise ShardError(f"{self.name} chunk {chunk}", f"cannot be read ({e})") from e

    def ids(self, pa, chunk):
        """The chunk's ids as a validated pyarrow ListArray."""
        try:
            if self.format == "arrow":
                arr = self._file.get_batch(chunk).column(0 if self.schema.names[0] == "input_ids"
                                                          else self.schema.get_field_index("input_ids"))
            else:
                arr = self._file.read_row_group(chunk, columns=["input_ids"]).column(0).combine_chunks()
            # Offsets inside the values and increasing: a corrupt file is an
            # error here, never a read outside the buffers below.
            arr.validate(full=True)
            return arr
        except _read_errors(pa) as e:
            raise ShardError(f"{self.name} chunk {chunk}", f"cannot be decoded ({e})") from e


class TokenShards:
    """The rows of a shard folder that pass a filter: their lengths, and a
    gather of any of them into a batch buffer.

    ``filter``: a ``pyarrow.compute`` expression over the shard's columns
    other than ``input_ids`` (e.g. ``pc.field("source") == "wiki"``);
    ``min_length`` / ``max_length``: bounds on the row's token count, added to
    it. ``skip_bad``: a shard that is missing, truncated, or of another schema
    is left out with a warning (``skipped_shards``) instead of raising
    :class:`ShardError`, and so are the rows of a chunk found damaged when
    it is first decoded (``skipped_rows``; see :meth:`usable`).
    ``cache_bytes``: decoded chunks kept (compressed or Parquet shards; an
    uncompressed Arrow shard is read in place from its memory map).
    """

    def __init__(self, path, *, filter=None, min_length=None, max_length=None, skip_bad=False,
                 cache_bytes=256 << 20):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        self._pa, self._np = pa, np
        self.path = os.fspath(path)
        mpath = os.path.join(self.path, MANIFEST)
        try:
            with open(mpath) as f:
                manifest = json.load(f)
        except FileNotFoundError:
            raise ShardError(mpath, "missing: not a folder written by write_token_shards") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ShardError(mpath, f"not JSON ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("stepscope_token_shards") != FORMAT_VERSION:
            raise ShardError(mpath, f"not a version-{FORMAT_VERSION} token-shard manifest")
        for key in ("format", "id_type", "shards", "columns"):
            if key not in manifest:
                raise ShardError(mpath, f"no '{key}'")
        if manifest["format"] not in ("arrow", "parquet"):
            raise ShardError(mpath, f"format {manifest['format']!r} is not 'arrow' or 'parquet'")
        self.manifest = manifest
        expr = filter
        if min_length is not None:
            expr = (pc.field("length") >= int(min_length)) if expr is None else expr & (pc.field("length") >= int(min_length))
        if max_length is not None:
            expr = (pc.field("length") <= int(max_length)) if expr is None else expr & (pc.field("length") <= int(max_length))
        names = ["length"] + [c for c in manifest["columns"] if expr is not None]

        self.skipped_shards = []
        self._shards, chunk_shard, chunk_index, chunk_lengths = [], [], [], []
        sel_chunk, sel_row, sel_len = [], [], []
        for entry in manifest["shards"]:
            try:
                shard = _Shard(pa, self.path, entry, manifest, manifest["columns"])
                kept = []
                for c in range(shard.chunks):
                    table = shard.small_columns(pa, c, names)
                    lengths = table.column("length").to_numpy()
                    if expr is None:
                        rows = np.arange(len(lengths), dtype=np.int64)
                    else:
                        table = table.append_column("__row", pa.array(np.arange(table.num_rows, dtype=np.int64)))
                        try:
                            rows = table.filter(expr).column("__row").to_numpy()
                        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError) as e:
                            raise ValueError(f"filter {expr} cannot be applied to {shard.name}: {e}") from e
                    if (lengths <= 0).any():
                        raise ShardError(f"{shard.name} chunk {c}", "a row with length <= 0")
                    kept.append((c, lengths, rows))
            except ShardError as e:
                if not skip_bad:
                    raise
                warnings.warn(f"stepscope.data: {e} (shard skipped)", stacklevel=2)
                self.skipped_shards.append(str(e))
                continue
            for c, lengths, rows in kept:
                chunk_id = len(chunk_shard)
                chunk_shard.append(len(self._shards))
                chunk_index.append(c)
                chunk_lengths.append(lengths)
                sel_chunk.append(np.full(len(rows), chunk_id, dtype=np.int32))
                sel_row.append(rows.astype(np.int32))
                sel_len.append(lengths[rows].astype(np.int32))
            self._shards.append(shard)
        self._chunk_shard, self._chunk_index, self._chunk_lengths = chunk_shard, chunk_index, chunk_lengths
        cat = lambda parts, dt: np.concatenate(parts) if parts else np.zeros(0, dt)  # noqa: E731
        self._sel_chunk, self._sel_row = cat(sel_chunk, np.int32), cat(sel_row, np.int32)
        self.lengths = cat(sel_len, np.int32)
        if len(self.lengths) == 0:
            raise ShardError(self.path, "no row to read" + (f" passes the filter {expr}" if expr is not None else ""))
        self._cache = collections.OrderedDict()
        self._cache_bytes, self._cached = cache_bytes, 0
        # Bytes made on the host: decoded (decompressed, or Parquet-decoded)
        # and packed (gathered into batch buffers). docs/data.md, "Copies".
        self.copies = {"decoded_bytes": 0, "packed_bytes": 0}
        # skip_bad: chunks found damaged while reading, and the rows left out with them.
        self.skip_bad = skip_bad
        self.skipped_rows = 0
        self._bad_chunks = set()

    def __len__(self):
        return len(self.lengths)

    def _chunk(self, chunk_id):
        """(offsets, values) numpy views of a chunk's ids, decoded at most once while cached."""
        hit = self._cache.get(chunk_id)
        if hit is not None:
            self._cache.move_to_end(chunk_id)
            return hit
        shard = self._shards[self._chunk_shard[chunk_id]]
        arr = shard.ids(self._pa, self._chunk_index[chunk_id])
        # Offsets index the child values directly (a sliced array's too).
        offsets = arr.offsets.to_numpy(zero_copy_only=True)
        values = arr.values.to_numpy(zero_copy_only=True) if arr.offset == 0 else arr.flatten().to_numpy()
        if arr.offset:
            offsets = offsets - offsets[0]
        expected = self._chunk_lengths[chunk_id]
        where = f"{shard.name} chunk {self._chunk_index[chunk_id]}"
        if len(offsets) != len(expected) + 1 or not self._np.array_equal(self._np.diff(offsets), expected):
            raise ShardError(where, "the ids do not match the 'length' column")
        if ids_crc(offsets, values) != shard.crc["input_ids"][self._chunk_index[chunk_id]]:
            raise ShardError(where, "the ids do not match their checksum")
        owned = shard.format == "parquet" or shard.compressed
        size = offsets.nbytes + values.nbytes if owned else 0
        if owned:
            self.copies["decoded_bytes"] += size
        self._cache[chunk_id] = (offsets, values)
        self._cached += size
        while self._cached > self._cache_bytes and len(self._cache) > 1:
            _, (o, v) = self._cache.popitem(last=False)
            self._cached -= (o.nbytes + v.nbytes) if owned else 0
        return offsets, values

    def usable(self, rows):
        """The rows (indices into ``lengths``) whose chunks decode: every
        chunk they need is decoded and checked now. A damaged chunk raises
        :class:`ShardError`, or with ``skip_bad`` its rows are left out,
        counted in ``skipped_rows``, with one warning per chunk."""
        np = self._np
        rows = np.asarray(rows, dtype=np.int64)
        chunks = self._sel_chunk[rows]
        for c in np.unique(chunks).tolist():
            if c in self._bad_chunks:
                continue
            try:
                self._chunk(c)
            except ShardError as e:
                if not self.skip_bad:
                    raise
                self._bad_chunks.add(c)
                self.skipped_rows += int((self._sel_chunk == c).sum())
                warnings.warn(f"stepscope.data: {e} (its rows skipped)", stacklevel=2)
        if not self._bad_chunks:
            return rows
        return rows[~np.isin(chunks, list(self._bad_chunks))]

    def gather(self, rows, out, pad_id=0):
        """Copies rows (indices into ``lengths``) into ``out`` (a 2-D numpy
        array, one row each, at least as wide as the longest), padding with
        ``pad_id``. An int32 C-contiguous ``out`` is filled by one C++ call
        (``_stepscope.gather_token_rows``); other dtypes by a loop here."""
        np = self._np
        rows = np.asarray(rows, dtype=np.int64)
        width = out.shape[1]
        if len(rows) and int(self.lengths[rows].max()) > width:
            raise ValueError(f"a row has {int(self.lengths[rows].max())} tokens, wider than the batch ({width})")
        chunk_ids, local = np.unique(self._sel_chunk[rows], return_inverse=True)
        chunks = [self._chunk(int(c)) for c in chunk_ids]
        in_chunk = self._sel_row[rows]
        if out.dtype == np.int32 and out.flags.c_contiguous and _native() is not None:
            packed = _native().gather_token_rows(out, chunks, local.astype(np.int64), in_chunk, int(pad_id))
        else:
            packed = 0
            for k, (c, r) in enumerate(zip(local.tolist(), in_chunk.tolist())):
                offsets, values = chunks[c]
                a, b = offsets[r], offsets[r + 1]
                n = b - a
                out[k, :n] = values[a:b]
                if n < width:
                    out[k, n:] = pad_id
                packed += int(n)
        self.copies["packed_bytes"] += int(packed) * out.itemsize
        return out


def _native():
    """stepscope's C++ module, when this package sits in the built one (None otherwise)."""
    try:
        from .. import _stepscope
    except ImportError:
        return None
    return _stepscope if hasattr(_stepscope, "gather_token_rows") else None
