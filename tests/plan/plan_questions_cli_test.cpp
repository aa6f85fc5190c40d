// The questions users ask `stepscope plan`, one command each: a GPU count
// alone, another sequence length, a search without a global batch, and what
// would fit when a layout does not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.h"

namespace stepscope::plan {
namespace {

using testing::CliRun;
using testing::run_cli;

nlohmann::json plan_json(const testing::TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "plan");
  args.insert(args.end(), {"--json", "-"});
  CliRun r = run_cli(dir, args);
  EXPECT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines[0]);
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(PlanQuestions, GpusAloneFillsDataParallelAndSaysSo) {
  testing::TempDir dir;
  auto j = plan_json(dir, {"--model", "llama3-8b", "--gpus", "8", "--sharding", "zero3"});
  EXPECT_EQ(j["parallel"]["dp"], 8);
  EXPECT_EQ(j["cluster"]["gpus"], 8);
  EXPECT_EQ(j["settings"]["global_batch"], 8);  // dp × micro-batch
  ASSERT_EQ(j["notes"].size(), 1u);
  EXPECT_EQ(j["notes"][0], "dp 8 fills the 8 GPUs (tp × pp × cp = 1); give dp to set it");
  // With tp 2 the same 8 GPUs leave 4 replicas.
  auto tp2 = plan_json(dir, {"--model", "llama3-8b", "--gpus", "8", "--tp", "2", "--sharding", "zero3"});
  EXPECT_EQ(tp2["parallel"]["dp"], 4);
  // dp given: no note, and a mismatch stays an error.
  EXPECT_FALSE(plan_json(dir, {"--model", "llama3-8b", "--dp", "8", "--sharding", "zero3"}).contains("notes"));
  CliRun r = run_cli(dir, {"plan", "--model", "llama3-8b", "--gpus", "8", "--dp", "4"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(PlanQuestions, GpusThatTheOtherSizesDoNotDivideAreRefused) {
  testing::TempDir dir;
  CliRun r = run_cli(dir, {"plan", "--model", "llama3-8b", "--gpus", "12", "--tp", "8"});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_EQ(r.err_lines[0], "stepscope: error: --gpus: 12 GPUs do not divide into tp × pp × cp = 8; give dp");
}

TEST(PlanQuestions, SeqReplacesTheModelsAndIsPrinted) {
  testing::TempDir dir;
  auto own = plan_json(dir, {"--model", "llama3-8b", "--dp", "8", "--sharding", "zero3"});
  auto longer = plan_json(dir, {"--model", "llama3-8b", "--dp", "8", "--sharding", "zero3", "--seq", "16384"});
  EXPECT_EQ(own["model"]["seq"], 8192);
  EXPECT_EQ(longer["model"]["seq"], 16384);
  // Twice the tokens: more than twice the attention time (quadratic), more activations.
  EXPECT_GT(longer["step_seconds"]["attention"].get<double>(), 2 * own["step_seconds"]["attention"].get<double>());
  EXPECT_GT(longer["memory_bytes"]["activations"].get<double>(), own["memory_bytes"]["activations"].get<double>());
  CliRun text = run_cli(dir, {"plan", "--model", "llama3-8b", "--dp", "8", "--sharding", "zero3", "--seq", "16384"});
  EXPECT_NE(text.out.find("global batch 8 × 16384 tokens"), std::string::npos) << text.out;
  CliRun bad = run_cli(dir, {"plan", "--model", "llama3-8b", "--seq", "0"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(PlanQuestions, SearchWithoutGlobalBatchTakesAboutFourMillionTokens) {
  testing::TempDir dir;
  auto j = plan_json(dir, {"search", "--model", "llama3-8b", "--gpus", "8", "--top", "2"});
  EXPECT_EQ(j["global_batch"], 512);  // 2^22 tokens / 8192 per sequence, a multiple of 8
  ASSERT_EQ(j["notes"].size(), 1u);
  EXPECT_EQ(j["notes"][0], "global batch 512 (4.2M tokens), the default of about 4M tokens per step");
  // 2^22 / 2048 = 2048 sequences, rounded up to a multiple of 24 GPUs: 2064.
  EXPECT_EQ(plan_json(dir, {"search", "--model", "gpt3-1.3b", "--gpus", "24", "--top", "1"})["global_batch"], 2064);
  // Given: used as is, no note.
  EXPECT_FALSE(
      plan_json(dir, {"search", "--model", "llama3-8b", "--gpus", "8", "--global-batch", "64", "--top", "1"})
          .contains("notes"));
}

TEST(PlanQuestions, DoesNotFitNamesLayoutsThatDoAndEachPlansAsSaid) {
  testing::TempDir dir;
  auto j = plan_json(dir, {"--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--micro-batch", "2",
                           "--global-batch", "64"});
  ASSERT_FALSE(j["memory_bytes"]["fits"].get<bool>());
  ASSERT_TRUE(j["alternatives"].is_array());
  ASSERT_FALSE(j["alternatives"].empty());
  for (const auto& a : j["alternatives"]) {
    SCOPED_TRACE(a["change"].get<std::string>());
    auto alone = plan_json(dir, {"--model", "llama3-8b", "--gpu", "h100-sxm", "--global-batch", "64", "--tp",
                                 std::to_string(a["tp"].get<int>()), "--pp", std::to_string(a["pp"].get<int>()),
                                 "--dp", std::to_string(a["dp"].get<int>()), "--cp", std::to_string(a["cp"].get<int>()),
                                 "--micro-batch", std::to_string(a["micro_batch"].get<int>()), "--recompute",
                                 a["recompute"].get<std::string>(), "--sharding", a["sharding"].get<std::string>()});
    EXPECT_TRUE(alone["memory_bytes"]["fits"].get<bool>());
    EXPECT_DOUBLE_EQ(alone["step_seconds"]["total"].get<double>(), a["step_seconds"].get<double>());
    EXPECT_EQ(alone["cluster"]["gpus"], a["gpus"]);
  }
  CliRun text = run_cli(dir, {"plan", "--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--micro-batch", "2",
                              "--global-batch", "64"});
  EXPECT_NE(text.out.find("DOES NOT FIT"), std::string::npos);
  EXPECT_NE(text.out.find("nearest layouts that fit"), std::string::npos);
  // A layout that fits lists none.
  EXPECT_FALSE(plan_json(dir, {"--model", "llama3-8b", "--dp", "8", "--sharding", "zero3"}).contains("alternatives"));
}

}  // namespace
}  // namespace stepscope::plan
