// How much communication is hidden behind computation on one rank (HTA's
// communication-computation overlap).
#pragma once

#include <cstdint>
#include <optional>

#include "analysis/gpu_timeline.h"

namespace stepscope::analysis {

struct CommOverlap {
  int64_t communication_time_ns = 0;  // union of communication-kernel intervals, ns
  int64_t computation_time_ns = 0;    // union of computation-kernel intervals, ns
  int64_t overlapped_time_ns = 0;     // length of (union comm) ∩ (union compute), ns
  // 100 * overlapped / communication, %; nullopt when the rank has no communication.
  std::optional<double> overlap_pct;
};

CommOverlap analyze_comm_overlap(const GpuTimeline& timeline);

}  // namespace stepscope::analysis
