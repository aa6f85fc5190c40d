#include "hwbench/alpha_beta_fit.h"

#include <algorithm>

namespace stepscope::hwbench {

using model::AlphaBetaFit;

const std::vector<SizeRange>& default_protocol_ranges() {
  static const std::vector<SizeRange> ranges = {
      {"ll", 0, int64_t{64} << 10},
      {"ll128", int64_t{64} << 10, int64_t{16} << 20},
      {"simple", int64_t{16} << 20, INT64_MAX},
  };
  return ranges;
}

AlphaBetaFit fit_alpha_beta(const std::vector<TimedSize>& points) {
  AlphaBetaFit f;
  f.points = static_cast<int>(points.size());
  if (points.empty()) return f;
  f.min_bytes = points.front().bytes;
  f.max_bytes = points.front().bytes;
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, plain_sum = 0;
  for (const TimedSize& p : points) {
    f.min_bytes = std::min(f.min_bytes, p.bytes);
    f.max_bytes = std::max(f.max_bytes, p.bytes);
    plain_sum += p.seconds;
    if (p.seconds <= 0) continue;
    double w = 1 / (p.seconds * p.seconds);
    double x = static_cast<double>(p.bytes);
    sw += w;
    sx += w * x;
    sy += w * p.seconds;
    sxx += w * x * x;
    sxy += w * x * p.seconds;
  }
  double det = sw * sxx - sx * sx;
  if (f.min_bytes == f.max_bytes || sw == 0 || det <= 0) {
    f.alpha_us = plain_sum / static_cast<double>(points.size()) * 1e6;
    return f;
  }
  double slope = (sw * sxy - sx * sy) / det;
  double alpha = (sy - slope * sx) / sw;
  f.alpha_us = alpha * 1e6;
  f.beta_gbps = slope > 0 ? 1 / slope / 1e9 : 0;
  // Weighted R²: 1 − Σw(y − ŷ)² / Σw(y − ȳ_w)².
  double mean = sy / sw, ss_res = 0, ss_tot = 0;
  for (const TimedSize& p : points) {
    if (p.seconds <= 0) continue;
    double w = 1 / (p.seconds * p.seconds);
    double fit = alpha + slope * static_cast<double>(p.bytes);
    ss_res += w * (p.seconds - fit) * (p.seconds - fit);
    ss_tot += w * (p.seconds - mean) * (p.seconds - mean);
  }
  f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 0;
  return f;
}

std::vector<AlphaBetaFit> fit_per_range(const std::vector<TimedSize>& points, const std::vector<SizeRange>& ranges) {
  std::vector<AlphaBetaFit> fits;
  for (const SizeRange& r : ranges) {
    std::vector<TimedSize> in;
    for (const TimedSize& p : points)
      if (p.bytes >= r.min_bytes && p.bytes < r.max_bytes) in.push_back(p);
    if (in.size() < 2) continue;
    AlphaBetaFit f = fit_alpha_beta(in);
    f.range = r.name;
    fits.push_back(f);
  }
  return fits;
}

}  // namespace stepscope::hwbench
