// `diff` on the shared traces (../shared): several ranks, traces without
// step markers, and activities outside the profiled steps. Skipped when
// ../shared is absent.
#include <gtest/gtest.h>

#include "diff_fixtures.h"

namespace stepscope::diff {
namespace {

using testing_support::input_of;
using testing_support::loaded_run;

std::string shared(const std::string& rel) { return testing::shared_dir() + "/" + rel; }

// Only GPU work launched inside a ProfilerStep counts toward the per-step
// kernel numbers; this trace launches a few activities outside its steps.
TEST(SharedTraces, KernelsOutsideStepsAreNotCounted) {
  SKIP_WITHOUT_SHARED();
  const auto& run = loaded_run(shared("traces/h200/gpt_baseline_bf16"));
  ASSERT_TRUE(run.ok) << run.error;
  ASSERT_EQ(run.report.ranks.size(), 1u);
  const auto& steps = run.report.ranks[0].steps.steps;
  ASSERT_FALSE(steps.empty());
  int64_t in_steps = 0;
  for (const auto& s : steps) in_steps += s.gpu_activities;
  ASSERT_LT(in_steps, run.report.ranks[0].gpu_activities);
  RunSummary s = summarize_run(input_of(run), {});
  EXPECT_EQ(s.windows, static_cast<int64_t>(steps.size()));
  EXPECT_DOUBLE_EQ(s.kernels_per_step, static_cast<double>(in_steps) / static_cast<double>(s.windows));
}

// Eight ranks pooled: one window per rank-step; the run against itself is
// unchanged, and against one of its ranks the rank-count note appears.
TEST(SharedTraces, EightRanks) {
  SKIP_WITHOUT_SHARED();
  const auto& all = loaded_run(shared("conformance/param/dlrm_8rank"));
  ASSERT_TRUE(all.ok) << all.error;
  ASSERT_EQ(all.report.ranks.size(), 8u);
  int64_t steps = 0;
  double wall_us = 0;
  for (size_t i = 0; i < all.report.ranks.size(); ++i) {
    steps += static_cast<int64_t>(all.report.diagnosis->attribution[i].steps.size());
    wall_us += static_cast<double>(all.report.diagnosis->attribution[i].total.wall_ns()) / 1000.0;
  }
  DiffResult self = diff_runs(input_of(all), input_of(all), {}, {});
  EXPECT_EQ(self.before.ranks, 8);
  EXPECT_EQ(self.before.windows, steps);
  EXPECT_NEAR(self.step_us.before, wall_us / static_cast<double>(steps), 1e-6);
  EXPECT_EQ(self.step_us.change, 0.0);
  for (const auto& l : self.kernels.lists) EXPECT_EQ(l.kernels, 0u);
  EXPECT_TRUE(self.notes.empty());

  const auto& one = loaded_run(shared("conformance/param/dlrm_8rank/worker0_*.json.gz"));
  ASSERT_TRUE(one.ok) << one.error;
  ASSERT_EQ(one.report.ranks.size(), 1u);
  DiffResult d = diff_runs(input_of(all), input_of(one), {}, {});
  EXPECT_EQ(d.after.ranks, 1);
  bool rank_note = false;
  for (const auto& n : d.notes) rank_note |= n.find("different rank counts") != std::string::npos;
  EXPECT_TRUE(rank_note);
}

// Without ProfilerStep markers the one window is the GPU's active span: the
// diff says so, and its "step" time is that span.
TEST(SharedTraces, NoStepMarkers) {
  SKIP_WITHOUT_SHARED();
  const auto& run = loaded_run(shared("conformance/param/linear"));
  ASSERT_TRUE(run.ok) << run.error;
  ASSERT_TRUE(run.report.ranks[0].steps.steps.empty());
  DiffResult d = diff_runs(input_of(run), input_of(run), {}, {});
  EXPECT_FALSE(d.before.from_profiler_steps);
  EXPECT_EQ(d.before.windows, 1);
  EXPECT_DOUBLE_EQ(d.step_us.before, static_cast<double>(run.report.diagnosis->attribution[0].total.wall_ns()) / 1000.0);
  EXPECT_GT(d.kernels.count_per_step.before, 0.0);
  EXPECT_DOUBLE_EQ(d.kernels.count_per_step.before, static_cast<double>(run.report.ranks[0].gpu_activities));
  ASSERT_EQ(d.notes.size(), 2u);  // one per side
  EXPECT_NE(d.notes[0].find("no ProfilerStep#N markers"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::diff
