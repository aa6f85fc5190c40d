#include "analysis/hta_compat/run_hta_compat.h"

#include <algorithm>

#include "analysis/hta_compat/comm_comp_overlap.h"
#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/idle_time_breakdown.h"
#include "analysis/hta_compat/kernel_breakdown_top.h"
#include "analysis/hta_compat/kernel_type_breakdown.h"
#include "analysis/hta_compat/launch_stats.h"
#include "analysis/hta_compat/memory_bw_summary.h"
#include "analysis/hta_compat/queue_length_summary.h"
#include "analysis/hta_compat/temporal_breakdown.h"

namespace stepscope::analysis::hta {
namespace {

HtaRankResult analyse_rank(const HtaRankFrame& frame, HtaTypeSums& type_sums) {
  HtaRankResult r;
  r.rank = frame.rank;
  r.source_path = frame.store->source_path;
  r.negative_durations = frame.negative_durations;
  r.no_gpu_events = std::none_of(frame.events.begin(), frame.events.end(), [](const HtaEvent& e) { return e.on_stream(); });

  HtaTemporalOutcome temporal = hta_temporal_breakdown(frame);
  r.temporal_breakdown = temporal.row;
  r.hta_errors.temporal_breakdown = temporal.hta_error;

  r.idle_time_breakdown = hta_idle_time_breakdown(frame);
  if (r.idle_time_breakdown.empty()) r.hta_errors.idle_time_breakdown = kHtaNoIdleRowsError;

  r.comm_comp_overlap = hta_comm_comp_overlap(frame);
  r.launch_stats = hta_launch_stats(frame);

  r.queue_length_summary = hta_queue_length_summary(frame);
  if (r.queue_length_summary.empty()) r.hta_errors.queue_length_summary = kHtaNoneTypeError;

  HtaMemoryBwOutcome bw = hta_memory_bw_summary(frame);
  r.memory_bw_summary = std::move(bw.rows);
  r.no_memory_kernels = !bw.has_memory_kernels;
  if (r.no_memory_kernels) r.hta_errors.memory_bw_summary = kHtaNoneTypeError;

  type_sums = hta_kernel_type_sums(frame);
  r.kernel_type_breakdown = hta_kernel_type_table({type_sums});
  r.kernel_breakdown_top = hta_kernel_breakdown_top(frame);
  return r;
}

}  // namespace

HtaResult run_hta_compat(const std::vector<const trace::EventStore*>& stores, HtaRelease release) {
  HtaFrames frames = build_hta_frames(stores, release);
  HtaResult out;
  out.release = release;
  out.profiler_steps = frames.profiler_steps;
  out.step_filter_applied = frames.step_filter_applied;
  out.notes = frames.notes;

  std::vector<HtaTypeSums> type_sums(frames.ranks.size());
  bool any_idle = false, any_queue = false, any_memory = false;
  for (size_t i = 0; i < frames.ranks.size(); ++i) {
    HtaRankResult r = analyse_rank(frames.ranks[i], type_sums[i]);
    out.ranks.push_back(r.rank);
    // HTA stops the whole temporal table at the first rank that fails.
    if (out.hta_errors.temporal_breakdown.empty()) out.hta_errors.temporal_breakdown = r.hta_errors.temporal_breakdown;
    if (r.temporal_breakdown.clamped_negative_durations > 0)
      out.notes.push_back("rank " + std::to_string(r.rank) + ": " +
                          std::to_string(r.temporal_breakdown.clamped_negative_durations) +
                          " kernels have a negative duration after HTA's µs rounding; HTA's temporal breakdown "
                          "fails (AssertionError), the row shown clamps them to 0");
    if (r.no_gpu_events)
      out.notes.push_back("rank " + std::to_string(r.rank) + ": no GPU activity (no event with args.stream)");
    any_idle |= !r.idle_time_breakdown.empty();
    any_queue |= !r.queue_length_summary.empty();
    any_memory |= !r.no_memory_kernels;

    out.temporal_breakdown.push_back(r.temporal_breakdown);
    out.idle_time_breakdown.insert(out.idle_time_breakdown.end(), r.idle_time_breakdown.begin(),
                                   r.idle_time_breakdown.end());
    out.comm_comp_overlap.push_back(r.comm_comp_overlap);
    out.launch_stats.push_back(r.launch_stats);
    out.queue_length_summary.insert(out.queue_length_summary.end(), r.queue_length_summary.begin(),
                                    r.queue_length_summary.end());
    out.memory_bw_summary.insert(out.memory_bw_summary.end(), r.memory_bw_summary.begin(),
                                 r.memory_bw_summary.end());
    out.kernel_breakdown_top.insert(out.kernel_breakdown_top.end(), r.kernel_breakdown_top.begin(),
                                    r.kernel_breakdown_top.end());
  }
  if (!any_idle) out.hta_errors.idle_time_breakdown = kHtaNoIdleRowsError;
  if (!any_queue) out.hta_errors.queue_length_summary = kHtaNoneTypeError;
  if (!any_memory) out.hta_errors.memory_bw_summary = kHtaNoneTypeError;
  out.kernel_type_breakdown = hta_kernel_type_table(type_sums);
  sort_kernel_top_rows(out.kernel_breakdown_top);
  return out;
}

HtaRankResult run_hta_compat(const trace::EventStore& store, HtaRelease release) {
  HtaFrames frames = build_hta_frames({&store}, release);
  HtaTypeSums sums;
  HtaRankResult r = analyse_rank(frames.ranks.front(), sums);
  r.profiler_steps = frames.profiler_steps;
  return r;
}

}  // namespace stepscope::analysis::hta
