// Mixture-of-experts layers in the model layer: parameters, FLOPs, memory
// per GPU under expert parallelism, the all-to-all, and the layouts refused —
// each against a hand computation on Mixtral 8x7B (Jiang et al. 2024: 32
// layers, h 4096, 32 heads, 8 KV heads, 8 experts of SwiGLU width 14336,
// top-2, vocab 32000).
#include <gtest/gtest.h>

#include "model/collective_model.h"
#include "model/memory_model.h"
#include "model/plan_constraints.h"
#include "model/stage_layout.h"
#include "model/step_time_model.h"

namespace stepscope::model {
namespace {

ModelSpec mixtral() {
  ModelSpec m;
  m.name = "mixtral-8x7b";
  m.layers = 32, m.hidden = 4096, m.heads = 32, m.kv_heads = 8, m.ffn_hidden = 14336, m.gated_mlp = true;
  m.vocab = 32000, m.seq = 4096;
  m.moe_experts = 8, m.moe_topk = 2;
  return m;
}

// Per layer: attention 2·4096² + 2·4096·1024, two norms 2·4096, router
// 4096·8, eight experts of 3·4096·14336; plus untied embeddings and the final
// norm: 46,702,792,704, the released checkpoint's count.
TEST(Moe, ParametersMatchTheReleasedCheckpoint) {
  const ModelSpec m = mixtral();
  EXPECT_EQ(m.expert_params(), 3LL * 4096 * 14336);
  EXPECT_EQ(m.layer_dense_params(), 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 2 * 4096 + 4096 * 8);
  EXPECT_EQ(m.total_params(), 46702792704LL);
  EXPECT_EQ(validate_model(m), "");
}

// Forward FLOPs count the active experts only: 2·T·h·f·3·k for the MLP and
// 2·T·h·E for the router (T = 4096 tokens).
TEST(Moe, FlopsCountTheRoutedExperts) {
  const ModelSpec m = mixtral();
  ModelSpec dense = m;
  dense.moe_experts = 0, dense.moe_topk = 0;
  const double t = 4096, h = 4096;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 1) - layer_forward_flops(dense, 1),
                   2 * t * h * 14336 * 3 * 2 + 2 * t * h * 8 - 2 * t * h * 14336 * 3);
}

// All-to-all inside one node (8 ranks, 400 GB/s achievable... here the
// catalog's H100: 450 GB/s × 0.80) sends 7/8 of the bytes; across two nodes
// of 4 ranks each the half bound for the other node leaves through the NIC.
TEST(Moe, AllToAllSplitsNvlinkAndNetwork) {
  ClusterSpec c{*find_gpu("h100-sxm"), 16, {}};
  const double bytes = 1e9, nvlink = 450e9 * 0.80, nic = 50e9 * 0.90;
  EXPECT_NEAR(all_to_all_seconds(bytes, {8, 8}, c), 7 * 5e-6 + 7.0 / 8 * bytes / nvlink, 1e-12);
  EXPECT_NEAR(all_to_all_seconds(bytes, {8, 4}, c), 7 * 8e-6 + 4.0 / 8 * bytes / nic, 1e-12);
  EXPECT_EQ(all_to_all_seconds(bytes, {1, 1}, c), 0);
}

// ep 8 over dp 8: each GPU holds one expert (of each layer), replicated over
// dp / ep = 1 rank, so ZeRO-1 leaves its optimizer state whole; the dense part
// is sharded over all 8. Model states (Megatron stack, Adam, 16-bit grads):
// dense 4·Ψd + 12·Ψd/8, experts 16·Ψe with Ψe = 32 layers × one expert.
TEST(Moe, ExpertParallelStates) {
  const ModelSpec m = mixtral();
  TrainingSettings t;
  t.global_batch = 8;
  ParallelConfig p;
  p.dp = 8, p.ep = 8;
  p.sharding = Sharding::kZero1;
  ClusterSpec c{*find_gpu("h100-sxm"), 8, {}};
  const StageLayout s = stage_layout(m, t, c, p);
  EXPECT_DOUBLE_EQ(s.layer_expert_params_per_gpu, static_cast<double>(m.expert_params()));
  EXPECT_EQ(s.expert_shards, 1);
  const MemoryEstimate e = estimate_memory(m, t, c, p);
  const double experts = 32.0 * m.expert_params();
  const double dense = static_cast<double>(m.total_params()) - 32.0 * 8 * m.expert_params();
  EXPECT_NEAR(e.weights + e.gradients + e.optimizer, 4 * dense + 12 * dense / 8 + 16 * experts, 1e-6 * dense);
}

// Each GPU's T·k token copies spread over its E/ep experts: with ep 8 every
// expert GEMM sees T·2·8/8 = 2T rows; the layer adds four all-to-alls of
// T·k·h·2 bytes (dispatch and combine, forward and backward).
TEST(Moe, GroupedExpertGemmsAndAllToAll) {
  const ModelSpec m = mixtral();
  TrainingSettings t;
  t.global_batch = 8;
  ParallelConfig p;
  p.dp = 8, p.ep = 8;
  ClusterSpec c{*find_gpu("h100-sxm"), 8, {}};
  const LayerTime lt = estimate_layer(m, t, c, p);
  const double a2a = all_to_all_seconds(4096.0 * 2 * 4096 * 2, {8, 8}, c);
  EXPECT_NEAR(lt.ep_comm_fwd, 2 * a2a, 1e-15);
  EXPECT_NEAR(lt.ep_comm_bwd, 2 * a2a, 1e-15);
  ParallelConfig one = p;
  one.ep = 1;
  EXPECT_EQ(estimate_layer(m, t, c, one).ep_comm_fwd, 0);  // no expert parallelism, no all-to-all
}

TEST(Moe, LayoutsTheExpertsCannotTake) {
  const ModelSpec m = mixtral();
  TrainingSettings t;
  t.global_batch = 12;
  ClusterSpec c{*find_gpu("h100-sxm"), 12, {}};
  ParallelConfig p;
  p.dp = 12, p.ep = 3;
  auto problems = check_constraints(m, t, c, p);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front(), "experts (8) not divisible by ep (3)");
  ModelSpec dense = m;
  dense.moe_experts = 0, dense.moe_topk = 0;
  p.ep = 2;
  problems = check_constraints(dense, t, c, p);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front(), "ep (2) > 1 needs a model with experts");
  ModelSpec bad = m;
  bad.moe_topk = 9;
  EXPECT_EQ(validate_model(bad), "moe_topk (9) must be from 1 to moe_experts (8)");
}

}  // namespace
}  // namespace stepscope::model
