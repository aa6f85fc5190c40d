// Launch queue depth: a hand-made stream whose queue fills to 3 and drains,
// and sanity bounds on every shared trace.
#include <gtest/gtest.h>

#include "analysis/queue_length.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

TEST(QueueLength, FillsAndDrainsByHand) {
  // Launches at 0, 100, 200 ns; kernels [1000,2000), [2000,3000), [3000,4000).
  // Length: 1 on [0,100), 2 on [100,200), 3 on [200,2000), 2 on [2000,3000), 1 on [3000,4000).
  auto store = load_inline({
      launch(0, 50, 1), launch(100, 50, 2), launch(200, 50, 3),
      kernel("k1", 1000, 1000, 7, 1), kernel("k2", 2000, 1000, 7, 2), kernel("k3", 3000, 1000, 7, 3),
      kernel("k_unlaunched", 5000, 10, 7, -1),  // not counted: no launch time
  });
  AnalysisOptions o;
  o.queue_limit = 3;
  QueueLengthResult r = analyze_queue_length(build_gpu_timeline(*store, o), o);
  ASSERT_EQ(r.streams.size(), 1u);
  const StreamQueue& q = r.streams[0];
  EXPECT_EQ(q.stream, 7);
  EXPECT_EQ(q.activities, 3);
  EXPECT_EQ(q.window_start_ns, 0);
  EXPECT_EQ(q.window_end_ns, 4000);
  EXPECT_EQ(q.max_length, 3);
  EXPECT_DOUBLE_EQ(q.mean_length, (1 * 100 + 2 * 100 + 3 * 1800 + 2 * 1000 + 1 * 1000) / 4000.0);
  EXPECT_EQ(q.time_at_limit_ns, 1800);
  EXPECT_EQ(q.time_nonempty_ns, 4000);
  EXPECT_EQ(q.samples.count, 6);
  EXPECT_DOUBLE_EQ(q.samples.mean, (1 + 2 + 3 + 2 + 1 + 0) / 6.0);
  EXPECT_EQ(r.queue_limit, 3);
}

TEST(QueueLength, CompletionBeforeLaunchNeverGoesNegative) {
  // Clock skew: the kernel's end is stamped before its launch call began.
  auto store = load_inline({launch(5000, 100, 1), kernel("k", 1000, 1000, 7, 1)});
  AnalysisOptions o;
  QueueLengthResult r = analyze_queue_length(build_gpu_timeline(*store, o), o);
  ASSERT_EQ(r.streams.size(), 1u);
  EXPECT_EQ(r.streams[0].samples.min, 0.0);
  EXPECT_EQ(r.streams[0].max_length, 1);
  EXPECT_EQ(r.streams[0].time_nonempty_ns, 0);
}

TEST(QueueLength, BoundsOnEverySharedTrace) {
  SKIP_WITHOUT_SHARED();
  int streams = 0;
  for_each_shared_rank([&](const std::string& folder, const RankAnalysis& a) {
    int64_t launched = 0;
    for (const StreamQueue& q : a.queues.streams) {
      SCOPED_TRACE(folder + " stream " + std::to_string(q.stream));
      EXPECT_GE(q.samples.min, 0.0);
      EXPECT_EQ(q.samples.max, static_cast<double>(q.max_length));
      EXPECT_LE(q.mean_length, static_cast<double>(q.max_length));
      EXPECT_GE(q.mean_length, 0.0);
      EXPECT_LE(q.time_nonempty_ns, q.window_end_ns - q.window_start_ns);
      EXPECT_LE(q.time_at_limit_ns, q.time_nonempty_ns);
      EXPECT_EQ(q.samples.count, 2 * q.activities);
      EXPECT_EQ(q.samples.p50 >= 0, true);
      launched += q.activities;
      ++streams;
    }
    EXPECT_EQ(launched, a.launches.launches);
  });
  EXPECT_GT(streams, 20);
}

}  // namespace
}  // namespace stepscope::analysis
