"""Times training steps that run without the profiler (the schedule's wait phase).

The figure is the step as the job runs it when nobody watches: the what-if
model calibrates its profiler-cost estimate to it (docs/whatif.md,
"Profiler overhead" -> "Calibration").

A boundary is marked at the end of every wait step (each ``prof.step()``
call while the profiler is idle); the intervals between consecutive
boundaries are the timed steps. The first wait step, from entering the
recorder to the first ``prof.step()``, is not timed: it often pays one-off
costs (the optimizer's lazily built state, allocator growth, CUDA handles,
autotuning) when recording starts with training, and what the caller does
between entering and its first step is not part of a step. So a wait phase
of W steps gives W - 1 intervals.
"""

import statistics
import time

# Fewer intervals than this make no measurement: a single step says nothing
# about the step-to-step noise the median is there to reject.
MIN_INTERVALS = 2


class UnprofiledTimer:
    """Boundaries of the unprofiled steps, on the GPU stream or the host clock."""

    def __init__(self, use_cuda):
        # On CUDA the step is what the stream does between two boundaries
        # (host enqueue and GPU work overlap; a host clock without a sync per
        # step would time the enqueue alone). Events cost no host sync.
        self.use_cuda = use_cuda
        self.clock = "cuda_event" if use_cuda else "perf_counter"
        self._marks = []  # torch.cuda.Event (CUDA) or perf_counter seconds

    def mark(self):
        """The end of one unprofiled step."""
        if self.use_cuda:
            import torch

            event = torch.cuda.Event(enable_timing=True)
            event.record()  # on the current stream
            self._marks.append(event)
        else:
            self._marks.append(time.perf_counter())

    def intervals_ms(self):
        """Each timed step in ms; on CUDA waits once, for the last boundary."""
        if len(self._marks) < 2:
            return []
        if self.use_cuda:
            self._marks[-1].synchronize()
            return [a.elapsed_time(b) for a, b in zip(self._marks, self._marks[1:])]
        return [(b - a) * 1e3 for a, b in zip(self._marks, self._marks[1:])]


def median_step_ms(intervals_ms):
    """The median timed step in ms, or None when there are too few intervals."""
    if len(intervals_ms) < MIN_INTERVALS:
        return None
    return statistics.median(intervals_ms)
