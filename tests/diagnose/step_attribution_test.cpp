// Step-time attribution: every bucket rule on a hand-made trace with known
// answers, and on every real trace the buckets summing to each step's wall
// time exactly.
#include <gtest/gtest.h>

#include "diagnose/step_attribution.h"
#include "diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;

std::string annotation(const std::string& name, int64_t ts_ns, int64_t dur_ns) {
  return analysis::testing_support::host_span("user_annotation", name, ts_ns, dur_ns);
}

// One 1 ms step exercising each bucket once (times in ns; see the comments).
std::vector<std::string> every_bucket_trace() {
  return {
      step(1, 0, 1'000'000),
      // 0-10k: nothing has run yet; the first kernel's launch starts at 1k -> host_overhead.
      launch(1'000, 5'000, 1), kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 10'000, 90'000, 7, 1),  // tensor core 10k-100k
      // The host blocks in a sync while the GPU drains at 100k: 100k-210k -> host_sync.
      launch(95'000, 20'000, 99, "cudaStreamSynchronize"),
      launch(200'000, 5'000, 2), kernel("void at::native::vectorized_elementwise_kernel<4>", 210'000, 40'000, 7, 2),
      // 250k-610k: DataLoader 260k-560k -> data_pipeline; the rest (60k) waits on the launch at 600k -> host_overhead.
      annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 260'000, 300'000),
      launch(600'000, 5'000, 3), kernel("void at::native::vectorized_elementwise_kernel<4>", 610'000, 50'000, 7, 3),
      // 660k-720k: cudaMalloc 670k-700k -> allocator; the rest (30k) -> host_overhead.
      launch(670'000, 30'000, 98, "cudaMalloc"),
      launch(705'000, 5'000, 4),
      kernel("Memcpy HtoD (Pageable -> Device)", 720'000, 30'000, 7, 4, "gpu_memcpy"),  // 720k-750k -> memory_copy
      // 750k-770k: waits on the all-reduce's launch at 760k -> host_overhead.
      launch(760'000, 5'000, 5), kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 770'000, 100'000, 9, 5),
      // A kernel on another stream hides 800k-820k of the all-reduce; the other 80k is exposed.
      launch(765'000, 5'000, 6), kernel("void at::native::vectorized_elementwise_kernel<4>", 800'000, 20'000, 8, 6),
      // 870k-1000k: no more GPU work in the trace -> other_idle.
  };
}

TEST(StepAttribution, EveryBucketOnAHandMadeStep) {
  auto run = diagnose_inline(every_bucket_trace());
  ASSERT_EQ(run->d.attribution.size(), 1u);
  const RankAttribution& a = run->d.attribution[0];
  ASSERT_TRUE(a.from_profiler_steps);
  ASSERT_EQ(a.steps.size(), 1u);
  const StepAttribution& s = a.steps[0];
  EXPECT_EQ(s.step, 1);
  EXPECT_EQ(s.start_ns, 0);
  EXPECT_EQ(s.end_ns, 1'000'000);
  EXPECT_EQ(s.of(Bucket::kComputeTensorCore), 90'000);
  EXPECT_EQ(s.of(Bucket::kComputeSimtMatmul), 0);
  EXPECT_EQ(s.of(Bucket::kComputeOther), 110'000);
  EXPECT_EQ(s.of(Bucket::kCommunication), 80'000);
  EXPECT_EQ(s.of(Bucket::kMemoryCopy), 30'000);
  EXPECT_EQ(s.of(Bucket::kDataPipeline), 300'000);
  EXPECT_EQ(s.of(Bucket::kHostSync), 110'000);
  EXPECT_EQ(s.of(Bucket::kAllocator), 30'000);
  EXPECT_EQ(s.of(Bucket::kHostOverhead), 120'000);
  EXPECT_EQ(s.of(Bucket::kOtherIdle), 130'000);
  int64_t sum = 0;
  for (int64_t v : s.ns) sum += v;
  EXPECT_EQ(sum, s.wall_ns());
  EXPECT_EQ(s.effective_compute_ns(), 200'000);
  // Spans carry the host row that explains them.
  const trace::EventStore& store = *run->stores[0];
  bool saw_sync = false, saw_loader = false, saw_malloc = false;
  for (const BucketSpan& sp : a.spans) {
    if (sp.cause_row == trace::EventStore::kNoRow) continue;
    std::string_view cause = store.name_of(sp.cause_row);
    if (sp.bucket == Bucket::kHostSync) saw_sync = cause == "cudaStreamSynchronize";
    if (sp.bucket == Bucket::kDataPipeline) saw_loader = cause.find("DataLoader") != std::string_view::npos;
    if (sp.bucket == Bucket::kAllocator) saw_malloc = cause == "cudaMalloc";
  }
  EXPECT_TRUE(saw_sync);
  EXPECT_TRUE(saw_loader);
  EXPECT_TRUE(saw_malloc);
}

// A gap whose next work was submitted before the GPU went idle is not the
// host's fault: the GPU waited on something else.
TEST(StepAttribution, QueuedWorkIsOtherIdle) {
  auto run = diagnose_inline({
      step(1, 0, 100'000),
      launch(1'000, 1'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 10'000, 10'000, 7, 1),
      launch(3'000, 1'000, 2), kernel("void at::native::vectorized_elementwise_kernel<4>", 50'000, 10'000, 7, 2),
  });
  const StepAttribution& s = run->d.attribution[0].steps[0];
  EXPECT_EQ(s.of(Bucket::kOtherIdle), 30'000 + 40'000);  // 20k-50k queued; 60k-100k nothing follows
  EXPECT_EQ(s.of(Bucket::kHostOverhead), 10'000);        // 0-10k before the first work
}

// An Async copy into pageable host memory returns only when the copy is
// done: a gap that opens while the host waits in it is host_sync. The same
// copy into pinned memory does not wait, and its gap is the host's launch
// overhead.
TEST(StepAttribution, ACopyIntoPageableMemoryWaitsLikeASync) {
  for (const char* target : {"Pageable", "Pinned"}) {
    auto run = diagnose_inline({
        step(1, 0, 100'000),
        launch(1'000, 1'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 5'000, 20'000, 7, 1),
        // Issued at 2k, behind the kernel: the copy runs 25k-30k; the call returns at 31k.
        launch(2'000, 29'000, 2, "cudaMemcpyAsync"),
        kernel(std::string("Memcpy DtoH (Device -> ") + target + ")", 25'000, 5'000, 7, 2, "gpu_memcpy"),
        launch(50'000, 1'000, 3), kernel("void at::native::vectorized_elementwise_kernel<4>", 60'000, 20'000, 7, 3),
    });
    const StepAttribution& s = run->d.attribution[0].steps[0];
    const bool pageable = std::string(target) == "Pageable";
    EXPECT_EQ(s.of(Bucket::kHostSync), pageable ? 30'000 : 0) << target;  // 30k-60k
    EXPECT_EQ(s.of(Bucket::kHostOverhead), 5'000 + (pageable ? 0 : 30'000)) << target;
  }
}

// SIMT matmuls are compute, but not effective compute.
TEST(StepAttribution, SimtMatmulIsNotEffectiveCompute) {
  auto run = diagnose_inline({
      step(1, 0, 100'000),
      launch(0, 1'000, 1),
      kernel("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(Params)", 0, 60'000, 7, 1),
      launch(1'000, 1'000, 2),
      kernel("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_ffma_aligna4", 60'000, 40'000, 7, 2),
  });
  const StepAttribution& s = run->d.attribution[0].steps[0];
  EXPECT_EQ(s.of(Bucket::kComputeSimtMatmul), 100'000);
  EXPECT_EQ(s.effective_compute_ns(), 0);
}

// A V100's FP32 convolutions (cuDNN's scudnn and direct engines) run on
// CUDA cores: SIMT matmul time, not tensor-core compute.
TEST(StepAttribution, VoltaFp32ConvolutionIsSimtNotTensorCore) {
  auto run = diagnose_inline({
      step(1, 0, 100'000),
      launch(0, 1'000, 1), kernel("volta_scudnn_128x64_relu_interior_nn_v1", 0, 50'000, 7, 1),
      launch(1'000, 1'000, 2),
      kernel("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int)",
             50'000, 30'000, 7, 2),
      launch(2'000, 1'000, 3), kernel("volta_h884gemm_64x64_ldg8_nn", 80'000, 20'000, 7, 3),
  });
  const StepAttribution& s = run->d.attribution[0].steps[0];
  EXPECT_EQ(s.of(Bucket::kComputeSimtMatmul), 80'000);
  EXPECT_EQ(s.of(Bucket::kComputeTensorCore), 20'000);
}

// A real FP32 training trace from a V100 (HTA's ns_resolution_trace, in the
// shared conformance set): its convolutions are cuDNN's scudnn, dgrad/wgrad
// engines and Winograd kernels, its matmuls volta_sgemm; none uses tensor
// cores. Before the per-architecture table, 37.5% of the step was counted
// as tensor-core compute.
TEST(StepAttribution, VoltaFp32TraceHasNoTensorCoreTime) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(stepscope::testing::shared_dir() +
                             "/conformance/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  ASSERT_EQ(run->d.attribution.size(), 1u);
  const StepAttribution& t = run->d.attribution[0].total;
  EXPECT_LT(t.pct(Bucket::kComputeTensorCore), 2.0);
  EXPECT_GT(t.pct(Bucket::kComputeSimtMatmul), 50.0);
}

// DeepEP's all-to-all and PyTorch's symmetric-memory all-reduce carry no
// nccl prefix; their time is exposed communication, not compute.
TEST(StepAttribution, DeepEpAndSymmetricMemoryKernelsAreCommunication) {
  auto run = diagnose_inline({
      step(1, 0, 100'000),
      launch(0, 1'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 0, 20'000, 7, 1),
      launch(1'000, 1'000, 2),
      kernel("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", 20'000, 30'000, 7, 2),
      launch(2'000, 1'000, 3),
      kernel("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)",
             50'000, 25'000, 7, 3),
      launch(3'000, 1'000, 4),
      kernel("void deep_ep::internode::combine<false, 2, 8, 32, 8, 4, 4>(int4*, float*)", 75'000, 25'000, 7, 4),
  });
  const StepAttribution& s = run->d.attribution[0].steps[0];
  EXPECT_EQ(s.of(Bucket::kCommunication), 80'000);
  EXPECT_EQ(s.of(Bucket::kComputeOther), 20'000);
  EXPECT_EQ(s.effective_compute_ns(), 20'000);
}

// Without ProfilerStep markers the GPU's active span is one window, and the
// diagnosis says so.
TEST(StepAttribution, NoStepMarkersGivesOneWindowAndANote) {
  auto run = diagnose_inline({
      launch(1'000, 1'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 10'000, 10'000, 7, 1),
      launch(30'000, 1'000, 2), kernel("void at::native::vectorized_elementwise_kernel<4>", 40'000, 10'000, 7, 2),
  });
  const RankAttribution& a = run->d.attribution[0];
  EXPECT_FALSE(a.from_profiler_steps);
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].step, -1);
  EXPECT_EQ(a.steps[0].start_ns, 10'000);
  EXPECT_EQ(a.steps[0].end_ns, 50'000);
  EXPECT_EQ(a.steps[0].of(Bucket::kHostOverhead), 20'000);  // 20k-40k until the launch at 30k had run
  EXPECT_TRUE(has_note(run->d, "attribution", "per-step attribution"));
}

// On every real trace: buckets sum to the window exactly, windows are
// ordered and disjoint, spans lie in their window.
void check_invariants(const std::string& folder) {
  auto run = diagnose_folder(folder);
  for (const RankAttribution& a : run->d.attribution) {
    int64_t prev_end = INT64_MIN, total = 0;
    for (size_t k = 0; k < a.steps.size(); ++k) {
      const StepAttribution& s = a.steps[k];
      int64_t sum = 0;
      for (int64_t v : s.ns) {
        EXPECT_GE(v, 0);
        sum += v;
      }
      EXPECT_EQ(sum, s.wall_ns()) << folder << " rank " << a.rank << " step " << s.step;
      EXPECT_GT(s.wall_ns(), 0);
      EXPECT_GE(s.start_ns, prev_end) << folder;
      prev_end = s.end_ns;
      total += s.wall_ns();
    }
    EXPECT_EQ(a.total.wall_ns(), total) << folder;
    for (const BucketSpan& sp : a.spans) {
      ASSERT_LT(sp.step_index, a.steps.size());
      EXPECT_GE(sp.start_ns, a.steps[sp.step_index].start_ns);
      EXPECT_LE(sp.end_ns, a.steps[sp.step_index].end_ns);
      EXPECT_LT(sp.start_ns, sp.end_ns);
      EXPECT_GE(static_cast<int>(sp.bucket), static_cast<int>(Bucket::kCommunication));
    }
  }
  EXPECT_TRUE(run->d.validation_errors.empty()) << folder << ": " << run->d.validation_errors.front();
}

TEST(StepAttribution, BucketsSumToStepTimeOnEveryExample) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(examples_dir())) {
    if (!e.is_directory()) continue;
    check_invariants(e.path().string());
    ++n;
  }
  EXPECT_GE(n, 10);
}

TEST(StepAttribution, BucketsSumToStepTimeOnEverySharedTrace) {
  SKIP_WITHOUT_SHARED();
  for (const std::string& folder : analysis::testing_support::shared_trace_folders())
    check_invariants(stepscope::testing::shared_dir() + "/" + folder);
}

// The H200 examples as the workloads README measured them (analyze_trace.py:
// kernel-busy share of the step): the attribution's busy share agrees.
TEST(StepAttribution, BusyShareMatchesTheIndependentCheck) {
  nlohmann::json labels = read_json(stepscope::testing::source_dir() + "/workloads/labels.json");
  for (const char* name : {"dataloader_stall", "host_bound_tiny", "fp32_no_tf32", "foreach_off_adamw"}) {
    auto run = diagnose_folder(examples_dir() + "/" + name);
    const StepAttribution& t = run->d.attribution[0].total;
    double busy = 100.0 * static_cast<double>(t.wall_ns() - t.idle_ns()) / static_cast<double>(t.wall_ns());
    double measured = labels[name]["measured"]["gpu_kernel_busy_pct"].get<double>();
    EXPECT_NEAR(busy, measured, 2.0) << name;
  }
}

}  // namespace
}  // namespace stepscope::diagnose
