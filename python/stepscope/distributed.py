"""``stepscope.distributed``: a trace set's analysis spread over a Dask cluster.

Each rank's trace is summarized on a worker (``stepscope summarize``: read and
analysed where it lies; only the summary, ~0.02% of the trace, travels back)
and the summaries are merged into the report ``stepscope merge`` gives
(docs/distributed.md). Paths go through fsspec, so a shared folder,
``s3://`` or ``gs://`` work alike: a worker opens the files it is given.

The merge reproduces ``analyze``'s report, its diagnosis included, less what
needs every rank's step graph: the combined saving of the reported findings
(``Report.combined_saving_us`` raises), load_imbalance's replayed saving (its
bound instead) and the job replay (docs/distributed.md, "What the merge gives
today").
"""

import os
import shutil
import sys
import tempfile
import uuid

from . import _locality
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


def summarize_file(path, *, salvage=False, top=10, on_error="fail", storage_options=None, ranks_in_set=0):
    """One rank's summary bytes, made where this runs (a Dask worker).

    ``ranks_in_set``: how many ranks the set has (the diagnosis of a trace
    that does not record its world size depends on it; 0: not known).

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
            [local], member_of_set=True, salvage=salvage, top=top, display_path=path if scratch else "",
            ranks_in_set=ranks_in_set)
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


def analyze(paths, client, *, salvage=False, top=10, on_error="fail", progress=False, storage_options=None,
            where=None, lost_after_s=60.0):
    """The report of a trace set, its ranks summarized on the workers of ``client``.

    ``paths``: trace files, folders or globs (one file per rank), local to
    the workers (a shared file system) or fsspec URLs. ``client``: a
    ``dask.distributed.Client``. ``on_error``: ``"fail"`` raises
    :class:`TraceError` naming the first file that cannot be read; ``"skip"``
    leaves it out and the report names it in its warnings. ``progress``: a line
    on stderr as ranks are summarized (or a callable ``(done, total)``). A task
    whose worker dies is run again on another worker by the scheduler; the
    report does not change.

    ``where``: for traces on a node's own disk, the worker each file must be
    read on — a callable ``path -> target`` or a mapping ``{path: target}``,
    a target being a worker's address, its ``--name`` or its host as the
    scheduler lists it (``client.scheduler_info()``); None or a missing path:
    any worker. A target no worker serves is a :class:`TraceError` before
    anything runs; one whose worker (address, name) or whose host's last
    worker is gone for ``lost_after_s`` seconds fails the run, naming the
    file and the target (Dask alone would wait for such a worker forever).
    """
    from distributed import as_completed

    from . import _stepscope

    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', not {on_error!r}")
    files = expand(paths, storage_options)
    asked = _locality.targets_of(files, where)
    targets = _locality.resolve(client, files, asked) if where is not None else asked
    run = uuid.uuid4().hex[:8]
    # One batch of tasks per target (client.map; one for all without `where`),
    # results gathered as they finish, several at a time.
    futures = [None] * len(files)
    for target in dict.fromkeys(targets):
        chosen = [i for i, t in enumerate(targets) if t == target]
        placed = client.map(summarize_file, [files[i] for i in chosen], salvage=salvage, top=top, on_error=on_error,
                            storage_options=storage_options, ranks_in_set=len(files),
                            key=[f"stepscope-summarize-{run}-{i}" for i in chosen], retries=0,
                            workers=None if target is None else [target], allow_other_workers=False)
        for i, f in zip(chosen, placed):
            futures[i] = f
    index = {f.key: i for i, f in enumerate(futures)}
    blobs = [None] * len(files)
    done = 0
    try:
        with _locality.TargetWatch(client, futures, files, targets, asked, lost_after_s) as watch:
            for batch in as_completed(futures, with_results=True, raise_errors=True).batches():
                for future, data in _results_of(batch, watch):  # a task's TraceError is raised here
                    blobs[index[future.key]] = data
                    done += 1
                _report_progress(progress, done, len(files))
    except BaseException:
        client.cancel(futures)
        raise
    native = _stepscope.merge_summaries(blobs, [f + SUMMARY_SUFFIX for f in files],
                                        [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike))
                                                                else paths)])
    raise_for(native)
    warn_all(native.warnings)
    return Report(native)


def _results_of(batch, watch=None):
    """The (future, result) pairs of an ``as_completed(..., with_results=True)``
    batch, raising the error of a task that failed. ``raise_errors=True``
    raises only for the first future of a batch: distributed's ``next_batch``
    takes the rest straight from its queue, a failed task's result being its
    (type, exception, traceback) triple (seen in CI: the triple reached the
    merge as a summary). A task cancelled by ``watch`` (its worker gone)
    raises the watch's error."""
    for future, data in batch:
        if future.status == "error":
            _, exc, tb = data
            raise exc.with_traceback(tb)
        if future.status == "cancelled":
            raise (watch.error if watch is not None and watch.error is not None
                   else TraceError(f"the summary task {future.key} was cancelled", ""))
        yield future, data


def _report_progress(progress, done, total):
    if callable(progress):
        progress(done, total)
    elif progress:
        end = "\n" if done == total else ""
        print(f"\rstepscope: summarized {done}/{total} ranks", end=end, file=sys.stderr, flush=True)


def cli_main(argv):
    """``stepscope analyze --dask ADDRESS INPUT...``: the CLI form of :func:`analyze`; returns the exit status."""
    import argparse

    from .errors import Error

    parser = argparse.ArgumentParser(
        prog="stepscope analyze --dask",
        description="Summarize each rank on the workers of a Dask cluster and merge the summaries "
                    "(docs/distributed.md)")
    parser.add_argument("inputs", nargs="+", help="trace files, folders or globs (local to the workers, or fsspec URLs)")
    parser.add_argument("--dask", required=True, metavar="ADDRESS",
                        help="the scheduler, e.g. tcp://scheduler:8786, or a scheduler file (JSON)")
    parser.add_argument("--json", metavar="FILE", help="write the JSON report to FILE ('-' for stdout)")
    parser.add_argument("--html", metavar="FILE", help="write the HTML report to FILE")
    parser.add_argument("--salvage", action="store_true",
                        help="as analyze --salvage; a rank that still cannot be read is left out and named")
    parser.add_argument("--top", type=int, default=10, help="kernels listed per type (default 10)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no terminal report")
    parser.add_argument("--where", metavar="REGEX",
                        help="traces on nodes' own disks: each file is read on the worker (address, name or host) "
                             "that REGEX's first group (or whole match) finds in its path, e.g. '/nodes/([^/]+)/'; "
                             "files it does not match go to any worker")
    args = parser.parse_args(argv)
    where = None
    if args.where:
        import re

        try:
            pattern = re.compile(args.where)
        except re.error as e:
            print(f"stepscope: error: --where: {e}", file=sys.stderr)
            return 2

        def where(path):
            m = pattern.search(path)
            return None if m is None else (m.group(1) if pattern.groups else m.group(0))
    try:
        from distributed import Client
    except ImportError:
        print("stepscope: error: --dask needs dask.distributed (pip install 'stepscope[dask]')", file=sys.stderr)
        return 2
    import warnings

    try:
        kwargs = {"scheduler_file": args.dask} if args.dask.endswith(".json") else {"address": args.dask}
        with Client(timeout=60, **kwargs) as client:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                report = analyze(args.inputs, client, salvage=args.salvage, top=args.top,
                                 on_error="skip" if args.salvage else "fail", progress=not args.quiet, where=where)
    except Error as e:
        print(f"stepscope: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"stepscope: error: {args.dask}: cannot reach the Dask scheduler: {e}", file=sys.stderr)
        return 2
    for w in caught:
        print(f"stepscope: warning: {w.message}", file=sys.stderr)
    if args.json:
        text = report.to_json(indent=1) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"stepscope: wrote {args.json}", file=sys.stderr)
    if args.html:
        report.to_html(args.html)
        print(f"stepscope: wrote {args.html}", file=sys.stderr)
    if not args.quiet and args.json != "-":
        sys.stdout.write(report.to_text(args.top))
    return 0
