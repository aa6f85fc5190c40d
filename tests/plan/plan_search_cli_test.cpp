// `stepscope plan search` and `plan recompute` through the built binary: the
// JSON agrees with the library (search space, cost models), bad input gives
// one error line and exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "plan/config_search.h"
#include "plan/search_evaluator.h"
#include "model/step_time_model.h"
#include "test_paths.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

CliRun run_cli(const std::string& args) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / (std::string("plan_cli_") + info->name());
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "'" + string.
  std::string cmd = "'";
  cmd.append(testing::cli_path()).append("' ").append(args);
  cmd.append(" >'").append(out).append("' 2>'").append(err).append("'");
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

TEST(PlanSearchCli, JsonAgreesWithTheLibrary) {
  const CliRun r = run_cli("plan search --model gpt3-1.3b --gpus 8 --global-batch 64 --top 3 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ModelSpec m = *find_model_preset("gpt3-1.3b");
  TrainingSettings t;
  t.global_batch = 64;
  ClusterSpec c;
  c.gpu = *find_gpu("h100-sxm");
  c.gpus = 8;
  EXPECT_EQ(j["candidates"].get<int64_t>(), for_each_config(search_space_for(m, t, c), [](const ParallelConfig&) {}));
  ASSERT_EQ(j["top"].size(), 3u);
  EXPECT_GE(j["top"][0]["tokens_per_second"].get<double>(), j["top"][1]["tokens_per_second"].get<double>());
  // The best layout's throughput is the step-time model's: 64 x 2048 tokens / step.
  ParallelConfig p;
  const auto& b = j["top"][0];
  p.tp = b["tp"], p.pp = b["pp"], p.dp = b["dp"], p.cp = b["cp"], p.vpp = b["vpp"], p.micro_batch = b["micro_batch"];
  p.sequence_parallel = b["sequence_parallel"], p.cpu_offload = b["cpu_offload"];
  ASSERT_TRUE(parse_recompute(b["recompute"].get<std::string>(), p.recompute));
  ASSERT_TRUE(parse_sharding(b["sharding"].get<std::string>(), p.sharding));
  EXPECT_NEAR(b["tokens_per_second"].get<double>(), 64.0 * 2048 / estimate_step(m, t, c, p).total,
              1e-9 * b["tokens_per_second"].get<double>());
}

TEST(PlanSearchCli, UnknownModelIsOneErrorLine) {
  const CliRun r = run_cli("plan search --model no-such-model --gpus 8 --global-batch 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(PlanRecomputeCli, TooSmallABudgetExitsOne) {
  const CliRun ok = run_cli("plan recompute --model gpt3-1.3b --dp 8 --global-batch 64 --json -");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["none"].get<int>() + j["selective"].get<int>() + j["full"].get<int>(), 24);  // gpt3-1.3b: 24 layers
  const CliRun tight = run_cli("plan recompute --model gpt3-1.3b --dp 8 --global-batch 64 --budget-gb 0.001");
  EXPECT_EQ(tight.exit_code, 1);
  EXPECT_NE(tight.out.find("does not fit"), std::string::npos) << tight.out;
}

}  // namespace
}  // namespace stepscope::plan
