"""stepscope.distributed on a real Dask cluster: a scheduler and two worker
processes started here on 127.0.0.1 (`dask scheduler` / `dask worker`, not a
LocalCluster in this process). The merged report equals analyze's, the
diagnosis included (less what the merge says it does not make from
summaries: the combined saving, load_imbalance's replay, the job replay); a
worker killed while it holds tasks changes nothing; an unreadable rank is
named or fails the run, as asked; ranks held to a worker (``where=``) run
there, and a run whose held-to worker is gone fails naming the file instead
of waiting forever."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

import stepscope
from stepscope_testing import REPO

try:
    import distributed  # noqa: F401

    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False

GLOO = os.path.join(REPO, "tests", "data", "dist_gloo_cpu")
DIAGNOSIS_KEYS = ("inputs", "read_seconds", "analysis_seconds", "job_replay", "job_critical_path",
                  "primary_bottleneck", "diagnosis")


NOT_FROM_SUMMARIES = "not made from summaries"
REPLAY_FIELDS = ("estimated_saving_us", "estimated_saving_pct", "saving_rank", "saving_basis", "severity")


def comparable(doc):
    """The report less wall times and what needs every rank's step graph
    (tests/summary/summary_fixtures.h: comparable_diagnosis)."""
    doc = {k: v for k, v in doc.items()
           if k not in ("inputs", "read_seconds", "analysis_seconds", "job_replay", "job_critical_path")}
    doc["ranks"] = [dict(r, replay={k: v for k, v in r["replay"].items() if k != "combined_saving_us"})
                    for r in doc["ranks"]]
    d = {k: v for k, v in doc["diagnosis"].items() if not k.startswith("combined_saving")}
    d["detectors"] = [{k: v for k, v in r.items() if k != "seconds"} for r in d["detectors"]]
    d["not_assessed"] = [n for n in d["not_assessed"] if not n["reason"].startswith(NOT_FROM_SUMMARIES)]
    imbalance = []
    for key in ("findings", "minor_findings"):
        imbalance += [{k: v for k, v in f.items() if k not in REPLAY_FIELDS}
                      for f in d[key] if f["detector"] == "load_imbalance"]
        d[key] = [f for f in d[key] if f["detector"] != "load_imbalance"]
    d["load_imbalance"] = imbalance
    doc["diagnosis"] = d
    return doc


def without_diagnosis(doc):
    doc = {k: v for k, v in doc.items() if k not in DIAGNOSIS_KEYS}
    doc["ranks"] = [{k: v for k, v in r.items() if k not in ("attribution", "replay", "critical_path")}
                    for r in doc["ranks"]]
    return doc


@unittest.skipUnless(HAVE_DASK, "dask.distributed is not installed (python/requirements-test.txt)")
class DistributedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from distributed import Client

        cls.tmp = tempfile.mkdtemp(prefix="stepscope-dask-")
        sched_file = os.path.join(cls.tmp, "scheduler.json")
        env = dict(os.environ)
        # The workers import stepscope (and its native module) as this process does.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        common = ["--no-dashboard"]
        cls.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--scheduler-file", sched_file, *common], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not os.path.exists(sched_file) and time.time() < deadline:
            time.sleep(0.1)
        cls.workers = [
            subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sched_file,
                              "--nthreads", "1", "--nworkers", "1", "--name", f"w{i}", "--no-nanny", *common],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for i in range(2)
        ]
        cls.client = Client(scheduler_file=sched_file, timeout=60)
        cls.client.wait_for_workers(2, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        for p in [*cls.workers, cls.scheduler]:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def _analyzed(self, paths, whole=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = json.loads(stepscope.analyze(paths).to_json())
        return comparable(doc) if whole else without_diagnosis(doc)

    def test_report_equals_analyze(self):
        folder = os.path.join(GLOO, "straggler")
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = stepscope.distributed.analyze(folder, self.client, progress=lambda d, n: seen.append((d, n)))
        got = json.loads(report.to_json())
        self.assertEqual(len(got["ranks"]), 8)
        self.assertIsNotNone(got["multi_rank"])
        self.assertEqual(comparable(got), self._analyzed(folder, whole=True))
        self.assertEqual(seen[-1], (9, 9))  # eight ranks and meta.json, which is skipped with analyze's note
        self.assertEqual(got["multi_rank"]["collective_skew"]["stragglers"], [7])
        # The diagnosis, as analyze makes it: the straggler's imbalance first.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analyzed = stepscope.analyze(folder)
        self.assertEqual(report.primary_bottleneck, analyzed.primary_bottleneck)
        self.assertEqual([f.detector for f in report.findings], [f.detector for f in analyzed.findings])
        self.assertGreater(len(report.attribution), 0)
        self.assertGreater(len(report.critical_path), 0)
        # What needs every rank's step graph raises rather than read as zero.
        with self.assertRaises(stepscope.Error):
            report.combined_saving_us

    def test_killed_worker_changes_nothing(self):
        # Two runs' ranks in one set (16 files), so the workers hold tasks when one is killed.
        folders = [os.path.join(GLOO, "straggler"), os.path.join(GLOO, "healthy")]
        want = self._analyzed(folders)
        victim = {}
        stop = threading.Event()

        def kill_the_first_busy_worker():
            # Polls the scheduler from beside the run: the first worker seen
            # holding a task is killed (SIGKILL, no goodbye to the scheduler).
            while not stop.is_set() and not victim:
                busy = {w: tasks for w, tasks in self.client.processing().items() if tasks}
                if busy:
                    address = next(iter(busy))
                    name = self.client.scheduler_info()["workers"][address]["name"]
                    proc = self.workers[int(str(name)[1:])]
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(timeout=30)
                    victim.update(name=name, tasks=len(busy[address]))
                time.sleep(0.002)

        watcher = threading.Thread(target=kill_the_first_busy_worker)
        watcher.start()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = stepscope.distributed.analyze(folders, self.client)
        finally:
            stop.set()
            watcher.join()
        self.assertTrue(victim, "no worker was seen holding a task: nothing was killed mid-run")
        self.assertGreaterEqual(victim["tasks"], 1)
        self.assertEqual(without_diagnosis(json.loads(report.to_json())), want)
        # The killed worker is replaced for the tests that follow.
        i = int(str(victim["name"])[1:])
        sched_file = os.path.join(self.tmp, "scheduler.json")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.workers[i] = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sched_file, "--nthreads", "1",
             "--nworkers", "1", "--name", f"w{i}", "--no-nanny", "--no-dashboard"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client.wait_for_workers(2, timeout=60)

    def test_cli_form(self):
        folder = os.path.join(GLOO, "straggler")
        out = os.path.join(self.tmp, "cli.json")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        run = subprocess.run([sys.executable, "-m", "stepscope._cli", "analyze", "--dask",
                              os.path.join(self.tmp, "scheduler.json"), folder, "--json", out, "-q"],
                             env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(out, encoding="utf-8") as f:
            got = json.load(f)
        self.assertEqual(without_diagnosis(got), self._analyzed(folder))
        bad = subprocess.run([sys.executable, "-m", "stepscope._cli", "analyze", "--dask",
                              os.path.join(self.tmp, "scheduler.json"), os.path.join(self.tmp, "no_such_folder")],
                             env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(bad.returncode, 2)
        self.assertTrue(bad.stderr.startswith("stepscope: error: "), bad.stderr)
        # --where: each rank's file names its node; no worker is "rank3", so the run is refused naming it.
        unserved = subprocess.run([sys.executable, "-m", "stepscope._cli", "analyze", "--dask",
                                   os.path.join(self.tmp, "scheduler.json"), folder, "--where", r"(rank\d+)\.json"],
                                  env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(unserved.returncode, 2, unserved.stderr)
        self.assertIn("'rank0' (where=)", unserved.stderr)

    def _address_of(self, name):
        return next(a for a, w in self.client.scheduler_info()["workers"].items() if str(w["name"]) == name)

    def test_where_holds_each_rank_to_its_worker(self):
        from distributed import get_task_stream

        folder = os.path.join(GLOO, "straggler")
        files = stepscope.distributed.expand(folder)
        # Even ranks on w0 by name, the others on w1 by address.
        w1 = self._address_of("w1")
        where = {f: ("w0" if i % 2 == 0 else w1) for i, f in enumerate(files)}
        with get_task_stream(self.client) as stream, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = stepscope.distributed.analyze(folder, self.client, where=where)
        ran = {t["key"]: t["worker"] for t in stream.data if str(t["key"]).startswith("stepscope-summarize-")}
        self.assertEqual(len(ran), len(files))
        w0 = self._address_of("w0")
        for key, worker in ran.items():
            i = int(str(key).rsplit("-", 1)[1])
            self.assertEqual(worker, w0 if i % 2 == 0 else w1, files[i])
        self.assertEqual(without_diagnosis(json.loads(report.to_json())), self._analyzed(folder))

    def test_where_refuses_a_target_no_worker_serves(self):
        folder = os.path.join(GLOO, "straggler")
        files = stepscope.distributed.expand(folder)
        with self.assertRaises(stepscope.TraceError) as caught:
            stepscope.distributed.analyze(folder, self.client, where=lambda f: "node-17" if f == files[3] else None)
        self.assertEqual(caught.exception.path, files[3])
        self.assertIn("'node-17'", str(caught.exception))

    def test_where_fails_the_run_when_its_worker_is_gone(self):
        # A third worker takes every rank of 16 and is killed while it holds them:
        # the run fails, naming a file and the worker, instead of waiting for it.
        sched_file = os.path.join(self.tmp, "scheduler.json")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        extra = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sched_file, "--nthreads", "1",
             "--nworkers", "1", "--name", "w9", "--no-nanny", "--no-dashboard"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.client.wait_for_workers(3, timeout=60)
            w9 = self._address_of("w9")
            killed = threading.Event()
            stop = threading.Event()

            def kill_w9_once_busy():
                while not stop.is_set() and not killed.is_set():
                    if self.client.processing().get(w9):
                        extra.send_signal(signal.SIGKILL)
                        extra.wait(timeout=30)
                        killed.set()
                    time.sleep(0.002)

            watcher = threading.Thread(target=kill_w9_once_busy)
            watcher.start()
            folders = [os.path.join(GLOO, "straggler"), os.path.join(GLOO, "healthy")]
            outcome = {}

            def run():  # in a thread, so that a run that waits forever fails the test instead of hanging it
                try:
                    stepscope.distributed.analyze(folders, self.client, where=lambda f: "w9", lost_after_s=2)
                except BaseException as e:  # noqa: BLE001 - what it raised is the test's subject
                    outcome["error"] = e

            runner = threading.Thread(target=run, daemon=True)
            runner.start()
            runner.join(timeout=120)
            stop.set()
            watcher.join()
            self.assertFalse(runner.is_alive(), "the run still waits 120 s after its worker was killed")
            self.assertTrue(killed.is_set(), "w9 was never seen holding a task")
            error = outcome.get("error")
            self.assertIsInstance(error, stepscope.TraceError, repr(error))
            self.assertIn("'w9'", str(error))
            self.assertIn(error.path, stepscope.distributed.expand(folders))
        finally:
            if extra.poll() is None:
                extra.kill()
                extra.wait(timeout=30)

    def _set_with_a_damaged_rank(self):
        folder = os.path.join(self.tmp, "damaged_set")
        os.makedirs(folder, exist_ok=True)
        for r in (0, 1):
            shutil.copy(os.path.join(GLOO, "straggler", f"rank{r}.json.gz"), folder)
        bad = os.path.join(folder, "rank2.json.gz")
        with open(os.path.join(GLOO, "straggler", "rank2.json.gz"), "rb") as f:
            data = f.read()
        with open(bad, "wb") as f:
            f.write(data[: len(data) // 2])  # a gzip stream cut in half
        return folder, bad

    def test_unreadable_rank_fails_the_run_by_default(self):
        folder, bad = self._set_with_a_damaged_rank()
        with self.assertRaises(stepscope.TraceError) as caught:
            stepscope.distributed.analyze(folder, self.client)
        self.assertEqual(caught.exception.path, bad)
        self.assertTrue(str(caught.exception).startswith(bad + ": "), str(caught.exception))

    def test_unreadable_rank_is_named_when_skipped(self):
        folder, bad = self._set_with_a_damaged_rank()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = stepscope.distributed.analyze(folder, self.client, on_error="skip")
        doc = json.loads(report.to_json())
        self.assertEqual([r["rank"] for r in doc["ranks"]], [0, 1])
        dropped = [w for w in doc["warnings"] if w.startswith("dropped " + bad + ": ")]
        self.assertEqual(len(dropped), 1, doc["warnings"])
        self.assertTrue(any(str(w.message) == dropped[0] for w in caught))


class ResolveTest(unittest.TestCase):
    """where= targets become the restrictions Dask is given: a name turns into
    its worker's address (Dask would take "0", a LocalCluster worker's name,
    for a host no worker has, and wait forever: seen on HTA's trace_filter
    set), an address or a host stays, anything else is refused naming the file."""

    class _Client:
        def scheduler_info(self):
            return {"workers": {"tcp://10.0.0.7:4001": {"name": 0, "host": "10.0.0.7"},
                                "tcp://10.0.0.8:4001": {"name": "gpu-node-8", "host": "10.0.0.8"}}}

    def test_names_become_addresses_hosts_and_addresses_stay(self):
        from stepscope._locality import resolve

        files = ["a.json", "b.json", "c.json", "d.json", "e.json"]
        got = resolve(self._Client(), files, ["0", "gpu-node-8", "10.0.0.7", "tcp://10.0.0.8:4001", None])
        self.assertEqual(got, ["tcp://10.0.0.7:4001", "tcp://10.0.0.8:4001", "10.0.0.7", "tcp://10.0.0.8:4001", None])
        with self.assertRaises(stepscope.TraceError) as caught:
            resolve(self._Client(), files, [None, None, "gpu-node-9", None, None])
        self.assertEqual(caught.exception.path, "c.json")
        self.assertIn("'gpu-node-9'", str(caught.exception))


class BatchResultsTest(unittest.TestCase):
    """A failed task anywhere in an as_completed batch raises its error, not
    only when it comes first (distributed raises for the first alone)."""

    class _Future:
        def __init__(self, status):
            self.status = status

    def test_an_error_after_the_first_of_a_batch_raises(self):
        from stepscope.distributed import _results_of

        error = stepscope.TraceError("rank2.json.gz: truncated gzip stream", "rank2.json.gz")
        ok, failed = self._Future("finished"), self._Future("error")
        batch = [(ok, b"summary"), (failed, (type(error), error, None))]
        seen = []
        with self.assertRaises(stepscope.TraceError) as caught:
            for future, data in _results_of(batch):
                seen.append(data)
        self.assertIs(caught.exception, error)
        self.assertEqual(seen, [b"summary"])
        self.assertEqual(list(_results_of([(ok, b"a"), (ok, b"b")])), [(ok, b"a"), (ok, b"b")])


if __name__ == "__main__":
    unittest.main()
