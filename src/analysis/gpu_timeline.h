// The view every GPU analysis reads: one row per unit of GPU work (kernel,
// memcpy, memset) with its interval, stream, class and launch, built once per
// rank. Analyses never re-derive these from the store, so a compatibility
// builder (HTA's rounding and filters) can supply a different view and every
// analysis follows it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/kernel_class.h"
#include "trace/event_store.h"

namespace stepscope::analysis {

constexpr int64_t kNoLaunch = INT64_MIN;  // launch_start_ns when no runtime call matched

// One unit of GPU work.
struct GpuActivity {
  int64_t start_ns = 0;           // GPU start, ns (trace clock)
  int64_t end_ns = 0;             // GPU end = start + duration, ns
  int64_t launch_start_ns = kNoLaunch;  // start of the runtime call that launched it, ns; kNoLaunch if unmatched
  int64_t launch_end_ns = kNoLaunch;    // end of that runtime call, ns; kNoLaunch if unmatched
  uint32_t row = 0;               // event row in the store (for name and args)
  uint32_t launch_row = trace::EventStore::kNoRow;  // runtime call row in the store, or kNoRow
  trace::StringId name = 0;       // interned kernel / memcpy name
  uint32_t lane = 0;              // index into GpuTimeline::lanes (device, stream)
  trace::EventKind kind = trace::EventKind::kKernel;  // kKernel, kMemcpy or kMemset
  KernelClass cls = KernelClass::kComputation;
  KernelFamily family = KernelFamily::kOther;

  int64_t duration_ns() const { return end_ns - start_ns; }
  bool has_launch() const { return launch_start_ns != kNoLaunch; }
};

// One GPU queue: a stream on a device.
struct Lane {
  int32_t device = -1;  // device ordinal (args.device, else the GPU row's pid)
  int32_t stream = -1;  // stream id
};

struct GpuTimeline {
  std::vector<GpuActivity> activities;  // sorted by (start_ns, end_ns, row)
  std::vector<Lane> lanes;              // sorted by (device, stream); GpuActivity::lane indexes it
  int64_t dropped_negative = 0;         // activities skipped because their duration was negative
  // The store's meta.unrecorded: [start, end) ns between windows of one
  // process read as one rank; spans leave it out (nothing was recorded).
  std::vector<std::pair<int64_t, int64_t>> unrecorded;
};

// ns of [from, to) that fall in the timeline's unrecorded intervals.
int64_t unrecorded_within(const GpuTimeline& timeline, int64_t from, int64_t to);

// Exact view: every gpu_rows entry of the store, times in ns as imported,
// classified by classify_kernel, launch from launch_of_gpu.
GpuTimeline build_exact_gpu_timeline(const trace::EventStore& store, const AnalysisOptions& options);

// options.timeline_builder if set, otherwise build_exact_gpu_timeline.
GpuTimeline build_gpu_timeline(const trace::EventStore& store, const AnalysisOptions& options);

// Shared last step of every builder: sorts `activities` and fills `lanes` and
// each GpuActivity::lane from the store's stream/device of its `row`. A
// builder only has to fill the other fields.
void finalize_gpu_timeline(const trace::EventStore& store, GpuTimeline& timeline);

}  // namespace stepscope::analysis
