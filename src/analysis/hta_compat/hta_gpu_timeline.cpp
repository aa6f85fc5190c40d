#include "analysis/hta_compat/hta_gpu_timeline.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/kernel_class.h"

namespace stepscope::analysis::hta {
namespace {

KernelClass class_of(HtaKernelType t) {
  switch (t) {
    case HtaKernelType::kComputation: return KernelClass::kComputation;
    case HtaKernelType::kCommunication: return KernelClass::kCommunication;
    case HtaKernelType::kMemory: return KernelClass::kMemory;
    case HtaKernelType::kOther: return KernelClass::kOther;
  }
  return KernelClass::kOther;
}

// µs on HTA's aligned clock -> ns on the trace clock. HTA's starts are whole
// µs; durations can keep a fraction when nothing was rounded.
int64_t to_ns(double aligned_us, int64_t origin_us) {
  return std::llround((aligned_us + static_cast<double>(origin_us)) * 1000.0);
}

}  // namespace

GpuTimeline build_hta_gpu_timeline(const trace::EventStore& store, const AnalysisOptions& /*options*/) {
  const HtaFrames frames = build_hta_frames({&store});
  GpuTimeline t;
  if (frames.ranks.empty()) return t;
  const HtaRankFrame& frame = frames.ranks.front();

  std::unordered_map<int64_t, const HtaEvent*> host_by_index;
  for (const auto& e : frame.events)
    if (!e.gpu_like) host_by_index.emplace(e.index, &e);

  std::vector<bool> listed(store.events.size(), false);
  for (const auto& e : frame.events) {
    const trace::EventKind kind = store.events.kind[e.row];
    if (!e.on_stream() || !trace::is_gpu_work(kind) || listed[e.row]) continue;
    listed[e.row] = true;
    if (e.dur < 0) {
      ++t.dropped_negative;
      continue;
    }
    GpuActivity a;
    a.start_ns = to_ns(e.ts, frames.origin_us);
    a.end_ns = a.start_ns + std::llround(e.dur * 1000.0);
    a.row = e.row;
    a.name = e.name;
    a.kind = kind;
    a.cls = class_of(e.type);
    a.family = a.cls == KernelClass::kComputation ? classify_kernel(store.name_of(e.row), kind).family
                                                  : KernelFamily::kNotCompute;
    auto launch = host_by_index.find(e.index_correlation);
    if (launch != host_by_index.end()) {
      const HtaEvent& l = *launch->second;
      a.launch_row = l.row;
      a.launch_start_ns = to_ns(l.ts, frames.origin_us);
      a.launch_end_ns = a.launch_start_ns + std::llround(std::max(l.dur, 0.0) * 1000.0);
    }
    t.activities.push_back(a);
  }
  finalize_gpu_timeline(store, t);
  return t;
}

}  // namespace stepscope::analysis::hta
