// Memory per GPU against the ZeRO paper's figure 1 and Korthikanti et al.'s
// activation formulas, hand-computed.
#include "model/memory_model.h"
#include "model/plan_constraints.h"

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
  // 80 GB on the datasheet = 80 GiB, of which CUDA hands out 99.15%.
  EXPECT_DOUBLE_EQ(e.capacity, 80 * 1073741824.0 * 0.9915);
  EXPECT_DOUBLE_EQ(e.total, e.weights + e.gradients + e.optimizer + e.activations + e.temporary);
  EXPECT_DOUBLE_EQ(e.context, 1.39e9);
  EXPECT_DOUBLE_EQ(e.reserved, e.total + e.reserve);
  EXPECT_DOUBLE_EQ(e.headroom, e.capacity - e.reserved - e.context);
  // 8.03B × 16 B = 128 GB of model states alone: DDP cannot fit; ZeRO-3 over 8 can.
  EXPECT_FALSE(e.fits);
  p.sharding = Sharding::kZero3;
  EXPECT_TRUE(estimate_memory(m, t, c, p).fits);
}

// The PyTorch stack, hand-computed for Llama 3.2 1B (h 2048, 32 heads, 8 KV
// heads of 64, ffn 8192, vocab 128256, tied) as the H200 runs of
// workloads/plan_memory/h200_2026-12-04 train it: FSDP2 on one GPU, eager HF
// modules, AdamW foreach.
ModelSpec llama_1b(int seq) {
  ModelSpec m;
  m.name = "llama-1b";
  m.layers = 16, m.hidden = 2048, m.heads = 32, m.kv_heads = 8, m.ffn_hidden = 8192, m.gated_mlp = true;
  m.vocab = 128256, m.seq = seq, m.tied_embeddings = true;
  return m;
}

TrainingSettings pytorch_stack() {
  TrainingSettings t;
  t.stack = Stack::kPytorch;
  return t;
}

// Per token and layer: two RMSNorms × (fp32 upcast 4h + 16-bit 2h), the QKV
// and MLP inputs (2h each), Q (2h), K and V (2 × 2·512), attention output
// (2h), the projection's input (2h), SwiGLU 8f, the log-sum-exp (4 × 32):
// 22h + 4kvd + 8f + 4a = 112768 B. Measured: 109.7 KiB = 112333 B (−0.4%).
// Per-op checkpointing (torchtitan "op"): input, Q, V, gate, FC2 output,
// attention output: 8h + 2kvd + 2f + 4a = 33920 B (measured 34.9 KiB = 35738 B).
TEST(MemoryModel, EagerPytorchActivationsPerToken) {
  const ModelSpec m = llama_1b(2048);
  const TrainingSettings t = pytorch_stack();
  ParallelConfig p;
  p.micro_batch = 4;
  const double tokens = 4 * 2048.0;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), tokens * 112768);
  p.recompute = Recompute::kOp;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), tokens * 33920);
  p.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, t, p), tokens * 4096);
  // torch.compile fuses the norms and SwiGLU: back to the Megatron count, 12h + 4kvd + 6f + 4a.
  TrainingSettings compiled = t;
  compiled.compiled = true;
  p.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, compiled, p), tokens * (12 * 2048 + 4 * 512 + 6 * 8192 + 128));
}

// The peak is at the start of backward: fp32 parameters + Adam moments
// (12 B × Ψ, no gradients yet: zero_grad(set_to_none=True)), every
// activation, the final norm (8h) and saved log_softmax (4v) per token, the
// loss backward's 8v per token, the root's 16-bit embedding (2 B × v·h) and
// two gathered layers (2 × 2 B × layer params).
TEST(MemoryModel, PytorchPeakAtBackwardStart) {
  const ModelSpec m = llama_1b(32768);
  const TrainingSettings t = pytorch_stack();
  ParallelConfig p;
  p.sharding = Sharding::kZero3;
  ClusterSpec c{*find_gpu("h200-sxm"), 1, {}};
  TrainingSettings tt = t;
  tt.global_batch = 1;
  const MemoryEstimate e = estimate_memory(m, tt, c, p);
  const double psi = static_cast<double>(m.total_params());
  const double tokens = 32768;
  const double layer = static_cast<double>(m.layer_params());
  const double expected = 12 * psi + 16 * tokens * 112768 + tokens * (8 * 2048 + 4 * 128256.0) +
                          tokens * 8 * 128256.0 + 2 * (128256.0 * 2048 + 2048) + 4 * layer;
  EXPECT_EQ(e.peak, MemoryPeak::kBackwardStart);
  EXPECT_NEAR(e.total, expected, 1e-9 * expected);
  EXPECT_EQ(e.gradients, 0);
  EXPECT_DOUBLE_EQ(e.reserved, e.total * 1.16);
  // Measured on the H200: 123.38 GB allocated, 144.67 GB reserved.
  EXPECT_NEAR(e.total / 123.38e9, 1, 0.02);
  EXPECT_NEAR(e.reserved / 144.67e9, 1, 0.02);
}

// The same run with reshard_after_forward off: at the start of backward
// every layer's 16-bit weights are still gathered (2 B × Ψ, embedding and
// output included) instead of the root's and two layers'.
TEST(MemoryModel, KeptGatheredWeightsAtBackwardStart) {
  const ModelSpec m = llama_1b(32768);
  TrainingSettings t = pytorch_stack();
  t.global_batch = 1;
  ParallelConfig p;
  p.sharding = Sharding::kZero3;
  ClusterSpec c{*find_gpu("h200-sxm"), 1, {}};
  const MemoryEstimate resharded = estimate_memory(m, t, c, p);
  t.reshard_after_forward = false;
  const MemoryEstimate kept = estimate_memory(m, t, c, p);
  const double psi = static_cast<double>(m.total_params());
  const double root = 2 * (128256.0 * 2048 + 2048), two_layers = 4 * static_cast<double>(m.layer_params());
  EXPECT_EQ(kept.peak, MemoryPeak::kBackwardStart);
  EXPECT_NEAR(kept.total - resharded.total, 2 * psi - root - two_layers, 1e-6 * psi);
  EXPECT_TRUE(check_constraints(m, t, c, p).empty());
  p.sharding = Sharding::kDdp;
  EXPECT_FALSE(check_constraints(m, t, c, p).empty());
}

// Llama 3.1 8B, full recomputation, micro-batch 1 of 2048 tokens: the
// activations are small, so the peak moves to the end of backward (all fp32
// gradients, + the root's 16-bit embedding and output weights and their
// 16-bit gradients: 4 × 2 B × v·h) with a fused AdamW — measured 132.75 GB
// allocated — and to the optimizer step with foreach AdamW, whose fp32
// temporary per parameter (4 B × Ψ) takes it to 16 + 4 = 20 B × Ψ = 161 GB:
// the run that did not fit the H200.
TEST(MemoryModel, PytorchPeakAfterBackwardAndForeachTemporary) {
  const ModelSpec m = *find_model_preset("llama3-8b");
  ASSERT_FALSE(m.tied_embeddings);
  TrainingSettings t = pytorch_stack();
  t.global_batch = 1;
  t.optimizer_impl = OptimizerImpl::kFused;
  ParallelConfig p;
  p.sharding = Sharding::kZero3;
  p.recompute = Recompute::kFull;
  ModelSpec m2k = m;
  m2k.seq = 2048;
  ClusterSpec c{*find_gpu("h200-sxm"), 1, {}};
  const double psi = static_cast<double>(m2k.total_params());
  const double root = 2.0 * 128256 * 4096 + 4096;  // embedding + output matrix + final norm
  MemoryEstimate e = estimate_memory(m2k, t, c, p);
  EXPECT_EQ(e.peak, MemoryPeak::kBackwardEnd);
  EXPECT_NEAR(e.total, 16 * psi + 4 * root, 1e-9 * psi);
  EXPECT_NEAR(e.total / 132.75e9, 1, 0.01);
  EXPECT_TRUE(e.fits);
  // 16% more would pass the device: the allocator frees its cache first, so reserved stops at what CUDA has left.
  EXPECT_DOUBLE_EQ(e.reserved, e.capacity - e.context);
  t.optimizer_impl = OptimizerImpl::kAuto;  // foreach, PyTorch's default
  e = estimate_memory(m2k, t, c, p);
  EXPECT_EQ(e.peak, MemoryPeak::kOptimizerStep);
  EXPECT_NEAR(e.total, 20 * psi, 1e-9 * psi);
  EXPECT_FALSE(e.fits);
  // Past the device, the allocator has freed its cache before failing: nothing reserved beyond the live tensors.
  EXPECT_DOUBLE_EQ(e.reserved, e.total);
}

// Gradient accumulation: the gradients of the first micro-batch are live
// while the second runs (measured: 33.86 GB at micro-batch 2 × 2 against
// 42.41 GB at micro-batch 4 × 1).
TEST(MemoryModel, PytorchAccumulatedGradientsAreLiveInTheNextMicroBatch) {
  const ModelSpec m = llama_1b(2048);
  TrainingSettings t = pytorch_stack();
  t.global_batch = 4;
  ParallelConfig p;
  p.sharding = Sharding::kZero3;
  p.micro_batch = 2;
  ClusterSpec c{*find_gpu("h200-sxm"), 1, {}};
  const MemoryEstimate e = estimate_memory(m, t, c, p);
  EXPECT_EQ(e.peak, MemoryPeak::kBackwardStart);
  EXPECT_DOUBLE_EQ(e.gradients, 4.0 * static_cast<double>(m.total_params()));
  EXPECT_NEAR(e.total / 33.86e9, 1, 0.02);
}

// Activation offload: with all 16 layers offloaded, two layers' saved
// tensors stay on the GPU (the one copied out, the one copied back) instead
// of 16; with 8 offloaded, 8 + 2.
TEST(MemoryModel, OffloadedActivationsLeaveTwoLayersOnTheGpu) {
  const ModelSpec m = llama_1b(2048);
  TrainingSettings t = pytorch_stack();
  t.global_batch = 4;
  ParallelConfig p;
  p.sharding = Sharding::kZero3;
  p.micro_batch = 4;
  ClusterSpec c{*find_gpu("h200-sxm"), 1, {}};
  const double layer = layer_activation_bytes(m, t, p);
  const double all = estimate_memory(m, t, c, p).activations;
  p.offload_layers = 16;
  EXPECT_NEAR(all - estimate_memory(m, t, c, p).activations, 14 * layer, 1e-6 * layer);
  p.offload_layers = 8;
  EXPECT_NEAR(all - estimate_memory(m, t, c, p).activations, 6 * layer, 1e-6 * layer);
}

}  // namespace
}  // namespace stepscope::model
