#include "analysis/hta_compat/hta_intervals.h"

#include <algorithm>

#include "analysis/hta_compat/numpy_quicksort.h"

namespace stepscope::analysis::hta {

std::vector<HtaInterval> merge_hta_intervals(const std::vector<HtaEvent>& events, const std::vector<uint32_t>& rows) {
  std::vector<double> ts(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) ts[i] = events[rows[i]].ts;
  std::vector<HtaInterval> groups;
  double running_end = 0;  // max end of every row visited so far
  bool first = true;
  for (uint32_t k : numpy_argsort(ts)) {
    const HtaEvent& e = events[rows[k]];
    const double end = e.end();
    if (!first && !(e.ts > running_end)) {
      groups.back().start = std::min(groups.back().start, e.ts);
      groups.back().end = std::max(groups.back().end, end);
    } else {
      groups.push_back({e.ts, end});
    }
    running_end = first ? end : std::max(running_end, end);
    first = false;
  }
  return groups;
}

std::vector<uint32_t> stream_rows(const HtaRankFrame& frame) {
  std::vector<uint32_t> rows;
  for (uint32_t i = 0; i < frame.events.size(); ++i)
    if (frame.events[i].on_stream()) rows.push_back(i);
  return rows;
}

std::vector<uint32_t> stream_rows_of_type(const HtaRankFrame& frame, HtaKernelType type) {
  std::vector<uint32_t> rows;
  for (uint32_t i = 0; i < frame.events.size(); ++i)
    if (frame.events[i].on_stream() && frame.events[i].type == type) rows.push_back(i);
  return rows;
}

double total_length(const std::vector<HtaInterval>& groups) {
  double sum = 0;
  for (const auto& g : groups) sum += g.length();
  return sum;
}

}  // namespace stepscope::analysis::hta
