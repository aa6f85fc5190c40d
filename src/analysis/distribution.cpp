#include "analysis/distribution.h"

#include <algorithm>
#include <cmath>

namespace stepscope::analysis {

namespace {
constexpr double kQuantiles[] = {0.25, 0.50, 0.75, 0.90, 0.99};
}  // namespace

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
  d.count = static_cast<int64_t>(values.size());
  // Two passes: the mean first, then squared deviations, so large offsets
  // (timestamps, ns durations) do not cancel catastrophically. Summed in the
  // sample's own order, before the selection below reorders it, so that the
  // last bits do not depend on how the order statistics are found.
  long double sum = 0;
  for (double v : values) sum += v;
  long double mean = sum / static_cast<long double>(values.size());
  long double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  d.mean = static_cast<double>(mean);
  d.stddev = values.size() > 1 ? static_cast<double>(std::sqrt(sq / static_cast<long double>(values.size() - 1))) : 0.0;
  // Only the order statistics the percentiles interpolate between are put in
  // place (selection, O(n) each), not the whole sample: a full sort of every
  // launch's delay was a visible share of the analysis of large traces.
  const size_t n = values.size();
  std::vector<size_t> ranks = {0, n - 1};
  for (double q : kQuantiles) {
    const double pos = q * static_cast<double>(n - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    ranks.push_back(lo);
    ranks.push_back(std::min(lo + 1, n - 1));
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  auto from = values.begin();
  for (size_t k : ranks) {
    // Everything before `from` is already <= values[k]: select in the rest.
    // The rank right after the last one placed (the upper neighbour of a
    // percentile, or the minimum) is the smallest of the rest, and the
    // maximum is the largest: one scan each instead of a selection.
    auto at = values.begin() + static_cast<std::ptrdiff_t>(k);
    if (at == from) std::iter_swap(at, std::min_element(from, values.end()));
    else if (k == n - 1) std::iter_swap(at, std::max_element(from, values.end()));
    else std::nth_element(from, at, values.end());
    from = at + 1;
  }
  d.min = values.front();
  d.max = values.back();
  // percentile_sorted reads only the order statistics placed above.
  d.p25 = percentile_sorted(values, kQuantiles[0]);
  d.p50 = percentile_sorted(values, kQuantiles[1]);
  d.p75 = percentile_sorted(values, kQuantiles[2]);
  d.p90 = percentile_sorted(values, kQuantiles[3]);
  d.p99 = percentile_sorted(values, kQuantiles[4]);
  return d;
}

}  // namespace stepscope::analysis
