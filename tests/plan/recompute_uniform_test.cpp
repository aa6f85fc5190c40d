#include <gtest/gtest.h>

#include <random>

#include "plan/recompute_uniform.h"

namespace stepscope::plan {
namespace {

// Brute force over all 3^L per-layer assignments, memory and time summed layer
// by layer (not through counts), against the count enumeration.
TEST(RecomputeUniform, MatchesBruteForceOverAllAssignments) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> v(0, 9);
  for (int trial = 0; trial < 200; ++trial) {
    UniformLayerCosts c;
    c.layers = 1 + trial % 7;
    c.input_bytes = v(rng);
    c.copies = 1 + trial % 3;
    for (int p = 0; p < 3; ++p) c.kept_bytes[p] = v(rng), c.recompute_seconds[p] = v(rng), c.work_bytes[p] = v(rng);
    const double budget = v(rng) * c.layers * 2.0;
    double best = INFINITY;
    int total = 1;
    for (int i = 0; i < c.layers; ++i) total *= 3;
    for (int code = 0; code < total; ++code) {
      double mem = 0, work = 0, time = 0;
      for (int i = 0, x = code; i < c.layers; ++i, x /= 3) {
        mem += c.input_bytes + c.kept_bytes[x % 3];
        work = std::max(work, c.work_bytes[x % 3]);
        time += c.recompute_seconds[x % 3];
      }
      if (c.copies * mem + work <= budget) best = std::min(best, time);
    }
    const UniformRecomputePlan plan = plan_uniform_recompute(c, budget);
    SCOPED_TRACE(trial);
    EXPECT_EQ(plan.feasible, !std::isinf(best));
    if (plan.feasible) {
      EXPECT_DOUBLE_EQ(plan.recompute_seconds, best);
      EXPECT_LE(plan.memory_bytes, budget);
      EXPECT_EQ(plan.count[0] + plan.count[1] + plan.count[2], c.layers);
    }
  }
}

// 4 layers, input 1; kept none/sel/full = 10/4/0, seconds 0/1/3, work 0/2/10.
// All none: 4*11 = 44. Budget 30: 2 none + 2 sel = 4 + 20 + 8 + work 2 = 34 > 30;
// 1 none + 3 sel = 4 + 10 + 12 + 2 = 28 fits, time 3; 2 none + 1 sel + 1 full
// = 4 + 20 + 4 + 0 + 10 = 38 no. So 1/3/0 at 3 s.
TEST(RecomputeUniform, HandComputed) {
  UniformLayerCosts c;
  c.layers = 4;
  c.input_bytes = 1;
  c.kept_bytes = {10, 4, 0};
  c.recompute_seconds = {0, 1, 3};
  c.work_bytes = {0, 2, 10};
  const UniformRecomputePlan p = plan_uniform_recompute(c, 30);
  ASSERT_TRUE(p.feasible);
  EXPECT_EQ(p.count, (std::array<int, 3>{1, 3, 0}));
  EXPECT_DOUBLE_EQ(p.recompute_seconds, 3);
  EXPECT_DOUBLE_EQ(p.memory_bytes, 28);
  EXPECT_FALSE(plan_uniform_recompute(c, 13).feasible);  // all full: 4 + 0 + 10 = 14
}

}  // namespace
}  // namespace stepscope::plan
