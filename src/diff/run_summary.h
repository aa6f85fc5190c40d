// One run (a trace set) reduced to what two runs can be compared on: mean
// step time, where it went (attribution buckets), GPU busy and compute
// shares, the findings, and every kernel name's calls and time per step.
// Everything is per step so runs of different lengths compare fairly; over
// several ranks, per step means per rank-step (sums over ranks divided by the
// number of step windows over ranks).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/kernel_class.h"
#include "analysis/rank_analysis.h"
#include "diagnose/diagnose.h"
#include "trace/event_store.h"

namespace stepscope::diff {

// What the diff reads of one run. `stores` and `ranks` are parallel (rank
// order); `diagnosis` is diagnose() over them. Nothing is owned.
struct RunInput {
  const std::vector<const trace::EventStore*>* stores = nullptr;
  const std::vector<analysis::RankAnalysis>* ranks = nullptr;
  const diagnose::Diagnosis* diagnosis = nullptr;
};

// One kernel name's use in a run's steps.
struct KernelUse {
  std::string name;  // kernel / memcpy / memset name as in the trace
  analysis::KernelClass cls = analysis::KernelClass::kComputation;
  analysis::KernelFamily family = analysis::KernelFamily::kOther;
  int64_t count = 0;          // activities launched inside steps, all ranks
  int64_t total_ns = 0;       // sum of their durations, ns
  double count_per_step = 0;  // count / step windows
  double us_per_step = 0;     // total / step windows, µs
  double mean_us = 0;         // total / count, µs
};

struct RunSummary {
  int64_t ranks = 0;
  int64_t windows = 0;              // step windows over all ranks (one per rank without ProfilerStep markers)
  bool from_profiler_steps = true;  // every rank's windows are ProfilerStep spans
  std::string device;               // GPU model of the first rank ("" when the trace names none)

  double step_us = 0;  // mean step window (wall time), µs
  // Mean time per step in each attribution bucket, µs, indexed by
  // diagnose::Bucket; sums to step_us.
  std::array<double, diagnose::kBucketCount> bucket_us{};
  double busy_pct = 0;               // share of step time with any GPU work running (non-idle buckets), %
  double compute_pct = 0;            // share with a computation kernel running (the three compute buckets), %
  double effective_compute_pct = 0;  // share in effective compute (tensor-core matmuls + other compute, no SIMT matmuls), %

  double kernel_us_per_step = 0;     // sum of GPU activity durations per step (overlaps counted twice), µs
  double kernels_per_step = 0;       // GPU activities per step
  std::vector<KernelUse> kernels;    // by name, ascending

  std::string primary_bottleneck = "none";    // Diagnosis::primary_bottleneck
  std::vector<diagnose::Finding> findings;    // Diagnosis::findings (reported), largest saving first
  std::vector<diagnose::Finding> minor;       // Diagnosis::minor
};

// `options` must be the analysis options the run was analysed with (they
// decide the GPU timeline, e.g. an HTA compatibility builder).
RunSummary summarize_run(const RunInput& run, const analysis::AnalysisOptions& options);

}  // namespace stepscope::diff
