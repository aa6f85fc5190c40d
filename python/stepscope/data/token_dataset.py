"""``TokenShardDataset``: token shards as padded batches for PyTorch.

Batches come from the length-bucketing sampler (``stepscope.sampling``; its
C++ core): whole documents, at most ``max_tokens`` padded tokens each (count
x longest), shuffled per (seed, epoch) and split across ranks. A rank's
batches from the resumed position on are dealt to the DataLoader workers in
turn, starting with worker 0, which is the order an order-keeping DataLoader
collects them in: the rank's batches come out in plan order, and
``resume(batches_consumed)`` is exact mid-epoch.

Host path (docs/data.md, "Copies"): a row's ids are gathered from the shard's
Arrow buffers (memory-mapped, or decoded once per chunk) straight into the
batch buffer: one copy. In a DataLoader worker that buffer is allocated in
shared memory, as torch's default collate does, so passing it to the main
process copies nothing. With ``device`` set (a CUDA device, in the main
process) that buffer is pinned staging memory from a small ring, the copy to
the device is ``non_blocking``, and a slot is reused only after its copy's
event has completed.
"""

import multiprocessing

import torch

from .shard_reader import TokenShards


def _shared_empty(rows, width):
    """An int32 [rows, width] tensor in shared memory, as torch's default
    collate allocates batches in a worker: the DataLoader then hands it to
    the main process without the copy into shared memory it makes otherwise."""
    t = torch.empty(0, dtype=torch.int32)
    storage = t._typed_storage()._new_shared(rows * width, device=t.device)
    return t.new(storage).resize_(rows, width)


class _PinnedRing:
    """Pinned host buffers reused in turn; each waits for the copy out of it before it is handed out again."""

    def __init__(self, slots, capacity):
        self._bufs = [torch.empty(capacity, dtype=torch.int32, pin_memory=True) for _ in range(slots)]
        self._events = [None] * slots
        self._next = 0

    def take(self, rows, width):
        i = self._next
        self._next = (i + 1) % len(self._bufs)
        if self._events[i] is not None:
            self._events[i].synchronize()
        if rows * width > self._bufs[i].numel():
            self._bufs[i] = torch.empty(rows * width, dtype=torch.int32, pin_memory=True)
        return i, self._bufs[i][: rows * width].view(rows, width)

    def copied(self, i):
        ev = torch.cuda.Event()
        ev.record()
        self._events[i] = ev


class TokenShardDataset(torch.utils.data.IterableDataset):
    """Batches ``{"input_ids": int32 [B, L], "lengths": int32 [B]}`` of a shard folder.

    ``max_tokens``: padded tokens per batch (a document longer than that is a
    batch of its own). ``seed``, ``rank``, ``world_size``, ``even_ranks``,
    ``max_batch_size``, ``window_batches``: as ``LengthBucketingBatchSampler``.
    ``filter`` / ``min_length`` / ``max_length`` / ``skip_bad``: as
    :class:`TokenShards`. ``device``: a CUDA device to put batches on from the
    main process (pinned staging, ``non_blocking`` copies); ``None`` yields CPU
    tensors (use ``DataLoader(..., batch_size=None)``).
    """

    def __init__(self, path, max_tokens, *, max_batch_size=0, window_batches=400, seed=0, rank=0, world_size=1,
                 even_ranks=True, pad_id=0, filter=None, min_length=None, max_length=None, skip_bad=False,
                 device=None, staging_slots=3):
        super().__init__()
        self._open_args = dict(path=path, filter=filter, min_length=min_length, max_length=max_length,
                               skip_bad=skip_bad)
        self._plan_args = dict(max_tokens=int(max_tokens), max_batch_size=int(max_batch_size),
                               window_batches=int(window_batches), seed=int(seed), rank=int(rank),
                               world_size=int(world_size), even_ranks=bool(even_ranks))
        self.pad_id = int(pad_id)
        self.device = torch.device(device) if device is not None else None
        if self.device is not None and self.device.type != "cuda":
            raise ValueError(f"device must be a CUDA device or None (got {device})")
        self._staging_slots = int(staging_slots)
        self._shards = None
        self._ring = None
        # The position lives in shared memory: DataLoader workers (persistent
        # ones too, which keep their copy of the dataset across epochs) read
        # the epoch and resume point set_epoch/resume set in the main process.
        self._position = multiprocessing.Array("q", 2, lock=False)  # epoch, batches consumed
        self._plan_cache = None
        self.shards  # open now: a bad folder or option fails here, not in a worker
        self._plan()

    # Workers get the arguments, not the open memory maps.
    def __getstate__(self):
        from multiprocessing import context

        state = dict(self.__dict__)
        state["_shards"], state["_ring"], state["_plan_cache"] = None, None, None
        # Shared with a worker being started; a plain copy for any other pickling.
        if context.get_spawning_popen() is None:
            state["_position"] = list(self._position)
        return state

    def __setstate__(self, state):
        if isinstance(state["_position"], list):
            position = multiprocessing.Array("q", 2, lock=False)
            position[:] = state["_position"]
            state["_position"] = position
        self.__dict__.update(state)

    @property
    def epoch(self):
        return int(self._position[0])

    @epoch.setter
    def epoch(self, value):
        self._position[0] = int(value)

    @property
    def batches_consumed(self):
        """Batches of this epoch handed out, in plan order (the resume point)."""
        return int(self._position[1])

    @batches_consumed.setter
    def batches_consumed(self, value):
        self._position[1] = int(value)

    @property
    def shards(self):
        if self._shards is None:
            self._shards = TokenShards(**self._open_args)
        return self._shards

    def set_epoch(self, epoch):
        """A new shuffle (call before each epoch, as with DistributedSampler); starts it from its first batch."""
        self.epoch = int(epoch)
        self.batches_consumed = 0

    def resume(self, batches_consumed, epoch=None):
        """Skips the first ``batches_consumed`` batches of this rank's epoch: a
        saved position, e.g. the optimizer steps done in the epoch."""
        if epoch is not None:
            self.epoch = int(epoch)
        if batches_consumed < 0:
            raise ValueError(f"batches_consumed must be >= 0 (got {batches_consumed})")
        self.batches_consumed = int(batches_consumed)

    def state_dict(self):
        return {"epoch": self.epoch, "batches_consumed": self.batches_consumed}

    def load_state_dict(self, state):
        self.resume(state["batches_consumed"], state["epoch"])

    def _plan(self):
        """This rank's batches of the current epoch: (indices, offsets), numpy
        int64, batch b holding indices[offsets[b]:offsets[b + 1]]. Cached per
        epoch: the plan of millions of documents takes about a second."""
        import numpy as np

        from .. import _stepscope

        if self._plan_cache is not None and self._plan_cache[0] == self.epoch:
            return self._plan_cache[1]
        (ib, ob), stats = _stepscope.bucket_batches(self.shards.lengths, epoch=self.epoch, as_arrays=True,
                                                    **self._plan_args)
        self.stats = stats
        plan = (np.frombuffer(ib, dtype="<i8"), np.frombuffer(ob, dtype="<i8"))
        self._plan_cache = (self.epoch, plan)
        return plan

    def __len__(self):
        return len(self._plan()[1]) - 1

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, num_workers = (info.id, info.num_workers) if info is not None else (0, 1)
        # The rank's batches after the resumed position, dealt to the workers in
        # turn from worker 0, the order in which a DataLoader collects them.
        indices, offsets = self._plan()
        batches = range(self.batches_consumed + worker, len(offsets) - 1, num_workers)
        lengths = self.shards.lengths
        staged = self.device is not None and info is None
        if staged and self._ring is None:
            self._ring = _PinnedRing(self._staging_slots, self._plan_args["max_tokens"])
        for b in batches:
            rows = indices[offsets[b]:offsets[b + 1]]
            # Rows of damaged chunks are left out (skip_bad) or raise; a batch
            # left with none is skipped, counted in shards.skipped_rows.
            rows = self.shards.usable(rows)
            if len(rows) == 0:
                continue
            rows_len = torch.from_numpy(lengths[rows])
            width = int(rows_len.max())
            if staged:
                slot, host = self._ring.take(len(rows), width)
            elif info is not None:
                host = _shared_empty(len(rows), width)
            else:
                host = torch.empty((len(rows), width), dtype=torch.int32)
            self.shards.gather(rows, host.numpy(), self.pad_id)
            if staged:
                ids = host.to(self.device, non_blocking=True)
                self._ring.copied(slot)
                batch = {"input_ids": ids, "lengths": rows_len.to(self.device, non_blocking=True)}
            else:
                batch = {"input_ids": host, "lengths": rows_len}
            if info is None:
                self.batches_consumed += 1
            yield batch
        if info is None:
            self.batches_consumed = 0  # the epoch is done: iterating again repeats it (set_epoch for a new one)
