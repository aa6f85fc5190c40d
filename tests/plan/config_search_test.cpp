#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "plan/config_search.h"

namespace stepscope::plan {

using model::ParallelConfig;
using model::Recompute;
using model::Sharding;
namespace {

SearchSpace small_space() {
  SearchSpace s;
  s.gpus = 16;
  s.gpus_per_node = 8;
  s.layers = 8;
  s.attention_heads = 8;
  s.sequence_length = 1024;
  s.global_batch = 32;
  return s;
}

// An evaluator with a known optimum: step time tp + pp seconds, fitting only
// when the model is split at least 4 ways (tp * pp >= 4), memory = micro-batch.
// min tp + pp subject to tp * pp >= 4 is tp = pp = 2 (sum 4; 1x4 and 4x1 give
// 5); among those the least memory is micro_batch 1.
Evaluation split_model(const ParallelConfig& c) {
  return {c.tp * c.pp >= 4, static_cast<double>(c.tp + c.pp), static_cast<double>(c.micro_batch)};
}

TEST(ConfigSearch, FindsTheHandComputedOptimum) {
  const SearchSpace s = small_space();
  const SearchResult r = search_configs(s, split_model, 3);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(r.top[0].config.tp, 2);
  EXPECT_EQ(r.top[0].config.pp, 2);
  EXPECT_EQ(r.top[0].config.micro_batch, 1);
  // 32 sequences * 1024 tokens / 4 s
  EXPECT_DOUBLE_EQ(r.top[0].tokens_per_second, 32.0 * 1024 / 4);
}

// Brute force written independently of the enumerator: every tuple in wide
// ranges, the validity rules restated here, a full sort.
TEST(ConfigSearch, TopKMatchesBruteForceWithRandomScores) {
  const SearchSpace s = small_space();
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  auto score = [seed](const ParallelConfig& c) {
    // Deterministic pseudo-random score per layout, few distinct values so ties occur.
    uint64_t h = seed;
    for (int v : {c.tp, c.pp, c.dp, c.cp, c.vpp, c.micro_batch, int(c.sequence_parallel), int(c.recompute),
                  int(c.sharding)})
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return Evaluation{(h >> 7) % 4 != 0, 1.0 + static_cast<double>((h >> 11) % 17), static_cast<double>((h >> 23) % 5)};
  };
  struct Row {
    double tps, mem;
    int64_t order;
    ParallelConfig c;
  };
  std::vector<Row> rows;
  int64_t valid = 0, order = 0;
  // Enumerate in the search's documented nesting order so enumeration-order ties agree.
  for (int tp = 1; tp <= 8; ++tp)
    for (int cp = 1; cp <= 8; cp *= 2)
      for (int pp = 1; pp <= 16; ++pp)
        for (int vpp : {1, 2, 4})
          for (int mb : {1, 2, 4, 8, 16})
            for (int sp = 0; sp <= 1; ++sp)
              for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
                for (Sharding sh : {Sharding::kDdp, Sharding::kZero1, Sharding::kZero2, Sharding::kZero3,
                                    Sharding::kFsdpHybrid}) {
                  if (16 % (tp * cp * pp)) continue;
                  const int dp = 16 / (tp * cp * pp);
                  const int micro_batches = 32 % (dp * mb) ? 0 : 32 / (dp * mb);
                  const bool ok = 8 % tp == 0 && 8 % (pp * vpp) == 0 && micro_batches > 0 &&
                                  (vpp == 1 || (pp > 1 && micro_batches % pp == 0)) && (sp == 0 || tp > 1) &&
                                  (sh == Sharding::kDdp || dp > 1) &&
                                  (pp == 1 || sh == Sharding::kDdp || sh == Sharding::kZero1) &&
                                  (sh != Sharding::kFsdpHybrid || tp * cp * dp > 8);
                  if (!ok) continue;
                  ++valid;
                  ParallelConfig c;
                  c.tp = tp, c.pp = pp, c.dp = dp, c.cp = cp, c.vpp = vpp, c.micro_batch = mb;
                  c.sequence_parallel = sp, c.recompute = r, c.sharding = sh;
                  const Evaluation e = score(c);
                  if (e.fits) rows.push_back({32.0 * 1024 / e.step_seconds, e.memory_bytes, order++, c});
                }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(b.tps, a.mem, a.order) < std::tie(a.tps, b.mem, b.order);
  });
  const int k = 25;
  const SearchResult r = search_configs(s, score, k);
  EXPECT_EQ(r.candidates, valid);
  EXPECT_EQ(r.fitting, static_cast<int64_t>(rows.size()));
  ASSERT_EQ(r.top.size(), static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(rows.size()))));
  for (size_t i = 0; i < r.top.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_DOUBLE_EQ(r.top[i].tokens_per_second, rows[i].tps);
    EXPECT_DOUBLE_EQ(r.top[i].evaluation.memory_bytes, rows[i].mem);
    EXPECT_EQ(r.top[i].config.tp, rows[i].c.tp);
    EXPECT_EQ(r.top[i].config.pp, rows[i].c.pp);
    EXPECT_EQ(r.top[i].config.cp, rows[i].c.cp);
    EXPECT_EQ(r.top[i].config.vpp, rows[i].c.vpp);
    EXPECT_EQ(r.top[i].config.micro_batch, rows[i].c.micro_batch);
    EXPECT_EQ(r.top[i].config.sharding, rows[i].c.sharding);
    EXPECT_EQ(r.top[i].config.recompute, rows[i].c.recompute);
  }
}

TEST(ConfigSearch, RejectsInvalidLayoutsWithAReason) {
  const SearchSpace s = small_space();
  ParallelConfig c;
  c.tp = 3, c.dp = 16;
  EXPECT_NE(invalid_reason(s, c), nullptr);  // gpus 48 != 16
  c.tp = 1, c.pp = 2, c.dp = 8, c.sharding = Sharding::kZero3;
  EXPECT_STREQ(invalid_reason(s, c), "ZeRO-2/3 and FSDP do not combine with pipeline parallelism");
  c.sharding = Sharding::kZero1;
  EXPECT_EQ(invalid_reason(s, c), nullptr);
}

}  // namespace
}  // namespace stepscope::plan
