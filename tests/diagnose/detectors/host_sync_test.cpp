// host_sync on real traces: per-layer .item() calls are found with the op
// that asked for them; the one loss read that closes each step is tolerated.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;

TEST(HostSync, ItemCallsAreTracedToTheirOp) {
  auto run = diagnose_folder(examples_dir() + "/item_sync");
  const Finding* f = reported(run->d, Category::kHostSync);
  ASSERT_NE(f, nullptr);
  // 83 syncs per step (labels.json), one of them the tolerated loss read.
  EXPECT_DOUBLE_EQ(*metric(*f, "syncs_per_step"), 82.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "syncs_from_aten_item_per_step"), 82.0);
  EXPECT_GT(*metric(*f, "tolerated_step_closing_sync_idle_us_per_step"), 0.0);
  ASSERT_FALSE(f->evidence.examples.empty());
  for (const Example& e : f->evidence.examples) {
    EXPECT_EQ(e.name, "aten::item -> cudaStreamSynchronize");
    EXPECT_GE(e.step, 2);
    EXPECT_LE(e.step, 4);
  }
  EXPECT_NE(f->remedy.find(".item()"), std::string::npos);
  // About 3.1 of the 5.2 ms of idle per step opens at a sync (README).
  EXPECT_GT(f->bound_saving_us, 2500.0);
  EXPECT_LT(f->bound_saving_us, 5200.0);
}

TEST(HostSync, TheLossReadClosingEachStepIsTolerated) {
  for (const char* name : {"baseline_compiled", "cuda_graph", "eager_bf16_baseline"}) {
    auto run = diagnose_folder(examples_dir() + "/" + name);
    EXPECT_EQ(any_finding(run->d, Category::kHostSync), nullptr) << name;
    EXPECT_TRUE(has_note(run->d, "host_sync", "step-closing sync")) << name;
    // The attribution still shows the idle it causes.
    EXPECT_GT(run->d.attribution[0].total.of(Bucket::kHostSync), 0) << name;
  }
}

}  // namespace
}  // namespace stepscope::diagnose
