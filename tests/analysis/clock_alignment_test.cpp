// Clock offsets across ranks (clock_alignment.h): a rank whose clock is off
// by 1000 s gives the same collective skew and stragglers as on synchronized
// clocks, with a warning; real traces are left alone; ranks with nothing to
// align from and disjoint time ranges get no cross-rank time figures.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "analysis/analysis_fixtures.h"
#include "analysis/clock_alignment.h"
#include "analysis/multi_rank.h"

namespace stepscope::analysis {
namespace {

using testing_support::host_span;
using testing_support::load_inline;
using testing_support::load_shared;

constexpr int64_t kThousandSeconds = 1'000'000'000'000;  // ns

// Every record of the rank moved by `ns`: what rewriting its "ts" values in
// the file does to the parsed store.
void shift_clock(trace::EventStore& store, int64_t ns) {
  for (int64_t& t : store.events.ts_ns) t += ns;
}

MultiRankAnalysis analyse(const trace::LoadResult& lr) {
  std::vector<const trace::EventStore*> stores;
  for (const auto& s : lr.set.ranks) stores.push_back(s.get());
  return analyze_ranks(stores, AnalysisOptions{});
}

const RankClock& clock_of(const MultiRankAnalysis& m, int64_t rank) {
  for (const auto& c : m.clocks.ranks)
    if (c.rank == rank) return c;
  throw std::runtime_error("no rank");
}

// Shifts `rank` by +1000 s and checks every collective figure against the
// unshifted run. The estimate is the median end difference, which on the real
// clocks is clock_of(before, rank).offset_ns, not 0: the shifted rank's times
// land that far from where they were, so lateness and skew agree within it.
void expect_shift_undone(const std::string& folder, int64_t rank) {
  trace::LoadResult lr = load_shared(folder);
  ASSERT_GT(lr.set.ranks.size(), static_cast<size_t>(rank));
  const MultiRankAnalysis before = analyse(lr);
  EXPECT_EQ(before.clocks.status, "aligned") << folder;
  EXPECT_TRUE(before.warnings.empty()) << folder;
  for (const auto& c : before.clocks.ranks) EXPECT_FALSE(c.corrected) << folder << " rank " << c.rank;

  for (auto& s : lr.set.ranks)
    if (s->rank == rank) shift_clock(*s, kThousandSeconds);
  const MultiRankAnalysis after = analyse(lr);
  const int64_t natural = clock_of(before, rank).offset_ns;
  const RankClock& c = clock_of(after, rank);
  EXPECT_TRUE(c.corrected);
  EXPECT_EQ(c.offset_ns, kThousandSeconds + natural);  // the median moves with every difference
  EXPECT_EQ(after.clocks.status, "corrected");
  ASSERT_EQ(after.warnings.size(), 1u);
  EXPECT_NE(after.warnings[0].find(fmt::format("rank {} by {:+.6f} s", rank, -static_cast<double>(c.offset_ns) / 1e9)),
            std::string::npos)
      << after.warnings[0];
  const double tol_us = std::abs(static_cast<double>(natural)) / 1000.0 + 1e-6;
  EXPECT_EQ(after.collectives.matched_calls, before.collectives.matched_calls);
  EXPECT_NEAR(after.collectives.mean_skew_us, before.collectives.mean_skew_us, tol_us);
  EXPECT_NEAR(static_cast<double>(after.collectives.max_skew_ns), static_cast<double>(before.collectives.max_skew_ns),
              tol_us * 1000.0);
  EXPECT_EQ(after.collectives.stragglers, before.collectives.stragglers);
  for (size_t i = 0; i < before.collectives.ranks.size(); ++i)
    EXPECT_NEAR(after.collectives.ranks[i].mean_lateness_us, before.collectives.ranks[i].mean_lateness_us, tol_us);
  // Durations need no alignment: the step spread is untouched.
  ASSERT_EQ(after.steps.size(), before.steps.size());
  for (size_t i = 0; i < before.steps.size(); ++i) EXPECT_EQ(after.steps[i].cpu.spread_ns, before.steps[i].cpu.spread_ns);
}

TEST(ClockAlignment, SynchronizingOps) {
  EXPECT_TRUE(is_synchronizing_op("allreduce"));
  EXPECT_TRUE(is_synchronizing_op("allgatherbase"));
  EXPECT_TRUE(is_synchronizing_op("reducescatter"));
  EXPECT_TRUE(is_synchronizing_op("alltoallv"));
  EXPECT_TRUE(is_synchronizing_op("barrier"));
  EXPECT_FALSE(is_synchronizing_op("broadcast"));
  EXPECT_FALSE(is_synchronizing_op("sendrecv"));
  EXPECT_FALSE(is_synchronizing_op("reduce"));
}

// gloo on CPU, rank 7 sleeps 40 ms a step: it must stay the straggler, with
// or without a 1000 s clock offset on another rank or on itself.
TEST(ClockAlignment, GlooStragglerKeepsItsVerdictWithShiftedClocks) {
  trace::LoadResult lr = trace::load_traces({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler"}, {});
  ASSERT_TRUE(lr.ok) << lr.error;
  const MultiRankAnalysis m = analyse(lr);
  EXPECT_EQ(m.clocks.status, "aligned");
  EXPECT_TRUE(m.warnings.empty());
  ASSERT_FALSE(m.collectives.stragglers.empty());
  EXPECT_EQ(m.collectives.stragglers.front(), 7);
}

TEST(ClockAlignment, GlooStragglerShiftedRank3) {
  // load_shared reads under ../shared; the gloo set is under tests/data.
  trace::LoadResult lr = trace::load_traces({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler"}, {});
  ASSERT_TRUE(lr.ok) << lr.error;
  const MultiRankAnalysis before = analyse(lr);
  for (auto& s : lr.set.ranks)
    if (s->rank == 3) shift_clock(*s, kThousandSeconds);
  const MultiRankAnalysis after = analyse(lr);
  EXPECT_EQ(after.clocks.status, "corrected");
  ASSERT_EQ(after.warnings.size(), 1u);
  // Old code: mean skew ~1e9 µs and rank 3 the straggler.
  const double tol_us = std::abs(static_cast<double>(clock_of(before, 3).offset_ns)) / 1000.0 + 1e-6;
  EXPECT_NEAR(after.collectives.mean_skew_us, before.collectives.mean_skew_us, tol_us);
  EXPECT_LT(after.collectives.max_skew_ns, 1'000'000'000);  // below 1 s
  EXPECT_EQ(after.collectives.stragglers, before.collectives.stragglers);
  ASSERT_FALSE(after.collectives.stragglers.empty());
  EXPECT_EQ(after.collectives.stragglers.front(), 7);
}

TEST(ClockAlignment, GlooStragglerShiftedItself) {
  trace::LoadResult lr = trace::load_traces({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler"}, {});
  ASSERT_TRUE(lr.ok) << lr.error;
  const MultiRankAnalysis before = analyse(lr);
  for (auto& s : lr.set.ranks)
    if (s->rank == 7) shift_clock(*s, kThousandSeconds);
  const MultiRankAnalysis after = analyse(lr);
  EXPECT_TRUE(clock_of(after, 7).corrected);
  EXPECT_EQ(after.collectives.stragglers, before.collectives.stragglers);
  const double tol_us = std::abs(static_cast<double>(clock_of(before, 7).offset_ns)) / 1000.0 + 1e-6;
  EXPECT_NEAR(after.collectives.mean_skew_us, before.collectives.mean_skew_us, tol_us);
}

TEST(ClockAlignment, HealthyGlooSetIsLeftAlone) {
  trace::LoadResult lr = trace::load_traces({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/healthy"}, {});
  ASSERT_TRUE(lr.ok) << lr.error;
  const MultiRankAnalysis m = analyse(lr);
  EXPECT_EQ(m.clocks.status, "aligned");
  EXPECT_TRUE(m.warnings.empty());
  for (const auto& c : m.clocks.ranks) EXPECT_FALSE(c.corrected);
}

// NCCL kernels on 8 GPUs (all-reduce and send/recv).
TEST(ClockAlignment, Dlrm8RanksShiftedRank5) {
  SKIP_WITHOUT_SHARED();
  expect_shift_undone("conformance/param/dlrm_8rank", 5);
}

// Two ranks with only broadcasts (no synchronizing call) whose recorded
// times do not overlap: skew and stragglers are withheld, with one warning.
TEST(ClockAlignment, NothingToAlignAndDisjointRangesIsRefused) {
  auto a = load_inline({host_span("user_annotation", "gloo:broadcast", 1'000'000, 5'000),
                        host_span("user_annotation", "gloo:broadcast", 2'000'000, 5'000)});
  auto b = load_inline({host_span("user_annotation", "gloo:broadcast", 1'000'000 + kThousandSeconds, 5'000),
                        host_span("user_annotation", "gloo:broadcast", 2'000'000 + kThousandSeconds, 5'000)});
  a->rank = 0;
  b->rank = 1;
  MultiRankAnalysis m = analyze_ranks(std::vector<const trace::EventStore*>{a.get(), b.get()}, AnalysisOptions{});
  EXPECT_EQ(m.clocks.status, "refused");
  EXPECT_TRUE(m.collectives.withheld);
  EXPECT_EQ(m.collectives.matched_calls, 0);
  EXPECT_TRUE(m.collectives.stragglers.empty());
  EXPECT_EQ(m.collectives.max_skew_ns, 0);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("ranks 0 and 1 recorded disjoint time ranges"), std::string::npos) << m.warnings[0];

  // The same calls on overlapping clocks: compared as before, no warning.
  auto c = load_inline({host_span("user_annotation", "gloo:broadcast", 1'000'500, 5'000),
                        host_span("user_annotation", "gloo:broadcast", 2'000'500, 5'000)});
  c->rank = 1;
  m = analyze_ranks(std::vector<const trace::EventStore*>{a.get(), c.get()}, AnalysisOptions{});
  EXPECT_EQ(m.clocks.status, "unchecked");
  EXPECT_FALSE(m.collectives.withheld);
  EXPECT_EQ(m.collectives.matched_calls, 2);
  EXPECT_TRUE(m.warnings.empty());
}

}  // namespace
}  // namespace stepscope::analysis
