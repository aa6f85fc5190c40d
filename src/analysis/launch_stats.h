// How each unit of GPU work was launched: the runtime call's CPU time, the
// GPU time, and the delays between them (HTA's CUDA kernel launch
// statistics, which include memcpy/memset by default), summarised with
// outlier counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/distribution.h"
#include "analysis/gpu_timeline.h"

namespace stepscope::analysis {

struct LaunchRecord {
  std::string name;              // kernel / memcpy / memset name
  int32_t stream = -1;           // stream id
  int64_t launch_start_ns = 0;   // runtime call start, ns
  int64_t cpu_duration_ns = 0;   // runtime call duration, ns
  int64_t gpu_duration_ns = 0;   // GPU duration, ns
  int64_t launch_delay_ns = 0;   // GPU start - runtime call end, ns
  int64_t start_latency_ns = 0;  // GPU start - runtime call start, ns
};

struct LaunchStats {
  int64_t launches = 0;             // GPU activities (kernels, memcpy, memset) with a matched runtime call
  int64_t unmatched_kernels = 0;    // GPU activities (kernels, memcpy, memset) without a matched runtime call; not in the summaries
  Distribution cpu_duration_us;     // runtime call duration per launch, µs
  Distribution gpu_duration_us;     // GPU duration per launch, µs
  Distribution launch_delay_us;     // GPU start - runtime call end (HTA's launch_delay), µs; negative when the GPU started before the call returned
  Distribution start_latency_us;    // GPU start - runtime call start, µs
  int64_t launch_delay_threshold_ns = 0;  // options.launch_delay_outlier_ns used, ns
  int64_t cpu_duration_threshold_ns = 0;  // options.cpu_launch_outlier_ns used, ns
  int64_t launch_delay_outliers = 0;  // launches with launch delay > launch_delay_threshold_ns
  int64_t cpu_duration_outliers = 0;  // launches with runtime call duration > cpu_duration_threshold_ns
  int64_t negative_launch_delays = 0; // launches whose GPU work started before the runtime call ended
  std::vector<LaunchRecord> worst_launch_delays;  // up to options.worst_launches, largest launch delay first
};

LaunchStats analyze_launches(const trace::EventStore& store, const GpuTimeline& timeline,
                             const AnalysisOptions& options);

}  // namespace stepscope::analysis
