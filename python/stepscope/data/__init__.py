"""Token data as shards (docs/data.md): ``write_token_shards`` turns documents
and a tokenizer's ids into Arrow IPC or Parquet shards with ZSTD;
``TokenShards`` reads them (memory-mapped, filters pushed down);
``TokenShardDataset`` batches them to a token budget for PyTorch with one
host copy per token. pyarrow is needed; torch only for the dataset."""

from .shard_errors import ShardError
from .shard_reader import TokenShards
from .shard_writer import write_token_shards

__all__ = ["ShardError", "TokenShards", "TokenShardDataset", "write_token_shards"]


def __getattr__(name):
    # The dataset subclasses torch's IterableDataset: torch is imported only
    # when it is asked for, so writing and reading shards do not need it.
    if name == "TokenShardDataset":
        from .token_dataset import TokenShardDataset

        return TokenShardDataset
    raise AttributeError(name)
