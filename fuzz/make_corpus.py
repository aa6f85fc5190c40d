#!/usr/bin/env python3
"""Rebuilds fuzz/corpus/: small seed inputs cut from the real traces in
../shared (a few events of each category from each trace, numbers kept
exactly as written), plus truncated variants and a few hand-written shapes
the shared traces lack (2021 "stream 7" rows, a bare event array).

    python3 fuzz/make_corpus.py [../shared]

Keeps the corpus small (well under 200 KB): the fuzzer mutates, it does not
need volume."""
import gzip
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent
SHARED = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT.parent.parent / "shared")
OUT = ROOT / "corpus"

SOURCES = [
    "conformance/hta/critical_path_simple_add",
    "conformance/hta/amd_trace",
    "conformance/hta/mtia_trace_single_rank",
    "conformance/hta/ns_resolution_trace",
    "conformance/hta/cpu_only",
    "conformance/hta/nccl_parser_config",
    "conformance/param/dlrm_8rank",
    "traces/h200/gpt_baseline_bf16",
    "traces/h200/ddp_single_rank",
]
PER_CATEGORY = 3
MAX_FILE_BYTES = 12_000


class Raw(str):
    """A number kept as its original text."""


def dump(v):
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(dump(x) for x in v) + "]"
    return str(v)


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f, parse_float=Raw, parse_int=Raw)


def sample(doc):
    """A few events per category, plus the runtime launch of each kept kernel."""
    events = doc.get("traceEvents", [])
    per_cat = {}
    kept = []
    corr_wanted = set()
    for e in events:
        cat = e.get("cat", e.get("ph", "?"))
        if per_cat.get(cat, 0) >= PER_CATEGORY:
            continue
        per_cat[cat] = per_cat.get(cat, 0) + 1
        kept.append(e)
        c = e.get("args", {}).get("correlation")
        if c is not None:
            corr_wanted.add(str(c))
    for e in events:
        if e in kept:
            continue
        c = e.get("args", {}).get("correlation")
        if c is not None and str(c) in corr_wanted:
            kept.append(e)
            corr_wanted.discard(str(c))
    out = {}
    for k, v in doc.items():
        if k == "traceEvents":
            continue
        out[k] = v[:1] if k == "deviceProperties" else v
    # Long kernel names and shape lists make seeds big without making them interesting.
    for e in kept:
        if isinstance(e.get("name"), str) and len(e["name"]) > 120:
            e["name"] = e["name"][:120]
        for k in list(e.get("args", {})):
            if isinstance(e["args"][k], str) and len(e["args"][k]) > 120:
                e["args"][k] = e["args"][k][:120]
    out["traceEvents"] = kept
    return out


def write(name, text):
    data = text if isinstance(text, bytes) else text.encode()
    (OUT / name).write_bytes(data)
    return len(data)


def main():
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} not found")
    OUT.mkdir(exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    total = 0
    for rel in SOURCES:
        folder = SHARED / rel
        trace = sorted(p for p in folder.glob("*.gz"))[0]
        doc = sample(load(trace))
        # Drop events from the end until the seed is small.
        while len(dump(doc)) > MAX_FILE_BYTES and len(doc["traceEvents"]) > 4:
            doc["traceEvents"].pop()
        text = dump(doc)
        stem = rel.split("/")[-1]
        total += write(f"{stem}.json", text)
        # Truncated variants: inside traceEvents, and inside the header.
        total += write(f"{stem}_cut_events.json", text[: len(text) * 2 // 3])
        total += write(f"{stem}_cut_header.json", text[: min(len(text) // 10, 200)])
    # Shapes the shared traces lack.
    total += write("kineto_2021_stream_tid.json", dump({
        "schemaVersion": Raw("1"),
        "traceEvents": [
            {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": Raw("12"), "tid": Raw("34"),
             "ts": Raw("1621401187223005"), "dur": Raw("12"), "args": {"correlation": Raw("7001"), "external id": Raw("50")}},
            {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": Raw("0"), "tid": "stream 7",
             "ts": Raw("1621401187223020"), "dur": Raw("85"),
             "args": {"queued": Raw("0"), "device": Raw("0"), "context": Raw("1"), "stream": Raw("7"), "correlation": Raw("7001")}},
            {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": Raw("0"), "tid": "stream 7",
             "ts": Raw("1621401187223110"), "dur": Raw("3"), "args": {"bytes": Raw("4096")}},
            {"ph": "M", "name": "thread_name", "pid": Raw("0"), "tid": "stream 7", "args": {"name": "stream 7"}},
            {"ph": "s", "id": Raw("7001"), "pid": Raw("12"), "tid": Raw("34"), "ts": Raw("1621401187223005"), "cat": "async_gpu", "name": "launch"},
        ]}))
    total += write("bare_array.json", '[{"ph": "X", "name": "a", "ts": 1.5, "dur": 2, "pid": 1, "tid": 1}, '
                                      '{"ph": "i", "name": "b", "ts": 3, "s": "t", "pid": 1, "tid": 1}]')
    total += write("wrong_types.json", '{"traceEvents": [{"ph": "X", "ts": "abc", "dur": 1}, {"ph": "X", "ts": 1, "dur": {}}, '
                                       '{"ph": "X", "ts": 1, "dur": 1, "pid": []}, {"ph": "X", "ts": 1e300, "dur": 1}, '
                                       '{"ph": "X", "name": "ok", "ts": 2, "dur": 1, "args": {"stream": "0x1f", "correlation": "0x10"}}]}')
    # Chrome B/E pairs (nested, on two threads, one unmatched) and values past
    # the limits of trace/event_limits.h, which the parser skips and counts.
    total += write("begin_end_and_limits.json", '{"traceEvents": [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10}, '
                                                '{"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12, "args": {"External id": 3}}, '
                                                '{"ph": "B", "name": "t2", "pid": 1, "tid": 2, "ts": 13}, {"ph": "E", "pid": 1, "tid": 1, "ts": 15}, '
                                                '{"ph": "E", "pid": 1, "tid": 1, "ts": 20}, {"ph": "E", "pid": 1, "tid": 3, "ts": 21}, '
                                                '{"ph": "X", "name": "end_too_late", "ts": 1400, "dur": 9223372036854000, "pid": 1, "tid": 1}, '
                                                '{"ph": "X", "name": "ProfilerStep#99999999999999999999", "ts": -1, "dur": 1, "pid": 1, "tid": 1}, '
                                                '{"ph": "X", "cat": "gpu_memcpy", "name": "m", "ts": 5, "dur": 1, "pid": 0, "tid": 7, "args": {"bytes": -1}}]}')
    # Python-written shapes and damaged text the reader repairs: a leading
    # byte-order mark, "args": null, NaN/Infinity arguments, a kernel name cut
    # inside a UTF-8 character, ids past INT64_MAX.
    total += write("repairable.json", b'\xef\xbb\xbf{"traceEvents": ['
                   b'{"ph": "X", "cat": "kernel", "name": "void gemm_\xe2\x82", "pid": 0, "tid": 7, "ts": 10, "dur": 5, '
                   b'"args": {"stream": 7, "correlation": 18446744073709551000, "blocks per SM": NaN, "warps per SM": Infinity}}, '
                   b'{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 8, "dur": 1, '
                   b'"args": {"correlation": 18446744073709551000}}, '
                   b'{"ph": "X", "cat": "cpu_op", "name": "aten::\xff", "pid": 1, "tid": 1, "ts": 7, "dur": 3, "args": null}]}')
    # Found by the fuzzer (2026-12-02): a file of whitespace only, longer than
    # the 7-byte chunk the target also reads with, once reported its error at
    # a chunk-dependent offset.
    total += write("whitespace_only.json", "\r" * 70)
    # Found by the fuzzer (2026-12-02, session 9): a record missing a value
    # before its '}' was kept when the next byte in the read buffer was a '}'
    # and rejected when a read ended at the record (its padding).
    total += write("padding_after_malformed_record.json",
                   '{"traceEvents": [{h" p:""X", : "abc", "dur": 1}, {"ph": "X", "ts": 1, "d1, ": }}]}')
    total += write("cupti_range_profiler.json", range_profiler_seed())
    total += write("damaged_records.json", DAMAGED_RECORDS_SEED)
    print(f"wrote {len(list(OUT.iterdir()))} seeds, {total} bytes, to {OUT}")


# Records the resync of --salvage reads past: an unescaped quote in a name,
# stray bytes after a record, two records without a ',' between them, and an
# object inside the damaged record that is no record start.
DAMAGED_RECORDS_SEED = """{
  "schemaVersion": 1,
  "traceEvents": [
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7,
    "ts": 100.5, "dur": 20, "args": {"External id": 1}
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::"odd", "pid": 7, "tid": 7,
    "ts": 130, "dur": 5, "args": {"a": {"b": 1}, "External id": 2}
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
    "ts": 140, "dur": 4, "args": {"External id": 3, "correlation": 9}
  } stray,
  {
    "ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7,
    "ts": 150, "dur": 40, "args": {"correlation": 9, "stream": 7, "device": 0}
  }
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 7, "ts": 200, "dur": 3}
  ]
}
"""


def range_profiler_seed():
    """A CUPTI range-profiler trace (profiler_metrics): counter ranges instead
    of kernels, whose args the reader keeps whatever their keys."""
    return dump({
        "schemaVersion": Raw("1"),
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": Raw("7"), "tid": Raw("7"),
             "ts": Raw("100.500"), "dur": Raw("50"), "args": {"External id": Raw("3")}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": Raw("7"), "tid": Raw("7"),
             "ts": Raw("110"), "dur": Raw("4"), "args": {"External id": Raw("3"), "correlation": Raw("9")}},
            {"ph": "X", "cat": "cuda_profiler_range", "name": "void fft2d_r2c_32x32<float, false, 1u, false>(int, int)",
             "pid": Raw("0"), "tid": Raw("0"), "ts": Raw("100"), "dur": Raw("400"),
             "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": Raw("1000"),
                      "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": Raw("86114304.0"),
                      "dram__bytes_read.sum": Raw("4.096e3"), "l1tex__t_bytes.sum": Raw("77"), "note": "text"}},
        ]})


if __name__ == "__main__":
    main()
