// Summary of a sample: count, mean, spread and percentiles, in the unit of
// the samples (the field that holds a Distribution names the unit).
#pragma once

#include <cstdint>
#include <vector>

namespace stepscope::analysis {

struct Distribution {
  int64_t count = 0;  // number of samples
  double mean = 0;    // arithmetic mean
  double stddev = 0;  // sample standard deviation (n-1 denominator, as pandas' describe); 0 when count < 2
  double min = 0;     // smallest sample
  double p25 = 0;     // percentiles by linear interpolation between order statistics (pandas' default)
  double p50 = 0;
  double p75 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;     // largest sample
};

// Summarises `values` (reordered in place: the order statistics the
// percentiles need are selected, the rest is left partitioned). Empty input
// gives all zeros.
Distribution summarize(std::vector<double>& values);

// Percentile q in [0,1] of already sorted values, linear interpolation.
double percentile_sorted(const std::vector<double>& sorted, double q);

}  // namespace stepscope::analysis
