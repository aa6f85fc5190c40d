// The registry: detectors can be disabled by name, are timed, and output
// that breaks the contract is rejected; ranking and the "none" rule.
#include <gtest/gtest.h>

#include <set>

#include "diagnose/detector_registry.h"
#include "diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;

TEST(Registry, EveryCategoryHasADetectorAndNamesAreUnique) {
  std::vector<Detector> ds = default_detectors();
  std::set<std::string> names;
  std::set<Category> cats;
  for (const Detector& d : ds) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    cats.insert(d.category);
    EXPECT_EQ(d.name, to_string(d.category));
  }
  EXPECT_EQ(cats.size(), static_cast<size_t>(kCategoryCount));
  EXPECT_EQ(ds.back().name, "host_overhead");  // runs last: it leaves out what others claimed
}

TEST(Registry, DisabledDetectorDoesNotRun) {
  DiagnoseOptions o;
  o.disabled_detectors = {"host_sync"};
  auto run = diagnose_folder(examples_dir() + "/item_sync", o);
  EXPECT_EQ(any_finding(run->d, Category::kHostSync), nullptr);
  bool seen = false;
  for (const DetectorRun& r : run->d.detectors) {
    if (r.name != "host_sync") {
      EXPECT_TRUE(r.enabled);
      EXPECT_GE(r.seconds, 0.0);
      continue;
    }
    seen = true;
    EXPECT_FALSE(r.enabled);
    EXPECT_EQ(r.findings, 0u);
  }
  EXPECT_TRUE(seen);
  // With the optimizer detector off, host_overhead keeps the optimizer's idle.
  auto with = diagnose_folder(examples_dir() + "/foreach_off_adamw");
  DiagnoseOptions off;
  off.disabled_detectors = {"unfused_optimizer"};
  auto without = diagnose_folder(examples_dir() + "/foreach_off_adamw", off);
  EXPECT_GT(reported(without->d, Category::kHostOverhead)->bound_saving_us,
            reported(with->d, Category::kHostOverhead)->bound_saving_us + 5'000);
}

TEST(Registry, ValidationRejectsBrokenOutput) {
  auto run = diagnose_folder(examples_dir() + "/item_sync");
  DetectorContext ctx;
  RankView v;
  v.store = run->stores[0].get();
  v.attribution = &run->d.attribution[0];
  ctx.ranks.push_back(v);
  Detector d;
  d.name = "host_sync";
  d.category = Category::kHostSync;
  Finding good = *reported(run->d, Category::kHostSync);
  EXPECT_EQ(validate_finding(good, d, ctx), "");

  Finding f = good;
  f.category = Category::kHostOverhead;
  EXPECT_NE(validate_finding(f, d, ctx), "");
  f = good;
  f.evidence.examples.resize(kMaxExamples + 1);
  EXPECT_NE(validate_finding(f, d, ctx), "");
  f = good;
  f.estimated_saving_us = -1;
  EXPECT_NE(validate_finding(f, d, ctx), "");
  f = good;
  f.estimated_saving_us = run->d.attribution[0].mean_step_ns() / 1e3 * 1.5;
  EXPECT_NE(validate_finding(f, d, ctx), "");
  f = good;
  f.remedy.clear();
  EXPECT_NE(validate_finding(f, d, ctx), "");
}

TEST(Ranking, FindingsAreSortedAndMinorOnesKeptApart) {
  auto run = diagnose_folder(examples_dir() + "/host_bound_tiny");
  const Diagnosis& d = run->d;
  ASSERT_GE(d.findings.size(), 2u);
  for (size_t i = 1; i < d.findings.size(); ++i)
    EXPECT_GE(d.findings[i - 1].estimated_saving_us, d.findings[i].estimated_saving_us);
  for (const Finding& f : d.findings) EXPECT_GE(f.estimated_saving_pct, DiagnoseOptions{}.min_saving_pct);
  for (const Finding& f : d.minor) EXPECT_LT(f.estimated_saving_pct, DiagnoseOptions{}.min_saving_pct);
  EXPECT_EQ(d.primary_bottleneck, std::string(to_string(d.findings.front().category)));
  EXPECT_TRUE(d.validation_errors.empty());
}

TEST(Ranking, NoneWhenTheGpuComputesMostOfTheStep) {
  for (const char* name : {"baseline_compiled", "cuda_graph"}) {
    auto run = diagnose_folder(examples_dir() + "/" + name);
    EXPECT_GE(run->d.effective_compute_pct, 90.0) << name;
    EXPECT_EQ(run->d.primary_bottleneck, "none") << name;
  }
  // In a healthy run waiting causes are minor whatever their size: each can
  // explain at most the 10% the GPU does not compute.
  DiagnoseOptions all;
  all.min_saving_pct = 0.0;
  auto healthy = diagnose_folder(examples_dir() + "/baseline_compiled", all);
  for (const Finding& f : healthy->d.findings) EXPECT_EQ(f.category, Category::kComputeEfficiency) << f.title;
  EXPECT_NE(any_finding(healthy->d, Category::kHostOverhead), nullptr);
  EXPECT_EQ(reported(healthy->d, Category::kHostOverhead), nullptr);
  // The bar is an option: above every rank's share, the top finding is primary.
  DiagnoseOptions o;
  o.none_effective_compute_pct = 99.0;
  o.min_saving_pct = 0.0;
  auto run = diagnose_folder(examples_dir() + "/baseline_compiled", o);
  ASSERT_FALSE(run->d.findings.empty());
  EXPECT_EQ(run->d.primary_bottleneck, std::string(to_string(run->d.findings.front().category)));
}

TEST(Honesty, BareTraceSaysWhatItCouldNotAssess) {
  using analysis::testing_support::kernel;
  using analysis::testing_support::launch;
  // No ProfilerStep, no shapes, no memory samples, no deviceProperties.
  auto run = diagnose_inline({
      launch(1'000, 1'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 10'000, 10'000, 7, 1),
      launch(30'000, 1'000, 2), kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 40'000, 10'000, 7, 2),
  });
  const Diagnosis& d = run->d;
  EXPECT_TRUE(has_note(d, "attribution", "per-step attribution"));
  EXPECT_TRUE(has_note(d, "hardware_table", "peak rates"));
  EXPECT_TRUE(has_note(d, "memory_capacity", "peak allocated"));
  EXPECT_TRUE(has_note(d, "recomputed_constants", "tables rebuilt"));
  EXPECT_TRUE(has_note(d, "compute_efficiency", "achieved TFLOP/s"));
  EXPECT_TRUE(has_note(d, "unfused_optimizer", "optimizer"));
  EXPECT_TRUE(has_note(d, "data_pipeline", "DataLoader"));
  for (const NotAssessed& n : d.not_assessed) EXPECT_FALSE(n.reason.empty()) << n.detector;
}

// Idle that no detector explains (the next work was already queued: the GPU
// waited on something the trace does not show) is named, not blamed.
TEST(Honesty, UnexplainedLossIsNamedNotGuessed) {
  using analysis::testing_support::kernel;
  using analysis::testing_support::launch;
  using analysis::testing_support::step;
  auto run = diagnose_inline({
      step(1, 0, 100'000),
      launch(0, 1'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 0, 10'000, 7, 1),
      launch(2'000, 1'000, 2), kernel("void at::native::vectorized_elementwise_kernel<4>", 90'000, 10'000, 7, 2),
  });
  EXPECT_TRUE(run->d.findings.empty());
  EXPECT_EQ(run->d.primary_bottleneck, "none");
  EXPECT_NEAR(run->d.effective_compute_pct, 20.0, 1e-9);
  ASSERT_TRUE(has_note(run->d, "ranking", "primary bottleneck"));
  for (const NotAssessed& n : run->d.not_assessed) {
    if (n.detector == "ranking") {
      EXPECT_NE(n.reason.find("other_idle (80%)"), std::string::npos) << n.reason;
    }
  }
}

TEST(Honesty, TraceWithoutGpuWork) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(stepscope::testing::shared_dir() + "/conformance/hta/cpu_only");
  EXPECT_TRUE(run->d.findings.empty());
  EXPECT_EQ(run->d.primary_bottleneck, "none");
  EXPECT_TRUE(has_note(run->d, "attribution", "step-time attribution"));
  ASSERT_EQ(run->d.attribution.size(), 1u);
  EXPECT_FALSE(run->d.attribution[0].gpu_activity);
}

}  // namespace
}  // namespace stepscope::diagnose
