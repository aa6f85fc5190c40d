"""Which Dask worker may read which trace (``stepscope.distributed.analyze(where=...)``).

Traces written to a node's local disk can only be read on that node, so a
rank's task is held to the workers named for its file (Dask's ``workers=``
restriction, without ``allow_other_workers``). Dask itself never fails such
a task: with no worker left to match it waits for one forever. Hence two
checks here: before the run, every file's target must be a worker (address
or name) or a host the scheduler knows; during it, a watcher fails the run, naming the file and
the target, once a target has had no worker for ``lost_after_s`` seconds. A
name or an address holds a task to that worker process; a host, to any
worker on it (one restarted there within ``lost_after_s`` takes the tasks
over).
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


def _workers(client):
    return client.scheduler_info()["workers"]


def present(client):
    """What a submitted restriction can match today: each worker's address and host."""
    out = set()
    for address, w in _workers(client).items():
        out.update((address, w.get("host")))
    out.discard(None)
    return out


def resolve(client, files, targets):
    """Per file, the restriction to submit: a worker's address for a target
    that is its address or its name, a host as given. Names are turned into
    addresses here because Dask takes a string it cannot parse as an address
    for a host: a worker named 0 (LocalCluster's names) held as "0" would
    wait forever. Raises TraceError naming the first file whose target is
    none of these."""
    workers = _workers(client)
    by_name = {str(w.get("name")): a for a, w in workers.items()}
    hosts = {w.get("host") for w in workers.values()}
    out = []
    for f, t in zip(files, targets):
        if t is None or t in workers or t in hosts:
            out.append(t)
        elif t in by_name:
            out.append(by_name[t])
        else:
            known = sorted({*workers, *by_name, *(h for h in hosts if h)})
            raise TraceError(f"{f}: no worker is {t!r} (where=): the scheduler knows "
                             f"{', '.join(known) or 'no worker'}", f)
    return out


class TargetWatch:
    """Cancels a run's restricted tasks once their target has had no worker
    for ``lost_after_s`` seconds; ``error`` then says which file and target."""

    def __init__(self, client, futures, files, held, asked, lost_after_s, every_s=1.0):
        """``held``: the restrictions submitted (resolve); ``asked``: the targets as given, for messages."""
        self.client, self.lost_after_s, self.every_s = client, lost_after_s, every_s
        self.pending = [(fut, f, t) for fut, f, t in zip(futures, files, held) if t is not None]
        self.asked = dict(zip(held, asked))
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
                now = present(self.client)
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
                said = self.asked.get(lost[0], lost[0])
                seen = "" if said == lost[0] else f" ({lost[0]})"
                self.error = TraceError(f"{f}: no worker has been {said!r}{seen} for {self.lost_after_s:g} s "
                                        f"(where=); {len(cut)} rank(s) held to it were not read", f)
                self.client.cancel([p[0] for p in cut])
                return
