// `diff` on the bundled H200 example runs (workloads/labels.json gives each
// scenario's configuration): a run with an injected bottleneck against a run
// without it. Each pair checks that the fix shows where it should: step
// time, the bucket the bottleneck fills, the finding, and the kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "diagnose/matmul_path.h"
#include "diff_fixtures.h"

namespace stepscope::diff {
namespace {

using diagnose::Bucket;
using diagnose::Category;
using testing_support::diff_examples;
using testing_support::example_run;
using testing_support::find_delta;

const BucketChange& bucket(const DiffResult& d, Bucket b) { return d.buckets[static_cast<size_t>(b)]; }

// Buckets partition each step, so their per-step times sum to the step time.
void expect_buckets_sum_to_step(const DiffResult& d) {
  double before = 0, after = 0, share_before = 0;
  for (const auto& b : d.buckets) {
    before += b.us_per_step.before;
    after += b.us_per_step.after;
    share_before += b.share_pct.before;
  }
  EXPECT_NEAR(before, d.step_us.before, 1e-6 * d.step_us.before);
  EXPECT_NEAR(after, d.step_us.after, 1e-6 * d.step_us.after);
  EXPECT_NEAR(share_before, 100.0, 1e-6);
}

// fp32 without TF32 (batch 8) -> bf16 (batch 8): cuBLAS leaves the FP32 SIMT
// path, so the SIMT GEMMs disappear and the step gets several times shorter.
TEST(ExamplePairs, Fp32NoTf32ToBf16RemovesSimtGemms) {
  DiffOptions o;
  o.top_kernels = 1000;  // every change listed, so membership can be checked
  DiffResult d = diff_examples("fp32_no_tf32", "eager_bf16_baseline", o);
  expect_buckets_sum_to_step(d);
  EXPECT_LT(d.step_us.change, 0);
  EXPECT_LT(d.step_us.change_pct, -50.0);  // labels: 130.8 ms -> 25.9 ms
  // Most of the step was SIMT matmul before; none after.
  EXPECT_GT(bucket(d, Bucket::kComputeSimtMatmul).share_pct.before, 50.0);
  EXPECT_EQ(bucket(d, Bucket::kComputeSimtMatmul).us_per_step.after, 0.0);
  EXPECT_GT(d.effective_compute_pct.change, 30.0);

  // Every SIMT matmul kernel of the fp32 run is in the removed list, and the
  // removed SIMT kernels account for most of the step time saved.
  const RunSummary before = summarize_run(testing_support::input_of(example_run("fp32_no_tf32")), {});
  std::set<std::string> removed;
  double removed_simt_us = 0;
  for (const auto& k : d.kernels.list(KernelChange::kRemoved).top) {
    removed.insert(k.name);
    if (diagnose::matmul_path(k.name, k.family) == diagnose::MatmulPath::kSimt) removed_simt_us += k.before.us_per_step;
  }
  int simt = 0;
  for (const auto& k : before.kernels) {
    if (diagnose::matmul_path(k.name, k.family) != diagnose::MatmulPath::kSimt) continue;
    ++simt;
    EXPECT_TRUE(removed.count(k.name)) << k.name;
  }
  EXPECT_GE(simt, 4);
  EXPECT_GT(removed_simt_us, 0.8 * -d.step_us.change);
  for (const auto& k : d.kernels.list(KernelChange::kAdded).top)
    EXPECT_NE(diagnose::matmul_path(k.name, k.family), diagnose::MatmulPath::kSimt) << k.name;

  // The compute-efficiency finding is resolved.
  const FindingDelta* ce = find_delta(d, Category::kComputeEfficiency);
  ASSERT_NE(ce, nullptr);
  EXPECT_EQ(ce->change, FindingChange::kResolved);
  EXPECT_GT(ce->before.saving_pct, 25.0);
  EXPECT_EQ(d.primary_before, "compute_efficiency");
  EXPECT_NE(d.primary_after, "compute_efficiency");
}

// empty_cache() every step (batch 16) -> no empty_cache (batch 8): the
// allocator goes back to the driver no more, so its idle time disappears.
TEST(ExamplePairs, EmptyCacheToBaselineResolvesAllocator) {
  DiffResult d = diff_examples("empty_cache", "eager_bf16_baseline");
  expect_buckets_sum_to_step(d);
  const auto& alloc = bucket(d, Bucket::kAllocator).us_per_step;
  EXPECT_GT(alloc.before, 1000.0);  // labels: 5.33 ms per step idle in malloc/free
  EXPECT_LT(alloc.after, 0.01 * alloc.before);
  const FindingDelta* m = find_delta(d, Category::kMemoryAllocator);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->change, FindingChange::kResolved);
  EXPECT_NEAR(m->saving_change_us, -m->before.saving_us + (m->after.present ? m->after.saving_us : 0.0), 1e-9);
  EXPECT_LT(d.step_us.change, 0);
}

// for-loop AdamW -> foreach AdamW: hundreds of per-parameter kernels per step
// go, and with them the host-bound idle time of the optimizer step.
TEST(ExamplePairs, ForLoopAdamToForeachResolvesUnfusedOptimizer) {
  DiffResult d = diff_examples("foreach_off_adamw", "eager_bf16_baseline");
  expect_buckets_sum_to_step(d);
  const FindingDelta* u = find_delta(d, Category::kUnfusedOptimizer);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->change, FindingChange::kResolved);
  EXPECT_LT(d.step_us.change_pct, -10.0);  // labels: 34.4 ms -> 25.9 ms
  EXPECT_LT(d.kernels.count_per_step.after, 0.75 * d.kernels.count_per_step.before);
  EXPECT_LT(bucket(d, Bucket::kHostOverhead).us_per_step.change, 0);
  EXPECT_GT(d.busy_pct.change, 10.0);
  // The multi-tensor (foreach) optimizer kernels appear.
  bool foreach_added = false;
  for (const auto& k : d.kernels.list(KernelChange::kAdded).top)
    foreach_added |= k.family == analysis::KernelFamily::kOptimizer && k.name.find("multi_tensor_apply") != std::string::npos;
  EXPECT_TRUE(foreach_added);
}

// Eager, unfused QKV, RoPE tables rebuilt every step -> the whole step as one
// CUDA graph with fused QKV and cached tables (both batch 8, bf16, fused
// AdamW): launch overhead goes, the GPU stays busy.
TEST(ExamplePairs, CudaGraphRemovesHostOverhead) {
  DiffResult d = diff_examples("unfused_qkv_rope", "cuda_graph");
  expect_buckets_sum_to_step(d);
  EXPECT_LT(d.step_us.change, 0);
  const auto& host = bucket(d, Bucket::kHostOverhead).us_per_step;
  EXPECT_LT(host.after, 0.2 * host.before);
  EXPECT_GT(d.busy_pct.after, 90.0);
  EXPECT_EQ(d.count(FindingChange::kNew), 0u);
  // Launch overhead was the reported cause; it is gone.
  const FindingDelta* ho = find_delta(d, Category::kHostOverhead);
  ASSERT_NE(ho, nullptr);
  EXPECT_EQ(ho->change, FindingChange::kResolved);
}

// Eager -> torch.compile: Triton kernels replace eager elementwise chains.
// (The compiled run uses batch 32 against 8, so its step is longer: only
// shares and kernel identity are compared, not times.)
TEST(ExamplePairs, CompileAddsTritonKernels) {
  DiffResult d = diff_examples("eager_bf16_baseline", "baseline_compiled");
  bool triton_before = false;
  for (const auto& k : summarize_run(testing_support::input_of(example_run("eager_bf16_baseline")), {}).kernels)
    triton_before |= k.family == analysis::KernelFamily::kTriton;
  EXPECT_FALSE(triton_before);
  const auto& added = d.kernels.list(KernelChange::kAdded);
  ASSERT_GT(added.kernels, 0u);
  size_t triton = 0;
  for (const auto& k : added.top) triton += k.family == analysis::KernelFamily::kTriton;
  EXPECT_GT(triton, 0u);
  EXPECT_GT(d.effective_compute_pct.change, 10.0);
  EXPECT_EQ(d.primary_after, "none");
}

// A run against a second, independent load of itself: nothing changes.
TEST(ExamplePairs, RunAgainstItselfShowsNoChange) {
  const auto& a = example_run("eager_bf16_baseline");
  pipeline::RunOptions o;
  o.threads = 1;
  pipeline::AnalyzedRun b = pipeline::analyze_run({testing::source_dir() + "/examples/eager_bf16_baseline"}, o);
  ASSERT_TRUE(b.ok) << b.error;
  DiffResult d = diff_runs(testing_support::input_of(a), testing_support::input_of(b), {}, {});
  EXPECT_EQ(d.step_us.change, 0.0);
  EXPECT_GT(d.step_us.before, 0.0);
  for (const auto& bc : d.buckets) EXPECT_EQ(bc.us_per_step.change, 0.0) << diagnose::to_string(bc.bucket);
  EXPECT_EQ(d.busy_pct.change, 0.0);
  EXPECT_EQ(d.compute_pct.change, 0.0);
  for (const auto& l : d.kernels.lists) EXPECT_EQ(l.kernels, 0u) << to_string(l.change);
  EXPECT_GT(d.kernels.unchanged, 50u);
  EXPECT_EQ(d.count(FindingChange::kResolved), 0u);
  EXPECT_EQ(d.count(FindingChange::kNew), 0u);
  EXPECT_EQ(d.count(FindingChange::kPersisting), a.report.diagnosis->findings.size());
  for (const auto& f : d.findings) EXPECT_EQ(f.saving_change_us, 0.0);
  EXPECT_EQ(d.primary_before, d.primary_after);
  EXPECT_TRUE(d.notes.empty());
}

// Swapping the sides mirrors the diff: resolved <-> new, removed <-> added,
// slower <-> faster, and every change changes sign.
TEST(ExamplePairs, SwappingSidesMirrorsTheDiff) {
  DiffOptions o;
  o.top_kernels = 1000;
  DiffResult ab = diff_examples("empty_cache", "eager_bf16_baseline", o);
  DiffResult ba = diff_examples("eager_bf16_baseline", "empty_cache", o);
  EXPECT_DOUBLE_EQ(ab.step_us.change, -ba.step_us.change);
  for (size_t i = 0; i < ab.buckets.size(); ++i)
    EXPECT_DOUBLE_EQ(ab.buckets[i].us_per_step.change, -ba.buckets[i].us_per_step.change);
  EXPECT_EQ(ab.count(FindingChange::kResolved), ba.count(FindingChange::kNew));
  EXPECT_EQ(ab.count(FindingChange::kNew), ba.count(FindingChange::kResolved));
  EXPECT_EQ(ab.count(FindingChange::kPersisting), ba.count(FindingChange::kPersisting));
  auto n = [](const DiffResult& d, KernelChange c) { return d.kernels.list(c).kernels; };
  EXPECT_EQ(n(ab, KernelChange::kRemoved), n(ba, KernelChange::kAdded));
  EXPECT_EQ(n(ab, KernelChange::kAdded), n(ba, KernelChange::kRemoved));
  EXPECT_EQ(n(ab, KernelChange::kCalledMore), n(ba, KernelChange::kCalledLess));
  EXPECT_EQ(ab.kernels.unchanged, ba.kernels.unchanged);
  EXPECT_NEAR(ab.kernels.list(KernelChange::kRemoved).us_per_step_change,
              -ba.kernels.list(KernelChange::kAdded).us_per_step_change, 1e-6);
  // The relative bar is asymmetric (a drop of 5% is a rise of 5.3%), so
  // slower/faster only mirror for changes clear of it.
  for (const auto& k : ab.kernels.list(KernelChange::kSlower).top)
    if (k.mean_change_pct > 6.0 && k.after.mean_us - k.before.mean_us > 1.1) {
      bool mirrored = false;
      for (const auto& m : ba.kernels.list(KernelChange::kFaster).top) mirrored |= m.name == k.name;
      EXPECT_TRUE(mirrored) << k.name;
    }
}

// Per-step kernel numbers agree with the run's own totals (the step rule
// itself is checked on a shared trace with work outside its steps).
TEST(ExamplePairs, KernelTotalsMatchTheSummary) {
  const auto& run = example_run("foreach_off_adamw");
  const RunSummary s = summarize_run(testing_support::input_of(run), {});
  ASSERT_EQ(s.windows, static_cast<int64_t>(run.report.ranks[0].steps.steps.size()));
  int64_t in_steps = 0;
  for (const auto& st : run.report.ranks[0].steps.steps) in_steps += st.gpu_activities;
  EXPECT_DOUBLE_EQ(s.kernels_per_step, static_cast<double>(in_steps) / static_cast<double>(s.windows));
  double us = 0, calls = 0;
  for (const auto& k : s.kernels) {
    us += k.us_per_step;
    calls += k.count_per_step;
    EXPECT_NEAR(k.mean_us * k.count_per_step, k.us_per_step, 1e-6 * std::max(1.0, k.us_per_step)) << k.name;
  }
  EXPECT_NEAR(us, s.kernel_us_per_step, 1e-6 * us);
  EXPECT_NEAR(calls, s.kernels_per_step, 1e-9 * calls);
  // labels.json: 974 kernels per step (launched in the step by its own count).
  EXPECT_GT(s.kernels_per_step, 900);
}

}  // namespace
}  // namespace stepscope::diff
