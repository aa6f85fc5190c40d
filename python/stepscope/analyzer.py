"""``stepscope.analyze``: the C++ pipeline over trace files, folders or globs."""

import os

from .errors import raise_for, warn_all
from .report import Report


def analyze(paths, compat=None, profile=None, *, threads=0, salvage=False, disable_detectors=(),
            unprofiled_step_ms=None, what_if=(), replay=True, top=10, memory_snapshots=()):
    """Reads, analyses and diagnoses a trace set; returns a :class:`Report`.

    ``paths``: a trace file (``.json``/``.json.gz``), a folder of them or a
    glob, or a list of those; one file per rank. ``compat``: ``"hta"`` adds
    HTA's tables. ``profile``: a ``stepscope bench`` hardware profile whose
    measured ceilings replace the datasheet peaks. The keyword options are
    ``stepscope analyze``'s (docs/python.md); ``memory_snapshots``: memory
    snapshots of the run, each a path or ``(rank, path)``, whose findings
    join the diagnosis (``--memory-snapshot``). Raises :class:`stepscope.Error`
    subclasses for what the CLI reports as an error; its warnings become
    :class:`stepscope.StepscopeWarning`.
    """
    from . import _stepscope

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    native = _stepscope.analyze(
        [os.fspath(p) for p in paths],
        compat=compat or "",
        profile=os.fspath(profile) if profile else "",
        threads=threads,
        salvage=salvage,
        disabled_detectors=list(disable_detectors),
        unprofiled_step_ms=unprofiled_step_ms,
        what_if=list(what_if),
        replay=replay,
        top=top,
        memory_snapshots=[f"{s[0]}={os.fspath(s[1])}" if isinstance(s, tuple) else os.fspath(s)
                          for s in memory_snapshots],
    )
    raise_for(native)
    warn_all(native.warnings)
    return Report(native)
