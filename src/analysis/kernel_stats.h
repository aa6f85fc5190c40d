// GPU time by class, by computation family and by kernel name (HTA's kernel
// type breakdown and top kernels, without its 80%-cumulative cut).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/gpu_timeline.h"
#include "analysis/quantile_sketch.h"

namespace stepscope::analysis {

// Durations of one group of activities.
struct DurationStats {
  int64_t count = 0;      // activities
  int64_t total_ns = 0;   // sum of durations, ns
  int64_t min_ns = 0;     // shortest, ns (0 when count is 0)
  int64_t max_ns = 0;     // longest, ns
  double mean_us = 0;     // total / count, µs
  double stddev_us = 0;   // sample standard deviation (n-1, as HTA/pandas), µs; 0 when count < 2
};

struct KernelStat {
  std::string name;         // kernel name as in the trace, or "others" for the remainder row
  KernelClass cls = KernelClass::kComputation;
  KernelFamily family = KernelFamily::kOther;  // family of the name (kOther for the "others" row)
  int64_t distinct_names = 1;  // names merged in this row (>1 only for "others")
  DurationStats duration;
  double pct_of_class = 0;  // 100 * total_ns / class total_ns, %
};

struct ClassKernels {
  KernelClass cls = KernelClass::kComputation;
  DurationStats duration;      // all activities of the class
  int64_t distinct_names = 0;  // distinct kernel names in the class
  double pct_of_all = 0;       // 100 * class total_ns / total_ns over all classes, % (sum of durations, not union)
  std::vector<KernelStat> top; // up to options.top_kernels names by total_ns, descending (ties by name)
  // Every other name of the class merged (its stats are over activities, not
  // over names); count 0 when top holds all names.
  KernelStat others;
};

struct FamilyTotal {
  KernelFamily family = KernelFamily::kOther;
  DurationStats duration;   // computation activities of this family
  double pct_of_compute = 0;  // 100 * total_ns / computation total_ns, %
};

// Invariant per class: sum(top[i].duration.total_ns) + others.duration.total_ns == duration.total_ns.
// One kernel name's durations on this rank, whole, for the job-wide table
// (job_kernels.h): its sketch merges exactly across ranks.
struct KernelNameSketch {
  std::string name;
  KernelClass cls = KernelClass::kComputation;
  KernelFamily family = KernelFamily::kOther;
  int64_t total_ns = 0;       // sum of durations, ns
  QuantileSketch durations;   // count, min, max and quantiles, ns
};

struct KernelStatsResult {
  int64_t total_ns = 0;  // sum of all activity durations, ns
  std::array<ClassKernels, kKernelClassCount> classes;  // indexed by KernelClass
  std::vector<FamilyTotal> families;  // computation families with count > 0, by total_ns descending
  std::vector<KernelNameSketch> by_name;  // every (class, name) of the rank, by class then name
};

KernelStatsResult analyze_kernels(const trace::EventStore& store, const GpuTimeline& timeline,
                                  const AnalysisOptions& options);

}  // namespace stepscope::analysis
