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

// Three steps of 10 ms: the GPU computes 2 ms, then waits 6 ms for a
// single-process DataLoader whose __next__ holds the Python frames given
// (each 1 ms, with a nested frame that must not count twice).
std::vector<std::string> loader_trace(const std::vector<std::string>& frames) {
  using analysis::testing_support::host_span;
  using analysis::testing_support::kernel;
  using analysis::testing_support::launch;
  using analysis::testing_support::step;
  std::vector<std::string> ev;
  for (int i = 0; i < 3; ++i) {
    const int64_t t = i * 10'000'000LL;
    ev.push_back(step(i + 1, t, 10'000'000));
    ev.push_back(launch(t + 10'000, 5'000, i + 1));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", t + 20'000, 2'000'000, 7, i + 1));
    ev.push_back(host_span("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                           t + 2'100'000, 6'000'000));
    for (size_t k = 0; k < frames.size(); ++k) {
      const int64_t f0 = t + 2'200'000 + static_cast<int64_t>(k) * 1'100'000;
      ev.push_back(host_span("python_function", frames[k], f0, 1'000'000));
      ev.push_back(host_span("python_function", frames[k] + " (inner)", f0 + 100'000, 500'000));
    }
    ev.push_back(launch(t + 8'200'000, 5'000, 10 + i));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", t + 8'300'000, 1'000'000, 7, 10 + i));
  }
  return ev;
}

TEST(DataPipeline, NamesTheRemedyForWhatTheLoaderDoes) {
  // Image work: PIL decode and torchvision transforms, 4 of the 6 ms.
  auto images = diagnose_inline(loader_trace({"site-packages/PIL/Image.py(3300): open",
                                              "site-packages/PIL/ImageFile.py(250): load",
                                              "torchvision/transforms/v2/_geometry.py(900): forward",
                                              "torchvision/transforms/v2/_color.py(200): forward", "train.py(40): collate"}));
  const Finding* f = reported(images->d, Category::kDataPipeline);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(*metric(*f, "dataloader_time_in_image_pct"), 4.0 / 6.0 * 100, 1e-6);
  EXPECT_DOUBLE_EQ(*metric(*f, "dataloader_time_in_tokenize_pct"), 0.0);
  EXPECT_NE(f->remedy.find("stepscope_kernels.GpuAugment"), std::string::npos) << f->remedy;
  EXPECT_EQ(f->remedy.find("token shards"), std::string::npos);
  // Tokenizing: 2 of 6 ms (33%, above the 25% bar).
  auto text = diagnose_inline(loader_trace({"site-packages/transformers/tokenization_utils_base.py(2800): __call__",
                                            "site-packages/tokenizers/implementations/base.py(20): encode",
                                            "train.py(30): __getitem__"}));
  f = reported(text->d, Category::kDataPipeline);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(*metric(*f, "dataloader_time_in_tokenize_pct"), 2.0 / 6.0 * 100, 1e-6);
  EXPECT_NE(f->remedy.find("stepscope.data.TokenShardDataset"), std::string::npos) << f->remedy;
  EXPECT_NE(f->remedy.find("4.5x"), std::string::npos);
  // Nothing recognisable (1 ms of parsing: 17%, below the bar): the general advice.
  auto other = diagnose_inline(loader_trace({"train.py(30): __getitem__", "pandas/core/frame.py(10): __getitem__"}));
  f = reported(other->d, Category::kDataPipeline);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->remedy.find("move heavy per-sample work"), std::string::npos) << f->remedy;
  EXPECT_FALSE(has_note(other->d, "data_pipeline", "spends its time on"));
  // Without Python frames the kind cannot be told: said so.
  auto bare = diagnose_inline(loader_trace({}));
  EXPECT_TRUE(has_note(bare->d, "data_pipeline", "spends its time on"));
}

TEST(DataPipeline, NoLoaderMeansNotAssessedRatherThanGuessed) {
  auto run = diagnose_folder(examples_dir() + "/item_sync");
  EXPECT_EQ(any_finding(run->d, Category::kDataPipeline), nullptr);
  EXPECT_TRUE(has_note(run->d, "data_pipeline", "DataLoader"));
}

}  // namespace
}  // namespace stepscope::diagnose
