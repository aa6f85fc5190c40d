// Clock offsets across ranks (clock_alignment.h): a rank whose clock is off
// by 1000 s gives the same collective skew and stragglers as on synchronized
// clocks, with a warning; real traces are left alone; ranks with nothing to
// align from and disjoint time ranges get no cross-rank time figures.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "analysis/analysis_fixtures.h"
#include "cli_run.h"
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

// `text` with every `"ts": <digits>` moved by `add_us` whole µs (the
// fraction kept): a copy of the file as a rank with another clock writes it.
std::string shift_ts_text(const std::string& text, int64_t add_us) {
  std::string out;
  out.reserve(text.size() + text.size() / 50);
  const std::string key = "\"ts\": ";
  size_t pos = 0;
  for (size_t hit; (hit = text.find(key, pos)) != std::string::npos;) {
    size_t digits = hit + key.size(), end = digits;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    out.append(text, pos, digits - pos);
    if (end > digits) {
      out += std::to_string(std::stoll(text.substr(digits, end - digits)) + add_us);
    }
    pos = end;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

// End to end: rank 3's file rewritten 1000 s later. `analyze` warns once
// about the clocks, reports the offset, and keeps rank 7 the straggler with
// the unshifted skew.
TEST(ClockAlignment, CliRewrittenRankFileIsAlignedWithAWarning) {
  stepscope::testing::TempDir dir;
  const std::string src = stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler/";
  for (int r = 0; r < 8; ++r) {
    std::string text = stepscope::testing::gunzip_file(src + "rank" + std::to_string(r) + ".json.gz");
    dir.write("shifted/rank" + std::to_string(r) + ".json", r == 3 ? shift_ts_text(text, 1'000'000'000) : text);
  }
  auto before = stepscope::testing::run_cli(dir, {"analyze", "-q", "--json", "-", src});
  auto after = stepscope::testing::run_cli(dir, {"analyze", "-q", "--json", "-", dir.file("shifted")});
  ASSERT_EQ(before.exit_code, 0);
  ASSERT_EQ(after.exit_code, 0);
  EXPECT_TRUE(before.err_lines.empty());
  ASSERT_EQ(after.err_lines.size(), 1u);
  EXPECT_EQ(after.err_lines[0].rfind("stepscope: warning: rank clocks disagree: ", 0), 0u) << after.err_lines[0];
  EXPECT_NE(after.err_lines[0].find("rank 3 by -1000.0000"), std::string::npos) << after.err_lines[0];
  const auto b = nlohmann::json::parse(before.out)["multi_rank"];
  const auto a = nlohmann::json::parse(after.out)["multi_rank"];
  EXPECT_EQ(b["clock_alignment"]["status"], "aligned");
  EXPECT_EQ(a["clock_alignment"]["status"], "corrected");
  const auto& c3 = a["clock_alignment"]["ranks"][3];
  EXPECT_EQ(c3["rank"], 3);
  EXPECT_TRUE(c3["corrected"].get<bool>());
  const double natural_us = b["clock_alignment"]["ranks"][3]["offset_us"].get<double>();
  EXPECT_NEAR(c3["offset_us"].get<double>(), 1e9 + natural_us, 1e-3);
  EXPECT_EQ(a["collective_skew"]["stragglers"], b["collective_skew"]["stragglers"]);
  EXPECT_EQ(a["collective_skew"]["stragglers"][0], 7);
  EXPECT_NEAR(a["collective_skew"]["mean_skew_us"].get<double>(), b["collective_skew"]["mean_skew_us"].get<double>(),
              std::abs(natural_us) + 1e-3);
}

}  // namespace
}  // namespace stepscope::analysis
