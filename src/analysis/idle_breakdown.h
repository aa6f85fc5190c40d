// Why each stream sat idle (HTA's idle time breakdown), exactly in ns. Each
// gap between consecutive activities on a stream is one of:
//   host_wait   - the next activity's runtime call started after the previous
//                 activity ended: the CPU had not launched it yet;
//   kernel_wait - otherwise, the gap is shorter than kernel_wait_threshold_ns:
//                 launch overhead between back-to-back kernels;
//   other       - the rest (launched in time but started late: waits on
//                 events/other streams, or no launch was matched).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/gpu_timeline.h"

namespace stepscope::analysis {

// Invariant: host_wait_ns + kernel_wait_ns + other_ns == idle_ns == span_ns - busy_ns.
struct StreamIdle {
  int32_t device = -1;         // device ordinal
  int32_t stream = -1;         // stream id
  int64_t activities = 0;      // activities on the stream
  int64_t span_ns = 0;         // first start to last end on this stream, less unrecorded time (gpu_timeline.h), ns
  int64_t busy_ns = 0;         // union of the stream's activity intervals, ns
  int64_t idle_ns = 0;         // sum of positive gaps between consecutive activities, ns
  int64_t host_wait_ns = 0;    // gaps classified host_wait, ns
  int64_t kernel_wait_ns = 0;  // gaps classified kernel_wait, ns
  int64_t other_ns = 0;        // gaps classified other, ns
  int64_t host_wait_gaps = 0;  // number of host_wait gaps
  int64_t kernel_wait_gaps = 0;  // number of kernel_wait gaps
  int64_t other_gaps = 0;      // number of other gaps
  double host_wait_ratio = 0;  // host_wait_ns / idle_ns (0 when idle_ns is 0)
  double kernel_wait_ratio = 0;  // kernel_wait_ns / idle_ns
  double other_ratio = 0;      // other_ns / idle_ns
};

struct IdleBreakdownResult {
  int64_t kernel_wait_threshold_ns = 0;  // the threshold used, ns
  std::vector<StreamIdle> streams;       // one per timeline lane, in lane order (device, stream)
};

IdleBreakdownResult analyze_idle(const GpuTimeline& timeline, const AnalysisOptions& options);

}  // namespace stepscope::analysis
