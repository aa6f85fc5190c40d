// `stepscope plan pareto` and `plan sharding` through the built binary: the
// JSON agrees with the library calls (cost models, pareto_front, advise_fsdp)
// recomputed here, and bad input gives one error line naming the constraint
// and exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "plan/batch_pareto.h"
#include "plan/fsdp_advice.h"
#include "model/memory_model.h"
#include "plan/search_evaluator.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

using testing::run_cli;

ClusterSpec h100s(int gpus) {
  ClusterSpec c;
  c.gpu = *find_gpu("h100-sxm");
  c.gpus = gpus;
  return c;
}

// tp 2, pp 4 on 8 GPUs; global batches 8..64, micro-batches 1, 2, 4: every
// pair is valid (dp = 1), so 12 points. The front is recomputed here point by
// point with estimate_memory / estimate_step and pareto_front.
TEST(PlanParetoCli, FrontAgreesWithTheLibrary) {
  testing::TempDir dir;
  const auto r = run_cli(dir, {"plan", "pareto", "--model", "gpt3-13b", "--tp", "2", "--pp", "4", "--global-batches",
                               "8,16,32,64", "--micro-batches", "1,2,4", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines[0]);
  const auto j = nlohmann::json::parse(r.out);
  const ModelSpec m = *find_model_preset("gpt3-13b");
  const ClusterSpec c = h100s(8);
  ParallelConfig p;
  p.tp = 2, p.pp = 4;
  std::vector<BatchPoint> points;
  for (int gb : {8, 16, 32, 64}) {
    for (int mb : {1, 2, 4}) {
      TrainingSettings t;
      t.global_batch = gb;
      p.micro_batch = mb;
      const MemoryEstimate mem = estimate_memory(m, t, c, p);
      if (mem.fits) points.push_back({gb, mb, double(gb) * m.seq / estimate_step(m, t, c, p).total, mem.total});
    }
  }
  EXPECT_EQ(j["evaluated"].get<int>(), 12);
  EXPECT_EQ(j["fitting"].get<size_t>(), points.size());
  const std::vector<size_t> front = pareto_front(points);
  ASSERT_EQ(j["front"].size(), front.size());
  ASSERT_GE(front.size(), 2u);  // otherwise the check below says little
  for (size_t k = 0; k < front.size(); ++k) {
    const BatchPoint& b = points[front[k]];
    const auto& row = j["front"][k];
    EXPECT_EQ(row["global_batch"].get<int>(), b.global_batch);
    EXPECT_EQ(row["micro_batch"].get<int>(), b.micro_batch);
    EXPECT_NEAR(row["tokens_per_second"].get<double>(), b.tokens_per_second, 1e-9 * b.tokens_per_second);
    EXPECT_NEAR(row["memory_bytes"].get<double>(), b.memory_bytes, 1e-9 * b.memory_bytes);
    // Along the front memory rises and so does throughput.
    if (k > 0) {
      EXPECT_GT(row["memory_bytes"].get<double>(), j["front"][k - 1]["memory_bytes"].get<double>());
      EXPECT_GT(row["tokens_per_second"].get<double>(), j["front"][k - 1]["tokens_per_second"].get<double>());
    }
  }
}

TEST(PlanParetoCli, ImpossibleLayoutNamesTheConstraint) {
  testing::TempDir dir;
  const auto r = run_cli(dir, {"plan", "pareto", "--model", "gpt3-13b", "--tp", "3"});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_NE(r.err_lines[0].find("heads (40) not divisible by tp (3)"), std::string::npos) << r.err_lines[0];
}

// A GPU-count sweep of gpt3-1.3b at global batch 256: the rows and the
// crossover are advise_fsdp's on the same scenarios.
TEST(PlanShardingCli, SweepAgreesWithTheLibrary) {
  testing::TempDir dir;
  const auto r = run_cli(dir, {"plan", "sharding", "--model", "gpt3-1.3b", "--gpus", "1,2,4,8", "--global-batch", "256",
                               "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines[0]);
  const auto j = nlohmann::json::parse(r.out);
  const ModelSpec m = *find_model_preset("gpt3-1.3b");
  TrainingSettings t;
  t.global_batch = 256;
  std::vector<FsdpScenario> scenarios;
  for (int g : {1, 2, 4, 8}) scenarios.push_back({double(g), g, 256, m.seq, model_evaluator(m, t, h100s(g))});
  const FsdpAdvice advice = advise_fsdp(scenarios);
  ASSERT_EQ(j["rows"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const FsdpRow& row = advice.rows[i];
    const auto& jr = j["rows"][i];
    ASSERT_EQ(jr["ddp"].is_null(), !row.ddp_fits);
    ASSERT_EQ(jr["fsdp"].is_null(), !row.fsdp_fits);
    if (row.ddp_fits) {
      EXPECT_NEAR(jr["ddp"]["tokens_per_second"].get<double>(), row.ddp.tokens_per_second, 1e-9 * row.ddp.tokens_per_second);
      EXPECT_EQ(jr["ddp"]["micro_batch"].get<int>(), row.ddp.config.micro_batch);
    }
    if (row.fsdp_fits) {
      EXPECT_NEAR(jr["fsdp"]["tokens_per_second"].get<double>(), row.fsdp.tokens_per_second,
                  1e-9 * row.fsdp.tokens_per_second);
    }
  }
  // One GPU: no FSDP (ZeRO-3 over one replica is DDP).
  EXPECT_TRUE(j["rows"][0]["fsdp"].is_null());
  EXPECT_EQ(j["message"].get<std::string>(), advice.message);
  if (advice.reason == CrossoverReason::kNone) {
    EXPECT_TRUE(j["crossover_x"].is_null());
  } else {
    EXPECT_EQ(j["crossover_x"].get<double>(), advice.crossover_x);
  }
}

TEST(PlanShardingCli, BadInputIsOneErrorLineAndExitTwo) {
  testing::TempDir dir;
  const auto unknown = run_cli(dir, {"plan", "sharding", "--model", "no-such-model", "--gpus", "8", "--global-batch", "64"});
  EXPECT_EQ(unknown.exit_code, 2);
  ASSERT_EQ(unknown.err_lines.size(), 1u);
  EXPECT_NE(unknown.err_lines[0].find("--model"), std::string::npos) << unknown.err_lines[0];
  // 100 sequences cannot be split evenly over 8 replicas.
  const auto uneven = run_cli(dir, {"plan", "sharding", "--model", "gpt3-1.3b", "--gpus", "8", "--global-batch", "100"});
  EXPECT_EQ(uneven.exit_code, 2);
  ASSERT_EQ(uneven.err_lines.size(), 1u);
  EXPECT_NE(uneven.err_lines[0].find("not divisible by 8 GPUs"), std::string::npos) << uneven.err_lines[0];
  const auto both = run_cli(dir, {"plan", "sharding", "--model", "gpt3-1.3b,gpt3-13b", "--gpus", "8,16",
                                  "--global-batch", "64"});
  EXPECT_EQ(both.exit_code, 2);
  ASSERT_EQ(both.err_lines.size(), 1u);
  EXPECT_NE(both.err_lines[0].find("sweep one of them"), std::string::npos) << both.err_lines[0];
}

}  // namespace
}  // namespace stepscope::plan
