#include <gtest/gtest.h>

#include "plan/fsdp_advice.h"

namespace stepscope::plan {

using model::ParallelConfig;
using model::Recompute;
using model::Sharding;
namespace {

constexpr double kCapacity = 80e9;

// Mixed-precision Adam keeps 16 bytes per parameter (ZeRO paper: 2 + 2 + 12):
// DDP holds all of it, ZeRO-3 a 1/N share. Activations 1 GB per sequence of
// micro-batch. Step: compute 1 s plus gradient traffic 1 s (DDP) or 1.5 s
// (ZeRO-3: all-gather twice + reduce-scatter); recompute off.
Evaluator memory_bound_model(double params, int gpus) {
  return [params, gpus](const ParallelConfig& c) {
    const double states = 16 * params / (c.sharding == Sharding::kZero3 ? gpus : 1);
    const double mem = states + 1e9 * c.micro_batch;
    const double step = 1.0 + (c.sharding == Sharding::kZero3 ? 1.5 : 1.0);
    return Evaluation{mem <= kCapacity, step, mem};
  };
}

// DDP fits (micro-batch 1) while 16 P + 1e9 <= 80e9, i.e. P <= 4.9375e9; FSDP
// is slower whenever both fit (2.5 s vs 2 s). Sweep P = 1..8 billion on 8
// GPUs: the crossover is P = 5e9, for memory.
TEST(FsdpAdvice, CrossoverWhereDdpStopsFitting) {
  std::vector<FsdpScenario> sweep;
  for (int b = 1; b <= 8; ++b) sweep.push_back({b * 1e9, 8, 64, 1024, memory_bound_model(b * 1e9, 8)});
  const FsdpAdvice a = advise_fsdp(sweep, {.micro_batches = {1}, .recomputes = {Recompute::kNone}});
  EXPECT_EQ(a.reason, CrossoverReason::kDdpDoesNotFit);
  EXPECT_DOUBLE_EQ(a.crossover_x, 5e9);
  EXPECT_TRUE(a.fsdp_wins_after);
  EXPECT_TRUE(a.rows[3].ddp_fits);   // 4e9: 65 GB
  EXPECT_FALSE(a.rows[4].ddp_fits);  // 5e9: 81 GB
}

// Speed crossover: throughput grows with the micro-batch (step = 4/mb s of
// compute + 0.1 s DDP traffic or 0.15 s ZeRO-3 traffic), and the memory left
// after the 32 GB of states (16 bytes x 2e9 parameters) caps the micro-batch at
// 1 GB per sequence, 80 GB per GPU. Micro-batches 1..64 in powers of two.
//   N = 1: FSDP not considered (dp = 1): DDP wins.
//   N = 2: DDP: 32 + mb <= 80 -> mb 32, step 0.125 + 0.1 = 0.225 s;
//          FSDP: 16 + mb <= 80 -> mb 64, step 0.0625 + 0.15 = 0.2125 s: FSDP faster.
// (global batch 256 is divisible by N * mb in every case.)
TEST(FsdpAdvice, CrossoverWhereFsdpIsFaster) {
  auto model = [](int gpus) -> Evaluator {
    return [gpus](const ParallelConfig& c) {
      const double states = 32e9 / (c.sharding == Sharding::kZero3 ? gpus : 1);
      const double mem = states + 1e9 * c.micro_batch;
      const double step = 4.0 / c.micro_batch + (c.sharding == Sharding::kZero3 ? 0.15 : 0.1);
      return Evaluation{mem <= kCapacity, step, mem};
    };
  };
  std::vector<FsdpScenario> sweep;
  for (int n : {1, 2, 4}) sweep.push_back({double(n), n, 256, 1024, model(n)});
  const FsdpAdvice a = advise_fsdp(sweep, {.micro_batches = {1, 2, 4, 8, 16, 32, 64}, .recomputes = {Recompute::kNone}});
  EXPECT_EQ(a.reason, CrossoverReason::kFsdpFaster);
  EXPECT_DOUBLE_EQ(a.crossover_x, 2);
  EXPECT_EQ(a.rows[1].ddp.config.micro_batch, 32);
  EXPECT_EQ(a.rows[1].fsdp.config.micro_batch, 64);
}

TEST(FsdpAdvice, NoCrossoverWhenDdpAlwaysFits) {
  std::vector<FsdpScenario> sweep;
  for (int b = 1; b <= 3; ++b) sweep.push_back({b * 1e9, 8, 64, 1024, memory_bound_model(b * 1e9, 8)});
  const FsdpAdvice a = advise_fsdp(sweep, {.micro_batches = {1}, .recomputes = {Recompute::kNone}});
  EXPECT_EQ(a.reason, CrossoverReason::kNone);
}

}  // namespace
}  // namespace stepscope::plan
