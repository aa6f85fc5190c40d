// Pipeline stage splits: explicit first/last stage layer counts and
// Megatron's embedding/loss accounting, which must agree with each other
// (Llama 3.1 405B on 8 stages: (126 + 2) / 8 = 16 layers per stage, the
// first and last giving one to the embedding and the loss: 15, 16 × 6, 15 —
// also torchtitan's default split of that model).
#include <gtest/gtest.h>

#include "model/plan_constraints.h"
#include "model/stage_layout.h"
#include "model/step_time_model.h"

namespace stepscope::model {
namespace {

struct Layout405b {
  ModelSpec m = *find_model_preset("llama3-405b");
  TrainingSettings t;
  ClusterSpec c{*find_gpu("h100-sxm"), 128, {}};
  ParallelConfig p;
  Layout405b() {
    t.global_batch = 32;
    p.tp = 8, p.pp = 8, p.dp = 2;
    p.sequence_parallel = true;
    p.recompute = Recompute::kFull;
  }
};

TEST(StageSplit, EmbeddingAndLossAccountingGiveTheEndsOneLayerLess) {
  Layout405b s;
  s.p.embedding_stage = s.p.loss_stage = true;
  const StageSplit split = stage_split(s.m, s.p);
  EXPECT_EQ(split.first, 15);
  EXPECT_EQ(split.last, 15);
  EXPECT_TRUE(check_constraints(s.m, s.t, s.c, s.p).empty());
  const StageLayout layout = stage_layout(s.m, s.t, s.c, s.p);
  EXPECT_EQ(layout.middle_stage_layers, 16);
  ParallelConfig explicit_split = s.p;
  explicit_split.embedding_stage = explicit_split.loss_stage = false;
  explicit_split.first_stage_layers = explicit_split.last_stage_layers = 15;
  EXPECT_DOUBLE_EQ(estimate_step(s.m, s.t, s.c, s.p).total, estimate_step(s.m, s.t, s.c, explicit_split).total);
}

TEST(StageSplit, OneAccountedEndAndItsRefusals) {
  Layout405b s;
  s.m.layers = 127;  // + the embedding = 128 = 8 × 16
  s.p.embedding_stage = true;
  EXPECT_EQ(stage_split(s.m, s.p).first, 15);
  EXPECT_EQ(stage_split(s.m, s.p).last, 0);
  EXPECT_TRUE(check_constraints(s.m, s.t, s.c, s.p).empty());
  EXPECT_EQ(stage_layout(s.m, s.t, s.c, s.p).last_stage_layers, 16);
  s.p.loss_stage = true;  // 129 does not split over 8
  auto problems = check_constraints(s.m, s.t, s.c, s.p);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front(), "layers (127) + 2 accounted end stage layers = 129 not divisible by pp (8)");
  s.m.layers = 126;
  s.p.first_stage_layers = 14;
  problems = check_constraints(s.m, s.t, s.c, s.p);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front(), "embedding/loss accounting and first/last stage layers together: give one or the other");
}

}  // namespace
}  // namespace stepscope::model
