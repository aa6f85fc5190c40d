// Kernels across all ranks of a job: per kernel name, its launches on every
// rank pooled, with percentiles from the ranks' merged quantile sketches
// (quantile_sketch.h). Per-rank tables (kernel_stats.h) say what one GPU
// ran; this says what the job ran and how a kernel's duration spreads over
// all its launches, which no single rank shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/rank_analysis.h"

namespace stepscope::analysis {

struct JobKernel {
  std::string name;
  KernelClass cls = KernelClass::kComputation;
  KernelFamily family = KernelFamily::kOther;
  int64_t ranks = 0;       // ranks that ran it
  int64_t count = 0;       // launches over all ranks
  int64_t total_ns = 0;    // sum of durations over all ranks, ns
  int64_t min_ns = 0;      // exact
  int64_t max_ns = 0;      // exact
  int64_t max_rank = -1;   // the rank of the longest launch (lowest rank on ties)
  double p50_ns = 0;       // quantiles from the merged sketch, within QuantileSketch::kRelativeError
  double p90_ns = 0;
  double p99_ns = 0;
  double pct_of_class = 0; // 100 * total / the class's total over all ranks, %
};

struct JobKernels {
  double relative_error = QuantileSketch::kRelativeError;
  // Per class, the options.top_kernels names with the largest total over
  // all ranks (ties by name), class by class in KernelClass order.
  std::vector<JobKernel> top;
};

JobKernels job_kernels(const std::vector<const RankAnalysis*>& ranks, const AnalysisOptions& options);

}  // namespace stepscope::analysis
