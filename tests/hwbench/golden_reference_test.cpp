#include "hwbench/golden_reference.h"

#include <gtest/gtest.h>

#include "hwbench/profile_fixture.h"

namespace stepscope::hwbench {

using model::HardwareProfile;
namespace {

const Verdict* find(const std::vector<Verdict>& v, const std::string& metric) {
  for (const Verdict& x : v)
    if (x.metric == metric) return &x;
  return nullptr;
}

TEST(GoldenReference, KnownGoodRuleThresholds) {
  // k = 100: 95 healthy, 94.9 and 85 below, 84.9 unhealthy.
  EXPECT_EQ(judge_value(95, 100, 0, 0), Health::kHealthy);
  EXPECT_EQ(judge_value(94.9, 100, 0, 0), Health::kBelowReference);
  EXPECT_EQ(judge_value(85, 100, 0, 0), Health::kBelowReference);
  EXPECT_EQ(judge_value(84.9, 100, 0, 0), Health::kUnhealthy);
}

TEST(GoldenReference, DatasheetRuleThresholds) {
  // d = 1000, f = 0.8: typical 800; healthy from 0.9·800 = 720, below from 0.75·800 = 600.
  EXPECT_EQ(judge_value(720, 0, 1000, 0.8), Health::kHealthy);
  EXPECT_EQ(judge_value(719, 0, 1000, 0.8), Health::kBelowReference);
  EXPECT_EQ(judge_value(600, 0, 1000, 0.8), Health::kBelowReference);
  EXPECT_EQ(judge_value(599, 0, 1000, 0.8), Health::kUnhealthy);
  EXPECT_EQ(judge_value(599, 0, 0, 0.8), Health::kNoReference);
}

TEST(GoldenReference, H200ProfileAgainstDatasheetAndKnownGood) {
  std::vector<Verdict> v = golden_comparison(testing::h200_profile());
  const Verdict* copy = find(v, "hbm_copy_gbps");
  ASSERT_NE(copy, nullptr);
  // 4210 / 4800 = 87.7% -> "88%"; 4210 / 4180 = 100.7% -> healthy.
  EXPECT_DOUBLE_EQ(copy->datasheet, 4800);
  EXPECT_DOUBLE_EQ(copy->known_good, 4180);
  EXPECT_EQ(copy->health, Health::kHealthy);
  EXPECT_EQ(copy->message, "HBM copy 4210.0 GB/s = 88% of datasheet 4800.0, 101% of known-good 4180.0: healthy");
  const Verdict* bf16 = find(v, "gemm_bf16_tflops");
  ASSERT_NE(bf16, nullptr);
  EXPECT_DOUBLE_EQ(bf16->value, 785.4);  // the maximum over the sweep, not the 1024³ point
  EXPECT_DOUBLE_EQ(bf16->datasheet, 989.4);
  EXPECT_EQ(bf16->health, Health::kHealthy);  // 785.4 ≥ 0.95 · 755
  // Pinned host-to-device 54.8 of known-good 55.4 (98.9%) and of PCIe Gen5 64 GB/s.
  const Verdict* h2d = find(v, "h2d_pinned_gbps");
  ASSERT_NE(h2d, nullptr);
  EXPECT_DOUBLE_EQ(h2d->datasheet, 64);
  EXPECT_EQ(h2d->health, Health::kHealthy);
  EXPECT_EQ(find(v, "gemm_fp16_tflops"), nullptr);  // not measured: no verdict
}

TEST(GoldenReference, SlowCardIsFlagged) {
  HardwareProfile p = testing::h200_profile();
  p.memory[0].gbps = 3000;  // 3000 / 4180 = 71.8% < 85%
  p.gemm[0].tflops = 700;   // 700 / 755 = 92.7%: below reference
  std::vector<Verdict> v = golden_comparison(p);
  EXPECT_EQ(find(v, "hbm_copy_gbps")->health, Health::kUnhealthy);
  EXPECT_EQ(find(v, "gemm_bf16_tflops")->health, Health::kBelowReference);
}

TEST(GoldenReference, UnknownModelHasNoReference) {
  HardwareProfile p = testing::h200_profile();
  p.device.name = "Imaginary GPU 9000";
  p.gpu = p.device.name;
  for (const Verdict& v : golden_comparison(p)) {
    EXPECT_EQ(v.health, Health::kNoReference) << v.metric;
    EXPECT_EQ(v.datasheet, 0) << v.metric;
  }
  EXPECT_TRUE(known_good_ceilings("Imaginary GPU 9000").empty());
  EXPECT_EQ(known_good_ceilings("NVIDIA H100 80GB HBM3").size(), 1u);  // Bekman's bf16 figure
}

}  // namespace
}  // namespace stepscope::hwbench
