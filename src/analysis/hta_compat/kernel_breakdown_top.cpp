#include "analysis/hta_compat/kernel_breakdown_top.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "analysis/hta_compat/numpy_quicksort.h"

namespace stepscope::analysis::hta {
namespace {

struct NameStats {
  std::string name;
  double sum = 0, max = 0, min = 0, mean = 0, stddev = 0;
};

// groupby(name).agg(sum, max, min, mean, std) with std's NaN replaced by 0.
NameStats stats_of(std::string name, const std::vector<double>& values) {
  NameStats s;
  s.name = std::move(name);
  for (double v : values) s.sum += v;
  s.max = *std::max_element(values.begin(), values.end());
  s.min = *std::min_element(values.begin(), values.end());
  HtaDescribe d = describe(values);
  s.mean = d.mean.value_or(0);
  s.stddev = d.std.value_or(0);
  return s;
}

std::vector<NameStats> by_name(const HtaRankFrame& frame, HtaKernelType type) {
  std::vector<trace::StringId> order;  // names in order of first appearance
  std::unordered_map<trace::StringId, std::vector<double>> durations;
  for (const auto& e : frame.events) {
    if (!e.on_stream() || e.type != type) continue;
    auto [it, fresh] = durations.try_emplace(e.name);
    if (fresh) order.push_back(e.name);
    it->second.push_back(e.dur);
  }
  std::vector<NameStats> stats;
  for (auto id : order) stats.push_back(stats_of(std::string(frame.store->strings.get(id)), durations[id]));
  return stats;
}

}  // namespace

std::vector<HtaKernelTopRow> hta_kernel_breakdown_top(const HtaRankFrame& frame, const HtaTopOptions& options) {
  std::vector<HtaKernelTopRow> rows;
  for (HtaKernelType type : kHtaBreakdownTypes) {
    std::vector<NameStats> stats = by_name(frame, type);
    std::stable_sort(stats.begin(), stats.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    std::vector<double> negated;
    for (const auto& s : stats) negated.push_back(-s.sum);
    stats = take(stats, numpy_argsort(negated));

    if (stats.size() > static_cast<size_t>(options.num_kernels)) {
      std::vector<double> cumsum;
      double c = 0;
      for (const auto& s : stats) cumsum.push_back(c += s.sum);
      std::vector<double> sorted = cumsum;
      std::sort(sorted.begin(), sorted.end());
      const double q = linear_quantile(sorted, options.duration_ratio);
      // HTA keeps negative-sum kernels by name whatever their position.
      for (size_t i = 0; i < stats.size(); ++i) {
        if (stats[i].sum >= 0 && (cumsum[i] > q || i >= static_cast<size_t>(options.num_kernels)))
          stats[i].name = "others";
      }
      std::vector<std::string> order;
      std::unordered_map<std::string, std::vector<double>> sums;
      for (const auto& s : stats) {
        auto [it, fresh] = sums.try_emplace(s.name);
        if (fresh) order.push_back(s.name);
        it->second.push_back(s.sum);
      }
      stats.clear();
      for (const auto& name : order) stats.push_back(stats_of(name, sums[name]));
    }
    for (const auto& s : stats) {
      HtaKernelTopRow r;
      r.name = s.name;
      r.sum_us = s.sum;
      r.max_us = s.max;
      r.min_us = s.min;
      r.mean_us = s.mean;
      r.stddev = s.stddev;
      r.kernel_type = type;
      r.rank = frame.rank;
      rows.push_back(std::move(r));
    }
  }
  sort_kernel_top_rows(rows);
  return rows;
}

void sort_kernel_top_rows(std::vector<HtaKernelTopRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const HtaKernelTopRow& a, const HtaKernelTopRow& b) {
    const std::string_view ta = to_string(a.kernel_type), tb = to_string(b.kernel_type);
    if (ta != tb) return ta < tb;
    if (a.name != b.name) return a.name < b.name;
    return a.rank < b.rank;
  });
}

}  // namespace stepscope::analysis::hta
