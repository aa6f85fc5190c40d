// Communication-computation overlap: by hand, its bounds on every shared
// trace, and HTA 0.6.1's per-rank percentages on the 8-rank DLRM trace.
#include <gtest/gtest.h>

#include "analysis/comm_overlap.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

TEST(CommOverlap, HandChecked) {
  // comm [1000, 5000) and [8000, 9000); compute [0, 2000), [1500, 3000), [8500, 12000).
  // union(compute) = [0,3000) + [8500,12000); overlap = [1000,3000) + [8500,9000) = 2500 of 5000.
  auto store = load_inline({
      kernel("sgemm_a", 0, 2000, 7, -1),
      kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 4000, 20, -1),
      kernel("sgemm_b", 1500, 1500, 8, -1),
      kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 8000, 1000, 20, -1),
      kernel("sgemm_c", 8500, 3500, 7, -1),
      kernel("Memset (Device)", 4000, 100, 9, -1, "gpu_memset"),
  });
  CommOverlap r = analyze_comm_overlap(build_gpu_timeline(*store, AnalysisOptions{}));
  EXPECT_EQ(r.communication_time_ns, 5000);
  EXPECT_EQ(r.computation_time_ns, 3000 + 3500);
  EXPECT_EQ(r.overlapped_time_ns, 2500);
  ASSERT_TRUE(r.overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(*r.overlap_pct, 50.0);
}

TEST(CommOverlap, NoCommunicationIsNull) {
  auto store = load_inline({kernel("sgemm_a", 0, 2000, 7, -1)});
  CommOverlap r = analyze_comm_overlap(build_gpu_timeline(*store, AnalysisOptions{}));
  EXPECT_FALSE(r.overlap_pct.has_value());
  EXPECT_EQ(r.communication_time_ns, 0);
}

TEST(CommOverlap, WithinBoundsOnEverySharedTrace) {
  SKIP_WITHOUT_SHARED();
  int with_comm = 0;
  for_each_shared_rank([&](const std::string& folder, const RankAnalysis& a) {
    SCOPED_TRACE(folder);
    EXPECT_LE(a.overlap.overlapped_time_ns, a.overlap.communication_time_ns);
    EXPECT_LE(a.overlap.overlapped_time_ns, a.overlap.computation_time_ns);
    EXPECT_EQ(a.overlap.communication_time_ns, a.temporal.rank.communication_time_ns);
    if (a.overlap.overlap_pct) {
      EXPECT_GE(*a.overlap.overlap_pct, 0.0);
      EXPECT_LE(*a.overlap.overlap_pct, 100.0);
      ++with_comm;
    } else {
      EXPECT_EQ(a.kernels.classes[static_cast<int>(KernelClass::kCommunication)].duration.count, 0);
    }
  });
  EXPECT_GE(with_comm, 9);  // the 8 DLRM ranks and the NCCL trace at least
}

TEST(CommOverlap, MatchesHtaOnDlrm8Ranks) {
  SKIP_WITHOUT_SHARED();
  const std::string folder = "conformance/param/dlrm_8rank";
  trace::LoadResult lr = load_shared(folder);
  nlohmann::json hta = hta_expected(folder);
  ASSERT_EQ(lr.set.ranks.size(), 8u);
  for (const auto& store : lr.set.ranks) {
    RankAnalysis a = analyze_rank(*store, AnalysisOptions{});
    double expected = -1;
    for (const auto& row : hta["comm_comp_overlap"]) {
      if (row["rank"].get<int64_t>() == a.rank) expected = row["comp_comm_overlap_pctg"].get<double>();
    }
    ASSERT_TRUE(a.overlap.overlap_pct.has_value());
    // HTA rounds to 2 decimals; the traces are whole µs, so only that rounding differs.
    EXPECT_NEAR(*a.overlap.overlap_pct, expected, 0.005 + 1e-9) << "rank " << a.rank;
  }
}

}  // namespace
}  // namespace stepscope::analysis
