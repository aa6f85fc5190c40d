"""Which Dask worker may read which trace (``stepscope.distributed.analyze(where=...)``).

Traces written to a node's local disk can only be read on that node, so a
rank's task is held to the workers named for its file (Dask's ``workers=``
restriction, without ``allow_other_workers``). Dask itself never fails such
a task: with no worker left to match it waits for one forever. Hence two
checks here: before the run, every file's target must be served by a worker
the scheduler knows; during it, a watcher fails the run, naming the file and
the target, once a target has had no worker for ``lost_after_s`` seconds (a
restarted worker within that time takes the tasks over).
"""

import threading
import time

from .errors import TraceError


def targets_of(files, where):
    """Per file, the worker it must run on (None: any): ``where`` is a callable
    path -> target or a mapping path -> target (missing paths: any worker)."""
    if where is None:
        return [None] * len(files)
    pick = where if callable(where) else (lambda f: where.get(f))
    out = []
    for f in files:
        t = pick(f)
        if t is not None and not isinstance(t, str):
            raise TypeError(f"where: the target of {f} must be a str (a worker's address, name or host), "
                            f"got {type(t).__name__}")
        out.append(t or None)
    return out


def served(client):
    """What a ``workers=`` restriction can name today: each worker's address, name and host."""
    names = set()
    for address, w in client.scheduler_info()["workers"].items():
        names.update((address, str(w.get("name")), w.get("host")))
    names.discard(None)
    return names


def check_served(client, files, targets):
    """Raises TraceError naming the first file whose target no worker serves."""
    now = served(client)
    for f, t in zip(files, targets):
        if t is not None and t not in now:
            raise TraceError(f"{f}: no worker is {t!r} (where=): the scheduler knows "
                             f"{', '.join(sorted(now)) or 'no worker'}", f)


class TargetWatch:
    """Cancels a run's restricted tasks once their target has had no worker
    for ``lost_after_s`` seconds; ``error`` then says which file and target."""

    def __init__(self, client, futures, files, targets, lost_after_s, every_s=1.0):
        self.client, self.lost_after_s, self.every_s = client, lost_after_s, every_s
        self.pending = [(fut, f, t) for fut, f, t in zip(futures, files, targets) if t is not None]
        self.error = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stepscope-target-watch", daemon=True)

    def __enter__(self):
        if self.pending:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self):
        missing_since = {}
        while not self._stop.wait(self.every_s):
            self.pending = [p for p in self.pending if not p[0].done()]
            if not self.pending:
                return
            try:
                now = served(self.client)
            except Exception:  # noqa: BLE001 - the scheduler unreachable: the run itself will say so
                continue
            clock = time.monotonic()
            for _, _, t in self.pending:
                if t in now:
                    missing_since.pop(t, None)
                else:
                    missing_since.setdefault(t, clock)
            lost = [t for t, since in missing_since.items() if clock - since >= self.lost_after_s]
            if lost:
                cut = [p for p in self.pending if p[2] == lost[0]]
                f = cut[0][1]
                self.error = TraceError(f"{f}: no worker has been {lost[0]!r} for {self.lost_after_s:g} s "
                                        f"(where=); {len(cut)} rank(s) held to it were not read", f)
                self.client.cancel([p[0] for p in cut])
                return
