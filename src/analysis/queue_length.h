// Launch queue depth per stream over time: how many activities were launched
// (runtime call started) but not yet finished on the GPU. A deep queue means
// the CPU runs ahead; at the launch-queue limit the launching thread blocks.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/distribution.h"
#include "analysis/gpu_timeline.h"

namespace stepscope::analysis {

struct StreamQueue {
  int32_t device = -1;             // device ordinal
  int32_t stream = -1;             // stream id
  int64_t activities = 0;          // activities with a matched launch on the stream
  int64_t window_start_ns = 0;     // first launch start on the stream, ns
  int64_t window_end_ns = 0;       // last activity end on the stream, ns
  double mean_length = 0;          // time-weighted mean queue length over the window
  int64_t max_length = 0;          // largest queue length reached
  int64_t time_at_limit_ns = 0;    // time with queue length >= queue_limit, ns
  int64_t time_nonempty_ns = 0;    // time with queue length >= 1, ns
  // Queue length just after each change (one sample per launch and per end),
  // unweighted, as HTA's queue_length_summary.
  Distribution samples;
};

struct QueueLengthResult {
  int64_t queue_limit = 0;            // the limit used (options.queue_limit)
  std::vector<StreamQueue> streams;   // streams with at least one launched activity, in lane order
};

QueueLengthResult analyze_queue_length(const GpuTimeline& timeline, const AnalysisOptions& options);

}  // namespace stepscope::analysis
