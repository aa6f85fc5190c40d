// `stepscope analyze --perfetto FILE`: the trace set written back as one
// Chrome JSON trace that ui.perfetto.dev (and chrome://tracing) loads, with
// stepscope's diagnosis drawn on top of it.
//
// Every stored event is re-emitted with its pid, tid, ts, dur, name, cat and
// the arguments the store kept; GPU work stays on its device (pid) / stream
// (tid) tracks; flows (launch -> kernel arrows) and process / thread names are
// kept. Times are µs with three decimals, written from the integer ns, so they
// equal the source's to the nanosecond. A "stepscope" process holds:
//   - per rank, the step windows with their attribution buckets (args) and
//     the non-compute spans of each step as child slices;
//   - per finding category, one slice per example (what, where, how long)
//     and an instant at its start, with the finding's title, saving and remedy;
//   - per category that owns an attribution bucket (data_pipeline,
//     host_overhead, host_sync, memory_allocator, communication), the spans
//     attributed to it, per rank.
// With several ranks, each rank's clock is shifted onto the earliest
// baseTimeNanoseconds, and process ids (and flow ids) are renumbered when
// ranks reuse them, so every rank keeps its own tracks.
// A path ending in ".gz" is written gzip-compressed.
#pragma once

#include <cstdint>
#include <string>

#include "report/analyze_report.h"
#include "report/atomic_output.h"

namespace stepscope::report {

inline constexpr const char* kStepscopeProcessName = "stepscope";

struct PerfettoResult {
  bool ok = false;
  std::string error;               // one line naming the file, when !ok
  uint64_t trace_events = 0;       // events re-emitted from the stores (X and i)
  uint64_t flow_events = 0;        // flow events re-emitted (s, f, t)
  uint64_t annotation_events = 0;  // stepscope slices and instants
  uint64_t bytes = 0;              // uncompressed JSON written, B
};

// Without report.diagnosis the trace is written without the stepscope process.
// The file appears whole or not at all (AtomicOutput).
PerfettoResult write_perfetto(const AnalyzeReport& report, const std::string& path);
// The same into an output opened earlier (the CLI opens it before reading).
PerfettoResult write_perfetto(const AnalyzeReport& report, AtomicOutput out);

}  // namespace stepscope::report
