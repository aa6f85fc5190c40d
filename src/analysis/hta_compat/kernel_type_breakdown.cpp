#include "analysis/hta_compat/kernel_type_breakdown.h"

#include <algorithm>
#include <map>

#include "analysis/hta_compat/hta_intervals.h"
#include "analysis/hta_compat/numpy_quicksort.h"

namespace stepscope::analysis::hta {
namespace {

std::string label_of(int64_t running) {
  std::string label;
  for (int i = 0; i < 3; ++i) {
    if (!(running & (int64_t{1} << i))) continue;
    if (!label.empty()) label += " overlapping ";
    label += to_string(kHtaBreakdownTypes[i]);
  }
  return label;
}

void add_to(HtaTypeSums& sums, const std::string& label, int64_t us) {
  for (auto& [l, v] : sums) {
    if (l == label) {
      v += us;
      return;
    }
  }
  sums.emplace_back(label, us);
}

}  // namespace

HtaTypeSums hta_kernel_type_sums(const HtaRankFrame& frame) {
  std::vector<double> times;
  std::vector<int64_t> status;
  for (int i = 0; i < 3; ++i) {
    const int64_t bit = int64_t{1} << i;
    const auto groups = merge_hta_intervals(frame.events, stream_rows_of_type(frame, kHtaBreakdownTypes[i]));
    // pandas melt: all starts in group order, then all ends.
    for (const auto& g : groups) {
      times.push_back(g.start);
      status.push_back(bit);
    }
    for (const auto& g : groups) {
      times.push_back(g.end);
      status.push_back(-bit);
    }
    const auto order = numpy_argsort(times);
    times = take(times, order);
    status = take(status, order);
  }
  HtaTypeSums sums;
  int64_t running = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    running += status[i];
    if (running <= 0 || i + 1 == times.size()) continue;
    add_to(sums, label_of(running), static_cast<int64_t>(times[i + 1] - times[i]));
  }
  return sums;
}

std::vector<HtaKernelTypeRow> hta_kernel_type_table(const std::vector<HtaTypeSums>& per_rank) {
  HtaTypeSums pooled;
  for (const auto& sums : per_rank)
    for (const auto& [label, us] : sums) add_to(pooled, label, us);
  int64_t total = 0;
  for (const auto& p : pooled) total += p.second;
  std::vector<HtaKernelTypeRow> rows;
  for (const auto& [label, us] : pooled) {
    HtaKernelTypeRow r;
    r.kernel_type = label;
    r.sum_us = us;
    if (total != 0) r.percentage = round_np(static_cast<double>(us) / static_cast<double>(total) * 100, 1);
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.sum_us > b.sum_us; });
  return rows;
}

}  // namespace stepscope::analysis::hta
