"""Records a Kineto trace with the settings stepscope's diagnosis needs.

::

    import stepscope
    with stepscope.profile("traces") as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

wraps ``torch.profiler.profile`` with a one-shot schedule
(``wait`` unprofiled steps, ``warmup``, ``active`` recorded steps) and writes
one gzip trace per rank, ``<out_dir>/rank<R>.<time>.<pid>.pt.trace.json.gz``.
The wait steps are timed without the profiler; their median goes into the
trace as ``stepscope_unprofiled_step_ms`` (unprofiled_timer.py says how).
If the loop raises, the trace recorded so far is still written, with a
``stepscope_note``, and the exception goes on unchanged. docs/python.md,
"Recording a trace", describes every setting and key.

torch is imported when recording starts, never at ``import stepscope``.
"""

import json
import os
import time
import warnings

from .unprofiled_timer import MIN_INTERVALS, UnprofiledTimer, median_step_ms

UNPROFILED_KEY = "stepscope_unprofiled_step_ms"
NOTE_KEY = "stepscope_note"
RECORDER_KEY = "stepscope_recorder"


def current_rank():
    """torch.distributed's rank when initialised, else env RANK, else 0."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    text = os.environ.get("RANK")
    if text is None:
        return 0
    try:
        rank = int(text)
    except ValueError:
        rank = -1
    if rank < 0:
        # Profiling must never stop training: name the file rank0 and say so.
        warnings.warn(f"stepscope: RANK={text!r} is not a rank; writing the trace as rank 0",
                      stacklevel=3)
        return 0
    return rank


def _import_analyze():
    # The analysis lives in the C++ extension, which may not be built.
    import stepscope

    return stepscope.analyze


class Recorder:
    """One recording: ``with`` it (or ``start()``/``stop()``), ``step()`` after each step.

    Steps 0 .. wait-1 run without the profiler (timed), wait .. wait+warmup-1
    under it unrecorded (its start-up cost settles), and the next ``active``
    steps are recorded; the trace is written when the last of them ends.
    Steps after that run without the profiler.
    """

    def __init__(self, out_dir, *, wait=5, warmup=2, active=3, rank=None, analyze=False,
                 record_shapes=True, profile_memory=True, with_stack=True, with_flops=False):
        for name, value, least in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number >= {least}, not {value!r}")
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 0):
            raise ValueError(f"rank must be a whole number >= 0 or None, not {rank!r}")
        self.out_dir = os.fspath(out_dir)
        self.wait, self.warmup, self.active = wait, warmup, active
        self.rank = rank  # resolved at start(): torch.distributed may start after __init__
        self.analyze = analyze
        self.settings = {"record_shapes": record_shapes, "profile_memory": profile_memory,
                         "with_stack": with_stack, "with_flops": with_flops}
        self.trace_paths = []           # the gzip traces written, in order
        self.unprofiled_intervals_ms = []  # the timed wait steps
        self.unprofiled_step_ms = None  # their median, or None without a measurement
        self.note = None                # why the trace is short, when it is
        self.step_num = 0               # the step now running (steps ended so far)
        self.profiler = None            # the torch.profiler.profile, once started
        self._timer = None
        self._metadata_added = False
        self._stopped = False
        self._closed = False  # torch's profiler exited (window done, or stopped)

    @property
    def total_steps(self):
        """Steps until the trace is written: wait + warmup + active."""
        return self.wait + self.warmup + self.active

    def _recording(self):
        return self.wait + self.warmup <= self.step_num < self.total_steps

    def start(self):
        if self.profiler is not None:
            raise RuntimeError("this recorder has started already; make a new one per recording")
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule

        if self.rank is None:
            self.rank = current_rank()
        os.makedirs(self.out_dir, exist_ok=True)
        use_cuda = torch.cuda.is_available()
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if use_cuda else [])
        self._timer = UnprofiledTimer(use_cuda)
        if self.wait - 1 < MIN_INTERVALS:
            warnings.warn(f"stepscope: wait={self.wait} times {max(self.wait - 1, 0)} unprofiled "
                          f"step(s), fewer than {MIN_INTERVALS}: the trace gets no {UNPROFILED_KEY} "
                          f"(use wait >= {MIN_INTERVALS + 1})", stacklevel=3)
        self.profiler = profile(
            activities=activities,
            schedule=schedule(wait=self.wait, warmup=self.warmup, active=self.active, repeat=1),
            on_trace_ready=self._write_trace, **self.settings)
        self.profiler.__enter__()
        self._add_metadata_once()  # wait=warmup=0: recording from step 0
        return self

    def step(self):
        """Marks the end of one training step; after the window (or stop()) it only counts."""
        if self.profiler is None:
            raise RuntimeError("step() before start(): use `with stepscope.profile(...) as prof:`")
        if self._closed:
            self.step_num += 1
            return
        if self.step_num < self.wait:
            self._timer.mark()  # before the profiler's step, which may start tracing
            if self.step_num == self.wait - 1:
                self._measure()  # the last unprofiled step ended
        self.profiler.step()
        self.step_num += 1
        self._add_metadata_once()
        if self.step_num == self.total_steps:
            self._close()  # the trace is written; later steps skip torch's step logic

    def _close(self):
        self._closed = True
        self.profiler.__exit__(None, None, None)

    def _measure(self):
        self.unprofiled_intervals_ms = self._timer.intervals_ms()
        self.unprofiled_step_ms = median_step_ms(self.unprofiled_intervals_ms)

    def _add_metadata_once(self):
        # Added once recording runs, when every torch version keeps it for
        # the trace (older ones drop metadata added before start_trace).
        if self._metadata_added or not self._recording():
            return
        self._metadata_added = True
        if self.unprofiled_step_ms is not None:
            self.profiler.add_metadata_json(UNPROFILED_KEY, json.dumps(self.unprofiled_step_ms))
        info = {"wait": self.wait, "warmup": self.warmup, "active": self.active, "rank": self.rank,
                "unprofiled_clock": self._timer.clock,
                "unprofiled_intervals_ms": [round(x, 4) for x in self.unprofiled_intervals_ms],
                **self.settings}
        self.profiler.add_metadata_json(RECORDER_KEY, json.dumps(info))

    def _write_trace(self, prof):
        stamp = time.strftime("%Y%m%dT%H%M%S")
        path = os.path.join(self.out_dir, f"rank{self.rank}.{stamp}.{os.getpid()}.pt.trace.json.gz")
        prof.export_chrome_trace(path)  # the .gz suffix makes torch gzip it
        self.trace_paths.append(path)

    def stop(self, cause=None):
        """Ends the recording; writes what was recorded if the window did not finish.

        ``cause`` says why it ends early (e.g. "the training loop raised
        ValueError"); None is a normal end. Calling it again does nothing.
        """
        if self.profiler is None or self._stopped:
            return
        self._stopped = True
        n, first_recorded = self.step_num, self.wait + self.warmup
        why = cause or "the loop ended"
        if n < self.total_steps:
            if n < first_recorded:
                phase = "wait" if n < self.wait else "warmup"
                warnings.warn(f"stepscope: {why} at step {n}, in the {phase} phase, before recording "
                              f"began at step {first_recorded}: no trace written", stacklevel=3)
            else:
                self.note = (f"{why} at step {n}; the trace ends there ({n - first_recorded} of "
                             f"{self.active} recorded steps complete)")
                self.profiler.add_metadata_json(NOTE_KEY, json.dumps(self.note))
        if not self._closed:
            self._close()
        if self.note:
            where = ", ".join(self.trace_paths) or "(no file)"
            warnings.warn(f"stepscope: {self.note}: {where}", stacklevel=3)
        if self.analyze and cause is None:
            self._print_analysis()

    def stop_after_failure(self, cause):
        """stop(cause) for a loop that failed: a failure to write the trace
        becomes a warning, so the training's exception stays the one raised."""
        try:
            self.stop(cause)
        except Exception as e:  # noqa: BLE001 - any write error must not mask the cause
            warnings.warn(f"stepscope: could not write the trace after {cause}: {e!r}", stacklevel=3)

    def _print_analysis(self):
        if self.rank != 0 or not self.trace_paths:
            return  # one report per job, from rank 0
        command = f"stepscope analyze {self.out_dir}"
        try:
            analyze = _import_analyze()
        except (ImportError, AttributeError):
            print(f"stepscope: the Python analysis is not available here; run `{command}`")
            return
        print(analyze(self.trace_paths).to_text())
        if _world_size() > 1:
            print(f"stepscope: that was rank 0's trace; all ranks: `{command}`")

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.stop()
        else:
            self.stop_after_failure(f"the training loop raised {exc_type.__name__}")
        return False  # the exception goes on unchanged


def _world_size():
    import torch.distributed as dist

    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def profile(out_dir, **settings):
    """A Recorder writing to out_dir; use it as ``with stepscope.profile(out_dir) as prof:``.

    settings: wait=5, warmup=2, active=3, rank=None, analyze=False,
    record_shapes=True, profile_memory=True, with_stack=True, with_flops=False.
    """
    return Recorder(out_dir, **settings)


def record(fn, out_dir, steps=None, **settings):
    """Calls fn() once per step under a recorder and returns the Recorder.

    steps defaults to wait + warmup + active (the trace is then written and
    nothing unprofiled runs after it).
    """
    recorder = Recorder(out_dir, **settings)
    count = recorder.total_steps if steps is None else steps
    with recorder:
        for _ in range(count):
            fn()
            recorder.step()
    return recorder
