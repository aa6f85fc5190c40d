#include "hwbench/sample_stats.h"

#include <algorithm>

namespace stepscope::hwbench {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

double relative_spread(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double m = median(values);
  if (m == 0) return 0;
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return (*hi - *lo) / m;
}

}  // namespace stepscope::hwbench
