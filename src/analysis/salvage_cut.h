// Which steps a truncation (--salvage) may have cut, from the order in which
// Kineto writes a trace (libkineto's ChromeTraceLogger):
//   1. host records, thread by thread, each thread's in start order
//      (cpu_op, user_annotation incl. ProfilerStep#N, python_function, instants);
//   2. device-side records: kernels, copies, memsets and runtime calls, one
//      CUPTI activity buffer after another. Buffers are not written in time
//      order (in the shared H200 traces a second pass over the buffers jumps
//      back from 344 ms to 41 ms of the profile), so a record lost past a cut
//      here can belong to any step;
//   3. gpu_user_annotation ranges, then metadata and the trailer (the
//      "PyTorch Profiler (N)" Trace span, "Iteration Start" and
//      "Record Window End" instants).
// Rule: a cut is harmless to steps only when it came after section 2 ended:
// the store holds a trailer record, or a gpu_user_annotation written after
// the last device record. Any other cut leaves no step provably whole (the
// host section may have lost threads, and the device section of any step may
// be missing), so every step is counted as touched.
#pragma once

#include <cstdint>
#include <string>

#include "trace/event_store.h"

namespace stepscope::analysis {

struct CutEffect {
  bool truncated = false;     // the reader stopped at a cut (kTruncatedInput)
  uint64_t cut_offset = 0;    // uncompressed byte offset of the cut (first logged)
  // Where the cut came: "none" (not truncated), "after_device" (past the
  // device records: steps whole), "device" (inside the device records),
  // "host" (before any device record).
  std::string section = "none";
  bool steps_whole = true;    // false: every step may have lost records
};

CutEffect cut_effect(const trace::EventStore& store);

}  // namespace stepscope::analysis
