// The halves a split detector is made of (detector_part.h): a rank's saving
// and examples computed alone and merged rank by rank give what one pass
// over all ranks gives.
#include "diagnose/detector_part.h"

#include <gtest/gtest.h>

#include <random>

#include "diagnose/detector_support.h"
#include "diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;

RankSaving saving(int64_t rank, double us, double step_us) {
  RankSaving s;
  s.valid = true;
  s.rank = rank;
  s.us = us;
  s.step_us = step_us;
  return s;
}

TEST(RankSaving, MergeKeepsTheLargestAndTheEarlierOfEquals) {
  RankSaving best;
  best.merge(RankSaving{});  // a rank without steps takes no part
  EXPECT_FALSE(best.valid);
  best.merge(saving(3, 10, 100));
  best.merge(saving(4, 10, 50));  // equal: the earlier rank stays
  EXPECT_EQ(best.rank, 3);
  best.merge(saving(5, 12, 200));
  best.merge(RankSaving{});
  EXPECT_EQ(best.rank, 5);
  Finding f;
  best.apply_to(f);
  EXPECT_DOUBLE_EQ(f.estimated_saving_us, 12);
  EXPECT_DOUBLE_EQ(f.estimated_saving_pct, 6);
  EXPECT_EQ(f.saving_rank, 5);
  EXPECT_EQ(f.severity, Severity::kLow);

  Finding none;
  none.estimated_saving_us = 99;
  RankSaving{}.apply_to(none);
  EXPECT_EQ(none.estimated_saving_us, 0);
  EXPECT_EQ(none.saving_rank, -1);
}

TEST(RankSaving, CapsEachStepAtItsWallAndSkipsWarmUp) {
  auto run = diagnose_folder(examples_dir() + "/item_sync");
  RankView v;
  v.store = run->stores[0].get();
  v.attribution = &run->d.attribution[0];
  const RankAttribution& a = run->d.attribution[0];
  ASSERT_GE(a.steps.size(), 3u);
  // Twice each step's wall: capped to the wall, so the saving is the whole step.
  std::vector<int64_t> twice;
  for (const StepAttribution& s : a.steps) twice.push_back(2 * s.wall_ns());
  RankSaving all = RankSaving::of(v, twice);
  EXPECT_TRUE(all.valid);
  EXPECT_EQ(all.rank, v.store->rank);
  EXPECT_NEAR(all.us, all.step_us, 1e-9);
  // Only the first step: skipping it leaves nothing.
  std::vector<int64_t> first_only(a.steps.size(), 0);
  first_only[0] = a.steps[0].wall_ns();
  EXPECT_GT(RankSaving::of(v, first_only).us, 0);
  EXPECT_EQ(RankSaving::of(v, first_only, 1).us, 0);
}

TEST(ExamplePool, RankByRankEqualsOneSortOverAllRanks) {
  // Fresh random weights with many ties (a handful of values), so the
  // order among equals is what is tested.
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int> weight(0, 4), count(0, 9);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<WeightedExample> all;
    ExamplePool merged;
    const int ranks = 1 + trial % 7;
    for (int r = 0; r < ranks; ++r) {
      ExamplePool pool;
      const int n = count(rng);
      for (int i = 0; i < n; ++i) {
        Example e;
        e.rank = r;
        e.name = std::to_string(r) + "/" + std::to_string(i);
        const double w = weight(rng);
        all.push_back({w, e});
        pool.add(w, e);
      }
      pool.trim();
      if (r == 0)
        merged = pool;
      else
        merged.merge(pool);
    }
    const std::vector<Example> want = top_examples(all);
    const std::vector<Example> got = merged.best();
    ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].name, want[i].name) << "trial " << trial << " #" << i;
  }
}

// Remedies replayed rank by rank as the parts are collected (what a per-rank
// summary carries) give the savings that replaying the reported findings'
// remedies gives, on every bundled example with a replayed saving.
TEST(ReplayAsCollected, SameSavingsAsReplayingTheFindings) {
  size_t replayed = 0;
  for (const char* name : {"dataloader_stall", "item_sync", "empty_cache", "foreach_off_adamw", "host_bound_tiny",
                           "fp32_no_tf32", "unfused_qkv_rope"}) {
    DiagnoseOptions eager;
    eager.replay_as_collected = true;
    auto a = diagnose_folder(examples_dir() + "/" + name);
    auto b = diagnose_folder(examples_dir() + "/" + name, eager);
    ASSERT_EQ(a->d.findings.size(), b->d.findings.size()) << name;
    for (size_t i = 0; i < a->d.findings.size(); ++i) {
      const Finding& x = a->d.findings[i];
      const Finding& y = b->d.findings[i];
      EXPECT_EQ(x.title, y.title) << name;
      EXPECT_EQ(x.estimated_saving_us, y.estimated_saving_us) << name << ": " << x.title;
      EXPECT_EQ(x.saving_rank, y.saving_rank) << name << ": " << x.title;
      EXPECT_EQ(x.saving_basis, y.saving_basis) << name << ": " << x.title;
      if (x.saving_basis == SavingBasis::kReplay) ++replayed;
    }
    EXPECT_EQ(a->d.combined_saving_us, b->d.combined_saving_us) << name;
  }
  EXPECT_GE(replayed, 5u);
}

}  // namespace
}  // namespace stepscope::diagnose
