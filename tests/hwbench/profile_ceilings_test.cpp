#include "hwbench/profile_ceilings.h"

#include <gtest/gtest.h>

#include "hwbench/profile_fixture.h"

namespace stepscope::hwbench {

using model::HardwareProfile;
namespace {

TEST(ProfileCeilings, MeasuredRatesReplaceDatasheetPeaks) {
  HardwareProfile p = testing::h200_profile();
  std::string error;
  std::optional<model::GpuPeaks> row = measured_peaks(p, error);
  ASSERT_TRUE(row) << error;
  EXPECT_DOUBLE_EQ(row->bf16_tflops, 785.4);  // measured maximum
  EXPECT_DOUBLE_EQ(row->tf32_tflops, 354.7);
  EXPECT_DOUBLE_EQ(row->hbm_gbps, 4210);
  EXPECT_DOUBLE_EQ(row->fp16_tflops, 989.4);  // not measured: the H200 datasheet's
  EXPECT_DOUBLE_EQ(row->fp32_tflops, 67);
  EXPECT_DOUBLE_EQ(row->link_gbps, 900);      // one GPU: NVLink not measured
  EXPECT_DOUBLE_EQ(row->memory_gb, 150);      // 150e9 B
  EXPECT_EQ(row->model, "NVIDIA H200");
}

TEST(ProfileCeilings, TwoRankAllReduceSetsTheLink) {
  HardwareProfile p = testing::h200_profile();
  p.collectives[0].world = 8;
  p.collectives[0].points[1].busbw_gbps = 360;
  std::string error;
  std::optional<model::GpuPeaks> row = measured_peaks(p, error);
  ASSERT_TRUE(row);
  EXPECT_DOUBLE_EQ(row->link_gbps, 720);  // both directions: 2 × 360
}

TEST(ProfileCeilings, EmptyProfileIsAnError) {
  HardwareProfile p;
  p.device.name = "NVIDIA H200";
  std::string error;
  EXPECT_FALSE(measured_peaks(p, error));
  EXPECT_EQ(error, "the profile holds no measured GEMM rate, HBM copy or all-reduce bandwidth");
}

}  // namespace
}  // namespace stepscope::hwbench
