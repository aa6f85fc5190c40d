// A value over the ranks, as the terminal prints it past the side-by-side
// limit: min, median (the lower middle), max and the rank with the max
// (ties: the lowest rank). One rule for every summarised table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace stepscope::report {

struct RankSpread {
  double min = 0;
  double median = 0;
  double max = 0;
  int64_t max_rank = 0;
};

// `values`: (value, rank) per rank, at least one.
inline RankSpread rank_spread(std::vector<std::pair<double, int64_t>> values) {
  std::sort(values.begin(), values.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  });
  return {values.front().first, values[(values.size() - 1) / 2].first, values.back().first, values.back().second};
}

}  // namespace stepscope::report
