// The checkpointing DP against an exhaustive search: a shortest path over
// every reachable memory state of the chain model in recompute_chain.h (which
// values are held and which gradient), where each move is one operation and
// frees are free. It explores all valid schedules, persistent or not.
// On chains of up to 3 stages the DP equals it; from 4 stages on, schedules
// that drop a checkpoint and rebuild it later (non-persistent, outside the
// DP's class, docs/planner_optimisers.md has an example) can win, so there the
// test checks the DP never claims less than the true optimum.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <queue>
#include <random>
#include <tuple>

#include "plan/recompute_chain.h"

namespace stepscope::plan {
namespace {

// Least total time over all valid schedules with every peak <= budget;
// infinity when none exists. State: bitmask of held x[0..n] and a[1..n],
// and the held gradient g (n: none yet; the seed lives in a[n]).
double exhaustive_best(const Chain& c, int64_t budget) {
  const int n = static_cast<int>(c.stages.size());
  struct State {
    uint32_t xs, as;
    int g;
    auto operator<=>(const State&) const = default;
  };
  auto held = [&](const State& st) {
    int64_t h = 0;
    for (int i = 0; i <= n; ++i)
      if (st.xs >> i & 1) h += c.x(i);
    for (int i = 1; i <= n; ++i)
      if (st.as >> i & 1) h += c.a(i);
    if (st.g < n) h += c.x(st.g);
    return h;
  };
  std::map<State, double> dist;
  using Item = std::pair<double, State>;
  auto cmp = [](const Item& l, const Item& r) { return l.first > r.first; };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> pq(cmp);
  const State start{1u, 0u, n};
  if (held(start) > budget) return INFINITY;
  dist[start] = 0;
  pq.push({0, start});
  auto relax = [&](const State& to, double d, int64_t peak) {
    if (peak > budget) return;
    auto it = dist.find(to);
    if (it != dist.end() && it->second <= d) return;
    dist[to] = d;
    pq.push({d, to});
  };
  while (!pq.empty()) {
    auto [d, st] = pq.top();
    pq.pop();
    if (dist[st] < d) continue;
    if (st.g == 0) return d;
    const int64_t h = held(st);
    for (int i = 1; i <= n; ++i) {
      const bool input = (st.xs >> (i - 1) & 1) || (i > 1 && (st.as >> (i - 1) & 1));
      if (!input) continue;
      const double f = c.stages[i - 1].forward_seconds;
      if (!(st.xs >> i & 1)) relax({st.xs | 1u << i, st.as, st.g}, d + f, h + c.x(i));
      if (!(st.as >> i & 1)) relax({st.xs, st.as | 1u << i, st.g}, d + f, h + c.a(i));
    }
    const int i = st.g;  // the only backward that can run next
    if (st.as >> i & 1) {
      const uint32_t xs = i == n ? st.xs & ~(1u << n) : st.xs;  // the seed goes with a[n]
      relax({xs, st.as & ~(1u << i), i - 1}, d + c.stages[i - 1].backward_seconds, h + c.x(i - 1));
    }
    for (int j = 0; j <= n; ++j)
      if (st.xs >> j & 1) relax({st.xs & ~(1u << j), st.as, st.g}, d, 0);
    for (int j = 1; j <= n; ++j)
      if (st.as >> j & 1) relax({st.xs, st.as & ~(1u << j), st.g}, d, 0);
  }
  return INFINITY;
}

Chain random_chain(std::mt19937_64& rng, int n) {
  std::uniform_int_distribution<int64_t> size(1, 6);
  std::uniform_int_distribution<int> tenths(1, 30);
  Chain c;
  c.input_bytes = size(rng);
  for (int i = 0; i < n; ++i) {
    const int64_t x = size(rng);
    c.stages.push_back({tenths(rng) / 10.0, tenths(rng) / 10.0, x, x + size(rng) - 1});  // a >= x
  }
  return c;
}

// Runs `trials` random chains of 1..max_n stages with budgets on both sides of
// the feasibility edge; `exact` asks DP == exhaustive, otherwise DP >= it.
void check_against_exhaustive(int max_n, int trials, bool exact) {
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int n = 1 + trial % max_n;
    const Chain c = random_chain(rng, n);
    int64_t total = c.x(0);
    for (int i = 1; i <= n; ++i) total += c.x(i) + c.a(i);
    std::uniform_int_distribution<int64_t> budget_dist(0, total + 6);
    const int64_t budget = budget_dist(rng);
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " trial " << trial << " n " << n << " budget " << budget);
    // unit 1: sizes are whole units, so the DP works on the exact model.
    const ChainPlan plan = plan_chain_checkpointing(c, budget, {.unit_bytes = 1});
    const double best = exhaustive_best(c, budget);
    if (std::isinf(best)) {
      ++infeasible;
      EXPECT_FALSE(plan.feasible);
      continue;
    }
    ++feasible;
    if (exact) {
      ASSERT_TRUE(plan.feasible);
      EXPECT_NEAR(plan.seconds, best, 1e-9 * best);
    } else if (plan.feasible) {
      EXPECT_GE(plan.seconds, best - 1e-9 * best);
    }
    if (!plan.feasible) continue;
    const ChainSimulation sim = simulate_chain_schedule(c, plan.schedule);
    ASSERT_TRUE(sim.valid) << sim.error;
    EXPECT_NEAR(sim.seconds, plan.seconds, 1e-9 * best);
    EXPECT_LE(sim.peak_bytes, budget);
  }
  EXPECT_GT(feasible, 0);
  EXPECT_GT(infeasible, 0);
}

TEST(RecomputeChain, DpEqualsExhaustiveSearchUpToThreeStages) { check_against_exhaustive(3, 600, true); }

TEST(RecomputeChain, DpSchedulesAreValidAndNeverBeatTheOptimumUpToSixStages) {
  check_against_exhaustive(6, 300, false);
}

// A hand-checked chain. x0 = 1; stage 1: x1 = 1, a1 = 2, f = 1, b = 2;
// stage 2 (loss): x2 = 1, a2 = 3, f = 1, b = 2.
// Keeping everything: Fall1 (peak 1+2 = 3), free x0, Fall2 (2+3 = 5), B2
// (5+1 = 6: d1 joins a1, a2), B1 (a1 + d1 + d0 = 2+1+1 = 4). Peak 6, time 6.
// Budget 5: checkpoint x0 only: F1 (peak 2), Fall2 (1+1+3 = 5), free x1, B2
// (1+3+1 = 5), Fall1 (x0 + d1 + a1 = 1+1+2 = 4), free x0, B1 (2+1+1 = 4):
// time 6 + f1 = 7. Budget 4: B1 needs a1, hence x0 kept (1) through B2,
// whose peak is then at least x0 + a2 + d1 = 5 (x1 can go once a2 holds it).
TEST(RecomputeChain, HandComputedTwoStageChain) {
  Chain c;
  c.input_bytes = 1;
  c.stages = {{1, 2, 1, 2}, {1, 2, 1, 3}};
  const ChainPlan roomy = plan_chain_checkpointing(c, 6, {.unit_bytes = 1});
  ASSERT_TRUE(roomy.feasible);
  EXPECT_DOUBLE_EQ(roomy.seconds, 6);
  const ChainPlan tight = plan_chain_checkpointing(c, 5, {.unit_bytes = 1});
  ASSERT_TRUE(tight.feasible);
  EXPECT_DOUBLE_EQ(tight.seconds, 7);
  const std::vector<ChainOp> expected = {
      {ChainOpKind::kForwardDrop, 1}, {ChainOpKind::kForwardKeep, 2}, {ChainOpKind::kFreeX, 1},
      {ChainOpKind::kBackward, 2},    {ChainOpKind::kForwardKeep, 1}, {ChainOpKind::kFreeX, 0},
      {ChainOpKind::kBackward, 1}};
  EXPECT_EQ(tight.schedule, expected);
  EXPECT_FALSE(plan_chain_checkpointing(c, 4, {.unit_bytes = 1}).feasible);
}

TEST(RecomputeChain, SimulatorRejectsABackwardWithoutItsSavedTensors) {
  Chain c;
  c.input_bytes = 1;
  c.stages = {{1, 1, 1, 2}};
  const ChainSimulation sim = simulate_chain_schedule(c, {{ChainOpKind::kForwardDrop, 1}, {ChainOpKind::kBackward, 1}});
  EXPECT_FALSE(sim.valid);
  EXPECT_NE(sim.error.find("a[1] is not held"), std::string::npos) << sim.error;
}

}  // namespace
}  // namespace stepscope::plan
