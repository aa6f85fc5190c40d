// The nearest layouts that fit, when a layout does not: each one fits, runs
// (constraints and search rules), keeps the model and global batch, and is
// the least change of its kind.
#include "plan/fit_alternatives.h"

#include <gtest/gtest.h>

#include "plan/config_search.h"
#include "model/memory_model.h"
#include "model/plan_constraints.h"
#include "plan/search_evaluator.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

struct Case {
  ModelSpec model;
  TrainingSettings settings;
  ClusterSpec cluster;
  ParallelConfig layout;
};

// Llama 3 8B, pure DDP on 8 H100s at micro-batch 4: 12 bytes of optimizer
// state per parameter (96 GB) alone pass the 80 GB.
Case llama8b_ddp() {
  Case c{*find_model_preset("llama3-8b"), {}, {*find_gpu("h100-sxm"), 8, {}}, {}};
  c.layout.dp = 8;
  c.layout.micro_batch = 4;
  c.settings.global_batch = 64;
  return c;
}

TEST(FitAlternatives, EachFitsRunsAndKeepsTheBatch) {
  const Case c = llama8b_ddp();
  ASSERT_FALSE(estimate_memory(c.model, c.settings, c.cluster, c.layout).fits);
  const auto alts = fit_alternatives(c.model, c.settings, c.cluster, c.layout);
  ASSERT_FALSE(alts.empty());
  for (const auto& a : alts) {
    SCOPED_TRACE(a.change);
    ClusterSpec cl = c.cluster;
    cl.gpus = a.gpus;
    EXPECT_EQ(a.gpus, a.layout.gpus());
    EXPECT_TRUE(check_constraints(c.model, c.settings, cl, a.layout).empty());
    EXPECT_EQ(invalid_reason(search_space_for(c.model, c.settings, cl), a.layout), nullptr);
    const MemoryEstimate m = estimate_memory(c.model, c.settings, cl, a.layout);
    EXPECT_TRUE(m.fits);
    EXPECT_DOUBLE_EQ(a.memory_bytes, m.total);
    EXPECT_DOUBLE_EQ(a.step_seconds, estimate_step(c.model, c.settings, cl, a.layout).total);
  }
}

TEST(FitAlternatives, SameGpusFirstThenFastest) {
  const Case c = llama8b_ddp();
  const auto alts = fit_alternatives(c.model, c.settings, c.cluster, c.layout);
  bool more = false;
  for (size_t i = 0; i < alts.size(); ++i) {
    const bool this_more = alts[i].gpus != 8;
    EXPECT_FALSE(more && !this_more) << "a same-GPU layout after a larger one: " << alts[i].change;
    if (i > 0 && this_more == more) EXPECT_LE(alts[i - 1].step_seconds, alts[i].step_seconds);
    more = this_more;
  }
}

TEST(FitAlternatives, LeastShardingThatFitsIsTheOneListed) {
  // At micro-batch 1 the optimizer states are what does not fit: the one
  // listed is the first of ZeRO-1, ZeRO-2, ZeRO-3 whose total fits.
  Case c = llama8b_ddp();
  c.layout.micro_batch = 1;
  ASSERT_FALSE(estimate_memory(c.model, c.settings, c.cluster, c.layout).fits);
  const auto alts = fit_alternatives(c.model, c.settings, c.cluster, c.layout, 100);
  std::string expected;
  for (Sharding s : {Sharding::kZero1, Sharding::kZero2, Sharding::kZero3}) {
    ParallelConfig q = c.layout;
    q.sharding = s;
    if (estimate_memory(c.model, c.settings, c.cluster, q).fits) {
      expected = std::string("sharding ") + std::string(to_string(s));
      break;
    }
  }
  ASSERT_FALSE(expected.empty());
  int listed = 0;
  for (const auto& a : alts)
    if (a.change.rfind("sharding ", 0) == 0) {
      ++listed;
      EXPECT_EQ(a.change, expected);
    }
  EXPECT_EQ(listed, 1);
}

TEST(FitAlternatives, CombinesWhenNoSingleChangeIsEnough) {
  // Llama 3 70B on tp 8 alone: 106 GB of optimizer state per GPU; no setting
  // on 8 GPUs fits, so the answer needs more GPUs and the strong settings.
  Case c{*find_model_preset("llama3-70b"), {}, {*find_gpu("h100-sxm"), 8, {}}, {}};
  c.layout.tp = 8;
  c.layout.micro_batch = 4;
  c.settings.global_batch = 64;
  const auto alts = fit_alternatives(c.model, c.settings, c.cluster, c.layout);
  ASSERT_FALSE(alts.empty());
  for (const auto& a : alts) {
    EXPECT_GT(a.gpus, 8) << a.change;
    EXPECT_NE(a.change.find("recompute full"), std::string::npos) << a.change;
  }
}

TEST(FitAlternatives, NothingWhenEvenTheStrongestSettingsDoNotFit) {
  // GPT-3 175B on one A100 40 GB: even 8 GPUs in either direction are too few.
  Case c{*find_model_preset("gpt3-175b"), {}, {*find_gpu("a100-40-sxm"), 1, {}}, {}};
  c.settings.global_batch = 1;
  EXPECT_TRUE(fit_alternatives(c.model, c.settings, c.cluster, c.layout).empty());
}

}  // namespace
}  // namespace stepscope::plan
