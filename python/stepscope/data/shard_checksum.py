"""Checksums of a shard's chunks, kept in the manifest: CRC-32 (zlib) of the
ids and their offsets, of the `length` column, and of each extra column, per
chunk. The reader checks each when it first reads it, so a shard damaged
inside (a flipped bit in uncompressed ids passes every format check) is an
error naming the shard and chunk, never different tokens."""

import zlib


def ids_crc(offsets, values):
    """The ids of a chunk: its offsets from 0 as little-endian int32, then the values they span as stored."""
    import numpy as np

    o = np.asarray(offsets, dtype=np.int64)
    start, end = int(o[0]), int(o[-1])
    crc = zlib.crc32((o - start).astype("<i4").tobytes())
    return zlib.crc32(np.ascontiguousarray(values[start:end]).tobytes(), crc)


def column_crc(column):
    """A pyarrow column (Array or ChunkedArray) of a chunk: its values as Python sees them."""
    if hasattr(column, "to_numpy") and str(column.type) == "int32":
        return zlib.crc32(column.to_numpy().astype("<i4").tobytes())
    return zlib.crc32(repr(column.to_pylist()).encode("utf-8"))
