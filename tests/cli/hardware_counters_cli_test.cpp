// `stepscope analyze` on a CUPTI range-profiler trace: the counters are
// reported, and the missing kernel times are explained as such.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/counter_range_fixtures.h"
#include "cli_run.h"

namespace stepscope::analysis::testing_support {
namespace {

TEST(HardwareCountersCli, AnalyzeReportsCountersInsteadOfAskingForCudaActivity) {
  stepscope::testing::TempDir dir;
  const std::string path = dir.write("rank0.json", stepscope::testing::trace_doc(three_kernels()));
  auto json_run = stepscope::testing::run_cli(dir, {"analyze", "--json", "-", path});
  ASSERT_EQ(json_run.exit_code, 0);
  const nlohmann::json j = nlohmann::json::parse(json_run.out);
  const nlohmann::json& c = j["ranks"][0]["hardware_counters"];
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["ranges"], 3);
  EXPECT_EQ(c["matched_to_launches"], true);
  EXPECT_EQ(c["range_rows"][0]["top_level_op"], "aten::conv2d");
  EXPECT_EQ(c["range_rows"][2]["tensor_core_insts"], nullptr);
  bool explained = false;
  for (const auto& n : j["diagnosis"]["not_assessed"])
    explained = explained || n["reason"].get<std::string>().find("range profiler") != std::string::npos;
  EXPECT_TRUE(explained);

  auto text_run = stepscope::testing::run_cli(dir, {"analyze", path, "--details"});
  ASSERT_EQ(text_run.exit_code, 0);
  EXPECT_NE(text_run.out.find("Hardware counters per kernel, CUPTI range profiler"), std::string::npos);
  EXPECT_EQ(text_run.out.find("ProfilerActivity.CUDA"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::analysis::testing_support
