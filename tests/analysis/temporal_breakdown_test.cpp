// Temporal breakdown: hand-checked on a tiny trace, the exact identity on
// every shared trace, and HTA 0.6.1's numbers on traces written in whole µs
// (where its integer arithmetic and ours coincide exactly).
#include <gtest/gtest.h>

#include "analysis/gpu_timeline.h"
#include "analysis/rank_analysis.h"
#include "analysis/temporal_breakdown.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

TEST(TemporalBreakdown, HandCheckedTwoStreams) {
  // stream 7: gemm [1000,3000) ns, allreduce on stream 20 [2500,5000), memcpy [6000,6500), gemm [6400,7000).
  auto store = load_inline({
      kernel("volta_sgemm_128x64_nn", 1000, 2000, 7, 1),
      kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 2500, 2500, 20, 2),
      kernel("Memcpy DtoD (Device -> Device)", 6000, 500, 7, 3, "gpu_memcpy"),
      kernel("volta_sgemm_128x64_nn", 6400, 600, 7, 4),
  });
  AnalysisOptions o;
  GpuTimeline t = build_gpu_timeline(*store, o);
  ASSERT_EQ(t.activities.size(), 4u);
  TemporalResult r = analyze_temporal(t, {}, {});
  const TemporalBreakdown& b = r.rank;
  EXPECT_EQ(b.start_ns, 1000);
  EXPECT_EQ(b.end_ns, 7000);
  EXPECT_EQ(b.kernel_time_ns, 6000);
  EXPECT_EQ(b.busy_time_ns, 4000 + 1000);       // [1000,5000) and [6000,7000)
  EXPECT_EQ(b.idle_time_ns, 1000);              // [5000,6000)
  EXPECT_EQ(b.compute_time_ns, 2000 + 600);     // both gemms
  EXPECT_EQ(b.non_compute_time_ns, 5000 - 2600);
  EXPECT_EQ(b.communication_time_ns, 2500);
  EXPECT_EQ(b.memory_time_ns, 500);
  EXPECT_DOUBLE_EQ(b.idle_pct, 100.0 * 1000 / 6000);
  EXPECT_DOUBLE_EQ(b.idle_pct + b.compute_pct + b.non_compute_pct, 100.0);
}

TEST(TemporalBreakdown, EmptyTimelineIsAllZero) {
  auto store = load_inline({launch(10, 5, 1)});
  GpuTimeline t = build_gpu_timeline(*store, AnalysisOptions{});
  TemporalResult r = analyze_temporal(t, {}, {});
  EXPECT_EQ(r.rank.activities, 0);
  EXPECT_EQ(r.rank.kernel_time_ns, 0);
  EXPECT_EQ(r.rank.idle_pct, 0.0);
}

TEST(TemporalBreakdown, IdentityHoldsOnEverySharedTrace) {
  SKIP_WITHOUT_SHARED();
  int checked = 0;
  for_each_shared_rank([&](const std::string& folder, const RankAnalysis& a) {
    const TemporalBreakdown& b = a.temporal.rank;
    SCOPED_TRACE(folder + " rank " + std::to_string(a.rank));
    EXPECT_EQ(b.idle_time_ns + b.compute_time_ns + b.non_compute_time_ns, b.kernel_time_ns);
    EXPECT_GE(b.idle_time_ns, 0);
    EXPECT_GE(b.non_compute_time_ns, 0);
    EXPECT_LE(b.busy_time_ns, b.kernel_time_ns);
    EXPECT_LE(b.compute_time_ns, b.busy_time_ns);
    EXPECT_LE(b.communication_time_ns, b.busy_time_ns);
    EXPECT_EQ(b.activities, a.gpu_activities);
    for (const auto& s : a.temporal.steps) {
      const TemporalBreakdown& sb = s.breakdown;
      EXPECT_EQ(sb.idle_time_ns + sb.compute_time_ns + sb.non_compute_time_ns, sb.kernel_time_ns);
      EXPECT_GE(sb.idle_time_ns, 0);
    }
    ++checked;
  });
  EXPECT_GE(checked, 20);
}

// HTA reports whole µs; on traces whose timestamps are whole µs its
// numbers are exact, so ours must equal them to the ns.
void expect_matches_hta(const std::string& folder) {
  trace::LoadResult lr = load_shared(folder);
  nlohmann::json hta = hta_expected(folder);
  ASSERT_TRUE(hta["temporal_breakdown"].is_array());
  ASSERT_EQ(hta["temporal_breakdown"].size(), lr.set.ranks.size());
  for (size_t i = 0; i < lr.set.ranks.size(); ++i) {
    RankAnalysis a = analyze_rank(*lr.set.ranks[i], AnalysisOptions{});
    const nlohmann::json* row = nullptr;
    for (const auto& r : hta["temporal_breakdown"])
      if (r["rank"].get<int64_t>() == a.rank) row = &r;
    ASSERT_NE(row, nullptr) << "rank " << a.rank;
    const TemporalBreakdown& b = a.temporal.rank;
    SCOPED_TRACE(folder + " rank " + std::to_string(a.rank));
    EXPECT_EQ(b.kernel_time_ns, (*row)["kernel_time(us)"].get<double>() * 1000);
    EXPECT_EQ(b.idle_time_ns, (*row)["idle_time(us)"].get<double>() * 1000);
    EXPECT_EQ(b.compute_time_ns, (*row)["compute_time(us)"].get<double>() * 1000);
    EXPECT_EQ(b.non_compute_time_ns, (*row)["non_compute_time(us)"].get<double>() * 1000);
    // HTA rounds percentages to 2 decimals.
    EXPECT_NEAR(b.idle_pct, (*row)["idle_time_pctg"].get<double>(), 0.005 + 1e-9);
    EXPECT_NEAR(b.compute_pct, (*row)["compute_time_pctg"].get<double>(), 0.005 + 1e-9);
  }
}

TEST(TemporalBreakdown, MatchesHtaOnWholeMicrosecondTraces) {
  SKIP_WITHOUT_SHARED();
  expect_matches_hta("conformance/param/linear");
  expect_matches_hta("conformance/param/resnet");
  expect_matches_hta("conformance/param/dlrm_8rank");
}

TEST(TemporalBreakdown, PerStepOnH200) {
  SKIP_WITHOUT_SHARED();
  trace::LoadResult lr = load_shared("traces/h200/gpt_baseline_bf16");
  ASSERT_EQ(lr.set.ranks.size(), 1u);
  RankAnalysis a = analyze_rank(*lr.set.ranks[0], AnalysisOptions{});
  ASSERT_EQ(a.steps.steps.size(), 4u);
  ASSERT_EQ(a.temporal.steps.size(), 4u);
  int64_t step_activities = 0;
  for (size_t i = 0; i < 4; ++i) {
    const StepSpan& s = a.steps.steps[i];
    const TemporalBreakdown& b = a.temporal.steps[i].breakdown;
    EXPECT_EQ(a.temporal.steps[i].step, s.step);
    EXPECT_EQ(b.activities, s.gpu_activities);
    EXPECT_GT(b.activities, 100);
    EXPECT_EQ(b.start_ns, s.gpu_start_ns);
    EXPECT_EQ(b.end_ns, s.gpu_end_ns);
    EXPECT_EQ(b.kernel_time_ns, s.gpu_duration_ns);
    EXPECT_GT(b.compute_time_ns, 0);
    step_activities += b.activities;
  }
  EXPECT_EQ(step_activities + a.steps.unattributed_activities, a.gpu_activities);
}

}  // namespace
}  // namespace stepscope::analysis
