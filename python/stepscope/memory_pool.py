"""Memory remedies for the caching allocator's fragmentation (issue #30 item 4).

Two tools, over PyTorch's own allocator API:

* :class:`DedicatedPool` puts a region's allocations in a dedicated
  ``torch.cuda.MemPool`` (PyTorch 2.6 and later). Variable-size buffers, such
  as attention's at changing sequence lengths, then split and reuse only that
  pool's segments and leave the rest of the cache unfragmented. The pool can
  be reserved up front, sized from ``stepscope memory`` (the live bytes of the
  site at the peak) or from the planner. Use it as
  ``with pool.auto_manage(): out = attention(q, k, v)``, or on every forward
  of a module with ``pool.route(module)``.
* :class:`FragmentationGuard` calls ``torch.cuda.empty_cache()`` only when the
  cache holds many free bytes the allocator could give back, and when the
  device is under pressure. Calling it every N steps instead costs a
  device-wide synchronisation and the ``cudaMalloc`` calls that refill the
  cache.

Neither has been measured yet. ``workloads/fragmentation_pool.py`` is the H200
experiment that will measure them against the default allocator and against
``expandable_segments:True`` (docs/memory.md, "Remedies").
"""

import contextlib

import torch


def _cuda_device(device):
    d = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
    if d.type != "cuda":
        raise ValueError(f"device: {d} is not a CUDA device; memory pools are CUDA's")
    return d if d.index is not None else torch.device("cuda", torch.cuda.current_device())


class DedicatedPool:
    """A ``torch.cuda.MemPool`` for one region's allocations.

    ``reserve_bytes``: allocated in the pool at once and freed again, so the
    pool holds a segment of that size from the start. Sizing it up front is
    what keeps the pool's later requests from calling ``cudaMalloc`` at a
    moment the device is full. ``use_on_oom``: let the default pool's
    allocations fall back to this pool's free memory before raising OOM.
    """

    def __init__(self, device=None, reserve_bytes=0, use_on_oom=False):
        if not hasattr(torch.cuda, "MemPool"):
            raise RuntimeError(f"torch {torch.__version__} has no torch.cuda.MemPool (PyTorch 2.6 or later)")
        if reserve_bytes < 0:
            raise ValueError(f"reserve_bytes: {reserve_bytes} is negative")
        self.device = _cuda_device(device)
        self.pool = torch.cuda.MemPool(use_on_oom=use_on_oom)
        if reserve_bytes:
            self.reserve(reserve_bytes)

    def reserve(self, nbytes):
        """Makes the pool hold at least ``nbytes`` more in one segment."""
        with self.auto_manage():
            block = torch.empty(int(nbytes), dtype=torch.uint8, device=self.device)
            del block

    @contextlib.contextmanager
    def auto_manage(self):
        """Allocations of this thread inside the block come from the pool."""
        with torch.cuda.use_mem_pool(self.pool, device=self.device):
            yield self

    def route(self, module):
        """Every forward of ``module`` allocates from the pool, including the
        activations it saves for backward. The backward's own buffers are
        allocated by autograd's thread, outside the pool. Returns the hook
        handles; ``.remove()`` them to stop."""
        stack = []

        def enter(mod, args):
            ctx = self.auto_manage()
            ctx.__enter__()
            stack.append(ctx)

        def leave(mod, args, output):
            stack.pop().__exit__(None, None, None)

        return [module.register_forward_pre_hook(enter), module.register_forward_hook(leave)]

    def segments(self):
        """The pool's segments, as ``torch.cuda.memory_snapshot()`` describes them."""
        return self.pool.snapshot()

    def reserved_bytes(self):
        return sum(s["total_size"] for s in self.segments())

    def allocated_bytes(self):
        return sum(s["allocated_size"] for s in self.segments())


class FragmentationGuard:
    """Calls ``torch.cuda.empty_cache()`` when it pays off, checked each ``step()``.

    From ``torch.cuda.memory_stats``, for the device:

    - *releasable*: reserved - active - inactive_split. These are cached free
      bytes in segments with nothing live, which ``empty_cache`` gives back.
      Free pieces of partly used segments (inactive_split) cannot be given
      back.
    - *slack*: (reserved - allocated) / reserved, the share of the cache that
      is not holding tensors.

    ``empty_cache`` runs when slack >= ``threshold``, releasable >=
    ``min_release_bytes``, and reserved >= ``pressure`` x the device's total
    memory. A cache with a lot of free memory, on a device close to full,
    is when a large request fails for want of one contiguous block.
    """

    def __init__(self, threshold=0.25, min_release_bytes=256 << 20, pressure=0.85, device=None):
        if not 0 <= threshold <= 1 or not 0 <= pressure <= 1:
            raise ValueError(f"threshold ({threshold}) and pressure ({pressure}) must lie in [0, 1]")
        self.threshold, self.min_release_bytes, self.pressure = threshold, int(min_release_bytes), pressure
        self.device = _cuda_device(device)
        self.total_bytes = torch.cuda.get_device_properties(self.device).total_memory
        self.releases = 0
        self.released_bytes = 0
        self.steps = 0

    def measures(self):
        """(slack, releasable bytes, reserved bytes) now."""
        s = torch.cuda.memory_stats(self.device)
        reserved = s.get("reserved_bytes.all.current", 0)
        allocated = s.get("allocated_bytes.all.current", 0)
        active = s.get("active_bytes.all.current", 0)
        split = s.get("inactive_split_bytes.all.current", 0)
        slack = (reserved - allocated) / reserved if reserved else 0.0
        return slack, max(reserved - active - split, 0), reserved

    def step(self):
        """Releases the cache when the three conditions hold; returns whether it did."""
        self.steps += 1
        slack, releasable, reserved = self.measures()
        if slack < self.threshold or releasable < self.min_release_bytes or reserved < self.pressure * self.total_bytes:
            return False
        torch.cuda.empty_cache()
        self.releases += 1
        self.released_bytes += reserved - torch.cuda.memory_stats(self.device).get("reserved_bytes.all.current", 0)
        return True
