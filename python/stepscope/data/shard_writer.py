"""Writes token shards: documents (dicts, strings, or JSONL files) and a
tokenizer's ids into Arrow IPC or Parquet files with ZSTD, cut into record
batches / row groups of about ``chunk_tokens`` tokens (the unit the reader
decodes at once), with a ``manifest.json`` the reader checks every shard
against (docs/data.md, "Shard format")."""

import json
import os

from .shard_checksum import column_crc, ids_crc
from .shard_errors import ShardError

MANIFEST = "manifest.json"
FORMAT_VERSION = 1


def _encode_fn(tokenizer):
    """A callable str -> list[int] from a callable, or an object with ``encode``
    (tokenizers, tiktoken, sentencepiece, transformers' tokenizers)."""
    if tokenizer is None:
        return None
    if hasattr(tokenizer, "encode"):
        enc = tokenizer.encode

        def encode(text):
            ids = enc(text)
            return ids.ids if hasattr(ids, "ids") else ids  # tokenizers' Encoding
        return encode
    if callable(tokenizer):
        return tokenizer
    raise TypeError("tokenizer must be callable or have an encode method")


def _documents(source):
    """(where, document) pairs; `where` names the input for errors."""
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    for item in source:
        if isinstance(item, (str, os.PathLike)) and str(item).endswith((".jsonl", ".json")) and os.path.isfile(item):
            with open(item, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        yield f"{os.fspath(item)}:{n}", json.loads(line)
                    except json.JSONDecodeError as e:
                        yield f"{os.fspath(item)}:{n}", ShardError(f"{os.fspath(item)}:{n}", f"not JSON ({e.msg})")
        else:
            yield None, item


class _ShardFile:
    """One shard being written: Arrow IPC (RecordBatchFileWriter, ZSTD buffer
    compression) or Parquet (one row group per chunk)."""

    def __init__(self, pa, path, schema, fmt, compression, level):
        self.path, self.rows, self.tokens, self.chunks = path, 0, 0, 0
        self.crc = {name: [] for name in schema.names}  # per column, per chunk (shard_checksum.py)
        if fmt == "arrow":
            opts = pa.ipc.IpcWriteOptions(compression=pa.Codec(compression, level) if compression else None)
            self._sink = pa.OSFile(path, "wb")
            self._writer = pa.ipc.new_file(self._sink, schema, options=opts)
        else:
            import pyarrow.parquet as pq

            self._sink = None
            self._writer = pq.ParquetWriter(path, schema, compression=compression or "none",
                                            compression_level=level if compression else None,
                                            write_statistics=True)
        self._fmt = fmt

    def write(self, batch, offsets, values):
        for name in batch.schema.names:
            self.crc[name].append(ids_crc(offsets, values) if name == "input_ids" else column_crc(batch.column(name)))
        if self._fmt == "arrow":
            self._writer.write_batch(batch)
        else:
            import pyarrow as pa

            self._writer.write_table(pa.Table.from_batches([batch]), row_group_size=batch.num_rows)
        self.rows += batch.num_rows
        self.tokens += int(batch.column(1).to_numpy().sum()) if batch.num_rows else 0
        self.chunks += 1

    def close(self):
        self._writer.close()
        if self._sink is not None:
            self._sink.close()
        return {"file": os.path.basename(self.path), "rows": self.rows, "tokens": self.tokens, "chunks": self.chunks,
                "bytes": os.path.getsize(self.path), "crc32": self.crc}


def write_token_shards(documents, out_dir, *, tokenizer=None, text_field="text", ids_field="input_ids",
                       columns=(), format="arrow", compression="zstd", compression_level=3,
                       shard_tokens=1 << 26, chunk_tokens=1 << 20, vocab_size=None, skip_bad=False):
    """Writes ``documents`` as token shards into ``out_dir``; returns the manifest (a dict).

    ``documents``: an iterable of dicts (``text_field`` is tokenized, or
    ``ids_field`` holds ids already), of strings, or paths of ``.jsonl`` files
    (one JSON object per line). ``tokenizer``: a callable ``str -> ids`` or an
    object with ``encode``. ``columns``: document fields kept beside the ids
    (e.g. ``("source",)``), for filters at read time. ``format``: ``"arrow"``
    (IPC file; memory-mapped by the reader) or ``"parquet"``. Ids are stored
    as uint16 when ``vocab_size`` <= 65536, else int32.

    A document that cannot be used (no text, ids out of range, not JSON) is a
    :class:`ShardError` naming it, or with ``skip_bad=True`` it is left out
    and counted in the manifest's ``skipped``.
    """
    import numpy as np
    import pyarrow as pa

    if format not in ("arrow", "parquet"):
        raise ValueError(f"format must be 'arrow' or 'parquet' (got {format!r})")
    if compression not in (None, "zstd", "lz4"):
        raise ValueError(f"compression must be 'zstd', 'lz4' or None (got {compression!r})")
    if format == "parquet" and compression == "lz4":
        compression = "lz4_raw"
    if shard_tokens <= 0 or chunk_tokens <= 0:
        raise ValueError("shard_tokens and chunk_tokens must be positive")
    id_type, id_np = (pa.uint16(), np.uint16) if vocab_size is not None and vocab_size <= 65536 else (pa.int32(),
                                                                                                     np.int32)
    limit = vocab_size if vocab_size is not None else 2**31
    encode = _encode_fn(tokenizer)
    columns = list(columns)
    os.makedirs(out_dir, exist_ok=True)
    schema = None
    ext = "arrow" if format == "arrow" else "parquet"

    shards, skipped = [], []
    pending = {"ids": [], "lengths": [], **{c: [] for c in columns}}
    pending_tokens = 0
    current = None

    def bad(where, index, what):
        name = where or f"document {index}"
        if not skip_bad:
            raise ShardError(name, what)
        skipped.append(f"{name}: {what}")

    def flush():
        nonlocal pending, pending_tokens, current, schema
        if not pending["lengths"]:
            return
        lengths = np.asarray(pending["lengths"], dtype=np.int32)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        values = np.concatenate(pending["ids"]) if pending["ids"] else np.zeros(0, id_np)
        arrays = [pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=id_type)), pa.array(lengths)]
        names = ["input_ids", "length"]
        for c in columns:
            arrays.append(pa.array(pending[c]))
            names.append(c)
        batch = pa.RecordBatch.from_arrays(arrays, names=names)
        if schema is None:
            schema = batch.schema
        elif batch.schema != schema:
            try:
                batch = batch.cast(schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError) as e:
                raise ShardError(out_dir, f"column types changed between documents ({e})") from e
        if current is None:
            current = _ShardFile(pa, os.path.join(out_dir, f"shard-{len(shards):05d}.{ext}"), schema, format,
                                 compression, compression_level)
        current.write(batch, offsets, values)
        pending = {"ids": [], "lengths": [], **{c: [] for c in columns}}
        pending_tokens = 0
        if current.tokens >= shard_tokens:
            shards.append(current.close())
            current = None

    for index, (where, doc) in enumerate(_documents(documents)):
        if isinstance(doc, ShardError):
            bad(doc.where, index, doc.what)
            continue
        if isinstance(doc, str):
            doc = {text_field: doc}
        if not isinstance(doc, dict):
            bad(where, index, f"a document must be a dict or a string (got {type(doc).__name__})")
            continue
        ids = doc.get(ids_field)
        if ids is None:
            text = doc.get(text_field)
            if not isinstance(text, str):
                bad(where, index, f"no '{ids_field}' and no string '{text_field}'")
                continue
            if encode is None:
                bad(where, index, f"no '{ids_field}' and no tokenizer for '{text_field}'")
                continue
            ids = encode(text)
        try:
            arr = np.asarray(ids)
        except (TypeError, ValueError) as e:
            bad(where, index, f"'{ids_field}' is not a list of token ids ({e})")
            continue
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            bad(where, index, f"'{ids_field}' must be a non-empty list of integers")
            continue
        if int(arr.min()) < 0 or int(arr.max()) >= limit:
            bad(where, index, f"token id {int(arr.max()) if int(arr.max()) >= limit else int(arr.min())} "
                              f"outside [0, {limit})")
            continue
        missing = [c for c in columns if c not in doc]
        if missing:
            bad(where, index, f"no column '{missing[0]}'")
            continue
        pending["ids"].append(arr.astype(id_np, copy=False))
        pending["lengths"].append(arr.size)
        for c in columns:
            pending[c].append(doc[c])
        pending_tokens += arr.size
        if pending_tokens >= chunk_tokens:
            flush()
    flush()
    if current is not None:
        shards.append(current.close())
    if not shards:
        raise ShardError(out_dir, f"no document to write ({len(skipped)} skipped)")
    manifest = {"stepscope_token_shards": FORMAT_VERSION, "format": format, "compression": compression,
                "id_type": str(id_type), "vocab_size": vocab_size, "columns": columns,
                "rows": sum(s["rows"] for s in shards), "tokens": sum(s["tokens"] for s in shards),
                "skipped": len(skipped), "skipped_examples": skipped[:10], "shards": shards}
    tmp = os.path.join(out_dir, MANIFEST + ".tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, os.path.join(out_dir, MANIFEST))
    return manifest
