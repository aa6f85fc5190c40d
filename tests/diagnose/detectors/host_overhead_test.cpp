// host_overhead on real traces: launch-bound runs are found, and a run that
// already replays CUDA graphs is never told to use CUDA graphs.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;

bool suggests_cuda_graphs(const std::string& remedy) {
  return remedy.find("reduce-overhead") != std::string::npos ||
         remedy.find("make_graphed_callables") != std::string::npos ||
         remedy.find("torch.cuda.graph") != std::string::npos;
}

TEST(HostOverhead, CudaGraphRunGetsNoCudaGraphRemedy) {
  auto run = diagnose_folder(examples_dir() + "/cuda_graph");
  const Finding* f = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr) << "the graph replay still leaves some host-caused idle";
  EXPECT_EQ(metric(*f, "cuda_graph_launches_per_step"), 1.0);
  EXPECT_NE(f->remedy.find("already replayed"), std::string::npos) << f->remedy;
  for (const auto* list : {&run->d.findings, &run->d.minor})
    for (const Finding& g : *list) EXPECT_FALSE(suggests_cuda_graphs(g.remedy)) << g.detector << ": " << g.remedy;
}

TEST(HostOverhead, EagerRunIsOfferedCompileAndGraphs) {
  auto run = diagnose_folder(examples_dir() + "/eager_bf16_baseline");
  const Finding* f = reported(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(suggests_cuda_graphs(f->remedy));
  EXPECT_NE(f->remedy.find("torch.compile"), std::string::npos);
  EXPECT_GT(f->estimated_saving_pct, 5.0);
  EXPECT_EQ(metric(*f, "cuda_graph_launches_per_step"), 0.0);
}

TEST(HostOverhead, TinyKernelsAreLaunchBound) {
  auto run = diagnose_folder(examples_dir() + "/host_bound_tiny");
  const Finding* f = reported(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  // README: 89% of kernels under 5 us; far more than half outlast nothing but their launch.
  EXPECT_GT(*metric(*f, "tiny_kernel_pct"), 80.0);
  EXPECT_GT(*metric(*f, "kernels_shorter_than_launch_pct"), 50.0);
  EXPECT_EQ(f->confidence, Confidence::kHigh);
  EXPECT_NE(f->title.find("launch-bound"), std::string::npos);
  ASSERT_FALSE(f->evidence.examples.empty());
  EXPECT_LE(f->evidence.examples.size(), kMaxExamples);
  // Examples are the longest gaps first.
  for (size_t i = 1; i < f->evidence.examples.size(); ++i)
    EXPECT_GE(f->evidence.examples[i - 1].dur_ns, f->evidence.examples[i].dur_ns);
}

// The for-loop optimizer's idle is the optimizer's: host_overhead leaves it out.
TEST(HostOverhead, LeavesOutIdleClaimedByTheOptimizer) {
  auto run = diagnose_folder(examples_dir() + "/foreach_off_adamw");
  const Finding* host = reported(run->d, Category::kHostOverhead);
  const Finding* opt = reported(run->d, Category::kUnfusedOptimizer);
  ASSERT_NE(host, nullptr);
  ASSERT_NE(opt, nullptr);
  double raw = *metric(*host, "gpu_idle_waiting_on_host_us_per_step");
  double claimed = *metric(*host, "claimed_by_other_findings_us_per_step");
  EXPECT_NEAR(host->estimated_saving_us, raw - claimed, 1.0);
  EXPECT_NEAR(claimed, opt->estimated_saving_us, 1.0);
}

TEST(HostOverhead, CompiledRunIsToldReduceOverhead) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(shared_h200_dir() + "/compiled_fused");
  const Finding* f = reported(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  EXPECT_GT(*metric(*f, "triton_kernel_pct"), 0.0);
  EXPECT_NE(f->remedy.find("mode=\"reduce-overhead\""), std::string::npos) << f->remedy;
}

}  // namespace
}  // namespace stepscope::diagnose
