// The planner's hardware-profile reader (`plan --profile`): measured rates
// from 0.001 to 1e6, GEMM sizes from 1 to 2^24, gpus_per_node a whole number
// from 1 to 1024, so every rate and time derived from them is finite.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model/cluster_spec.h"
#include "model/hardware_profile_json.h"
#include "trace/trace_fixtures.h"

namespace stepscope::model {

namespace {

std::string read_error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(hardware_profile_from_json_text(text, "p.json", error)) << text;
  return error;
}

TEST(ProfileLimits, HugeNumberLiteralNamesTheField) {
  testing::TempDir dir;
  std::string path = dir.write("p.json", R"({"gpu": "h100-sxm", "nccl": {"intra_node_busbw_gbps": 1e309}})");
  std::string error;
  EXPECT_FALSE(load_hardware_profile(path, error));  // used to end in std::terminate
  EXPECT_EQ(error, path + ": field \"nccl.intra_node_busbw_gbps\" holds a number out of range (1e309)");
}

TEST(ProfileLimits, RatesMustBePositiveAndBounded) {
  // 1e300 GB/s used to be accepted: the achievable HBM rate came out as inf.
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "hbm_gbps": 1e300})"),
            "p.json: field \"hbm_gbps\" must be a number from 0.001 to 1000000, got 1e+300");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "hbm_gbps": 0})"),
            "p.json: field \"hbm_gbps\" must be a number from 0.001 to 1000000, got 0");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "nccl": {"inter_node_busbw_gbps": -5}})"),
            "p.json: field \"nccl.inter_node_busbw_gbps\" must be a number from 0.001 to 1000000, got -5");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gemm": [{"m": 8, "n": 8, "k": 8, "tflops": 1e7}]})"),
            "p.json: field \"gemm[0].tflops\" must be a number from 0.001 to 1000000, got 10000000.0");
  // 1e-300 TFLOP/s used to be accepted: gpt3-175b's step came out at 1e304 s.
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gemm": [{"m": 8192, "n": 8192, "k": 8192, "tflops": 1e-300}]})"),
            "p.json: field \"gemm[0].tflops\" must be a number from 0.001 to 1000000, got 1e-300");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gemm": [{"m": 0.5, "n": 8, "k": 8, "tflops": 1}]})"),
            "p.json: field \"gemm[0].m\" must be a number from 1 to 16777216, got 0.5");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gemm": [{"m": 8, "n": 8, "tflops": 100}]})"),
            "p.json: field \"gemm[0].k\" is missing");
}

TEST(ProfileLimits, GpusPerNodeIsAWholeNumberInRange) {
  // 1e300 used to reach static_cast<int> (undefined behaviour).
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gpus_per_node": 1e300})"),
            "p.json: field \"gpus_per_node\" must be an integer from 1 to 1024, got 1e+300");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gpus_per_node": 2.5})"),
            "p.json: field \"gpus_per_node\" must be an integer from 1 to 1024, got 2.5");
  EXPECT_EQ(read_error(R"({"gpu": "h100-sxm", "gpus_per_node": 0})"),
            "p.json: field \"gpus_per_node\" must be an integer from 1 to 1024, got 0");
}

TEST(ProfileLimits, ProfileAtTheLimitsGivesFiniteRates) {
  std::string error;
  auto c = hardware_profile_from_json_text(
      R"({"gpu": "a100-40-sxm", "gpus_per_node": 1024, "hbm_gbps": 1e-3,
          "nccl": {"intra_node_busbw_gbps": 1e6, "inter_node_busbw_gbps": 1e6},
          "gemm": [{"m": 16777216, "n": 16777216, "k": 16777216, "tflops": 1e6}]})",
      "p.json", error);
  ASSERT_TRUE(c) << error;
  EXPECT_DOUBLE_EQ(c->gpu.hbm_achievable_Bps(), 1e6);
  EXPECT_TRUE(std::isfinite(c->gpu.nvlink_achievable_Bps()));
  EXPECT_TRUE(std::isfinite(c->gpu.network_achievable_Bps()));
  EXPECT_EQ(c->gpu.gpus_per_node, 1024);
}

}  // namespace
}  // namespace stepscope::model
