// Comparisons across ranks: step-time spread, stragglers from collective
// start skew, and how evenly GPU time is spread.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/clock_alignment.h"
#include "analysis/job_kernels.h"
#include "analysis/rank_analysis.h"
#include "trace/event_store.h"

namespace stepscope::analysis {

// One duration across ranks.
struct RankSpread {
  int64_t ranks = 0;          // ranks that have the value
  int64_t min_ns = 0;         // smallest, ns
  int64_t median_ns = 0;      // median (lower middle for an even count), ns
  int64_t max_ns = 0;         // largest, ns
  int64_t spread_ns = 0;      // max_ns - min_ns, ns
  int64_t fastest_rank = -1;  // rank with min_ns (lowest rank on ties)
  int64_t slowest_rank = -1;  // rank with max_ns (lowest rank on ties)
};

struct StepAcrossRanks {
  int64_t step = -1;     // N of ProfilerStep#N
  RankSpread cpu;        // StepSpan::cpu_duration_ns across ranks
  RankSpread gpu;        // StepSpan::gpu_duration_ns across ranks (ranks with GPU work in the step)
};

struct RankLateness {
  int64_t rank = 0;
  int64_t collectives = 0;          // matched collective calls this rank took part in
  double mean_lateness_us = 0;      // mean of (own start - earliest start over ranks), µs
  int64_t max_lateness_ns = 0;      // largest such lateness, ns
  int64_t times_last = 0;           // calls where this rank started last (ties: lowest rank)
  // mean_lateness exceeds the median rank's mean_lateness by more than
  // options.straggler_lateness_ns: the others wait for this rank.
  bool straggler = false;
};

struct CollectiveSkew {
  // What the calls were read from on the ranks: "gpu_kernels", "host_ops"
  // (no rank had communication kernels), "mixed", or "none".
  std::string source = "none";
  int64_t matched_calls = 0;        // (op, ordinal) keys present on every rank
  int64_t unmatched_calls = 0;      // calls on some rank whose key is missing on another rank
  double mean_skew_us = 0;          // mean over matched calls of (latest start - earliest start), µs
  double median_lateness_us = 0;    // median over ranks of mean_lateness_us (lower middle), µs
  int64_t max_skew_ns = 0;          // largest such skew, ns
  std::vector<RankLateness> ranks;  // in rank order
  std::vector<int64_t> stragglers;  // ranks flagged straggler, by mean lateness descending
  // True when the ranks' clocks could not be compared (ClockAlignment status
  // "refused"): no call is matched and nothing above is reported.
  bool withheld = false;
};

struct RankGpuTime {
  int64_t rank = 0;
  int64_t kernel_time_ns = 0;   // TemporalBreakdown::kernel_time_ns of the rank, ns
  int64_t busy_time_ns = 0;     // union of GPU activity, ns
  int64_t compute_time_ns = 0;  // union of computation, ns
  int64_t communication_time_ns = 0;  // union of communication, ns
};

struct GpuTimeVariance {
  std::vector<RankGpuTime> ranks;  // in rank order
  double mean_compute_us = 0;      // mean of compute_time over ranks, µs
  double stddev_compute_us = 0;    // population standard deviation over ranks, µs
  double cv_compute = 0;           // stddev / mean (0 when mean is 0)
  RankSpread compute;              // compute_time_ns across ranks
  RankSpread busy;                 // busy_time_ns across ranks
};

struct MultiRankAnalysis {
  int64_t ranks = 0;                    // ranks analysed
  // Clock offsets checked before the collective figures; corrected ranks'
  // call times are shifted onto the reference rank's clock.
  ClockAlignment clocks;
  std::vector<std::string> warnings;    // one line each (clock correction or refusal)
  std::vector<StepAcrossRanks> steps;   // steps present on at least two ranks, by step number
  CollectiveSkew collectives;           // start skew of matched collective calls (on aligned clocks)
  GpuTimeVariance gpu_time;             // GPU time per rank and its spread
  JobKernels kernels;                   // kernels pooled over all ranks, with percentiles (job_kernels.h)
};

// From per-rank results (already computed by analyze_rank); pointers must be non-null.
MultiRankAnalysis analyze_ranks(const std::vector<const RankAnalysis*>& ranks, const AnalysisOptions& options);

// Convenience: runs analyze_rank on each store first.
MultiRankAnalysis analyze_ranks(const std::vector<const trace::EventStore*>& stores,
                                const AnalysisOptions& options);

}  // namespace stepscope::analysis
