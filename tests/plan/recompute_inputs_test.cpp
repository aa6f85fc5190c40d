// The inputs of `plan recompute` describe one stage: the first pipeline
// stage's layers (copies = its micro-batches in flight) and that same stage's
// memory, even when another stage is the most loaded.
#include <gtest/gtest.h>

#include "model/memory_model.h"
#include "plan/recompute_inputs.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

// gpt3-13b, pp 4, one micro-batch per step: the first stage has one
// micro-batch in flight, the last adds the output layer and the fp32 logits
// gradient (2048 tokens x 4 B x 51200 vocab = 419 MB), so the last stage is
// the most loaded and estimate_memory reports it. The budget must still be
// the first stage's: capacity minus its weights, gradients, optimizer states
// and buffers, minus the embedding's dropout mask (2048 tokens x 5120 hidden
// x 1 B per element x 1 micro-batch, when the model has dropout).
TEST(RecomputeInputs, BudgetIsTheFirstStagesEvenWhenTheLastIsMoreLoaded) {
  const ModelSpec m = *find_model_preset("gpt3-13b");
  TrainingSettings t;
  t.global_batch = 1;
  ClusterSpec c;
  c.gpu = *find_gpu("h100-sxm");
  c.gpus = 4;
  ParallelConfig p;
  p.pp = 4;
  ASSERT_EQ(estimate_memory(m, t, c, p).stage, 3);  // the premise of the test
  const MemoryEstimate first = estimate_stage_memory(m, t, c, p, 0);
  const UniformRecomputeInputs in = uniform_recompute_inputs(m, t, c, p);
  const double dropout_mask = m.dropout ? 2048.0 * 5120 : 0;
  const double expected_other = first.weights + first.gradients + first.optimizer + first.temporary + dropout_mask;
  EXPECT_NEAR(in.other_bytes, expected_other, 1e-9 * expected_other);
  // The device less the CUDA context, over the allocator's reserve.
  const double usable = (80 * 1073741824.0 * 0.9915 - 1.39e9) / 1.16;
  EXPECT_NEAR(in.budget_bytes, usable - expected_other, 1e-9 * expected_other);
  EXPECT_DOUBLE_EQ(in.costs.copies, 1);
  EXPECT_EQ(in.costs.layers, 10);  // 40 layers over 4 stages
  // Keeping everything on every layer uses exactly the first stage's room
  // for activations (its headroom counts the reserve on top of them).
  EXPECT_NEAR(in.budget_bytes - uniform_memory_bytes(in.costs, {in.costs.layers, 0, 0}), first.headroom / 1.16,
              1e-6 * first.capacity);
}

}  // namespace
}  // namespace stepscope::plan
