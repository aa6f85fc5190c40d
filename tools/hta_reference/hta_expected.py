"""Runs Holistic Trace Analysis on one trace folder and writes what it
computes, in the layout of ../shared's hta_expected.json files, so that
tests/analysis/hta_compat/hta_conformance_test.cpp can compare
`--compat hta` with it.

    python tools/hta_reference/hta_expected.py FOLDER OUT.json

Every analysis is called with default arguments except `ranks`, which is
every rank of the folder (HTA's default is rank 0 only), and
get_gpu_kernel_breakdown's num_kernels = 5, as in the harness that wrote
../shared's files (docs/hta_compat.md section 7). An analysis that
raises is written as {"error": "<ExceptionType>: <message>"}; a folder HTA
cannot load at all gives {"load_error": ...} and exit status 1.
The folder must hold only trace files: HTA takes every .json/.json.gz as a rank.
"""
import json
import logging
import math
import platform
import sys
import time
import warnings


def records(df):
    """DataFrame rows as dicts, NaN as null, the index as an "index" column."""
    rows = df.reset_index().to_dict("records")
    return [{k: clean(v) for k, v in row.items()} for row in rows]


def clean(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item"):  # numpy scalar
        return clean(v.item())
    return v


def flattened(df):
    """A describe() table with (metric, stat) columns and (rank, ...) index ->
    rows of "rank", ..., "metric/stat" keys. HTA returns None where it has no
    rows: reset_index() then raises, as in the harness behind ../shared."""
    out = []
    for row in df.reset_index().to_dict("records"):
        item = {}
        for col, v in row.items():
            parts = [str(c) for c in (col if isinstance(col, tuple) else (col,)) if str(c)]
            item["/".join(parts)] = clean(v)
        out.append(item)
    return out


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    import hta
    from hta.trace_analysis import TraceAnalysis

    version = getattr(hta, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("HolisticTraceAnalysis")
    import pandas

    result = {
        "produced_by": f"Holistic Trace Analysis {version}, default arguments (num_kernels=5), "
        f"Python {platform.python_version()}, pandas {pandas.__version__}",
        "trace_dir": folder.rstrip("/").split("/")[-1],
    }
    start = time.perf_counter()
    try:
        analysis = TraceAnalysis(trace_dir=folder)
    except Exception as e:  # noqa: BLE001 - any failure of HTA is the answer
        result["load_error"] = f"{type(e).__name__}: {e}"
        json.dump(result, open(out_path, "w"), indent=1)
        return 1
    result["load_seconds"] = round(time.perf_counter() - start, 3)
    ranks = analysis.t.get_ranks()
    result["ranks"] = ranks
    result["profiler_steps"] = [str(int(i)) for i in analysis.t.get_iterations(ranks[0])]

    def run(name, fn):
        try:
            result[name] = fn()
        except Exception as e:  # noqa: BLE001
            result[name] = {"error": f"{type(e).__name__}: {e}"}

    run("temporal_breakdown", lambda: records(analysis.get_temporal_breakdown(visualize=False)))
    run("comm_comp_overlap", lambda: records(analysis.get_comm_comp_overlap(visualize=False)))
    kernels = {}

    def kernel_breakdown():
        kernels["frames"] = analysis.get_gpu_kernel_breakdown(visualize=False, num_kernels=5)
        return records(kernels["frames"][0])

    run("kernel_type_breakdown", kernel_breakdown)
    run("kernel_breakdown_top", lambda: records(kernels["frames"][1]))
    run("idle_time_breakdown", lambda: records(analysis.get_idle_time_breakdown(ranks=ranks, visualize=False)[0]))

    def launch_stats():
        per_rank = analysis.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
        cols = ["cpu_duration", "gpu_duration", "launch_delay"]
        return {str(r): records(df[cols].describe()) for r, df in per_rank.items()}

    run("launch_stats", launch_stats)
    run("queue_length_summary", lambda: flattened(analysis.get_queue_length_summary(ranks=ranks)))
    run("memory_bw_summary", lambda: flattened(analysis.get_memory_bw_summary(ranks=ranks)))
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
