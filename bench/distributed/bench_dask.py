"""Issue #32 item 4: stepscope.distributed on this machine's Dask cluster.

For each set size (synthetic ranks written by stepscope-gen-trace), starts a
scheduler and WORKERS worker processes on 127.0.0.1 (one thread each), runs
stepscope.distributed.analyze over the set and records the wall time, each
worker's peak RSS (VmHWM, read from /proc before it stops) and the client's.
The baseline, in the same run: one process summarizing every rank in turn
(the single-process throughput) and the merge alone.

    PYTHONPATH=build-dev/python python3 bench/distributed/bench_dask.py \\
        --gen build-dev/stepscope-gen-trace --ranks 64,256,1024 --workers 2 --out bench_dask.json
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def start_cluster(tmp, workers):
    sched_file = os.path.join(tmp, "scheduler.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    quiet = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--scheduler-file", sched_file, "--no-dashboard"], **quiet)
    while not os.path.exists(sched_file):
        time.sleep(0.1)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sched_file,
                               "--nthreads", "1", "--nworkers", "1", "--no-nanny", "--no-dashboard"], **quiet)
             for _ in range(workers)]
    return sched_file, scheduler, procs


def stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", required=True, help="stepscope-gen-trace")
    ap.add_argument("--ranks", default="64,256,1024")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    from distributed import Client

    import stepscope
    from stepscope import _stepscope

    rows = []
    for n in [int(x) for x in args.ranks.split(",")]:
        tmp = tempfile.mkdtemp(prefix=f"stepscope-bench-dask-{n}-")
        try:
            traces = os.path.join(tmp, "traces")
            subprocess.run([args.gen, "--out", traces, "--ranks", str(n), "--layers", str(args.layers),
                            "--steps", str(args.steps), "--plain"], check=True, stdout=subprocess.DEVNULL)
            files = sorted(os.path.join(traces, f) for f in os.listdir(traces))
            total = sum(os.path.getsize(f) for f in files)

            # Baseline: one process, every rank in turn, then the merge.
            t0 = time.perf_counter()
            blobs = []
            for f in files:
                ok, error, _, data = _stepscope.summarize([f], member_of_set=True)
                assert ok, error
                blobs.append(data)
            t1 = time.perf_counter()
            native = _stepscope.merge_summaries(blobs, [f + ".stepscope-summary" for f in files], [traces])
            assert native.ok, native.error
            native.json()
            t2 = time.perf_counter()
            summary_bytes = sum(len(b) for b in blobs)
            del blobs, native

            sched_file, scheduler, workers = start_cluster(tmp, args.workers)
            with Client(scheduler_file=sched_file, timeout=60) as client:
                client.wait_for_workers(args.workers, timeout=60)
                t3 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    report = stepscope.distributed.analyze(traces, client)
                    report.to_json()
                t4 = time.perf_counter()
                hwm = [vm_hwm_kib(p.pid) for p in workers]
            stop([*workers, scheduler])
            row = {
                "ranks": n, "workers": args.workers, "trace_bytes": total, "summary_bytes": summary_bytes,
                "single_process_summarize_s": round(t1 - t0, 3),
                "single_process_mb_per_s": round(total / 1e6 / (t1 - t0), 1),
                "merge_s": round(t2 - t1, 3),
                "dask_wall_s": round(t4 - t3, 3),
                "dask_mb_per_s_per_worker": round(total / 1e6 / (t4 - t3) / args.workers, 1),
                "worker_peak_rss_mib": [round(k / 1024, 1) for k in hwm],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": f"{os.cpu_count()} cores",
           "client_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), "rows": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
