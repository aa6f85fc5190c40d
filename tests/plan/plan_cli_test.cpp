// `stepscope plan` and `plan validate` through the built binary: bad input
// ends with one stderr line naming the file or constraint and exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::plan {
namespace {

using testing::CliRun;
using testing::run_cli;

void expect_error(const CliRun& r, const std::string& line) {
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_EQ(r.err_lines[0], line);
}

const char* kHeader =
    "source,model,params_B,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq,gpu,n_gpu,tp,pp,dp,cp,vpp,global_batch,"
    "micro_batch,recompute,sequence_parallel,metric,value,flops_convention,step_seconds\n";

TEST(PlanCli, ValidateMissingFile) {
  testing::TempDir dir;
  std::string path = dir.file("nope.csv");
  expect_error(run_cli(dir, {"plan", "validate", path}), "stepscope: error: " + path + ": cannot open");
}

TEST(PlanCli, ValidateSkipsAMalformedRowAndRunsTheOthers) {
  testing::TempDir dir;
  const std::string good =
      "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds,1.42,,1.42\n";
  std::string path = dir.write(
      "bad.csv",
      std::string(kHeader) + good +
          "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds,fast,,\n");
  CliRun r = run_cli(dir, {"plan", "validate", path, "--json", "-"});
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_EQ(r.err_lines[0], "stepscope: warning: " + path +
                                ": row 1 (line 3), column \"value\": expected a number from 1e-6 to 1e9, got \"fast\"; "
                                "skipped");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["summary"]["skipped_rows"], 1);
  EXPECT_EQ(j["skipped"][0]["line"], 3);
  // Nothing left to predict: an error.
  std::string only_bad = dir.write(
      "only_bad.csv",
      std::string(kHeader) +
          "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds,fast,,\n");
  CliRun none = run_cli(dir, {"plan", "validate", only_bad});
  EXPECT_EQ(none.exit_code, 2);
  ASSERT_FALSE(none.err_lines.empty());
  EXPECT_EQ(none.err_lines.back(), "stepscope: error: " + only_bad + ": no row could be predicted (1 skipped)");
}

TEST(PlanCli, ValidateJsonRowsInInputOrder) {
  testing::TempDir dir;
  std::string path = dir.write(
      "ok.csv",
      std::string(kHeader) +
          "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds,1.42,,1.42\n"
          "S,GPT-22B layer,22,1,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,none,no,"
          "layer_fwd_bwd_ms,19.6,,\n");
  CliRun r = run_cli(dir, {"plan", "validate", path, "--json", "-"});
  ASSERT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["index"], 0);
  EXPECT_GT(j["rows"][0]["predicted_step_seconds"].get<double>(), 0);
  EXPECT_EQ(j["rows"][1]["index"], 1);
  EXPECT_TRUE(j["rows"][1]["predicted_step_seconds"].is_null());
  EXPECT_EQ(j["rows"][1]["metric"], "layer_fwd_bwd_ms");
}

TEST(PlanCli, ImpossibleLayoutNamesConstraint) {
  testing::TempDir dir;
  expect_error(
      run_cli(dir, {"plan", "--model", "gpt3-175b", "--gpu", "a100-80-sxm", "--tp", "5", "--pp", "8", "--gpus", "40"}),
      "stepscope: error: invalid configuration: heads (96) not divisible by tp (5); kv heads (96) and tp (5): "
      "neither divides the other; ffn hidden (49152) not divisible by tp (5)");
}

TEST(PlanCli, PlanJson) {
  testing::TempDir dir;
  CliRun r = run_cli(dir, {"plan", "--model", "llama3-8b", "--gpu", "h100-sxm", "--dp", "8", "--sharding", "zero3",
                           "--global-batch", "64", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines[0]);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parallel"]["sharding"], "zero3");
  EXPECT_GT(j["step_seconds"]["total"].get<double>(), 0);
  EXPECT_TRUE(j["memory_bytes"]["fits"].get<bool>());
}

TEST(PlanCli, UnknownModel) {
  testing::TempDir dir;
  expect_error(run_cli(dir, {"plan", "--model", "gpt5"}),
               "stepscope: error: --model: \"gpt5\" is neither a preset nor a file");
}

}  // namespace
}  // namespace stepscope::plan
