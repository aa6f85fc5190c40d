#include "analysis/distribution.h"

#include <algorithm>
#include <cmath>

namespace stepscope::analysis {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  // Linear interpolation between the order statistics around q*(n-1).
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Distribution summarize(std::vector<double>& values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = static_cast<int64_t>(values.size());
  // Two passes: the mean first, then squared deviations, so large offsets
  // (timestamps, ns durations) do not cancel catastrophically.
  long double sum = 0;
  for (double v : values) sum += v;
  long double mean = sum / static_cast<long double>(values.size());
  long double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  d.mean = static_cast<double>(mean);
  d.stddev = values.size() > 1 ? static_cast<double>(std::sqrt(sq / static_cast<long double>(values.size() - 1))) : 0.0;
  d.min = values.front();
  d.max = values.back();
  d.p25 = percentile_sorted(values, 0.25);
  d.p50 = percentile_sorted(values, 0.50);
  d.p75 = percentile_sorted(values, 0.75);
  d.p90 = percentile_sorted(values, 0.90);
  d.p99 = percentile_sorted(values, 0.99);
  return d;
}

}  // namespace stepscope::analysis
