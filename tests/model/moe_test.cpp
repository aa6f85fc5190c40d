// Mixture-of-experts layers in the model layer: parameters, FLOPs, memory
// per GPU under expert parallelism, the all-to-all, and the layouts refused —
// each against a hand computation on Mixtral 8x7B (Jiang et al. 2024: 32
// layers, h 4096, 32 heads, 8 KV heads, 8 experts of SwiGLU width 14336,
// top-2, vocab 32000).
#include <gtest/gtest.h>

#include "model/collective_model.h"
#include "model/gemm_model.h"
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

// Shared experts (DeepSeek, Qwen-MoE) are a dense MLP beside the routed
// ones: a shared width of 14336 adds 3·h·14336 parameters to the replicated
// part of each layer, 2·T·h·14336·3 forward FLOPs, two tp-split GEMMs, and
// the activations of one more MLP per token (a top-3 model's, less the
// routing copies 2·2h of the third expert).
TEST(Moe, SharedExpertsAreADenseMlpOnEveryToken) {
  const ModelSpec routed = mixtral();
  ModelSpec shared = routed;
  shared.moe_shared_ffn = 14336;
  ASSERT_EQ(validate_model(shared), "");
  const double t = 4096, h = 4096, fs = 14336;
  EXPECT_EQ(shared.shared_expert_params(), 3LL * 4096 * 14336);
  EXPECT_EQ(shared.layer_dense_params() - routed.layer_dense_params(), 3LL * 4096 * 14336);
  EXPECT_DOUBLE_EQ(layer_forward_flops(shared, 1) - layer_forward_flops(routed, 1), 2 * t * h * fs * 3);

  TrainingSettings ts;
  ts.global_batch = 8;
  ParallelConfig p;
  p.dp = 8, p.ep = 8, p.tp = 1;
  ClusterSpec c{*find_gpu("h100-sxm"), 8, {}};
  const double extra_fwd = gemm_seconds({t, 2 * fs, h, 1}, c, Dtype::kBf16) + gemm_seconds({t, h, fs, 1}, c, Dtype::kBf16);
  EXPECT_NEAR(estimate_layer(shared, ts, c, p).gemm_fwd - estimate_layer(routed, ts, c, p).gemm_fwd, extra_fwd, 1e-12);

  ModelSpec top3 = routed;
  top3.moe_topk = 3;
  EXPECT_NEAR(layer_activation_bytes(shared, ts, p), layer_activation_bytes(top3, ts, p) - t * 2 * 2 * h, 1e-3);

  ModelSpec dense = routed;
  dense.moe_experts = 0, dense.moe_topk = 0;
  dense.moe_shared_ffn = 1024;
  EXPECT_EQ(validate_model(dense), "moe_shared_ffn (1024) needs moe_experts > 1");
}

// A capacity factor caps each expert at factor × its balanced share. Routing
// is modelled as balanced, so 1.5 without padding changes nothing; 0.5 drops
// half the copies (the all-to-all carries T·k·h·2·0.5 bytes, the expert
// GEMMs run on half the rows); 1.5 with padding runs and sends 1.5×.
TEST(Moe, CapacityFactorScalesTheRoutedCopies) {
  const ModelSpec m = mixtral();
  TrainingSettings dropless;
  dropless.global_batch = 8;
  ParallelConfig p;
  p.dp = 8, p.ep = 8;
  ClusterSpec c{*find_gpu("h100-sxm"), 8, {}};
  auto with = [&](double factor, bool pad) {
    TrainingSettings t = dropless;
    t.moe_capacity_factor = factor, t.moe_pad_to_capacity = pad;
    return estimate_layer(m, t, c, p);
  };
  const LayerTime base = estimate_layer(m, dropless, c, p);
  EXPECT_DOUBLE_EQ(with(1.5, false).total(), base.total());
  const double copies = 4096.0 * 2 * 4096 * 2;  // T·k·h·2 bytes
  EXPECT_NEAR(with(0.5, false).ep_comm_fwd, 2 * all_to_all_seconds(0.5 * copies, {8, 8}, c), 1e-15);
  EXPECT_NEAR(with(1.5, true).ep_comm_fwd, 2 * all_to_all_seconds(1.5 * copies, {8, 8}, c), 1e-15);
  // ep 8: each GPU's one expert sees 2T rows balanced, T at factor 0.5.
  const double rows = 2 * 4096.0 * 0.5;
  const double expert_fwd = gemm_seconds({rows, 2 * 14336.0, 4096, 1}, c, Dtype::kBf16) +
                            gemm_seconds({rows, 4096, 14336.0, 1}, c, Dtype::kBf16);
  const LayerTime half = with(0.5, false);
  const double others = half.gemm_fwd - expert_fwd;
  EXPECT_NEAR(others, base.gemm_fwd - (gemm_seconds({2 * 4096.0, 2 * 14336.0, 4096, 1}, c, Dtype::kBf16) +
                                       gemm_seconds({2 * 4096.0, 4096, 14336.0, 1}, c, Dtype::kBf16)),
              1e-12);
  EXPECT_LT(layer_activation_bytes(m, TrainingSettings{.global_batch = 8, .moe_capacity_factor = 0.5}, p),
            layer_activation_bytes(m, dropless, p));
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
  p.ep = 1;
  t.moe_capacity_factor = 1.25;
  problems = check_constraints(dense, t, c, p);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front(), "an expert capacity factor needs a model with experts");
  t.moe_capacity_factor = 0;
  t.moe_pad_to_capacity = true;
  problems = check_constraints(m, t, c, p);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.back(), "padding to capacity needs a capacity factor");
  t.moe_pad_to_capacity = false;
  ModelSpec bad = m;
  bad.moe_topk = 9;
  EXPECT_EQ(validate_model(bad), "moe_topk (9) must be from 1 to moe_experts (8)");
}

}  // namespace
}  // namespace stepscope::model
