#include "hwbench/sample_stats.h"

#include <gtest/gtest.h>

namespace stepscope::hwbench {
namespace {

TEST(SampleStats, MedianOfOddCountIsTheMiddleValue) {
  // sorted: 1 2 3 9 100 -> 3
  EXPECT_DOUBLE_EQ(median({9, 1, 100, 3, 2}), 3);
}

TEST(SampleStats, MedianOfEvenCountAveragesTheMiddlePair) {
  // sorted: 1 2 4 10 -> (2 + 4) / 2 = 3
  EXPECT_DOUBLE_EQ(median({10, 4, 1, 2}), 3);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(SampleStats, RelativeSpreadIsRangeOverMedian) {
  // (12 − 8) / 10 = 0.4
  EXPECT_DOUBLE_EQ(relative_spread({8, 10, 12}), 0.4);
  EXPECT_DOUBLE_EQ(relative_spread({}), 0);
}

}  // namespace
}  // namespace stepscope::hwbench
