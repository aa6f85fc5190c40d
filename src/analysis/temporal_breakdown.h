// Where the GPU's wall time went (HTA's temporal breakdown), per rank and per
// step: idle (no activity on any stream), compute (a computation kernel runs),
// non-compute (busy, but only with communication / memory / other work).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "analysis/steps.h"

namespace stepscope::analysis {

// Invariant: idle_time_ns + compute_time_ns + non_compute_time_ns == kernel_time_ns.
struct TemporalBreakdown {
  int64_t activities = 0;             // GPU activities counted
  int64_t start_ns = 0;               // first activity start, ns (0 when none)
  int64_t end_ns = 0;                 // last activity end, ns (0 when none)
  int64_t kernel_time_ns = 0;         // end_ns - start_ns less unrecorded time (gpu_timeline.h): span of GPU activity over all streams, ns
  int64_t busy_time_ns = 0;           // length of the union of all activity intervals, ns
  int64_t idle_time_ns = 0;           // kernel_time_ns - busy_time_ns, ns
  int64_t compute_time_ns = 0;        // length of the union of computation-kernel intervals, ns
  int64_t non_compute_time_ns = 0;    // busy_time_ns - compute_time_ns, ns
  int64_t communication_time_ns = 0;  // union of communication intervals (may overlap compute), ns
  int64_t memory_time_ns = 0;         // union of memcpy/memset intervals (may overlap others), ns
  double idle_pct = 0;                // 100 * idle / kernel_time (0 when kernel_time is 0), %
  double compute_pct = 0;             // 100 * compute / kernel_time, %
  double non_compute_pct = 0;         // 100 * non_compute / kernel_time, %
};

struct StepBreakdown {
  int64_t step = -1;            // N of ProfilerStep#N
  TemporalBreakdown breakdown;  // over the activities attributed to the step (see steps.h)
};

struct TemporalResult {
  TemporalBreakdown rank;             // over every activity of the rank
  std::vector<StepBreakdown> steps;   // one per StepsResult::steps entry, same order
};

// Breakdown over the activities listed (indices into timeline.activities, in
// ascending order).
TemporalBreakdown breakdown_of(const GpuTimeline& timeline, const std::vector<uint32_t>& activities);

// step_of: from step_of_activities (may be empty when there are no steps).
TemporalResult analyze_temporal(const GpuTimeline& timeline, const StepsResult& steps,
                                const std::vector<int32_t>& step_of);

}  // namespace stepscope::analysis
