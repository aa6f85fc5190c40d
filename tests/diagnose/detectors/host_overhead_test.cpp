// host_overhead on real traces: launch-bound runs are found, and a run that
// already replays CUDA graphs is never told to use CUDA graphs.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"
#include "diagnose/host_gap_cause.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;

constexpr const char* kElementwise = "void at::native::vectorized_elementwise_kernel<4>";

// The host_overhead bucket of the only step, and that it equals the causes' sum.
double bucket_us(const Diagnosed& run) { return run.d.attribution[0].steps[0].of(Bucket::kHostOverhead) / 1e3; }
double causes_sum_us(const Finding& f) {
  return *metric(f, "launch_overhead_us_per_step") + *metric(f, "stream_wait_us_per_step") +
         *metric(f, "preprocessing_us_per_step") + *metric(f, "graph_capture_us_per_step");
}

// A 1 ms step whose GPU is busy 5-100 us with a first kernel (launched at
// 0-5 us), then `rest`.
std::unique_ptr<Diagnosed> after_a_busy_start(const std::vector<std::string>& rest) {
  std::vector<std::string> events = {step(1, 0, 1'000'000), launch(0, 5'000, 1),
                                     kernel(kElementwise, 5'000, 95'000, 7, 1)};
  events.insert(events.end(), rest.begin(), rest.end());
  return diagnose_inline(events);
}

// The causes' figures (µs per step) that `want` names, and that the four
// causes add up to the bucket.
void expect_causes(const Diagnosed& run, const Finding& f, std::initializer_list<std::pair<const char*, double>> want) {
  for (const auto& [cause, us] : want) EXPECT_DOUBLE_EQ(*metric(f, std::string(cause) + "_us_per_step"), us) << cause;
  EXPECT_DOUBLE_EQ(causes_sum_us(f), bucket_us(run));
}

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
  EXPECT_GT(f->bound_saving_pct, 5.0);
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
  EXPECT_NEAR(host->bound_saving_us, raw - claimed, 1.0);
  EXPECT_NEAR(claimed, opt->bound_saving_us, 1.0);
}

TEST(HostOverhead, CompiledRunIsToldReduceOverhead) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(shared_h200_dir() + "/compiled_fused");
  const Finding* f = reported(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  EXPECT_GT(*metric(*f, "triton_kernel_pct"), 0.0);
  EXPECT_NE(f->remedy.find("mode=\"reduce-overhead\""), std::string::npos) << f->remedy;
}

// (a) The kernel that ended the gap was launched at 110-115 us but started at
// 400 us: it sat behind a cudaStreamWaitEvent on another stream's event. Only
// the 15 us before its launch returned are the host's; the rest is a
// cross-stream dependency, and the finding says so instead of torch.compile.
TEST(HostOverhead, WorkQueuedBehindAStreamWaitIsADependencyNotLaunchOverhead) {
  auto run = after_a_busy_start({
      launch(105'000, 3'000, 90, "cudaStreamWaitEvent"),
      launch(110'000, 5'000, 2), kernel(kElementwise, 400'000, 100'000, 7, 2),
  });
  const Finding* f = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  // Stream wait 115-400 us; launch overhead 0-5 us and 100-115 us.
  expect_causes(*run, *f, {{"stream_wait", 285.0}, {"launch_overhead", 5.0 + 15.0}});
  EXPECT_NE(f->title.find("cross-stream dependency"), std::string::npos) << f->title;
  EXPECT_EQ(f->title.find("launch-bound"), std::string::npos) << f->title;
  EXPECT_EQ(f->title.find("waits on the host"), std::string::npos) << f->title;
  EXPECT_TRUE(f->remedy.starts_with("The work was already launched and waited on another stream")) << f->remedy;
  ASSERT_FALSE(f->evidence.examples.empty());
  EXPECT_NE(f->evidence.examples[0].detail.find("waited 285"), std::string::npos) << f->evidence.examples[0].detail;
}

// (b) 5 ms of host work before the step's first kernel (building the batch
// on the CPU): preprocessing, to be moved out of the step.
TEST(HostOverhead, HostWorkBeforeTheFirstKernelIsPreprocessing) {
  auto run = diagnose_inline({
      step(1, 0, 6'000'000),
      launch(5'000'000, 5'000, 1), kernel(kElementwise, 5'010'000, 490'000, 7, 1),
      launch(5'010'000, 5'000, 2), kernel(kElementwise, 5'500'000, 500'000, 7, 2),
  });
  const Finding* f = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  expect_causes(*run, *f, {{"preprocessing", 5010.0}, {"launch_overhead", 0.0}});
  EXPECT_NE(f->title.find("before the step's first kernel"), std::string::npos) << f->title;
  EXPECT_TRUE(f->remedy.starts_with("Host work runs before the step's first kernel")) << f->remedy;
  EXPECT_EQ(f->remedy.find("torch.compile"), std::string::npos) << f->remedy;
}

// A short gap before the first kernel is the first launch's own cost.
TEST(HostOverhead, AShortGapBeforeTheFirstKernelIsLaunchOverhead) {
  auto run = diagnose_inline({
      step(1, 0, 1'000'000),
      launch(40'000, 5'000, 1), kernel(kElementwise, 50'000, 950'000, 7, 1),
  });
  const Finding* f = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  expect_causes(*run, *f, {{"launch_overhead", 50.0}, {"preprocessing", 0.0}});
  EXPECT_TRUE(f->remedy.starts_with("Launch fewer, larger kernels")) << f->remedy;
}

// (c) cudaStreamBeginCapture ... cudaGraphInstantiate inside the gap: a
// one-time cost of capturing a CUDA graph, to be left out of the steps judged.
TEST(HostOverhead, GraphCaptureInsideTheGapIsAOneTimeCost) {
  auto run = after_a_busy_start({
      launch(110'000, 10'000, 91, "cudaStreamBeginCapture"),
      launch(120'000, 10'000, 92, "cudaStreamEndCapture"),
      launch(130'000, 370'000, 93, "cudaGraphInstantiateWithFlags"),
      launch(505'000, 5'000, 2, "cudaGraphLaunch"), kernel(kElementwise, 515'000, 485'000, 7, 2),
  });
  const Finding* f = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  // Capture 100-515 us; launch overhead 0-5 us.
  expect_causes(*run, *f, {{"graph_capture", 415.0}, {"launch_overhead", 5.0}});
  EXPECT_NE(f->title.find("CUDA-graph capture"), std::string::npos) << f->title;
  EXPECT_NE(f->remedy.find("one-time cost"), std::string::npos) << f->remedy;
}

// A long instantiation that began before a shorter, later capture call still
// covers the gap; a gap after every capture call is launch overhead again.
TEST(HostOverhead, OnlyGapsACaptureCallOverlapsAreCaptureCost) {
  auto run = after_a_busy_start({
      launch(20'000, 460'000, 93, "cudaGraphInstantiate"),  // 20-480 us
      launch(30'000, 10'000, 92, "cudaStreamEndCapture"),   // 30-40 us, nested
      launch(505'000, 5'000, 2), kernel(kElementwise, 515'000, 85'000, 7, 2),
      launch(690'000, 5'000, 3), kernel(kElementwise, 700'000, 300'000, 7, 3),
  });
  const Finding* f = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(f, nullptr);
  // Capture 100-515 us; launch overhead 0-5 us and 600-700 us.
  expect_causes(*run, *f, {{"graph_capture", 415.0}, {"launch_overhead", 5.0 + 100.0}});
}

TEST(HostGapCause, CaptureCallNames) {
  for (const char* n : {"cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph", "cudaStreamEndCapture",
                        "cudaGraphInstantiate", "cudaGraphInstantiateWithFlags", "cuStreamBeginCapture_v2",
                        "cuGraphInstantiateWithFlags", "hipStreamBeginCapture", "hipGraphInstantiate"})
    EXPECT_TRUE(is_graph_capture_call(n)) << n;
  for (const char* n : {"cudaGraphLaunch", "cudaStreamIsCapturing", "cudaLaunchKernel", "cudaStreamWaitEvent"})
    EXPECT_FALSE(is_graph_capture_call(n)) << n;
}

}  // namespace
}  // namespace stepscope::diagnose
