// Memory per GPU against the ZeRO paper's figure 1 and Korthikanti et al.'s
// activation formulas, hand-computed.
#include "model/memory_model.h"

#include <gtest/gtest.h>

namespace stepscope::model {

namespace {

// A GPT layout of 7.47B parameters (h 4096, 36 layers, the 7.5B row of
// Narayanan et al. Table 1) standing in for the ZeRO paper's 7.5B model.
ModelSpec gpt_7_5b() {
  ModelSpec m;
  m.name = "gpt-7.5b";
  m.layers = 36, m.hidden = 4096, m.heads = m.kv_heads = 32, m.ffn_hidden = 16384;
  m.vocab = 51200, m.seq = 2048;
  m.tied_embeddings = m.learned_positions = m.dropout = m.biases = true;
  return m;
}

ClusterSpec a100(int gpus) { return {*find_gpu("a100-80-sxm"), gpus, {}}; }

double model_states_gb(Sharding s) {
  ModelSpec m = gpt_7_5b();
  TrainingSettings t;
  t.global_batch = 64;
  t.optimizer = Optimizer::kAdam;
  ParallelConfig p;
  p.dp = 64;
  p.sharding = s;
  MemoryEstimate e = estimate_memory(m, t, a100(64), p);
  return (e.weights + e.gradients + e.optimizer) / 1e9;
}

// Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B, N_d = 64, K = 12:
// baseline (2 + 2 + K)Ψ = 120 GB; P_os 2Ψ + 2Ψ + KΨ/N_d = 31.4 GB;
// P_os+g 2Ψ + (2 + K)Ψ/N_d = 16.6 GB; P_os+g+p (2 + 2 + K)Ψ/N_d = 1.9 GB.
TEST(MemoryModel, ZeroFigure1Within3Percent) {
  EXPECT_NEAR(model_states_gb(Sharding::kDdp) / 120.0, 1, 0.03);
  EXPECT_NEAR(model_states_gb(Sharding::kZero1) / 31.4, 1, 0.03);
  EXPECT_NEAR(model_states_gb(Sharding::kZero2) / 16.6, 1, 0.03);
  EXPECT_NEAR(model_states_gb(Sharding::kZero3) / 1.9, 1, 0.03);
}

TEST(MemoryModel, ModelStatesExactPerParameter) {
  const double psi = static_cast<double>(gpt_7_5b().total_params());  // 7,467,786,240 (pp = 1: one stage holds all)
  EXPECT_DOUBLE_EQ(model_states_gb(Sharding::kDdp) * 1e9, 16 * psi);
  EXPECT_DOUBLE_EQ(model_states_gb(Sharding::kZero2) * 1e9, 2 * psi + 14 * psi / 64);
}

TEST(MemoryModel, CpuOffloadMovesOptimizerStatesOff) {
  ModelSpec m = gpt_7_5b();
  TrainingSettings t;
  t.global_batch = 64;
  ParallelConfig p;
  p.dp = 64;
  p.cpu_offload = true;
  EXPECT_EQ(estimate_memory(m, t, a100(64), p).optimizer, 0);
  t.optimizer = Optimizer::kSgd;
  EXPECT_EQ(optimizer_bytes_per_param(t), 8);
}

// Korthikanti et al. 2022, Section 4: GPT layer, s = 2048, b = 4, h = 6144,
// a = 64, 16-bit activations and 1-byte dropout masks.
class Korthikanti : public ::testing::Test {
 protected:
  ModelSpec m;
  TrainingSettings t;
  ParallelConfig p;
  const double sbh = 2048.0 * 4 * 6144;
  const double as_h = 64.0 * 2048 / 6144;  // a·s/h
  void SetUp() override {
    m.name = "gpt-22b-layer";
    m.layers = 1, m.hidden = 6144, m.heads = m.kv_heads = 64, m.ffn_hidden = 4 * 6144;
    m.vocab = 51200, m.seq = 2048;
    m.dropout = m.biases = m.learned_positions = m.tied_embeddings = true;
    t.attention = AttentionKernel::kUnfused;
    p.micro_batch = 4;
  }
};

TEST_F(Korthikanti, NoParallelism) {
  // sbh(34 + 5as/h)
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), sbh * (34 + 5 * as_h));
}

TEST_F(Korthikanti, TensorParallel) {
  p.tp = 8;
  // sbh(10 + 24/t + 5as/(ht))
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), sbh * (10 + 24.0 / 8 + 5 * as_h / 8));
  p.sequence_parallel = true;
  // sbh/t (34 + 5as/h)
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), sbh / 8 * (34 + 5 * as_h));
}

TEST_F(Korthikanti, Recomputation) {
  p.tp = 8;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), sbh * 34 / 8);  // sbh·34/t
  p.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), sbh * (10 + 24.0 / 8));  // sbh(10 + 24/t)
  p.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), 2 * sbh);  // 2sbh: the layer input only
}

TEST_F(Korthikanti, CompressionScalesActivationsNotMasks) {
  t.activation_bits = 8;
  // 16-bit tensors halve: (34 - 2 masks)/2 + 2, scores (2 + 2)/2 + 1 per score → 3as/h
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), sbh * (32.0 / 2 + 2 + 3 * as_h));
}

TEST_F(Korthikanti, FirstStageOf1F1BHoldsPipelineDepthMicroBatches) {
  m.layers = 8;
  m.dropout = false;  // no embedding dropout mask: the first stage holds layer activations only
  m.vocab = 8;        // tiny output layer: the first stage is the most loaded
  p.tp = 1, p.pp = 4, p.dp = 1;
  p.recompute = Recompute::kFull;
  t.global_batch = 64;  // 16 micro-batches of 4
  const double per_layer = layer_activation_bytes(m, t, p);
  ClusterSpec c{*find_gpu("a100-80-sxm"), 4, {}};
  MemoryEstimate e = estimate_memory(m, t, c, p);
  ASSERT_EQ(e.stage, 0);
  // 2 layers per stage × 4 micro-batches in flight = 8 layers' worth = L.
  EXPECT_DOUBLE_EQ(e.activations, per_layer * 8);
  // Interleaved, v = 2: × (1 + (p-1)/(p·v)) = 1 + 3/8.
  p.vpp = 2;
  e = estimate_memory(m, t, c, p);
  EXPECT_DOUBLE_EQ(e.activations, per_layer * 8 * (1 + 3.0 / 8));
}

TEST(MemoryModel, HeadroomAgainstDevice) {
  ModelSpec m = *find_model_preset("llama3-8b");
  TrainingSettings t;
  t.global_batch = 8;
  ParallelConfig p;
  p.dp = 8;
  ClusterSpec c{*find_gpu("h100-sxm"), 8, {}};
  MemoryEstimate e = estimate_memory(m, t, c, p);
  EXPECT_DOUBLE_EQ(e.capacity, 80e9);
  EXPECT_DOUBLE_EQ(e.total, e.weights + e.gradients + e.optimizer + e.activations + e.temporary);
  EXPECT_DOUBLE_EQ(e.headroom, e.capacity - e.total);
  // 8.03B × 16 B = 128 GB of model states alone: DDP cannot fit; ZeRO-3 over 8 can.
  EXPECT_FALSE(e.fits);
  p.sharding = Sharding::kZero3;
  EXPECT_TRUE(estimate_memory(m, t, c, p).fits);
}

}  // namespace
}  // namespace stepscope::model
