#include "analysis/hta_compat/temporal_breakdown.h"

#include <algorithm>

#include "analysis/hta_compat/hta_intervals.h"

namespace stepscope::analysis::hta {
namespace {

HtaTemporalRow breakdown(const HtaRankFrame& frame, const std::vector<HtaEvent>& events) {
  HtaTemporalRow row;
  row.rank = frame.rank;
  std::vector<uint32_t> kernels, compute;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!events[i].on_stream()) continue;
    kernels.push_back(i);
    if (events[i].type == HtaKernelType::kComputation) compute.push_back(i);
  }
  if (kernels.empty()) {
    row.no_gpu_events = true;
    return row;
  }
  const auto all = merge_hta_intervals(events, kernels);
  row.kernel_time_us = all.back().end - all.front().start;
  row.idle_time_us = row.kernel_time_us - total_length(all);
  row.compute_time_us = total_length(merge_hta_intervals(events, compute));
  row.non_compute_time_us = row.kernel_time_us - row.compute_time_us - row.idle_time_us;
  if (row.kernel_time_us != 0) {
    row.idle_time_pctg = round_np(100 * row.idle_time_us / row.kernel_time_us, 2);
    row.compute_time_pctg = round_np(100 * row.compute_time_us / row.kernel_time_us, 2);
    row.non_compute_time_pctg = round_np(100 * row.non_compute_time_us / row.kernel_time_us, 2);
  }
  return row;
}

bool passes_hta_assertion(const HtaTemporalRow& r) {
  return r.idle_time_us <= r.kernel_time_us && r.compute_time_us <= r.kernel_time_us && r.non_compute_time_us >= 0;
}

}  // namespace

HtaTemporalOutcome hta_temporal_breakdown(const HtaRankFrame& frame) {
  HtaTemporalOutcome out;
  out.row = breakdown(frame, frame.events);
  if (out.row.no_gpu_events) {
    out.hta_error = kHtaNoKernelsError;
    return out;
  }
  if (passes_hta_assertion(out.row)) return out;

  out.hta_error = kHtaAssertionError;
  std::vector<HtaEvent> clamped = frame.events;
  int64_t n = 0;
  for (auto& e : clamped) {
    if (e.on_stream() && e.dur < 0) {
      e.dur = 0;
      ++n;
    }
  }
  out.row = breakdown(frame, clamped);
  out.row.clamped_negative_durations = n;
  return out;
}

}  // namespace stepscope::analysis::hta
