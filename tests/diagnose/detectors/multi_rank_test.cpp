// communication and load_imbalance: never a communication finding without
// collectives, the 8-rank DLRM run from PARAM with its all-to-alls, and on
// hand-made steps, the cap of the saving at the host's wait for the GPU.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;

TEST(Communication, DdpAtWorldSizeOneHasNone) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(shared_h200_dir() + "/ddp_single_rank");
  ASSERT_EQ(run->stores[0]->meta.world_size.value_or(-1), 1);
  EXPECT_EQ(any_finding(run->d, Category::kCommunication), nullptr);
  EXPECT_EQ(run->d.attribution[0].total.of(Bucket::kCommunication), 0);
}

TEST(Communication, SingleGpuExamplesHaveNone) {
  for (const char* name : {"eager_bf16_baseline", "cuda_graph"}) {
    auto run = diagnose_folder(examples_dir() + "/" + name);
    EXPECT_EQ(any_finding(run->d, Category::kCommunication), nullptr) << name;
  }
}

TEST(Communication, ExposedCollectivesOnEightRanks) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(stepscope::testing::shared_dir() + "/conformance/param/dlrm_8rank");
  ASSERT_EQ(run->stores.size(), 8u);
  const Finding* f = reported(run->d, Category::kCommunication);
  ASSERT_NE(f, nullptr);
  EXPECT_GT(*metric(*f, "collective_kernels_per_step"), 0.0);
  ASSERT_FALSE(f->evidence.examples.empty());
  for (const Example& e : f->evidence.examples) EXPECT_EQ(e.name.rfind("ncclKernel_", 0), 0u) << e.name;
  // These 2023 traces carry no message sizes: bus bandwidth is not guessed.
  EXPECT_TRUE(has_note(run->d, "communication", "bus bandwidth"));
  EXPECT_FALSE(metric(*f, "mean_bus_bandwidth_gbps").has_value());
  // The saving is the exposed time of the worst rank.
  int64_t worst = 0;
  for (const auto& a : run->d.attribution)
    worst = std::max(worst, a.total.of(Bucket::kCommunication) / static_cast<int64_t>(a.steps.size()));
  EXPECT_NEAR(f->bound_saving_us, worst / 1e3, 1.0);
}

TEST(Communication, BusBandwidthFromMessageSizes) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(stepscope::testing::shared_dir() + "/conformance/hta/nccl_parser_config");
  const Finding* f = any_finding(run->d, Category::kCommunication);
  ASSERT_NE(f, nullptr);
  auto busbw = metric(*f, "mean_bus_bandwidth_gbps");
  ASSERT_TRUE(busbw.has_value());
  EXPECT_GT(*busbw, 0.0);
  EXPECT_LT(*busbw, 600.0);  // cannot beat the A100's NVLink
  EXPECT_DOUBLE_EQ(*metric(*f, "link_peak_one_direction_gbps"), 300.0);
}

// Rank 0 of two: three 1 ms steps, each a 100k kernel and then an all-reduce
// of 300k with nothing to hide it. Only in the first step does the host wait
// for the GPU (a sync from 200k; the GPU works until 420k: 220k of waiting).
// Hiding the collective shortens a step by no more than that; the last
// window, which the GPU's work ends, is not capped.
TEST(Communication, ASavingIsCappedAtTheTimeTheHostWaitedForTheGpu) {
  std::vector<std::string> ev;
  for (int n = 1; n <= 3; ++n) {
    const int64_t t0 = (n - 1) * 1'000'000, c = n * 10;
    ev.push_back(step(n, t0, 1'000'000));
    ev.push_back(launch(t0 + 1'000, 5'000, c + 1));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", t0 + 10'000, 100'000, 7, c + 1));
    ev.push_back(launch(t0 + 8'000, 5'000, c + 2));
    ev.push_back(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                        t0 + 120'000, 300'000, 9, c + 2));
    if (n == 1) ev.push_back(launch(t0 + 200'000, 225'000, c + 9, "cudaStreamSynchronize"));
  }
  auto run = diagnose_inline(ev, R"("distributedInfo": {"rank": 0, "world_size": 2})");
  ASSERT_EQ(run->d.attribution[0].total.of(Bucket::kCommunication), 3 * 300'000);
  const Finding* f = any_finding(run->d, Category::kCommunication);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "exposed_communication_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "saving_beyond_host_wait_us_per_step"), (80.0 + 300.0) / 3);
  EXPECT_DOUBLE_EQ(f->bound_saving_us, (220.0 + 0.0 + 300.0) / 3);
  EXPECT_NE(f->title.find("the time the host waited for the GPU"), std::string::npos) << f->title;
}

TEST(LoadImbalance, SingleRankIsNotAssessed) {
  auto run = diagnose_folder(examples_dir() + "/item_sync");
  EXPECT_EQ(any_finding(run->d, Category::kLoadImbalance), nullptr);
  EXPECT_TRUE(has_note(run->d, "load_imbalance", "load balance"));
}

TEST(LoadImbalance, EightRanksAreCompared) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(stepscope::testing::shared_dir() + "/conformance/param/dlrm_8rank");
  EXPECT_FALSE(has_note(run->d, "load_imbalance", "load balance"));
  const Finding* f = any_finding(run->d, Category::kLoadImbalance);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "ranks"), 8.0);
  EXPECT_GE(*metric(*f, "max_rank_work_us_per_step"), *metric(*f, "min_rank_work_us_per_step"));
  EXPECT_NEAR(f->bound_saving_us, *metric(*f, "slowest_minus_mean_work_us_per_step"), 1.0);
}

}  // namespace
}  // namespace stepscope::diagnose
