#include "analysis/hta_compat/idle_time_breakdown.h"

#include <algorithm>
#include <array>
#include <optional>

#include "analysis/hta_compat/numpy_quicksort.h"

namespace stepscope::analysis::hta {
namespace {

constexpr std::array<const char*, 3> kCategoryNames = {"host_wait", "kernel_wait", "other"};

// One kernel joined with the start of its launch (a row per matching launch
// row, as pandas' join repeats rows; nullopt when nothing matches).
struct JoinedKernel {
  const HtaEvent* kernel;
  std::optional<double> launch_ts;
};

}  // namespace

std::vector<HtaIdleRow> hta_idle_time_breakdown(const HtaRankFrame& frame, double consecutive_kernel_delay_us) {
  // ts of the frame rows by traceEvents index (the step filter can repeat an index).
  std::vector<std::pair<int64_t, double>> ts_by_index;
  ts_by_index.reserve(frame.events.size());
  for (const auto& e : frame.events) ts_by_index.emplace_back(e.index, e.ts);
  std::stable_sort(ts_by_index.begin(), ts_by_index.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  std::vector<JoinedKernel> joined;
  std::vector<int64_t> streams;  // in order of first appearance
  for (const auto& e : frame.events) {
    if (!e.on_stream() || !e.kernel_category) continue;
    auto lo = std::lower_bound(ts_by_index.begin(), ts_by_index.end(), e.index_correlation,
                               [](const auto& p, int64_t idx) { return p.first < idx; });
    if (lo == ts_by_index.end() || lo->first != e.index_correlation) {
      joined.push_back({&e, std::nullopt});
    } else {
      for (auto it = lo; it != ts_by_index.end() && it->first == e.index_correlation; ++it)
        joined.push_back({&e, it->second});
    }
    if (std::find(streams.begin(), streams.end(), e.stream) == streams.end()) streams.push_back(e.stream);
  }

  std::vector<HtaIdleRow> rows;
  for (int64_t stream : streams) {
    std::vector<const JoinedKernel*> on_stream;
    std::vector<double> ts;
    for (const auto& j : joined) {
      if (j.kernel->stream != stream) continue;
      on_stream.push_back(&j);
      ts.push_back(j.kernel->ts);
    }
    std::array<double, 3> idle{};
    std::array<bool, 3> seen{};
    std::optional<double> prev_end;
    for (uint32_t k : numpy_argsort(ts)) {
      const JoinedKernel& j = *on_stream[k];
      int category = 2;
      std::optional<double> gap;
      if (prev_end) gap = j.kernel->ts - *prev_end;
      if (j.launch_ts && prev_end && *j.launch_ts > *prev_end) {
        category = 0;
      } else if (gap && *gap < consecutive_kernel_delay_us) {
        category = 1;
      }
      seen[category] = true;
      if (gap) idle[category] += *gap;
      prev_end = j.kernel->end();
    }
    const double total = idle[0] + idle[1] + idle[2];
    for (int c = 0; c < 3; ++c) {
      if (!seen[c]) continue;
      HtaIdleRow r;
      r.rank = frame.rank;
      r.stream = stream;
      r.idle_category = kCategoryNames[c];
      r.idle_time = round_np(idle[c], 2);
      if (total != 0) r.idle_time_ratio = round_np(idle[c] / total, 2);
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace stepscope::analysis::hta
