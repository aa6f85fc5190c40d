"""Times Holistic Trace Analysis on one trace folder, for comparison with
`stepscope analyze` (bench/run_ingest_bench.sh runs it once per folder, in
its own process, as HTA's users do).

    python bench/hta_time.py FOLDER

Prints one JSON line: seconds to import hta, to build TraceAnalysis (parse
every rank), to run get_temporal_breakdown, and in all. The folder must hold
only trace files (HTA takes every .json/.json.gz it finds as a rank).
"""
import json
import sys
import time

t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis  # noqa: E402

t1 = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
t2 = time.perf_counter()
breakdown = analysis.get_temporal_breakdown(visualize=False)
t3 = time.perf_counter()
print(
    json.dumps(
        {
            "folder": sys.argv[1],
            "ranks": int(len(breakdown)),
            "import_s": round(t1 - t0, 3),
            "load_s": round(t2 - t1, 3),
            "temporal_breakdown_s": round(t3 - t2, 3),
            "total_s": round(t3 - t0, 3),
        }
    )
)
