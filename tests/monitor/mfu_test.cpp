#include "monitor/mfu.h"

#include <gtest/gtest.h>

#include "model/cluster_spec.h"
#include "model/step_time_model.h"

namespace stepscope::monitor {
namespace {

TEST(Mfu, FlopsPerTokenAsPlanCountsThem) {
  const model::ModelSpec* m = model::find_model_preset("gpt3-175b");
  ASSERT_NE(m, nullptr);
  double per_token = model_flops_per_token(*m);
  // 6 × parameters is the usual first-order count; attention adds a few percent.
  double six_n = 6.0 * static_cast<double>(m->total_params());
  EXPECT_GT(per_token, six_n);
  EXPECT_LT(per_token, 1.1 * six_n);
}

TEST(Mfu, TokensPerSecondOverPeak) {
  std::string error;
  auto mfu = make_mfu_model("llama3-8b", "NVIDIA H200", "bf16", 8, error);
  ASSERT_TRUE(mfu) << error;
  const model::GpuSpec* h200 = model::find_gpu("h200-sxm");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(mfu->peak_flops_per_gpu, h200->bf16_tflops * 1e12);
  double tps = 0.4 * 8 * mfu->peak_flops_per_gpu / mfu->flops_per_token;  // 40% MFU
  EXPECT_NEAR(*mfu->mfu(tps), 0.4, 1e-12);
  EXPECT_FALSE(mfu->mfu(std::nullopt).has_value());
}

TEST(Mfu, AnyGpuOfTheTableHasAPeak) {
  // The MFU needs only peak rates: GPUs the planner does not plan are fine.
  std::string error;
  auto l40s = make_mfu_model("llama3-8b", "NVIDIA L40S", "bf16", 1, error);
  ASSERT_TRUE(l40s) << error;
  EXPECT_DOUBLE_EQ(l40s->peak_flops_per_gpu, 362.05e12);
  auto mi300x = make_mfu_model("llama3-8b", "AMD Instinct MI300X", "fp8", 1, error);
  ASSERT_TRUE(mi300x) << error;
  EXPECT_DOUBLE_EQ(mi300x->peak_flops_per_gpu, 2614.9e12);
}

TEST(Mfu, BadInputsNameTheOption) {
  std::string error;
  EXPECT_FALSE(make_mfu_model("no-such-model", "h100-sxm", "bf16", 1, error));
  EXPECT_NE(error.find("--model"), std::string::npos);
  EXPECT_FALSE(make_mfu_model("gpt3-175b", "Voodoo 3", "bf16", 1, error));
  EXPECT_NE(error.find("--gpu"), std::string::npos);
  EXPECT_FALSE(make_mfu_model("gpt3-175b", "h100-sxm", "int3", 1, error));
  EXPECT_NE(error.find("--dtype"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::monitor

namespace stepscope::monitor {
namespace {

TEST(Mfu, AnOverflowingRatioIsAbsentNotInfinite) {
  MfuModel m;
  m.flops_per_token = 1e13;
  m.peak_flops_per_gpu = 1e15;
  m.gpus = 1;
  EXPECT_FALSE(m.mfu(1e300).has_value());  // 1e313: no series rather than +Inf
  EXPECT_DOUBLE_EQ(*m.mfu(50), 0.5);
}

}  // namespace
}  // namespace stepscope::monitor
