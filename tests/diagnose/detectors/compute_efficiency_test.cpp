// compute_efficiency on real traces: FP32 matmuls on the SIMT path are named,
// bf16 runs reach most of the H200's peak and get no finding, an FP32 model's
// move to bf16 is priced within the measured saving; and on hand-made steps
// with exact answers, which kernels count as an FP32 model's work.
#include <gtest/gtest.h>

#include "model/gpu_table.h"
#include "diagnose/op_args.h"
#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {

using model::GpuPeaks;
using model::find_gpu_peaks;
namespace {

using namespace testing_support;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using analysis::testing_support::us_text;

TEST(ComputeEfficiency, Fp32WithoutTf32RunsSimtGemms) {
  auto run = diagnose_folder(examples_dir() + "/fp32_no_tf32");
  ASSERT_FALSE(run->d.findings.empty());
  const Finding& f = run->d.findings.front();
  EXPECT_EQ(f.category, Category::kComputeEfficiency);
  EXPECT_EQ(run->d.primary_bottleneck, "compute_efficiency");
  // README: 131 ms per step, GEMMs on sm80_xmma ... ffma and cutlass simt sgemm kernels.
  EXPECT_GT(*metric(f, "simt_matmul_us_per_step"), 90'000.0);
  size_t simt_examples = 0;
  for (const Example& e : f.evidence.examples)
    if (e.name.find("simt_sgemm") != std::string::npos || e.name.find("ffma") != std::string::npos) ++simt_examples;
  EXPECT_GE(simt_examples, 3u);
  EXPECT_NE(f.remedy.find("set_float32_matmul_precision('high')"), std::string::npos);
  EXPECT_NE(f.remedy.find("autocast"), std::string::npos);
  // The saving is bounded by the SIMT time times (1 - FP32 peak / BF16 peak).
  const GpuPeaks* h200 = find_gpu_peaks("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  double bound = run->d.attribution[0].total.of(Bucket::kComputeSimtMatmul) / 3.0 / 1e3 *
                 (1 - h200->fp32_tflops / h200->bf16_tflops);
  EXPECT_GT(f.bound_saving_us, bound * 0.99);
  EXPECT_LE(f.bound_saving_us, run->d.attribution[0].mean_step_ns() / 1e3);
}

// A V100's tensor cores take FP16 only: an FP32 model there is told to use
// FP16 autocast, never TF32 or bf16, which the GPU does not have.
TEST(ComputeEfficiency, VoltaFp32ModelIsToldFp16NotTf32) {
  const std::string v100 =
      R"("deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048, )"
      R"("computeMajor": 7, "computeMinor": 0}])";
  auto run = diagnose_inline(
      {
          step(1, 0, 1'000'000),
          launch(0, 5'000, 1), kernel("volta_scudnn_128x64_relu_interior_nn_v1", 5'000, 600'000, 7, 1),
          launch(6'000, 5'000, 2), kernel("volta_sgemm_128x64_nn", 605'000, 395'000, 7, 2),
      },
      v100);
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("SIMT"), std::string::npos) << f->title;
  EXPECT_NE(f->remedy.find("dtype=torch.float16"), std::string::npos) << f->remedy;
  EXPECT_EQ(f->remedy.find("TF32 for FP32"), std::string::npos) << f->remedy;
  EXPECT_EQ(f->remedy.find("bfloat16"), std::string::npos) << f->remedy;
}

TEST(ComputeEfficiency, HealthyBf16RunHasNoFinding) {
  auto run = diagnose_folder(examples_dir() + "/baseline_compiled");
  EXPECT_EQ(any_finding(run->d, Category::kComputeEfficiency), nullptr);
  EXPECT_GT(run->d.effective_compute_pct, 90.0);
}

// tf32_fp32 (workloads/heldout_variants.sh): a 1B-class GPT in FP32 with TF32
// at batch 16. The same model in bf16 (cf_bf16_b16) ran 43.0, 42.8 and 41.4 ms
// per step faster in three paired rounds on the H200
// (workloads/paired/2026-12-03-second/summary.md). Pricing only the aten
// matmuls' TF32 time gave 17 ms; the attention kernels and the other FP32
// kernels are the rest.
TEST(ComputeEfficiency, Fp32ModelEstimateIsNearTheMeasuredBf16Saving) {
  auto run = diagnose_folder(stepscope::testing::source_dir() + "/workloads/heldout/tf32_fp32");
  EXPECT_EQ(run->d.primary_bottleneck, "compute_efficiency");
  const Finding* f = reported(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->bound_saving_us / 1e3, 42.4, 0.25 * 42.4);
  // Every matmul-family kernel of this model is FP32 on TF32, attention included.
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_tensor_core_matmul_us_per_step"), *metric(*f, "matmul_kernel_us_per_step"));
  EXPECT_GT(*metric(*f, "fp32_other_kernel_us_per_step"), 10'000.0);
  EXPECT_NE(f->title.find("computes in FP32"), std::string::npos);
}

// The bf16 model of fp32_small (cf_bf16_small): its loss still runs in FP32,
// but a model whose matmuls are bf16 is no FP32 model.
TEST(ComputeEfficiency, Bf16ModelWithAnFp32LossIsNoFp32Model) {
  auto run = diagnose_folder(stepscope::testing::source_dir() + "/workloads/heldout/cf_bf16_small");
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  if (f) {
    EXPECT_FALSE(metric(*f, "fp32_other_kernel_us_per_step").has_value());
  }
  EXPECT_EQ(reported(run->d, Category::kComputeEfficiency), nullptr);
}

const char* kH100 = R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85000000000}])";
const std::string kNvjet = "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NTN";  // a matmul whose name says no type
const std::string kAdd = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>";

// A host op on thread 1 with its "Input type".
std::string typed_op(const std::string& name, int64_t ts_ns, int64_t dur_ns, const std::string& types) {
  return stepscope::testing::x_event("cpu_op", name, us_text(ts_ns), us_text(dur_ns), "1", "1",
                                     R"("args": {"Input type": )" + types + "}");
}

// One 1 ms step of an FP32 model from t0 (ns): a float aten::mm (200k of
// matmul), a float aten::add (100k), the optimizer's float add_ (50k), a
// compiled graph with float inputs launching a matmul and a Triton kernel
// (100k + 60k), and a bf16 aten::mm (20k). The GPU works from 20k to 550k.
// With `sync`, the host then waits in cudaStreamSynchronize from 250k until
// the GPU is done (300k of waiting while it works).
std::vector<std::string> fp32_model_step(const std::string& compiled_matmul, int n = 1, int64_t t0 = 0,
                                         bool sync = false) {
  const int64_t c = n * 10;
  std::vector<std::string> ev = {
      step(n, t0, 1'000'000),
      typed_op("aten::mm", t0 + 10'000, 20'000, R"(["float", "float"])"), launch(t0 + 12'000, 5'000, c + 1),
      kernel(kNvjet, t0 + 20'000, 200'000, 7, c + 1),
      typed_op("aten::add", t0 + 40'000, 20'000, R"(["float", "float", "Scalar"])"), launch(t0 + 42'000, 5'000, c + 2),
      kernel(kAdd, t0 + 220'000, 100'000, 7, c + 2),
      stepscope::testing::x_event("user_annotation", "Optimizer.step#AdamW.step", us_text(t0 + 70'000),
                                  us_text(50'000)),
      typed_op("aten::add_", t0 + 80'000, 20'000, R"(["float", "float", "Scalar"])"), launch(t0 + 82'000, 5'000, c + 3),
      kernel(kAdd, t0 + 320'000, 50'000, 7, c + 3),
      typed_op("CompiledFunction", t0 + 130'000, 70'000, R"(["float", "float"])"), launch(t0 + 132'000, 5'000, c + 4),
      kernel(compiled_matmul, t0 + 370'000, 100'000, 7, c + 4), launch(t0 + 150'000, 5'000, c + 5),
      kernel("triton_poi_fused_add_gelu_0", t0 + 470'000, 60'000, 7, c + 5),
      typed_op("aten::mm", t0 + 210'000, 20'000, R"(["c10::BFloat16", "c10::BFloat16"])"),
      launch(t0 + 212'000, 5'000, c + 6), kernel(kNvjet, t0 + 530'000, 20'000, 7, c + 6),
  };
  if (sync) ev.push_back(launch(t0 + 250'000, 302'000, c + 9, "cudaStreamSynchronize"));
  return ev;
}

TEST(ComputeEfficiency, Fp32ModelPricesItsOtherKernelsAtHalfAndLeavesTheOptimizerAndCompiledGraphsOut) {
  auto run = diagnose_inline(fp32_model_step(kNvjet), kH100);
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  // FP32 matmul: the float aten::mm's 200k. The compiled graph's float inputs
  // say nothing of its kernels (autocast casts inside), the bf16 mm is bf16.
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_tensor_core_matmul_us_per_step"), 200.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "matmul_kernel_us_per_step"), 320.0);
  // 200 of 320 us of matmul is FP32: an FP32 model. Its other FP32 work is
  // the aten::add's 100k; the optimizer keeps FP32 master weights.
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_other_kernel_us_per_step"), 100.0);
  // H100: TF32 is half the bf16 peak; bf16 halves the add's bytes.
  EXPECT_DOUBLE_EQ(f->bound_saving_us, 200.0 * 0.5 + 100.0 * 0.5);
}

TEST(ComputeEfficiency, AMatmulKernelNamedTf32IsFp32WhateverLaunchedIt) {
  auto run = diagnose_inline(fp32_model_step("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x256x32"), kH100);
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_tensor_core_matmul_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(f->bound_saving_us, 300.0 * 0.5 + 100.0 * 0.5);
}

TEST(ComputeEfficiency, MostlyBf16MatmulsMakeNoFp32Model) {
  // The compiled graph's matmul named bf16 (300k with the float mm's 200k
  // beside it would still be FP32-heavy): make it 500k so that FP32 is
  // 200 of 720 us, below half.
  std::vector<std::string> ev = fp32_model_step("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
  ev.push_back(launch(160'000, 5'000, 7));
  ev.push_back(kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 560'000, 400'000, 7, 7));
  auto run = diagnose_inline(ev, kH100);
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_tensor_core_matmul_us_per_step"), 200.0);
  EXPECT_FALSE(metric(*f, "fp32_other_kernel_us_per_step").has_value());
  EXPECT_DOUBLE_EQ(f->bound_saving_us, 200.0 * 0.5);
}

// Three such steps; the host waits for the GPU only in the first. Faster
// kernels shorten a step only where the host waited for them: the second
// step saves nothing. The last window is left uncapped (it ends where its
// GPU work ends).
TEST(ComputeEfficiency, ASavingIsCappedAtTheTimeTheHostWaitedForTheGpu) {
  std::vector<std::string> ev = fp32_model_step(kNvjet, 1, 0, /*sync=*/true);
  for (int n : {2, 3}) {
    std::vector<std::string> more = fp32_model_step(kNvjet, n, (n - 1) * 1'000'000);
    ev.insert(ev.end(), more.begin(), more.end());
  }
  auto run = diagnose_inline(ev, kH100);
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_tensor_core_matmul_us_per_step"), 200.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "fp32_other_kernel_us_per_step"), 100.0);
  // 150 us per step uncapped; step 2 loses all of it.
  EXPECT_DOUBLE_EQ(*metric(*f, "saving_beyond_host_wait_us_per_step"), 50.0);
  EXPECT_DOUBLE_EQ(f->bound_saving_us, 100.0);
}

TEST(ComputeEfficiency, TheCapIsTheBusyPartOfTheWait) {
  // The first step's sync waits 300k while the GPU works: a cap of 300k,
  // above its 150k saving. Shrink the wait to 100k (from 450k on): the
  // first step keeps 100k.
  std::vector<std::string> ev = fp32_model_step(kNvjet, 1, 0);
  ev.push_back(launch(450'000, 102'000, 19, "cudaStreamSynchronize"));
  for (int n : {2, 3}) {
    std::vector<std::string> more = fp32_model_step(kNvjet, n, (n - 1) * 1'000'000, /*sync=*/true);
    ev.insert(ev.end(), more.begin(), more.end());
  }
  auto run = diagnose_inline(ev, kH100);
  const Finding* f = any_finding(run->d, Category::kComputeEfficiency);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "saving_beyond_host_wait_us_per_step"), 50.0 / 3);
  EXPECT_DOUBLE_EQ(f->bound_saving_us, (100.0 + 150.0 + 150.0) / 3);
}

TEST(ComputeEfficiency, MatmulFlopsFromShapes) {
  EXPECT_EQ(matmul_flops("aten::mm", parse_input_dims("[[8192, 1024], [1024, 3072]]")), 2.0 * 8192 * 1024 * 3072);
  EXPECT_EQ(matmul_flops("aten::addmm", parse_input_dims("[[3072], [8192, 1024], [1024, 3072], [], []]")),
            2.0 * 8192 * 1024 * 3072);
  EXPECT_EQ(matmul_flops("aten::bmm", parse_input_dims("[[16, 128, 64], [16, 64, 256]]")), 16 * 2.0 * 128 * 64 * 256);
  EXPECT_EQ(matmul_flops("aten::linear", parse_input_dims("[[8, 1024, 1024], [3072, 1024], [3072]]")),
            2.0 * 8 * 1024 * 1024 * 3072);
  EXPECT_FALSE(matmul_flops("aten::mm", parse_input_dims("[[8, 3], [4, 5]]")).has_value());  // inner dims differ
  EXPECT_FALSE(matmul_flops("aten::mm", parse_input_dims("not json")).has_value());
}

TEST(ComputeEfficiency, InputDimsParser) {
  auto s = parse_input_dims("[[[16, 16, 1024, 32], [16, 16, 1024, 32]], [], [1024, 64]]");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].list);
  EXPECT_TRUE(s[1].dims.empty());
  EXPECT_EQ(s[1].numel(), 1);
  EXPECT_EQ(s[2].dims, (std::vector<int64_t>{1024, 64}));
  EXPECT_EQ(parse_string_list(R"(["c10::BFloat16", "", "Scalar"])"),
            (std::vector<std::string>{"c10::BFloat16", "", "Scalar"}));
  EXPECT_TRUE(parse_input_dims("[[1, 2").empty());
}

}  // namespace
}  // namespace stepscope::diagnose
