// Every per-rank analysis in one struct, computed from one GPU timeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analysis/analysis_options.h"
#include "analysis/collectives.h"
#include "analysis/comm_overlap.h"
#include "analysis/hardware_counters.h"
#include "analysis/idle_breakdown.h"
#include "analysis/kernel_stats.h"
#include "analysis/launch_stats.h"
#include "analysis/memory_bandwidth.h"
#include "analysis/memory_timeline.h"
#include "analysis/queue_length.h"
#include "analysis/steps.h"
#include "analysis/temporal_breakdown.h"
#include "trace/event_store.h"
#include "trace/import_stats.h"

namespace stepscope::analysis {

// What the reports say about where a rank came from, copied from its store so
// that a report needs no store (a rank summary carries this instead).
struct RankOrigin {
  std::string rank_source;                        // store.rank_source: "distributedInfo", "file name" or "order"
  std::optional<trace::DeviceProperties> device;  // store.meta.devices.front(), when the trace has one
  std::optional<int64_t> world_size;              // store.meta.world_size (distributedInfo)
  int64_t events = 0;                             // rows in the store
  int64_t gpu_rows = 0;                           // GPU rows in the store
  trace::ImportStats import;                      // records skipped or repaired while reading
};

struct RankAnalysis {
  int64_t rank = 0;              // store.rank
  std::string source_path;       // store.source_path
  int64_t base_time_ns = 0;      // store.meta.base_time_ns: absolute time = base + trace time, ns
  RankOrigin origin;             // rank source, device and import summary
  int64_t gpu_activities = 0;    // activities in the GPU timeline
  int64_t dropped_negative_activities = 0;  // GPU rows skipped for a negative duration
  StepsResult steps;             // ProfilerStep spans (CPU and GPU)
  TemporalResult temporal;       // idle / compute / non-compute, per rank and per step
  KernelStatsResult kernels;     // time by class, family and name
  IdleBreakdownResult idle;      // idle gaps per stream by cause
  CommOverlap overlap;           // communication hidden behind computation
  LaunchStats launches;          // runtime call vs kernel timing
  QueueLengthResult queues;      // launch queue depth per stream
  MemoryBandwidthResult copies;  // memcpy / memset bandwidth per kind
  MemoryTimelineResult memory;   // allocator peaks per device
  CollectiveSequence collectives;  // communication calls, for cross-rank matching
  HardwareCountersResult counters; // CUPTI range-profiler counters per kernel (ranges == 0 without)
};

RankAnalysis analyze_rank(const trace::EventStore& store, const AnalysisOptions& options);

}  // namespace stepscope::analysis
