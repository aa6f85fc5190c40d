// Where each rank's events land in the merged Perfetto trace: the clock shift
// and process-id renumbering shared by the event writer and the stepscope
// annotation tracks (internal to perfetto_*.cpp).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "report/analyze_report.h"
#include "report/trace_event_writer.h"

namespace stepscope::report {

struct RankPlacement {
  int64_t rank = 0;
  int64_t shift_ns = 0;   // added to every ts of the rank: base_time_ns - earliest base over ranks, ns
  bool renumber = false;  // pids are renumbered (ranks share pids)
  std::unordered_map<int32_t, int32_t> pid_map;  // original pid -> written pid, when renumber
  int64_t flow_id_stride = 1;  // flow id written = id * stride + offset (ranks share flow ids)
  int64_t flow_id_offset = 0;

  int32_t pid(int32_t original) const {
    if (!renumber) return original;
    auto it = pid_map.find(original);
    return it == pid_map.end() ? original : it->second;
  }
};

struct TraceLayout {
  int64_t base_time_ns = 0;         // earliest baseTimeNanoseconds over ranks, ns
  std::vector<RankPlacement> ranks;  // same order as AnalyzeReport::stores
  int32_t stepscope_pid = 0;        // the annotation process: above every written pid
  // Index into `ranks` of a rank number; -1 when unknown.
  int64_t index_of_rank(int64_t rank) const;
};

TraceLayout plan_trace_layout(const AnalyzeReport& report);

// Writes the stepscope process (names, tracks, slices, instants); returns the
// number of slice and instant events written (metadata not counted).
uint64_t write_stepscope_tracks(TraceEventWriter& w, const AnalyzeReport& report,
                                const diagnose::Diagnosis& diagnosis, const TraceLayout& layout);

}  // namespace stepscope::report
