// Knobs shared by all analyses, with defaults that follow HTA where HTA has
// the same metric. The timeline hook lets a compatibility mode (e.g.
// `--compat hta`) replace how GPU work is read from the store without touching
// any analysis.
#pragma once

#include <cstdint>
#include <functional>

namespace stepscope::trace {
class EventStore;
}

namespace stepscope::analysis {

struct GpuTimeline;
struct AnalysisOptions;

// Builds the GPU timeline the analyses see. Leave empty for the exact builder.
using TimelineBuilder = std::function<GpuTimeline(const trace::EventStore&, const AnalysisOptions&)>;

struct AnalysisOptions {
  // Idle breakdown: a gap shorter than this, whose next activity was already
  // launched when the previous one ended, is "kernel_wait". HTA's
  // consecutive_kernel_delay defaults to 30 and is documented in ns, but HTA
  // 0.6.1 applies it to the trace's µs values, so its results equal 30 µs
  // here (checked against its output on the PARAM traces). ns.
  int64_t kernel_wait_threshold_ns = 30'000;

  // Top kernels: how many names to list per class (the rest are one "others" row).
  int top_kernels = 10;

  // Launch statistics: a launch counts as an outlier above these (HTA's
  // launch_delay_cutoff 100 µs and runtime_cutoff 50 µs). ns.
  int64_t launch_delay_outlier_ns = 100'000;   // GPU start - runtime call end
  int64_t cpu_launch_outlier_ns = 50'000;      // runtime call duration
  int worst_launches = 10;                     // how many worst launch delays to list

  // Queue length: CUDA blocks the launching thread once a stream holds this
  // many pending launches (the default launch queue depth).
  int64_t queue_limit = 1024;

  // Multi-rank: a rank whose mean collective lateness exceeds the median
  // rank's by more than this is a straggler. ns.
  int64_t straggler_lateness_ns = 100'000;

  // Hook: replaces build_exact_gpu_timeline (see gpu_timeline.h). Empty = exact.
  TimelineBuilder timeline_builder;
};

}  // namespace stepscope::analysis
