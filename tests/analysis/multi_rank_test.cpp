// Cross-rank analyses: a hand-made three-rank job with one late rank (and
// both NCCL kernel namings), and the 8-rank DLRM trace.
#include <gtest/gtest.h>

#include "analysis/collectives.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

// One rank: a step of `step_ns`, two all-reduces starting at `late_ns` past
// 1 ms and 5 ms and, as synchronous collectives do, ending at the same
// instant on every rank (2 ms and 6 ms); rank 0 also runs an all-gather the
// others never do.
std::unique_ptr<trace::EventStore> rank_store(int rank, int64_t step_ns, int64_t late_ns, bool new_nccl) {
  const std::string ar = new_nccl ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                  : "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
  std::vector<std::string> events = {
      step(1, 0, step_ns),
      launch(100'000, 1000, 1), kernel("volta_sgemm_128x64_nn", 200'000, 700'000 + rank * 100'000, 7, 1),
      launch(900'000, 1000, 2), kernel(ar, 1'000'000 + late_ns, 1'000'000 - late_ns, 20, 2),
      launch(4'000'000, 1000, 3), kernel(ar, 5'000'000 + late_ns, 1'000'000 - late_ns, 20, 3),
  };
  if (rank == 0) {
    events.push_back(launch(6'000'000, 1000, 4));
    events.push_back(kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 7'000'000, 1000, 20, 4));
  }
  auto store = load_inline(events);
  store->rank = rank;
  return store;
}

TEST(MultiRank, LateRankIsTheStraggler) {
  auto r0 = rank_store(0, 10'000'000, 0, false);
  auto r1 = rank_store(1, 11'000'000, 50'000, true);
  auto r2 = rank_store(2, 13'000'000, 600'000, false);
  AnalysisOptions o;
  MultiRankAnalysis m = analyze_ranks(std::vector<const trace::EventStore*>{r2.get(), r0.get(), r1.get()}, o);
  EXPECT_EQ(m.ranks, 3);

  ASSERT_EQ(m.steps.size(), 1u);
  const StepAcrossRanks& s = m.steps[0];
  EXPECT_EQ(s.step, 1);
  EXPECT_EQ(s.cpu.ranks, 3);
  EXPECT_EQ(s.cpu.min_ns, 10'000'000);
  EXPECT_EQ(s.cpu.median_ns, 11'000'000);
  EXPECT_EQ(s.cpu.max_ns, 13'000'000);
  EXPECT_EQ(s.cpu.spread_ns, 3'000'000);
  EXPECT_EQ(s.cpu.fastest_rank, 0);
  EXPECT_EQ(s.cpu.slowest_rank, 2);
  // GPU span of the step: first kernel start (200 µs) to the last end: the
  // all-reduce ending at 6 ms, or rank 0's all-gather at 7.001 ms.
  EXPECT_EQ(s.gpu.min_ns, 6'000'000 - 200'000);
  EXPECT_EQ(s.gpu.fastest_rank, 1);
  EXPECT_EQ(s.gpu.max_ns, 7'001'000 - 200'000);
  EXPECT_EQ(s.gpu.slowest_rank, 0);
  EXPECT_EQ(s.gpu.median_ns, 6'000'000 - 200'000);
  EXPECT_EQ(m.clocks.status, "aligned");  // late starts, common ends: no clock offset

  const CollectiveSkew& c = m.collectives;
  EXPECT_EQ(c.matched_calls, 2);    // both all-reduces, across naming generations
  EXPECT_EQ(c.unmatched_calls, 1);  // rank 0's all-gather
  EXPECT_EQ(c.max_skew_ns, 600'000);
  EXPECT_DOUBLE_EQ(c.mean_skew_us, 600.0);
  ASSERT_EQ(c.ranks.size(), 3u);
  EXPECT_EQ(c.ranks[0].rank, 0);
  EXPECT_DOUBLE_EQ(c.ranks[0].mean_lateness_us, 0.0);
  EXPECT_DOUBLE_EQ(c.ranks[1].mean_lateness_us, 50.0);
  EXPECT_DOUBLE_EQ(c.ranks[2].mean_lateness_us, 600.0);
  EXPECT_EQ(c.ranks[2].max_lateness_ns, 600'000);
  EXPECT_EQ(c.ranks[2].times_last, 2);
  EXPECT_DOUBLE_EQ(c.median_lateness_us, 50.0);
  EXPECT_FALSE(c.ranks[0].straggler);
  EXPECT_FALSE(c.ranks[1].straggler);  // 0 µs past the median
  EXPECT_TRUE(c.ranks[2].straggler);   // 550 µs past the median > 100 µs
  ASSERT_EQ(c.stragglers.size(), 1u);
  EXPECT_EQ(c.stragglers[0], 2);

  const GpuTimeVariance& g = m.gpu_time;
  ASSERT_EQ(g.ranks.size(), 3u);
  EXPECT_EQ(g.ranks[1].compute_time_ns, 800'000);
  EXPECT_DOUBLE_EQ(g.mean_compute_us, 800.0);
  EXPECT_NEAR(g.stddev_compute_us, std::sqrt(20000.0 / 3), 1e-9);  // population: {700, 800, 900}
  EXPECT_EQ(g.compute.spread_ns, 200'000);
  EXPECT_EQ(g.compute.slowest_rank, 2);
}

TEST(MultiRank, SingleRankHasNothingToMatch) {
  auto r0 = rank_store(0, 10'000'000, 0, false);
  MultiRankAnalysis m = analyze_ranks(std::vector<const trace::EventStore*>{r0.get()}, AnalysisOptions{});
  EXPECT_TRUE(m.steps.empty());
  EXPECT_EQ(m.collectives.matched_calls, 0);
  EXPECT_EQ(m.collectives.unmatched_calls, 3);
  EXPECT_TRUE(m.collectives.stragglers.empty());
}

TEST(Collectives, HostRangeNames) {
  EXPECT_EQ(host_collective_op("gloo:all_reduce"), "all_reduce");
  EXPECT_EQ(host_collective_op("nccl:_all_gather_base"), "_all_gather_base");
  EXPECT_EQ(host_collective_op("mpi:broadcast"), "broadcast");
  EXPECT_EQ(host_collective_op("aten::add"), "");          // not a c10d backend
  EXPECT_EQ(host_collective_op("gloo:"), "");              // no op
  EXPECT_EQ(host_collective_op("nccl:all_reduce#3"), "");  // not an op name
  EXPECT_EQ(host_collective_op("ProfilerStep#1"), "");
}

// One CPU-only (gloo) rank: two steps, each with a broadcast and an
// all-reduce on the gloo thread starting `late_ns[k]` past its nominal time;
// the all-reduce ends at the same instant on every rank (85 ms into the step).
std::unique_ptr<trace::EventStore> gloo_rank(int rank, const std::vector<int64_t>& late_ns) {
  auto gloo = [](const std::string& op, int64_t ts, int64_t dur) {
    return stepscope::testing::x_event("user_annotation", "gloo:" + op, us_text(ts), us_text(dur), "1", "9");
  };
  std::vector<std::string> events;
  for (int s = 0; s < 2; ++s) {
    const int64_t t0 = s * 100'000'000;
    events.push_back(step(s + 1, t0, 90'000'000));
    events.push_back(gloo("broadcast", t0 + 1'000'000 + late_ns[2 * s], 500'000));
    events.push_back(gloo("all_reduce", t0 + 40'000'000 + late_ns[2 * s + 1], 45'000'000 - late_ns[2 * s + 1]));
  }
  auto store = load_inline(events);
  store->rank = rank;
  return store;
}

TEST(MultiRank, HostRangesStandInWithoutCommunicationKernels) {
  // Rank 3 arrives 40 ms late at every call; ranks 0-2 jitter by up to 3 ms,
  // rank 1 being last once by more than the 100 µs threshold.
  auto r0 = gloo_rank(0, {0, 2'000'000, 0, 0});
  auto r1 = gloo_rank(1, {3'000'000, 0, 1'000'000, 500'000});
  auto r2 = gloo_rank(2, {1'000'000, 1'000'000, 0, 1'000'000});
  auto r3 = gloo_rank(3, {40'000'000, 40'000'000, 40'000'000, 40'000'000});
  AnalysisOptions o;
  MultiRankAnalysis m = analyze_ranks(std::vector<const trace::EventStore*>{r0.get(), r1.get(), r2.get(), r3.get()}, o);
  const CollectiveSkew& c = m.collectives;
  EXPECT_EQ(c.source, "host_ops");
  EXPECT_EQ(c.matched_calls, 4);  // two broadcasts, two all-reduces on every rank
  EXPECT_EQ(c.unmatched_calls, 0);
  ASSERT_EQ(c.ranks.size(), 4u);
  EXPECT_EQ(c.ranks[3].times_last, 4);
  EXPECT_DOUBLE_EQ(c.ranks[3].mean_lateness_us, 40'000.0);
  // Ranks 1 and 2 are late beyond the median by more than 100 µs on average
  // but are never last in most calls: jitter, not stragglers.
  EXPECT_FALSE(c.ranks[0].straggler);
  EXPECT_FALSE(c.ranks[1].straggler);
  EXPECT_FALSE(c.ranks[2].straggler);
  EXPECT_TRUE(c.ranks[3].straggler);
  ASSERT_EQ(c.stragglers.size(), 1u);
  EXPECT_EQ(c.stragglers[0], 3);
}

TEST(MultiRank, KernelsWinOverHostRanges) {
  // A rank with NCCL kernels and nccl:all_reduce host ranges: only the kernels count.
  std::vector<std::string> events = {
      step(1, 0, 10'000'000),
      stepscope::testing::x_event("cpu_op", "nccl:all_reduce", us_text(900'000), us_text(50'000), "1", "1"),
      launch(920'000, 1000, 1),
      kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 1'000'000, 500'000, 20, 1),
  };
  auto store = load_inline(events);
  AnalysisOptions o;
  RankAnalysis a = analyze_rank(*store, o);
  EXPECT_EQ(a.collectives.source, CollectiveSource::kGpuKernels);
  ASSERT_EQ(a.collectives.calls.size(), 1u);
  EXPECT_EQ(a.collectives.calls[0].start_ns, store->meta.base_time_ns + 1'000'000);
}

TEST(MultiRank, Dlrm8Ranks) {
  SKIP_WITHOUT_SHARED();
  trace::LoadResult lr = load_shared("conformance/param/dlrm_8rank");
  ASSERT_EQ(lr.set.ranks.size(), 8u);
  std::vector<const trace::EventStore*> stores;
  for (const auto& s : lr.set.ranks) stores.push_back(s.get());
  MultiRankAnalysis m = analyze_ranks(stores, AnalysisOptions{});
  EXPECT_EQ(m.ranks, 8);
  // Every rank runs the same 5 send/recv and 3 all-reduce calls.
  EXPECT_EQ(m.collectives.matched_calls, 8);
  EXPECT_EQ(m.collectives.unmatched_calls, 0);
  int64_t last_total = 0;
  bool someone_on_time = false;
  for (const RankLateness& r : m.collectives.ranks) {
    EXPECT_EQ(r.collectives, 8);
    EXPECT_GE(r.mean_lateness_us, 0.0);
    EXPECT_LE(r.mean_lateness_us * 1000.0, static_cast<double>(r.max_lateness_ns) + 1e-6);
    EXPECT_LE(r.max_lateness_ns, m.collectives.max_skew_ns);
    last_total += r.times_last;
    someone_on_time |= r.max_lateness_ns < m.collectives.max_skew_ns;
  }
  EXPECT_EQ(last_total, m.collectives.matched_calls);
  EXPECT_TRUE(someone_on_time);
  // One profiled step on every rank; the spread is max - min of the ranks' durations.
  ASSERT_EQ(m.steps.size(), 1u);
  EXPECT_EQ(m.steps[0].cpu.ranks, 8);
  EXPECT_EQ(m.steps[0].cpu.spread_ns, m.steps[0].cpu.max_ns - m.steps[0].cpu.min_ns);
  EXPECT_GT(m.steps[0].cpu.spread_ns, 0);
  // GPU compute per rank agrees with HTA's temporal breakdown (whole µs).
  nlohmann::json hta = hta_expected("conformance/param/dlrm_8rank");
  for (const RankGpuTime& r : m.gpu_time.ranks) {
    for (const auto& row : hta["temporal_breakdown"]) {
      if (row["rank"].get<int64_t>() == r.rank) {
        EXPECT_EQ(r.compute_time_ns, static_cast<int64_t>(row["compute_time(us)"].get<double>() * 1000));
      }
    }
  }
  EXPECT_EQ(m.gpu_time.compute.ranks, 8);
}

}  // namespace
}  // namespace stepscope::analysis
