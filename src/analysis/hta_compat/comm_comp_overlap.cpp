#include "analysis/hta_compat/comm_comp_overlap.h"

#include <algorithm>

#include "analysis/hta_compat/hta_intervals.h"

namespace stepscope::analysis::hta {

HtaOverlapRow hta_comm_comp_overlap(const HtaRankFrame& frame) {
  const auto comp = merge_hta_intervals(frame.events, stream_rows_of_type(frame, HtaKernelType::kComputation));
  const auto comm = merge_hta_intervals(frame.events, stream_rows_of_type(frame, HtaKernelType::kCommunication));
  // Boundaries: communication +-1, computation +-2; both run where the sum is 3.
  // After all boundaries at one time the running sum is the same in any
  // order, so the order of ties does not matter here.
  std::vector<std::pair<double, int>> edges;
  for (const auto& g : comm) edges.emplace_back(g.start, 1);
  for (const auto& g : comm) edges.emplace_back(g.end, -1);
  for (const auto& g : comp) edges.emplace_back(g.start, 2);
  for (const auto& g : comp) edges.emplace_back(g.end, -2);
  std::stable_sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double overlap = 0;
  int running = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    running += edges[i].second;
    if (running == 3 && i + 1 < edges.size()) overlap += edges[i + 1].first - edges[i].first;
  }
  HtaOverlapRow row;
  row.rank = frame.rank;
  const double comm_time = total_length(comm);
  if (comm_time != 0) row.comp_comm_overlap_pctg = round_np(100 * overlap / comm_time, 2);
  return row;
}

}  // namespace stepscope::analysis::hta
