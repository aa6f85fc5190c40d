#include "analysis/rank_analysis.h"

namespace stepscope::analysis {

RankAnalysis analyze_rank(const trace::EventStore& store, const AnalysisOptions& options) {
  RankAnalysis r;
  r.rank = store.rank;
  r.source_path = store.source_path;
  r.base_time_ns = store.meta.base_time_ns;
  r.origin.rank_source = store.rank_source;
  if (!store.meta.devices.empty()) r.origin.device = store.meta.devices.front();
  r.origin.world_size = store.meta.world_size;
  r.origin.events = static_cast<int64_t>(store.events.size());
  r.origin.gpu_rows = static_cast<int64_t>(store.gpu_rows.size());
  r.origin.import = store.stats;
  // The timeline is built once; every GPU analysis reads it.
  const GpuTimeline timeline = build_gpu_timeline(store, options);
  r.gpu_activities = static_cast<int64_t>(timeline.activities.size());
  r.dropped_negative_activities = timeline.dropped_negative;
  r.steps = analyze_steps(store, timeline);
  r.temporal = analyze_temporal(timeline, r.steps, step_of_activities(timeline, r.steps));
  r.kernels = analyze_kernels(store, timeline, options);
  r.idle = analyze_idle(timeline, options);
  r.overlap = analyze_comm_overlap(timeline);
  r.launches = analyze_launches(store, timeline, options);
  r.queues = analyze_queue_length(timeline, options);
  r.copies = analyze_memory_bandwidth(store, timeline);
  r.memory = analyze_memory_timeline(store);
  r.collectives = extract_collectives(store, timeline);
  r.counters = analyze_hardware_counters(store);
  return r;
}

}  // namespace stepscope::analysis
