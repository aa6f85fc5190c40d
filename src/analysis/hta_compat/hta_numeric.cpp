#include "analysis/hta_compat/hta_numeric.h"

#include <algorithm>
#include <cmath>

namespace stepscope::analysis::hta {

double round_np(double x, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(x * scale) / scale;
}

double linear_quantile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const double h = static_cast<double>(n - 1) * q;
  const double lo_f = std::floor(h);
  const size_t lo = static_cast<size_t>(lo_f);
  const size_t hi = std::min(lo + 1, n - 1);
  const double a = sorted[lo], b = sorted[hi], t = h - lo_f;
  // numpy's _lerp: from the nearer end, so that t == 1 gives b exactly.
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

HtaDescribe describe(std::vector<double> values) {
  HtaDescribe d;
  const size_t n = values.size();
  d.count = static_cast<double>(n);
  if (n == 0) return d;
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(n);
  d.mean = mean;
  if (n > 1) {
    double sq = 0;
    for (double v : values) sq += (v - mean) * (v - mean);
    d.std = std::sqrt(sq / static_cast<double>(n - 1));
  }
  std::sort(values.begin(), values.end());
  d.min = values.front();
  d.p25 = linear_quantile(values, 0.25);
  d.p50 = linear_quantile(values, 0.5);
  d.p75 = linear_quantile(values, 0.75);
  d.max = values.back();
  return d;
}

}  // namespace stepscope::analysis::hta
