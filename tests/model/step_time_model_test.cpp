// The step-time model's formulas against hand computations: FLOPs, the
// pipeline bubble, α-β collectives, the GEMM shape model, recomputation.
#include "model/step_time_model.h"

#include <gtest/gtest.h>

#include "model/collective_model.h"
#include "model/gemm_model.h"
#include "model/memory_model.h"
#include "model/plan_constraints.h"
#include "model/stage_layout.h"

namespace stepscope::model {

namespace {

// A GPU with round numbers, so hand computations stay short.
ClusterSpec round_gpu(int gpus) {
  GpuSpec g;
  g.name = "test";
  g.bf16_tflops = g.fp16_tflops = 100;
  g.memory_gb = 80;
  g.hbm_gbps = 1000;
  g.nvlink_gbps = 100;
  g.network_gbps = 10;
  g.gpus_per_node = 8;
  g.sms = 100;
  g.gemm_fraction = 0.5;
  g.hbm_fraction = 0.5;
  g.nvlink_fraction = 0.5;
  g.network_fraction = 0.5;
  g.flash_fraction = 0.5;
  g.nvlink_latency_s = 1e-6;
  g.network_latency_s = 1e-5;
  return {g, gpus, {}};
}

ModelSpec gpt(int layers, int hidden, int heads, int seq, int vocab) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers, m.hidden = hidden, m.heads = m.kv_heads = heads, m.ffn_hidden = 4 * hidden;
  m.seq = seq, m.vocab = vocab;
  m.dropout = m.biases = m.learned_positions = m.tied_embeddings = true;
  return m;
}

TEST(StepTime, LayerFlopsMatchMegatronFormula) {
  // GPT: 24bsh² + 4bs²h (Narayanan et al. 2021, Section 5.1), b = 2, s = 2048, h = 4096.
  ModelSpec m = gpt(1, 4096, 32, 2048, 51200);
  const double b = 2, s = 2048, h = 4096;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 2), 24 * b * s * h * h + 4 * b * s * s * h);
}

TEST(StepTime, LayerFlopsGqaAndGatedMlp) {
  // Llama 3 8B layer, b = 1, s = 8192, h = 4096, kv dim 1024, ffn 14336:
  // QKV 2·s·h·(h + 2·1024) + core 4·s²·h + proj 2·s·h² + MLP 2·s·h·14336·3.
  ModelSpec m = *find_model_preset("llama3-8b");
  const double s = 8192, h = 4096;
  double expect = 2 * s * h * (h + 2048) + 4 * s * s * h + 2 * s * h * h + 2 * s * h * 14336 * 3;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 1), expect);
}

TEST(StepTime, BubbleFractions) {
  EXPECT_DOUBLE_EQ(bubble_fraction(1, 8, 1), 0);
  EXPECT_DOUBLE_EQ(bubble_fraction(8, 64, 1), 7.0 / 64);        // (p-1)/m
  EXPECT_DOUBLE_EQ(bubble_fraction(8, 64, 3), 7.0 / (3 * 64));  // (p-1)/(v·m)
}

TEST(Collectives, RingAllReduceAlphaBeta) {
  ClusterSpec c = round_gpu(8);
  // Inside a node: busbw = 100 GB/s × 0.5 = 50 GB/s; n = 8, 1 GB:
  // 2·7·1 µs + 2·7/8 · 1e9 / 50e9 = 14 µs + 35 ms.
  EXPECT_NEAR(all_reduce_seconds(1e9, {8, 8}, c), 14e-6 + 0.035, 1e-12);
  // All-gather: 7·1 µs + 7/8 · 1e9 / 50e9.
  EXPECT_NEAR(all_gather_seconds(1e9, {8, 8}, c), 7e-6 + 0.0175, 1e-12);
  EXPECT_EQ(all_reduce_seconds(1e9, {1, 1}, c), 0);
}

TEST(Collectives, HierarchicalBottleneck) {
  ClusterSpec c = round_gpu(64);
  // 32 ranks, 8 per node: min(50 GB/s NVLink, 8 × 5 GB/s NICs) = 40 GB/s.
  EXPECT_DOUBLE_EQ(ring_bus_bandwidth({32, 8}, c), 40e9);
  // One rank per node: one NIC, 5 GB/s; 2·15·10 µs + 2·15/16 · 1e9 / 5e9.
  EXPECT_DOUBLE_EQ(ring_bus_bandwidth({16, 1}, c), 5e9);
  EXPECT_NEAR(all_reduce_seconds(1e9, {16, 1}, c), 300e-6 + 0.375, 1e-12);
  // Point to point across nodes: α + bytes / 5 GB/s.
  EXPECT_NEAR(p2p_seconds(5e6, true, c), 1e-5 + 1e-3, 1e-15);
}

TEST(GemmModel, WaveAndTileQuantization) {
  // 256 × 12800 output: 256×128 tiles make 100 tiles = exactly one wave on 100 SMs.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency({256, 12800, 4096, 1}, 100), 1.0);
  // 256 × 128 on 108 SMs: the 64×64 tile wins with 8 tiles: 8/108 × rate(64²)/rate(256×128),
  // rate = I/(I+32), I = 2·tm·tn/(tm+tn): 64/96 over (512/3)/(512/3+32).
  const double r64 = 64.0 / 96, r256 = (512.0 / 3) / (512.0 / 3 + 32);
  EXPECT_NEAR(gemm_shape_efficiency({256, 128, 4096, 1}, 108), 8.0 / 108 * r64 / r256, 1e-12);
}

TEST(GemmModel, RooflineComputeAndMemoryBound) {
  ClusterSpec c = round_gpu(1);
  // 25600 × 12800 × 4096, one wave multiple (100 × 100 tiles of 256×128 → 100 waves):
  // 2·m·n·k / (100 TFLOP/s × 0.5).
  double m = 25600, n = 12800, k = 4096;
  EXPECT_NEAR(gemm_seconds({m, n, k, 1}, c, Dtype::kBf16), 2 * m * n * k / 50e12, 1e-12);
  // k = 16: bytes (m·k + k·n + m·n)·2 / (1000 GB/s × 0.5) exceed the compute time.
  k = 16;
  EXPECT_NEAR(gemm_seconds({m, n, k, 1}, c, Dtype::kBf16), (m * k + k * n + m * n) * 2 / 500e9, 1e-12);
}

TEST(GemmModel, AmpereEpilogueAddsTheOutputWrite) {
  ClusterSpec c = round_gpu(1);
  c.gpu.gemm_epilogue_overlapped = false;  // Ampere: each thread block writes C after its main loop
  // 25600 × 12800 × 4096: main loop 2·m·n·k / 50 TFLOP/s (A and B, 315 MB, stream in
  // within it), then C (m·n·2 B = 655.36 MB) at 500 GB/s = 1.31072 ms on top.
  double m = 25600, n = 12800, k = 4096;
  EXPECT_NEAR(gemm_seconds({m, n, k, 1}, c, Dtype::kBf16), 2 * m * n * k / 50e12 + 1.31072e-3, 1e-12);
  // k = 16: main loop 0.2097152 ms (operands 1.2 MB take 2.5 µs), plus the same C write.
  k = 16;
  EXPECT_NEAR(gemm_seconds({m, n, k, 1}, c, Dtype::kBf16), 0.2097152e-3 + 1.31072e-3, 1e-12);
  // Hopper-style persistent kernels hide the write: the roofline maximum.
  c.gpu.gemm_epilogue_overlapped = true;
  EXPECT_NEAR(gemm_seconds({m, n, k, 1}, c, Dtype::kBf16), (m * k + k * n + m * n) * 2 / 500e9, 1e-12);
  // The catalog: A100 does not overlap, H100 does.
  EXPECT_FALSE(find_gpu("a100-80-sxm")->gemm_epilogue_overlapped);
  EXPECT_TRUE(find_gpu("h100-sxm")->gemm_epilogue_overlapped);
}

TEST(GemmModel, ProfileCalibrationRemovesTheEpilogue) {
  ClusterSpec c = round_gpu(1);
  c.gpu.gemm_epilogue_overlapped = false;
  // A sample measured on a GPU whose main loop runs at 0.7 of peak: time =
  // flops / 70 TFLOP/s + C write (1.31072 ms). The calibrated fraction is 0.7 again.
  const double m = 25600, n = 12800, k = 4096, flops = 2 * m * n * k;
  const double seconds = flops / 70e12 + 1.31072e-3;
  c.gemm_samples = {{m, n, k, Dtype::kBf16, flops / seconds / 1e12}};
  EXPECT_NEAR(gemm_fraction(c, Dtype::kBf16), 0.7, 1e-9);
  EXPECT_NEAR(gemm_seconds({m, n, k, 1}, c, Dtype::kBf16), seconds, 1e-12);
}

TEST(GemmModel, ProfileSamplesCalibrateFraction) {
  ClusterSpec c = round_gpu(1);
  // Samples at full wave efficiency: the fraction is the median of measured / peak.
  c.gemm_samples = {{25600, 12800, 4096, Dtype::kBf16, 60},
                    {25600, 12800, 8192, Dtype::kBf16, 70},
                    {25600, 12800, 2048, Dtype::kBf16, 80}};
  EXPECT_DOUBLE_EQ(gemm_fraction(c, Dtype::kBf16), 0.7);
  EXPECT_DOUBLE_EQ(gemm_fraction(c, Dtype::kFp16), 0.5);  // no fp16 samples: the catalog's
}

TEST(StepTime, RecomputationRepeatsTheForward) {
  ClusterSpec c = round_gpu(8);
  ModelSpec m = gpt(4, 2048, 16, 1024, 1000);
  TrainingSettings t;
  t.attention = AttentionKernel::kUnfused;
  ParallelConfig p;
  p.tp = 8;
  p.recompute = Recompute::kFull;
  LayerTime full = estimate_layer(m, t, c, p);
  EXPECT_DOUBLE_EQ(full.recompute, full.fwd());
  p.recompute = Recompute::kSelective;
  LayerTime sel = estimate_layer(m, t, c, p);
  EXPECT_DOUBLE_EQ(sel.recompute, sel.attention_fwd);
  t.attention = AttentionKernel::kFlash;  // flash attention recomputes inside its own backward
  EXPECT_EQ(estimate_layer(m, t, c, p).recompute, 0);
}

TEST(StepTime, TensorParallelCommIsFourRingAllReducesPerLayer) {
  ClusterSpec c = round_gpu(8);
  ModelSpec m = gpt(4, 2048, 16, 1024, 1000);
  TrainingSettings t;
  ParallelConfig p;
  p.tp = 8;
  p.micro_batch = 2;
  LayerTime l = estimate_layer(m, t, c, p);
  // Two all-reduces of b·s·h·2 bytes forward, two backward.
  const double bytes = 2.0 * 1024 * 2048 * 2;
  EXPECT_NEAR(l.tp_comm_fwd, 2 * (14e-6 + 2 * 7.0 / 8 * bytes / 50e9), 1e-12);
  EXPECT_DOUBLE_EQ(l.tp_comm_bwd, l.tp_comm_fwd);
}

TEST(StepTime, EndStagesCountTheirCollectivesAndGradientAccumulation) {
  ClusterSpec c = round_gpu(8);  // NVLink 50 GB/s achievable, α 1 µs; HBM 500 GB/s achievable
  ModelSpec m = gpt(4, 2048, 16, 1024, 1000);
  TrainingSettings t;  // bf16, 16-bit gradient buffer (g = 2)
  t.global_batch = 4;
  ParallelConfig p;
  p.tp = 8;
  p.micro_batch = 2;
  EndStageTime e = estimate_end_stages(m, t, c, p);
  // Embedding output all-reduce of b·s·h·2 = 8388608 B over 8 GPUs:
  // 14 steps × 1 µs + 2·7/8 · 8388608 / 50e9 = 307.60128 µs.
  const double ar = 14e-6 + 293.60128e-6;
  // Lookup: 3 · b·s·h · 2 B / 500 GB/s = 50.331648 µs each way.
  const double lookup = 50.331648e-6;
  // Dense embedding gradient, (V/t + s)·h = (125 + 1024) · 2048 = 2353152 parameters
  // × (zero 2 + read 2 + read/write 2·2) B = 37.650432 µs.
  const double embed_acc = 2353152.0 * 8 / 500e9;
  EXPECT_NEAR(e.embed_fwd, lookup + ar, 1e-12);
  EXPECT_NEAR(e.embed_bwd, lookup + embed_acc, 1e-12);
  // Cross-entropy: three all-reduces of 2048 tokens × 4 B: 3 · (14 µs + 1.75 · 8192 / 50e9).
  const double ce = 3 * (14e-6 + 1.75 * 8192 / 50e9);
  // Output weight gradient accumulation: 125 · 2048 parameters × (2 + 2·2) B.
  const double out_acc = 125.0 * 2048 * 6 / 500e9;
  const double logits_fwd = gemm_seconds({2048, 125, 2048, 1}, c, Dtype::kBf16);
  const double logits_bwd =
      gemm_seconds({2048, 2048, 125, 1}, c, Dtype::kBf16) + gemm_seconds({2048, 125, 2048, 1}, c, Dtype::kBf16);
  // fp32 cross-entropy over 2048 × 125 logits: 38 B forward, 14 B backward.
  EXPECT_NEAR(e.output_fwd, logits_fwd + 256000.0 * 38 / 500e9 + ce, 1e-12);
  EXPECT_NEAR(e.output_bwd, logits_bwd + 256000.0 * 14 / 500e9 + ar + out_acc, 1e-12);
  EXPECT_NEAR(e.tp_comm, 2 * ar + ce, 1e-12);
  EXPECT_NEAR(e.grad_accumulate, embed_acc + out_acc, 1e-12);
  // The step charges them once per micro-batch (pp = 1: both ends on one stage).
  StepEstimate s = estimate_step(m, t, c, p);
  EXPECT_NEAR(s.embedding_and_loss, 2 * (e.embed_fwd + e.embed_bwd + e.output_fwd + e.output_bwd), 1e-12);
  // Sequence parallelism: reduce-scatter (7 µs + 7/8 · 8388608 / 50e9) for the
  // embedding output and the projection's input gradient, all-gather of its input.
  p.sequence_parallel = true;
  EndStageTime q = estimate_end_stages(m, t, c, p);
  const double rs = 7e-6 + 146.80064e-6;
  EXPECT_NEAR(q.embed_fwd, lookup + rs, 1e-12);
  EXPECT_NEAR(q.output_fwd, e.output_fwd + rs, 1e-12);
  EXPECT_NEAR(q.output_bwd, e.output_bwd - ar + rs, 1e-12);
  // Without tensor parallelism no collective remains.
  p.tp = 1, p.sequence_parallel = false;
  EXPECT_EQ(estimate_end_stages(m, t, c, p).tp_comm, 0);
}

TEST(StepTime, PipelineBubbleFollowsScheduleWhenStagesAreEqual) {
  ClusterSpec c = round_gpu(8);
  ModelSpec m = gpt(16, 2048, 16, 1024, 8);  // tiny vocabulary: first and last stage ≈ the others
  TrainingSettings t;
  t.global_batch = 32;
  ParallelConfig p;
  p.pp = 8;
  StepEstimate e = estimate_step(m, t, c, p);
  ASSERT_EQ(e.micro_batches, 32);
  const double stage = 2 * e.layer.total();  // 2 layers per stage, one micro-batch
  EXPECT_NEAR(e.bubble / (32 * stage), 7.0 / 32, 0.01 * 7.0 / 32);
  p.vpp = 2;
  e = estimate_step(m, t, c, p);
  EXPECT_NEAR(e.bubble / (32 * stage), 7.0 / 64, 0.01 * 7.0 / 64);
}

TEST(StepTime, TotalIsPipelinePlusExposedCommPlusOptimizer) {
  ClusterSpec c = round_gpu(16);
  ModelSpec m = gpt(8, 2048, 16, 1024, 1000);
  TrainingSettings t;
  t.global_batch = 64;
  t.overlap_dp_comm = false;
  ParallelConfig p;
  p.tp = 2, p.pp = 2, p.dp = 4;
  StepEstimate e = estimate_step(m, t, c, p);
  EXPECT_DOUBLE_EQ(e.dp_comm_exposed, e.dp_comm_total);
  t.overlap_dp_comm = true;
  StepEstimate o = estimate_step(m, t, c, p);
  EXPECT_LT(o.dp_comm_exposed, e.dp_comm_exposed);
  EXPECT_NEAR(e.total - o.total, e.dp_comm_exposed - o.dp_comm_exposed, 1e-12);
  // MFU = model FLOPs / time / GPUs / peak.
  EXPECT_NEAR(e.mfu, e.model_flops / e.total / 16 / 100e12, 1e-12);
}

TEST(StepTime, OptimizerPassBytes) {
  TrainingSettings t;
  t.dtype = Dtype::kBf16;
  // bf16 grads → fp32 (2+4), norm (4), clip (8), Adam (24 + 4), fp32 → bf16 (6), zero (2).
  EXPECT_DOUBLE_EQ(optimizer_pass_bytes(t), 6 + 4 + 8 + 28 + 6 + 2);
  t.dtype = Dtype::kFp16;  // + unscale and inf check (8)
  EXPECT_DOUBLE_EQ(optimizer_pass_bytes(t), 62);
}

// A Llama-style layer with round sizes: h 1024, ffn 2816 (SwiGLU), 16 heads,
// 4 KV heads of 64, 512 tokens.
ModelSpec llama_ish() {
  ModelSpec m;
  m.name = "llama-ish";
  m.layers = 2, m.hidden = 1024, m.heads = 16, m.kv_heads = 4, m.ffn_hidden = 2816, m.gated_mlp = true;
  m.vocab = 1000, m.seq = 512;
  return m;
}

// Eager PyTorch modules move more bytes than fused kernels, per token of a
// Llama-style layer (h 1024, ffn 2816, 4 KV heads of 64, tp 1): eager
// 2 RMSNorms × 36h + residual adds 12h + SwiGLU 10f + rotary 20(h + kvd) +
// the attention output's contiguous copy 4h = 108h + 10f + 20kvd; fused
// 2 × 4h + 12h + 6f + 4(h + kvd) = 24h + 6f + 4kvd.
TEST(StepTime, EagerElementwiseBytes) {
  ClusterSpec c = round_gpu(1);
  const ModelSpec m = llama_ish();
  TrainingSettings fused;
  fused.global_batch = 1;
  TrainingSettings eager = fused;
  eager.stack = Stack::kPytorch;
  ParallelConfig p;
  const double tokens = 512, hbm = 1000e9 * 0.5;
  const double h = 1024, f = 2816, kvd = 256;
  EXPECT_NEAR(estimate_layer(m, fused, c, p).elementwise_fwd, tokens * (24 * h + 6 * f + 4 * kvd) / hbm, 1e-15);
  EXPECT_NEAR(estimate_layer(m, eager, c, p).elementwise_fwd, tokens * (108 * h + 10 * f + 20 * kvd) / hbm, 1e-15);
  // torch.compile fuses them again.
  eager.compiled = true;
  EXPECT_NEAR(estimate_layer(m, eager, c, p).elementwise_fwd, tokens * (24 * h + 6 * f + 4 * kvd) / hbm, 1e-15);
}

// FSDP (ZeRO-3) layer by layer, on 8 GPUs of one node (ring of 8, 50 GB/s
// achievable, 1 µs per step): each layer's 16-bit weights gathered for
// forward and backward (2·P_l bytes), its fp32 gradients reduce-scattered
// (PyTorch stack, 4·P_l); the embedding and output ends once per pass.
// Exposed: the first gather and the last reduce-scatter of each pass, and
// per other layer what exceeds its compute. A short sequence makes the
// communication outlast the compute, so every term shows.
TEST(StepTime, FsdpPerLayerExposure) {
  ClusterSpec c = round_gpu(8);
  ModelSpec m = gpt(4, 1024, 8, 128, 1000);
  TrainingSettings t;
  t.global_batch = 8;
  t.stack = Stack::kPytorch;
  ParallelConfig p;
  p.dp = 8;
  p.sharding = Sharding::kZero3;
  const StepEstimate e = estimate_step(m, t, c, p);
  const double pl = static_cast<double>(m.layer_params());
  const double ends = static_cast<double>(m.total_params()) - 4 * pl;
  auto ring = [](double bytes) { return 7 * 1e-6 + 7.0 / 8 * bytes / 50e9; };
  const double ag = ring(2 * pl), rs = ring(4 * pl), ag_ends = ring(2 * ends), rs_ends = ring(4 * ends);
  EXPECT_NEAR(e.dp_comm_total, 4 * (2 * ag + rs) + 2 * ag_ends + rs_ends, 1e-12);
  const LayerTime& L = e.layer;
  ASSERT_GT(ag, L.fwd());  // the premise: communication outlasts compute
  ASSERT_GT(ag + rs, L.bwd());
  const double exposed = ag_ends + ag + 3 * (ag - L.fwd()) + 3 * (ag + rs - L.bwd()) + rs + rs_ends;
  EXPECT_NEAR(e.dp_comm_exposed, exposed, 1e-12);
  // Megatron stack: 16-bit gradients reduce-scatter half the bytes.
  t.stack = Stack::kMegatron;
  const double rs16 = ring(2 * pl), rs16_ends = ring(2 * ends);
  EXPECT_NEAR(estimate_step(m, t, c, p).dp_comm_total, 4 * (2 * ag + rs16) + 2 * ag_ends + rs16_ends, 1e-12);
  // Without resharding after forward (FSDP2 reshard_after_forward=False):
  // one gather per layer per micro-batch, none in backward.
  t.stack = Stack::kPytorch;
  t.reshard_after_forward = false;
  const StepEstimate kept = estimate_step(m, t, c, p);
  EXPECT_NEAR(kept.dp_comm_total, 4 * (ag + rs) + 2 * ag_ends + rs_ends, 1e-12);
  EXPECT_NEAR(kept.dp_comm_exposed,
              ag_ends + ag + 3 * (ag - kept.layer.fwd()) + 3 * std::max(0.0, rs - kept.layer.bwd()) + rs + rs_ends,
              1e-12);
  EXPECT_EQ(kept.layer.shard_copy_bwd, 0);
}

// FP8 casts, per token of a Llama-style layer (h 1024, ffn 2816, KV 256,
// tp 1, 512 tokens, one micro-batch): GEMM inputs — eager torchao casts
// Q, K, V's and gate, up's shared inputs once per projection: 3h + h + 2h + f
// elements; fused (Transformer Engine) once per GEMM: h + h + h + f — and
// output gradients (h + 2kvd) + h + 2f + h. Eager: 8 B per element (amax
// read 2, cast read 2 + write 1, transposed cast read 2 + write 1), weights
// every micro-batch; fused: 4 B (read 2, write both layouts), Megatron's
// weights once per step (here one micro-batch: once).
TEST(StepTime, Fp8CastTraffic) {
  ClusterSpec c = round_gpu(1);
  const ModelSpec m = llama_ish();
  TrainingSettings fused;
  fused.global_batch = 1;
  fused.dtype = Dtype::kFp8;
  TrainingSettings eager = fused;
  eager.stack = Stack::kPytorch;
  ParallelConfig p;
  const double tokens = 512, hbm = 1000e9 * 0.5;
  const double h = 1024, f = 2816, kvd = 256, w = static_cast<double>(m.layer_params());
  const double out = (h + 2 * kvd) + h + 2 * f + h;
  LayerTime e = estimate_layer(m, eager, c, p);
  EXPECT_NEAR(e.cast_fwd, (tokens * (6 * h + f) * 35 + w * 35) / hbm, 1e-15);
  EXPECT_NEAR(e.cast_bwd, tokens * out * 35 / hbm, 1e-15);
  LayerTime t = estimate_layer(m, fused, c, p);
  EXPECT_NEAR(t.cast_fwd, (tokens * (3 * h + f) * 4 + w * 4) / hbm, 1e-15);
  EXPECT_NEAR(t.cast_bwd, tokens * out * 4 / hbm, 1e-15);
  // 16-bit training casts nothing.
  fused.dtype = Dtype::kBf16;
  EXPECT_EQ(estimate_layer(m, fused, c, p).cast_fwd, 0);
}

// FlashAttention-2 (PyTorch SDPA's flash backend) on Hopper at 35% of peak
// (FlashAttention-3 paper) against the Megatron stack's fused kernels at 48%:
// the same FLOPs, 0.48 / 0.35 the time. On A100 both are FlashAttention-2.
TEST(StepTime, FlashAttention2OnHopper) {
  const ModelSpec m = llama_ish();
  TrainingSettings t;
  t.global_batch = 1;
  ParallelConfig p;
  ClusterSpec h100{*find_gpu("h100-sxm"), 1, {}};
  const LayerTime fused = estimate_layer(m, t, h100, p);
  t.attention = AttentionKernel::kFlash2;
  const LayerTime fa2 = estimate_layer(m, t, h100, p);
  EXPECT_NEAR(fa2.attention_fwd / fused.attention_fwd, 0.48 / 0.35, 1e-12);
  ClusterSpec a100{*find_gpu("a100-80-sxm"), 1, {}};
  EXPECT_DOUBLE_EQ(estimate_layer(m, t, a100, p).attention_fwd,
                   estimate_layer(m, TrainingSettings{t.global_batch}, a100, p).attention_fwd);
}

// TP communication overlapped with its GEMMs (async TP, --tp-comm-overlap):
// with tp 8 and SP, forward hides the all-gathers behind QKV and FC1 and the
// reduce-scatters behind the projection and FC2; what shows is each
// collective's first chunk (1/8) and any excess over its GEMM. Without SP
// the overlap is refused.
TEST(StepTime, TpOverlapHidesCollectivesBehindTheirGemms) {
  ClusterSpec c = round_gpu(8);
  const ModelSpec m = llama_ish();
  TrainingSettings t;
  t.global_batch = 1;
  ParallelConfig p;
  p.tp = 8;
  p.sequence_parallel = true;
  const LayerTime plain = estimate_layer(m, t, c, p);
  t.tp_comm_overlap = true;
  const LayerTime over = estimate_layer(m, t, c, p);
  const double bytes = 512.0 * 1024 * 2;
  auto ring = [](double b) { return 7 * 1e-6 + 7.0 / 8 * b / 50e9; };
  const double ag = ring(bytes), rs = ring(bytes);
  EXPECT_NEAR(plain.tp_comm_fwd, 2 * (ag + rs), 1e-15);
  // Each GEMM here is shorter than its collective: every excess shows.
  const double gemms = over.gemm_fwd;
  ASSERT_LT(gemms, 4 * ag);
  EXPECT_NEAR(over.tp_comm_fwd, 2 * ag + 2 * rs - gemms + 4 * ag / 8, 1e-12);
  EXPECT_LT(over.tp_comm_bwd, plain.tp_comm_bwd);
  ParallelConfig no_sp = p;
  no_sp.sequence_parallel = false;
  EXPECT_FALSE(check_constraints(m, t, c, no_sp).empty());
}

// FSDP's fp8 all-gather (torchao enable_fsdp_float8_all_gather): each
// layer's gather moves 1 byte per parameter instead of 2; the reduce-scatter
// and the ends (embedding, output: not fp8) are unchanged. Refused without
// an 8-bit dtype or weight sharding.
TEST(StepTime, Fp8AllGatherHalvesTheLayerGathers) {
  ClusterSpec c = round_gpu(8);
  ModelSpec m = gpt(4, 1024, 8, 128, 1000);
  TrainingSettings t;
  t.global_batch = 8;
  t.stack = Stack::kPytorch;
  t.dtype = Dtype::kFp8;
  ParallelConfig p;
  p.dp = 8;
  p.sharding = Sharding::kZero3;
  const double pl = static_cast<double>(m.layer_params());
  auto ring = [](double bytes) { return 7 * 1e-6 + 7.0 / 8 * bytes / 50e9; };
  const double bf16_comm = estimate_step(m, t, c, p).dp_comm_total;
  t.fp8_all_gather = true;
  const double fp8_comm = estimate_step(m, t, c, p).dp_comm_total;
  EXPECT_NEAR(bf16_comm - fp8_comm, 4 * 2 * (ring(2 * pl) - ring(pl)), 1e-12);
  EXPECT_TRUE(check_constraints(m, t, c, p).empty());
  t.dtype = Dtype::kBf16;
  EXPECT_FALSE(check_constraints(m, t, c, p).empty());
}

// Activation offload over the host link (H200: 55 GB/s per direction, the
// pinned H2D rate measured here): a layer's saved bytes go out during the
// next layer's forward and come back during backward; only the excess of the
// copy over that compute shows, shared over the stage's layers.
TEST(StepTime, ActivationOffloadShowsOnlyTheCopyBeyondCompute) {
  const ModelSpec m = llama_ish();
  TrainingSettings t;
  t.global_batch = 1;
  ParallelConfig p;
  ClusterSpec c{*find_gpu("h200-sxm"), 1, {}};
  const LayerTime none = estimate_layer(m, t, c, p);
  EXPECT_EQ(none.offload_fwd, 0);
  p.offload_layers = 1;  // of 2
  const LayerTime half = estimate_layer(m, t, c, p);
  const double copy = layer_activation_bytes(m, t, p) / 55e9;
  EXPECT_NEAR(half.offload_fwd, 0.5 * std::max(0.0, copy - none.fwd()), 1e-15);
  EXPECT_NEAR(half.offload_bwd, 0.5 * std::max(0.0, copy - none.bwd()), 1e-15);
  EXPECT_GT(half.offload_fwd, 0);  // 512 tokens: the copy outlasts the small layer's forward
}

// Host launch: a small layer's GPU time is shorter than the host's issue
// time (kernels × 10 µs eager, × 1 µs from CUDA graphs); only the excess
// shows, per layer and micro-batch. GPT-125M shape, 512 tokens, H100.
TEST(StepTime, HostBoundLayersWaitForTheirKernels) {
  const ModelSpec m = gpt(12, 768, 12, 512, 50257);
  TrainingSettings t;
  t.global_batch = 1;
  t.stack = Stack::kPytorch;  // eager: 33 kernels forward, 66 backward
  ParallelConfig p;
  ClusterSpec c{*find_gpu("h100-sxm"), 1, {}};
  const KernelCount k = layer_kernels(m, t, p);
  EXPECT_EQ(k.fwd, 33);
  EXPECT_EQ(k.bwd, 66);
  const LayerTime lt = estimate_layer(m, t, c, p);
  EXPECT_NEAR(lt.launch_fwd, 33 * 10e-6, 1e-15);
  ASSERT_GT(lt.launch_fwd, lt.fwd());  // host-bound
  const StepEstimate e = estimate_step(m, t, c, p);
  EXPECT_NEAR(e.launch, 12 * ((33 * 10e-6 - lt.fwd()) + std::max(0.0, 66 * 10e-6 - lt.bwd())), 1e-12);
  t.cuda_graphs = true;
  const StepEstimate graphed = estimate_step(m, t, c, p);
  EXPECT_LT(graphed.launch, e.launch / 5);
  EXPECT_NEAR(e.total - graphed.total, e.launch - graphed.launch, 1e-12);
  // Fused kernels (Megatron stack): 12 forward; full recomputation issues the forward again in backward.
  t.stack = Stack::kMegatron;
  p.recompute = Recompute::kFull;
  EXPECT_EQ(layer_kernels(m, t, p).fwd, 12);
  EXPECT_EQ(layer_kernels(m, t, p).bwd, 36);
  // A large layer hides its issue time entirely.
  const ModelSpec big = gpt(4, 8192, 64, 4096, 50257);
  t.cuda_graphs = false;
  EXPECT_EQ(estimate_step(big, t, c, p).launch, 0);
}

// Block-sparse attention: the fused kernel computes the live share of the
// block pairs instead of the causal half, at the same fraction of peak —
// a 10% mask takes a fifth of the causal time; unfused attention has no such kernel.
TEST(StepTime, BlockSparseAttentionScalesTheLiveBlocks) {
  const ModelSpec m = llama_ish();
  TrainingSettings t;
  t.global_batch = 1;
  ParallelConfig p;
  ClusterSpec c{*find_gpu("h100-sxm"), 1, {}};
  const LayerTime causal = estimate_layer(m, t, c, p);
  t.attention_density = 0.1;
  const LayerTime sparse = estimate_layer(m, t, c, p);
  EXPECT_NEAR(sparse.attention_fwd, causal.attention_fwd * 0.1 / 0.5, 1e-15);
  EXPECT_NEAR(sparse.attention_bwd, causal.attention_bwd * 0.1 / 0.5, 1e-15);
  EXPECT_EQ(sparse.gemm_fwd, causal.gemm_fwd);
  EXPECT_TRUE(check_constraints(m, t, c, p).empty());
  t.attention = AttentionKernel::kUnfused;
  EXPECT_FALSE(check_constraints(m, t, c, p).empty());
}

// The step's listed parts add up to its total on one pipeline stage, with
// every optional cost present: fp8 casts, FSDP2 copy-out, gradient
// accumulation, TP, CP, recomputation, exposed data-parallel comm.
TEST(StepTime, PartsAddUpToTheTotal) {
  ModelSpec m = llama_ish();
  m.seq = 4096;
  TrainingSettings t;
  t.global_batch = 8;
  t.dtype = Dtype::kFp8;
  t.stack = Stack::kPytorch;
  ParallelConfig p;
  p.tp = 2, p.dp = 2, p.cp = 2, p.sequence_parallel = true, p.recompute = Recompute::kOp;
  p.sharding = Sharding::kZero3;
  ClusterSpec c{*find_gpu("h100-sxm"), 8, {}};
  const StepEstimate e = estimate_step(m, t, c, p);
  // FSDP2 copies each gathered 16-bit weight out (read + write) for forward and for backward.
  const double copy = stage_layout(m, t, c, p).layer_params_per_gpu * 4 / (3350e9 * 0.85);
  EXPECT_NEAR(e.layer.shard_copy_fwd, copy, 1e-15);
  EXPECT_NEAR(e.layer.shard_copy_bwd, copy, 1e-15);
  ASSERT_GT(e.layer.cast_fwd, 0);
  const double parts = e.compute_fwd + e.compute_bwd + e.attention + e.recompute + e.tp_comm + e.ep_comm + e.offload +
                       e.launch + e.cp_comm + e.pp_p2p + e.embedding_and_loss + e.bubble + e.dp_comm_exposed +
                       e.optimizer;
  EXPECT_NEAR(parts, e.total, 1e-9 * e.total);
  // FSDP1's flat parameters need no copy-out.
  t.fsdp_flat_params = true;
  EXPECT_EQ(estimate_layer(m, t, c, p).shard_copy_fwd, 0);
}

}  // namespace
}  // namespace stepscope::model
