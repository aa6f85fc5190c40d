#include "hwbench/profile_json.h"

#include <gtest/gtest.h>

#include <fstream>

#include "hwbench/profile_fixture.h"
#include "model/cluster_spec.h"
#include "model/hardware_profile_json.h"
#include "trace/trace_fixtures.h"

namespace stepscope::hwbench {

using model::HardwareProfile;
using model::profile_from_json;
using model::read_profile_file;
namespace {

using nlohmann::json;

TEST(ProfileJson, TopLevelIsThePlannerSchema) {
  json j = profile_to_json(testing::h200_profile());
  EXPECT_EQ(j["gpu"], "NVIDIA H200");
  EXPECT_DOUBLE_EQ(j["hbm_gbps"].get<double>(), 4210);
  EXPECT_FALSE(j.contains("gpus_per_node"));  // one visible GPU says nothing about the node
  EXPECT_FALSE(j.contains("nccl"));           // world size 1: no link figure
  ASSERT_EQ(j["gemm"].size(), 2u);            // the two bf16 points; tf32 is not a planner dtype
  EXPECT_EQ(j["gemm"][0]["dtype"], "bf16");
  // Efficiency of 1024³: 214.7 / 785.4 = 0.2734.
  EXPECT_NEAR(j["stepscope_bench"]["gemm_sweep"][1]["efficiency"].get<double>(), 0.2734, 1e-4);
  EXPECT_DOUBLE_EQ(j["stepscope_bench"]["gemm_max_tflops"]["tf32"].get<double>(), 354.7);
  EXPECT_FALSE(j["stepscope_bench"]["verdicts"].empty());
}

TEST(ProfileJson, RoundTrips) {
  HardwareProfile in = testing::h200_profile();
  std::string error;
  std::optional<HardwareProfile> out = profile_from_json(profile_to_json(in), "p.json", error);
  ASSERT_TRUE(out) << error;
  EXPECT_EQ(out->device.name, in.device.name);
  EXPECT_EQ(out->device.compute_major, 9);
  ASSERT_EQ(out->gemm.size(), 3u);
  EXPECT_EQ(out->gemm[2].dtype, "tf32");
  EXPECT_DOUBLE_EQ(out->gemm_max_tflops("bf16"), 785.4);
  ASSERT_NE(out->memory_result("hbm_copy"), nullptr);
  EXPECT_DOUBLE_EQ(out->memory_result("hbm_copy")->gbps, 4210);
  ASSERT_NE(out->launch_result("graph_replay"), nullptr);
  ASSERT_EQ(out->collectives.size(), 1u);
  EXPECT_EQ(out->collectives[0].points[1].wrong, 0);
  EXPECT_EQ(out->collectives[0].points[0].wrong, -1);
  EXPECT_EQ(out->collectives[0].fits[0].range, "ll");
  EXPECT_EQ(out->notes, in.notes);
}

TEST(ProfileJson, PlanReadsTheWrittenProfile) {
  stepscope::testing::TempDir dir;
  std::string path = dir.write("h200.json", profile_to_json(testing::h200_profile()).dump(1));
  std::string error;
  std::optional<model::ClusterSpec> c = model::load_hardware_profile(path, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->gpu.name, "h200-sxm");
  EXPECT_NEAR(c->gpu.hbm_fraction, 4210.0 / 4800.0, 1e-12);
  EXPECT_EQ(c->gemm_samples.size(), 2u);
  EXPECT_EQ(c->gpu.gpus_per_node, 8);  // the catalog's, since the profile saw one GPU
}

TEST(ProfileJson, ErrorsNameTheField) {
  std::string error;
  json j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["memory"][0]["gbps"] = "fast";
  EXPECT_FALSE(profile_from_json(j, "p.json", error));
  EXPECT_EQ(error, "p.json: field \"stepscope_bench.memory[0].gbps\" must be a number from 0.001 to 1000000, got \"fast\"");

  j = profile_to_json(testing::h200_profile());
  j.erase("stepscope_bench");
  EXPECT_FALSE(profile_from_json(j, "p.json", error));
  EXPECT_EQ(error, "p.json: field \"stepscope_bench\" is missing");

  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["schema_version"] = 2;
  EXPECT_FALSE(profile_from_json(j, "p.json", error));
  EXPECT_EQ(error, "p.json: field \"stepscope_bench.schema_version\" is 2, this stepscope reads 1");

  EXPECT_FALSE(read_profile_file("/nonexistent/p.json", error));
  EXPECT_EQ(error, "/nonexistent/p.json: cannot open");
}

}  // namespace
}  // namespace stepscope::hwbench
