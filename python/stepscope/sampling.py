"""Length-bucketing batch sampler over stepscope's C++ core.

Use as a ``batch_sampler`` of ``torch.utils.data.DataLoader`` (no torch import
is needed here: the class only has to be iterable with a length)::

    sampler = LengthBucketingBatchSampler(lengths, max_tokens=16384, seed=0,
                                          rank=rank, world_size=world_size)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=pad_collate)

Batches hold at most ``max_tokens`` padded tokens (count x longest); the
batches of one (seed, epoch, rank) are the same on every machine.
"""

from . import _stepscope


class LengthBucketingBatchSampler:
    def __init__(self, lengths, max_tokens, *, max_batch_size=0, window_batches=400, seed=0,
                 rank=0, world_size=1, even_ranks=True):
        self._lengths = [int(x) for x in lengths]
        self._args = dict(max_tokens=int(max_tokens), max_batch_size=int(max_batch_size),
                          window_batches=int(window_batches), seed=int(seed), rank=int(rank),
                          world_size=int(world_size), even_ranks=bool(even_ranks))
        self._epoch = 0
        self._plan()  # options are checked now, not at the first iteration

    def set_epoch(self, epoch):
        """A new shuffle for each epoch (call before iterating, as with DistributedSampler)."""
        self._epoch = int(epoch)
        self._plan()

    def _plan(self):
        self._batches, self.stats = _stepscope.bucket_batches(self._lengths, epoch=self._epoch, **self._args)

    def __iter__(self):
        return iter(self._batches)

    def __len__(self):
        return len(self._batches)
