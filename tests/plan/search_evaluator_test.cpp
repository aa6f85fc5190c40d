// The search space the cost models imply: under flash attention selective
// recomputation is the same layout as none (same memory, same time), so it
// is not enumerated; with unfused attention it differs and stays.
#include <gtest/gtest.h>

#include <algorithm>

#include "model/memory_model.h"
#include "plan/search_evaluator.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

ClusterSpec h100s(int gpus) {
  ClusterSpec c;
  c.gpu = *find_gpu("h100-sxm");
  c.gpus = gpus;
  return c;
}

bool has(const std::vector<Recompute>& v, Recompute r) { return std::find(v.begin(), v.end(), r) != v.end(); }

TEST(SearchEvaluator, SelectiveOnlyWhereItDiffersFromNone) {
  const ModelSpec m = *find_model_preset("gpt3-1.3b");
  TrainingSettings t;
  t.global_batch = 64;
  ParallelConfig none, selective;
  none.dp = selective.dp = 8;
  selective.recompute = Recompute::kSelective;
  // Flash: the two cost exactly the same, so leaving selective out loses nothing.
  t.attention = AttentionKernel::kFlash;
  EXPECT_EQ(estimate_memory(m, t, h100s(8), none).total, estimate_memory(m, t, h100s(8), selective).total);
  EXPECT_EQ(estimate_step(m, t, h100s(8), none).total, estimate_step(m, t, h100s(8), selective).total);
  SearchSpace s = search_space_for(m, t, h100s(8));
  EXPECT_FALSE(has(s.recomputes, Recompute::kSelective));
  EXPECT_TRUE(has(s.recomputes, Recompute::kNone));
  EXPECT_TRUE(has(s.recomputes, Recompute::kFull));
  // Unfused: selective drops the stored scores (less memory), so it is searched.
  t.attention = AttentionKernel::kUnfused;
  EXPECT_LT(estimate_memory(m, t, h100s(8), selective).total, estimate_memory(m, t, h100s(8), none).total);
  s = search_space_for(m, t, h100s(8));
  EXPECT_TRUE(s.recomputes.empty() || has(s.recomputes, Recompute::kSelective));  // empty = the default list
}

// The CLI's top layouts (flash attention) never repeat one with the same
// figures that differs only in the recompute policy.
TEST(SearchEvaluator, FlashTopLayoutsHaveNoSelectiveTwins) {
  const ModelSpec m = *find_model_preset("gpt3-1.3b");
  TrainingSettings t;
  t.global_batch = 64;
  const SearchResult r = search_configs(search_space_for(m, t, h100s(8)), model_evaluator(m, t, h100s(8)), 20);
  ASSERT_EQ(r.top.size(), 20u);
  for (const auto& x : r.top) EXPECT_NE(x.config.recompute, Recompute::kSelective);
}

// The PyTorch stack's search also tries per-operator checkpointing, which
// sits between none and full in memory and in time for the same layout.
TEST(SearchEvaluator, PytorchStackSearchesOpCheckpointing) {
  ModelSpec m = *find_model_preset("llama3-8b");
  m.seq = 2048;
  TrainingSettings t;
  t.global_batch = 16;
  t.stack = Stack::kPytorch;
  const ClusterSpec c = h100s(8);
  const SearchSpace s = search_space_for(m, t, c);
  ASSERT_TRUE(has(s.recomputes, Recompute::kOp));
  EXPECT_FALSE(has(search_space_for(m, TrainingSettings{16}, c).recomputes, Recompute::kOp));
  const Evaluator eval = model_evaluator(m, t, c);
  ParallelConfig p;
  p.dp = 8, p.micro_batch = 2;
  p.sharding = Sharding::kZero3;
  double memory[3], time[3];
  int i = 0;
  for (Recompute r : {Recompute::kNone, Recompute::kOp, Recompute::kFull}) {
    p.recompute = r;
    const Evaluation e = eval(p);
    ASSERT_TRUE(e.fits);
    memory[i] = e.memory_bytes, time[i] = e.step_seconds, ++i;
  }
  EXPECT_GT(memory[0], memory[1]);
  EXPECT_GT(memory[1], memory[2]);
  EXPECT_LT(time[0], time[1]);
  EXPECT_LT(time[1], time[2]);
}

}  // namespace
}  // namespace stepscope::plan
