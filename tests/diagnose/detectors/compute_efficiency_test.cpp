// compute_efficiency on real traces: FP32 matmuls on the SIMT path are named,
// bf16 runs reach most of the H200's peak and get no finding.
#include <gtest/gtest.h>

#include "diagnose/hardware_table.h"
#include "diagnose/op_args.h"
#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;

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
  EXPECT_GT(f.estimated_saving_us, bound * 0.99);
  EXPECT_LE(f.estimated_saving_us, run->d.attribution[0].mean_step_ns() / 1e3);
}

TEST(ComputeEfficiency, HealthyBf16RunHasNoFinding) {
  auto run = diagnose_folder(examples_dir() + "/baseline_compiled");
  EXPECT_EQ(any_finding(run->d, Category::kComputeEfficiency), nullptr);
  EXPECT_GT(run->d.effective_compute_pct, 90.0);
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
