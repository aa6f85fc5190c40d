// data_pipeline on real traces: the GPU idle inside DataLoader __next__ and
// the pageable copies of a single-process loader.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;

TEST(DataPipeline, SingleProcessLoaderWithPageableCopies) {
  auto run = diagnose_folder(examples_dir() + "/dataloader_stall");
  const Finding* f = reported(run->d, Category::kDataPipeline);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(run->d.findings.front().category, Category::kDataPipeline);
  // README: ~102 ms of a ~125 ms step inside __next__, GPU idle all along.
  EXPECT_NEAR(*metric(*f, "gpu_idle_in_dataloader_us_per_step"), 101'900, 1'500);
  EXPECT_DOUBLE_EQ(*metric(*f, "dataloader_calls_per_step"), 1.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "pageable_htod_copies_per_step"), 2.0);
  EXPECT_GT(f->bound_saving_pct, 75.0);
  EXPECT_EQ(f->severity, Severity::kHigh);
  ASSERT_FALSE(f->evidence.examples.empty());
  EXPECT_NE(f->evidence.examples.front().name.find("DataLoader"), std::string::npos);
  EXPECT_NE(f->remedy.find("num_workers"), std::string::npos);
  EXPECT_NE(f->remedy.find("pin_memory=True"), std::string::npos);
}

TEST(DataPipeline, NoLoaderMeansNotAssessedRatherThanGuessed) {
  auto run = diagnose_folder(examples_dir() + "/item_sync");
  EXPECT_EQ(any_finding(run->d, Category::kDataPipeline), nullptr);
  EXPECT_TRUE(has_note(run->d, "data_pipeline", "DataLoader"));
}

}  // namespace
}  // namespace stepscope::diagnose
