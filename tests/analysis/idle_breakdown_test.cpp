// Idle breakdown per stream: each gap's category on a hand-made trace, the
// exact partition of idle time on every shared trace, and HTA 0.6.1's
// numbers on whole-µs traces.
#include <gtest/gtest.h>

#include "analysis/idle_breakdown.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

TEST(IdleBreakdown, EachGapCategoryByHand) {
  // Stream 7, threshold 30 µs (default):
  //   A [0, 10000)
  //   B [15000, 20000): launched at 12000 > A's end 10000 -> host_wait 5000
  //   C [22000, 30000): launched at 16000 (queued), gap 2000 < 30000 -> kernel_wait 2000
  //   D [90000, 91000): launched at 17000 (queued), gap 60000 >= 30000 -> other 60000
  //   E [91500, 92000): no launch, gap 500 < threshold -> kernel_wait 500
  auto store = load_inline({
      launch(0, 500, 1), kernel("k_a", 0, 10000, 7, 1),
      launch(12000, 1000, 2), kernel("k_b", 15000, 5000, 7, 2),
      launch(16000, 500, 3), kernel("k_c", 22000, 8000, 7, 3),
      launch(17000, 500, 4), kernel("k_d", 90000, 1000, 7, 4),
      kernel("k_e", 91500, 500, 7, -1),
      // Another stream: one kernel only, no gaps.
      launch(100, 10, 5), kernel("k_other_stream", 1000, 1000, 20, 5),
  });
  AnalysisOptions o;
  GpuTimeline t = build_gpu_timeline(*store, o);
  IdleBreakdownResult r = analyze_idle(t, o);
  ASSERT_EQ(r.streams.size(), 2u);
  const StreamIdle& s = r.streams[0];
  EXPECT_EQ(s.stream, 7);
  EXPECT_EQ(s.activities, 5);
  EXPECT_EQ(s.host_wait_ns, 5000);
  EXPECT_EQ(s.host_wait_gaps, 1);
  EXPECT_EQ(s.kernel_wait_ns, 2500);
  EXPECT_EQ(s.kernel_wait_gaps, 2);
  EXPECT_EQ(s.other_ns, 60000);
  EXPECT_EQ(s.other_gaps, 1);
  EXPECT_EQ(s.idle_ns, 67500);
  EXPECT_EQ(s.span_ns, 92000);
  EXPECT_EQ(s.busy_ns, 92000 - 67500);
  EXPECT_DOUBLE_EQ(s.host_wait_ratio, 5000.0 / 67500);
  const StreamIdle& other = r.streams[1];
  EXPECT_EQ(other.stream, 20);
  EXPECT_EQ(other.idle_ns, 0);
  EXPECT_EQ(other.host_wait_ratio, 0.0);

  // A lower threshold turns the 2000 ns queued gap into "other".
  o.kernel_wait_threshold_ns = 1000;
  IdleBreakdownResult low = analyze_idle(t, o);
  EXPECT_EQ(low.streams[0].kernel_wait_ns, 500);
  EXPECT_EQ(low.streams[0].other_ns, 62000);
  EXPECT_EQ(low.kernel_wait_threshold_ns, 1000);
}

TEST(IdleBreakdown, OverlappingWorkOnAStreamIsNotIdle) {
  // Two activities overlap on one stream (seen with clock jitter); the gap
  // after them counts from the later end.
  auto store = load_inline({
      kernel("k1", 0, 5000, 7, -1),
      kernel("k2", 1000, 8000, 7, -1),   // ends 9000
      kernel("k3", 9500, 100, 7, -1),    // gap 500 from 9000
  });
  AnalysisOptions o;
  IdleBreakdownResult r = analyze_idle(build_gpu_timeline(*store, o), o);
  ASSERT_EQ(r.streams.size(), 1u);
  EXPECT_EQ(r.streams[0].idle_ns, 500);
  EXPECT_EQ(r.streams[0].busy_ns, 9100);
  EXPECT_EQ(r.streams[0].span_ns, 9600);
}

TEST(IdleBreakdown, CategoriesPartitionIdleOnEverySharedTrace) {
  SKIP_WITHOUT_SHARED();
  int streams = 0;
  for_each_shared_rank([&](const std::string& folder, const RankAnalysis& a) {
    int64_t activities = 0;
    for (const StreamIdle& s : a.idle.streams) {
      SCOPED_TRACE(folder + " stream " + std::to_string(s.stream));
      EXPECT_EQ(s.host_wait_ns + s.kernel_wait_ns + s.other_ns, s.idle_ns);
      EXPECT_EQ(s.idle_ns, s.span_ns - s.busy_ns);
      EXPECT_GE(s.host_wait_ns, 0);
      EXPECT_GE(s.kernel_wait_ns, 0);
      EXPECT_GE(s.other_ns, 0);
      if (s.idle_ns > 0) {
        EXPECT_NEAR(s.host_wait_ratio + s.kernel_wait_ratio + s.other_ratio, 1.0, 1e-12);
      }
      activities += s.activities;
      ++streams;
    }
    EXPECT_EQ(activities, a.gpu_activities);
  });
  EXPECT_GT(streams, 30);
}

// HTA 0.6.1 on whole-µs traces: its per-category sums are exact there.
void expect_matches_hta(const std::string& folder) {
  trace::LoadResult lr = load_shared(folder);
  ASSERT_EQ(lr.set.ranks.size(), 1u);
  RankAnalysis a = analyze_rank(*lr.set.ranks[0], AnalysisOptions{});
  nlohmann::json hta = hta_expected(folder);
  int compared = 0;
  for (const auto& row : hta["idle_time_breakdown"]) {
    const int64_t stream = row["stream"].get<int64_t>();
    const auto it = std::find_if(a.idle.streams.begin(), a.idle.streams.end(),
                                 [&](const StreamIdle& s) { return s.stream == stream; });
    ASSERT_NE(it, a.idle.streams.end()) << folder << " stream " << stream;
    const int64_t hta_ns = static_cast<int64_t>(row["idle_time"].get<double>() * 1000);
    const std::string cat = row["idle_category"].get<std::string>();
    SCOPED_TRACE(folder + " stream " + std::to_string(stream) + " " + cat);
    if (cat == "host_wait") {
      EXPECT_EQ(it->host_wait_ns, hta_ns);
    } else if (cat == "kernel_wait") {
      EXPECT_EQ(it->kernel_wait_ns, hta_ns);
    } else if (cat == "other") {
      EXPECT_EQ(it->other_ns, hta_ns);
    } else {
      ADD_FAILURE() << "unknown category " << cat;
    }
    ++compared;
  }
  EXPECT_GE(compared, 3);
}

TEST(IdleBreakdown, MatchesHtaOnWholeMicrosecondTraces) {
  SKIP_WITHOUT_SHARED();
  expect_matches_hta("conformance/param/linear");
  expect_matches_hta("conformance/param/resnet");
}

}  // namespace
}  // namespace stepscope::analysis
