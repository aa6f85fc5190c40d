"""``stepscope.distributed``: a trace set's analysis spread over a Dask cluster.

Each rank's trace is summarized on a worker (``stepscope summarize``: read and
analysed where it lies; only the summary, ~0.02% of the trace, travels back)
and the summaries are merged into the report ``stepscope merge`` gives
(docs/distributed.md). Paths go through fsspec, so a shared folder,
``s3://`` or ``gs://`` work alike: a worker opens the files it is given.

Today the merge reproduces ``analyze``'s analyses and cross-rank tables, not
yet its diagnosis: the report's findings raise instead of coming back empty.
"""

import os
import shutil
import sys
import tempfile
import uuid

from .errors import TraceError, printable, raise_for, warn_all
from .report import Report

SUMMARY_SUFFIX = ".stepscope-summary"
_TRACE_SUFFIXES = (".json", ".json.gz", ".gz")


def expand(paths, storage_options=None):
    """The trace files behind ``paths`` (files, folders, globs; local or fsspec URLs), sorted, each once."""
    import fsspec

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        p = os.fspath(p)
        fs, root = fsspec.core.url_to_fs(p, **(storage_options or {}))
        if any(c in root for c in "*?["):
            found = [fs.unstrip_protocol(f) if _remote(fs) else f for f in fs.glob(root)]
            if not found:
                raise TraceError(f"{p}: no file matches", p)
        elif fs.isdir(root):
            found = [fs.unstrip_protocol(f) if _remote(fs) else f
                     for f in fs.ls(root, detail=False) if f.endswith(_TRACE_SUFFIXES)]
            if not found:
                raise TraceError(f"{p}: folder holds no .json or .json.gz files", p)
        else:
            found = [p]
        out.extend(found)
    return sorted(set(out))


def _remote(fs):
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol not in ("file", "local")


def summarize_file(path, *, salvage=False, top=10, on_error="fail", storage_options=None):
    """One rank's summary bytes, made where this runs (a Dask worker).

    A local path is read in place; any other fsspec URL is copied to a scratch
    file first (the summary names the URL). A file that cannot be read raises
    :class:`TraceError` (``on_error="fail"``) or becomes a summary carrying
    ``analyze --salvage``'s "dropped" warning (``on_error="skip"``).
    """
    import fsspec

    from . import _stepscope

    fs, root = fsspec.core.url_to_fs(path, **(storage_options or {}))
    scratch = None
    try:
        local = root
        if _remote(fs):
            suffix = next((s for s in _TRACE_SUFFIXES if root.endswith(s)), "")
            fd, scratch = tempfile.mkstemp(prefix="stepscope-", suffix=suffix)
            with os.fdopen(fd, "wb") as out, fs.open(root, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 22)
            local = scratch
        ok, error, error_file, data = _stepscope.summarize(
            [local], member_of_set=True, salvage=salvage, top=top, display_path=path if scratch else "")
    except OSError as e:
        ok, error, error_file, data = False, f"{path}: {e.strerror or e}", path, b""
    finally:
        if scratch:
            os.unlink(scratch)
    if ok:
        return data
    if on_error == "skip":
        return _stepscope.unreadable_summary(path, error, salvage=salvage, top=top)
    raise TraceError(printable(error), error_file or path)


def analyze(paths, client, *, salvage=False, top=10, on_error="fail", progress=False, storage_options=None):
    """The report of a trace set, its ranks summarized on the workers of ``client``.

    ``paths``: trace files, folders or globs (one file per rank), local to
    the workers (a shared file system) or fsspec URLs. ``client``: a
    ``dask.distributed.Client``. ``on_error``: ``"fail"`` raises
    :class:`TraceError` naming the first file that cannot be read; ``"skip"``
    leaves it out and the report names it in its warnings. ``progress``: a line
    on stderr as ranks are summarized (or a callable ``(done, total)``). A task
    whose worker dies is run again on another worker by the scheduler; the
    report does not change.
    """
    from distributed import as_completed

    from . import _stepscope

    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', not {on_error!r}")
    files = expand(paths, storage_options)
    run = uuid.uuid4().hex[:8]
    futures = {
        client.submit(summarize_file, f, salvage=salvage, top=top, on_error=on_error,
                      storage_options=storage_options, key=f"stepscope-summarize-{run}-{i}", retries=0): i
        for i, f in enumerate(files)
    }
    blobs = [None] * len(files)
    done = 0
    try:
        for future in as_completed(futures):
            blobs[futures[future]] = future.result()  # a task's TraceError is raised here
            done += 1
            _report_progress(progress, done, len(files))
    except BaseException:
        client.cancel(list(futures))
        raise
    native = _stepscope.merge_summaries(blobs, [f + SUMMARY_SUFFIX for f in files],
                                        [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike))
                                                                else paths)])
    raise_for(native)
    warn_all(native.warnings)
    return Report(native)


def _report_progress(progress, done, total):
    if callable(progress):
        progress(done, total)
    elif progress:
        end = "\n" if done == total else ""
        print(f"\rstepscope: summarized {done}/{total} ranks", end=end, file=sys.stderr, flush=True)
