// The kernel change rules on hand-made summaries: each threshold on both
// sides of its bar, the merge of name lists, and the top-N cut.
#include <gtest/gtest.h>

#include <algorithm>

#include "diff/kernel_diff.h"

namespace stepscope::diff {
namespace {

KernelUse use(std::string name, double calls, double mean_us) {
  KernelUse k;
  k.name = std::move(name);
  k.count_per_step = calls;
  k.mean_us = mean_us;
  k.us_per_step = calls * mean_us;
  return k;
}

// Summaries hold kernels sorted by name, as summarize_run leaves them.
RunSummary run_of(std::vector<KernelUse> kernels) {
  RunSummary s;
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  s.kernels = std::move(kernels);
  return s;
}

KernelChange change_of(const KernelDiff& d, const std::string& name, bool& found) {
  for (const auto& l : d.lists)
    for (const auto& k : l.top)
      if (k.name == name) {
        found = true;
        return k.change;
      }
  found = false;
  return KernelChange::kAdded;
}

TEST(KernelDiff, MeanMustPassBothBars) {
  RunSummary before = run_of({use("big_4pct", 10, 100), use("big_6pct", 10, 100), use("tiny_50pct", 10, 1.0),
                              use("small_6pct_2us", 10, 30), use("big_faster", 10, 100)});
  RunSummary after = run_of({use("big_4pct", 10, 104), use("big_6pct", 10, 106), use("tiny_50pct", 10, 1.5),
                             use("small_6pct_2us", 10, 32), use("big_faster", 10, 80)});
  KernelDiff d = diff_kernels(before, after, DiffOptions{});
  bool found = false;
  EXPECT_EQ(change_of(d, "big_6pct", found), KernelChange::kSlower);
  EXPECT_TRUE(found);
  // +6.7% and +2 µs: past both bars.
  EXPECT_EQ(change_of(d, "small_6pct_2us", found), KernelChange::kSlower);
  EXPECT_TRUE(found);
  EXPECT_EQ(change_of(d, "big_faster", found), KernelChange::kFaster);
  EXPECT_TRUE(found);
  // 4% (under the share bar) and 0.5 µs (under the µs bar) stay unchanged.
  change_of(d, "big_4pct", found);
  EXPECT_FALSE(found);
  change_of(d, "tiny_50pct", found);
  EXPECT_FALSE(found);
  EXPECT_EQ(d.unchanged, 2u);
  EXPECT_EQ(d.list(KernelChange::kSlower).kernels, 2u);
  EXPECT_NEAR(d.list(KernelChange::kSlower).us_per_step_change, 10 * 6 + 10 * 2, 1e-9);
  EXPECT_NEAR(d.list(KernelChange::kFaster).top[0].mean_change_pct, -20.0, 1e-9);
}

TEST(KernelDiff, CountChangeWithSameMean) {
  RunSummary before = run_of({use("more", 10, 50), use("less", 10, 50), use("same", 10, 50)});
  RunSummary after = run_of({use("more", 20, 50), use("less", 4, 50), use("same", 10.4, 50)});
  KernelDiff d = diff_kernels(before, after, DiffOptions{});
  ASSERT_EQ(d.list(KernelChange::kCalledMore).kernels, 1u);
  EXPECT_EQ(d.list(KernelChange::kCalledMore).top[0].name, "more");
  EXPECT_NEAR(d.list(KernelChange::kCalledMore).top[0].us_per_step_change, 500, 1e-9);
  ASSERT_EQ(d.list(KernelChange::kCalledLess).kernels, 1u);
  EXPECT_EQ(d.list(KernelChange::kCalledLess).top[0].name, "less");
  EXPECT_EQ(d.unchanged, 1u);  // +4% calls is under the 5% bar
}

TEST(KernelDiff, AddedRemovedAndTopCut) {
  std::vector<KernelUse> b, a;
  for (int i = 0; i < 15; ++i) b.push_back(use("gone_" + std::to_string(100 + i), 1, 10.0 * (i + 1)));
  b.push_back(use("kept", 3, 7));
  a.push_back(use("kept", 3, 7));
  a.push_back(use("new_one", 2, 5));
  DiffOptions o;
  o.top_kernels = 4;
  KernelDiff d = diff_kernels(run_of(b), run_of(a), o);
  const auto& removed = d.list(KernelChange::kRemoved);
  EXPECT_EQ(removed.kernels, 15u);
  ASSERT_EQ(removed.top.size(), 4u);
  // Largest time lost first; the list total covers all 15, not the 4 shown.
  EXPECT_EQ(removed.top[0].name, "gone_114");
  EXPECT_EQ(removed.top[3].name, "gone_111");
  EXPECT_NEAR(removed.us_per_step_change, -10.0 * (15 * 16 / 2), 1e-9);
  EXPECT_EQ(removed.top[0].after.count_per_step, 0);
  const auto& added = d.list(KernelChange::kAdded);
  ASSERT_EQ(added.kernels, 1u);
  EXPECT_EQ(added.top[0].before.us_per_step, 0);
  EXPECT_NEAR(added.top[0].after.us_per_step, 10, 1e-9);
  EXPECT_EQ(d.unchanged, 1u);
}

TEST(KernelDiff, ThresholdsAreOptions) {
  RunSummary before = run_of({use("k", 10, 100)});
  RunSummary after = run_of({use("k", 10, 104)});
  DiffOptions o;
  o.kernel_mean_change_pct = 3.0;
  KernelDiff d = diff_kernels(before, after, o);
  EXPECT_EQ(d.list(KernelChange::kSlower).kernels, 1u);
  o.kernel_mean_change_us = 5.0;
  d = diff_kernels(before, after, o);
  EXPECT_EQ(d.list(KernelChange::kSlower).kernels, 0u);
  EXPECT_EQ(d.unchanged, 1u);
}

}  // namespace
}  // namespace stepscope::diff
