#include "hwbench/collective_bandwidth.h"

#include <gtest/gtest.h>

namespace stepscope::hwbench {
namespace {

TEST(CollectiveBandwidth, BusFactorsFollowNcclTests) {
  // n = 8: all-reduce 2·7/8 = 1.75; gather/scatter/all-to-all 7/8 = 0.875; broadcast 1.
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kBroadcast, 8), 1.0);
  // n = 2: all-reduce 2·1/2 = 1.
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 2), 1.0);
}

TEST(CollectiveBandwidth, OneRankMovesNothingOverLinks) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 1), 0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllGather, 1), 0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kBroadcast, 1), 1);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 0), 0);
}

TEST(CollectiveBandwidth, AlgbwIsBytesOverTime) {
  // 1 GB in 10 ms = 100 GB/s.
  EXPECT_DOUBLE_EQ(algbw_gbps(1e9, 0.01), 100);
  EXPECT_DOUBLE_EQ(algbw_gbps(1e9, 0), 0);
  EXPECT_EQ(collective_name(Collective::kReduceScatter), "reduce_scatter");
}

}  // namespace
}  // namespace stepscope::hwbench
