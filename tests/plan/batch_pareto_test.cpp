#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "plan/batch_pareto.h"

namespace stepscope::plan {
namespace {

// Hand example: (mem, tps) = A(10, 100), B(20, 90) dominated by A, C(20, 150),
// D(30, 150) dominated by C, E(40, 200). Front by memory: A, C, E.
TEST(BatchPareto, HandExample) {
  const std::vector<BatchPoint> pts = {
      {8, 1, 100, 10}, {8, 2, 90, 20}, {16, 1, 150, 20}, {16, 2, 150, 30}, {32, 1, 200, 40}};
  EXPECT_EQ(pareto_front(pts), (std::vector<size_t>{0, 2, 4}));
}

TEST(BatchPareto, MatchesBruteForceDominance) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(0, 9);  // few values: ties and duplicates happen
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BatchPoint> pts(static_cast<size_t>(1 + trial % 30));
    for (auto& p : pts) p = {1, 1, double(small(rng)), double(small(rng))};
    std::vector<size_t> expected;
    for (size_t i = 0; i < pts.size(); ++i) {
      bool dominated = false;
      for (size_t j = 0; j < pts.size() && !dominated; ++j) {
        const bool no_worse = pts[j].memory_bytes <= pts[i].memory_bytes &&
                              pts[j].tokens_per_second >= pts[i].tokens_per_second;
        const bool strictly = pts[j].memory_bytes < pts[i].memory_bytes ||
                              pts[j].tokens_per_second > pts[i].tokens_per_second;
        const bool earlier_duplicate = !strictly && no_worse && j < i;
        dominated = (no_worse && strictly) || earlier_duplicate;
      }
      if (!dominated) expected.push_back(i);
    }
    std::sort(expected.begin(), expected.end(),
              [&](size_t a, size_t b) { return pts[a].memory_bytes < pts[b].memory_bytes; });
    EXPECT_EQ(pareto_front(pts), expected) << "trial " << trial;
  }
}

}  // namespace
}  // namespace stepscope::plan
