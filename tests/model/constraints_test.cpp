// Impossible layouts are refused with a message naming the constraint.
#include <gtest/gtest.h>

#include "model/plan_constraints.h"

namespace stepscope::model {

namespace {

struct Fixture {
  ModelSpec m = *find_model_preset("gpt3-175b");
  TrainingSettings t;
  ClusterSpec c{*find_gpu("a100-80-sxm"), 64, {}};
  ParallelConfig p;
  Fixture() {
    t.global_batch = 64;
    p.tp = 8, p.pp = 8, p.dp = 1;
  }
  std::vector<std::string> check() { return check_constraints(m, t, c, p); }
};

TEST(Constraints, ValidLayoutPasses) {
  Fixture f;
  EXPECT_TRUE(f.check().empty());
}

TEST(Constraints, EachViolationNamed) {
  Fixture f;
  f.p.tp = 5, f.p.dp = 1, f.c.gpus = 40;  // 96 heads, 49152 ffn: 5 divides neither
  auto v = f.check();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "heads (96) not divisible by tp (5)");
  EXPECT_EQ(v[1], "kv heads (96) and tp (5): neither divides the other");
  EXPECT_EQ(v[2], "ffn hidden (49152) not divisible by tp (5)");

  Fixture g;
  g.p.pp = 8, g.p.vpp = 5;  // 96 layers
  EXPECT_EQ(g.check(), std::vector<std::string>{"layers (96) not divisible by pp × vpp (8 × 5 = 40)"});

  Fixture h;
  h.p.dp = 2, h.p.micro_batch = 3, h.c.gpus = 128;
  EXPECT_EQ(h.check(), std::vector<std::string>{"global batch (64) not divisible by dp × micro-batch (2 × 3 = 6)"});

  Fixture k;
  k.c.gpus = 100;
  EXPECT_EQ(k.check(), std::vector<std::string>{
                           "GPU count mismatch: tp × pp × dp × cp = 8 × 8 × 1 × 1 = 64, but the cluster has 100"});
  EXPECT_TRUE(check_constraints(k.m, k.t, k.c, k.p, false).empty());
}

TEST(Constraints, HugeSizesRefusedBeforeTheirProductsOverflow) {
  Fixture f;
  f.p.tp = 1 << 20, f.p.pp = 1 << 20, f.p.dp = 1 << 20;
  EXPECT_EQ(f.check(), std::vector<std::string>{
                           "tp × pp × dp × cp (1152921504606846976), dp × micro-batch or pp × vpp exceeds 16777216"});
  f.p.tp = 2000000000;
  EXPECT_EQ(f.check().front(), "tp (2000000000) must be at most 1048576");
}

TEST(Constraints, InterleavingNeedsPipelineAndDivisibleMicroBatches) {
  Fixture f;
  f.p.pp = 1, f.p.vpp = 2, f.p.dp = 8;
  EXPECT_EQ(f.check(), std::vector<std::string>{"vpp (2) > 1 needs pp > 1 (pp = 1)"});
  Fixture g;
  g.p.vpp = 2;
  g.t.global_batch = 12;  // 12 micro-batches, pp 8
  EXPECT_EQ(g.check(),
            std::vector<std::string>{
                "micro-batches per step (12) not divisible by pp (8), which the interleaved schedule needs"});
}

TEST(Constraints, GqaAndContextParallel) {
  Fixture f;
  f.m = *find_model_preset("llama3-70b");  // 64 heads, 8 KV heads, 80 layers, seq 8192
  f.p.tp = 16, f.p.pp = 4, f.c.gpus = 64;  // tp 16 > 8 KV heads: K/V replicate, allowed
  EXPECT_TRUE(f.check().empty());
  f.p.cp = 3, f.c.gpus = 192;
  EXPECT_EQ(f.check(), std::vector<std::string>{"sequence length (8192) not divisible by cp (3)"});
}

}  // namespace
}  // namespace stepscope::model
