// Ring attention's cost beyond the attention kernels, per stack, against a
// hand computation: one rank of a cp = 4 ring holding 8192 tokens of a
// Llama 3 8B layer (query width 4096, K+V width 2048) on the catalog's H100
// (HBM 3.35 TB/s × 0.85; NVLink 450 GB/s × 0.80, α = 5 µs).
#include <gtest/gtest.h>

#include "model/collective_model.h"
#include "model/step_time_model.h"

namespace stepscope::model {
namespace {

constexpr double kTokens = 8192, kQ = 4096, kKv = 2048, kCp = 4;

ClusterSpec h100() { return ClusterSpec{*find_gpu("h100-sxm"), 8, {}}; }

// Transformer Engine's P2P ring: cp − 1 sends of the 16-bit K/V block
// forward, K/V with dK/dV (twice) backward, hidden behind the attention
// compute; the merges are 6 B per output element per later step forward and
// 6 B per output and K/V element backward.
TEST(ContextParallel, MegatronRingHidesSendsAndMergesIn16Bits) {
  const ClusterSpec c = h100();
  const CommGroup ring{4, 4};
  const double hbm = 3350e9 * 0.85, kv_bytes = kTokens * kKv * 2;
  const double send = 5e-6 + kv_bytes / (450e9 * 0.80);
  ASSERT_NEAR(p2p_seconds(kv_bytes, false, c), send, 1e-9);
  // Attention long enough to hide every send: only the merges remain.
  ContextParallelTime r = context_parallel_time(kTokens, kQ, kKv, kCp, 1.0, 2.5, Stack::kMegatron, ring, c);
  EXPECT_EQ(r.exposed_comm, 0);
  EXPECT_NEAR(r.merge_fwd, 3 * 6 * kTokens * kQ / hbm, 1e-12);
  EXPECT_NEAR(r.merge_bwd, 3 * 6 * kTokens * (kQ + kKv) / hbm, 1e-12);
  // No attention time at all: every send shows (3 forward, 6 backward).
  r = context_parallel_time(kTokens, kQ, kKv, kCp, 0, 0, Stack::kMegatron, ring, c);
  EXPECT_NEAR(r.exposed_comm, 9 * send, 1e-12);
}

// torch's context_parallel: one all-gather of the cp × K/V blocks per pass,
// hidden only behind the first step (core / cp); fp32 merges (4 B K/V
// concatenation + (12 + 32.5 (cp − 1)) B per output element forward; 10 +
// 14 cp per output and 10 + 22 cp per K/V element backward); the fp32 dK/dV
// sends (twice the 16-bit bytes) each behind one step's backward, the last
// one exposed.
TEST(ContextParallel, PytorchAllGatherAndFp32Merges) {
  const ClusterSpec c = h100();
  const CommGroup ring{4, 4};
  const double hbm = 3350e9 * 0.85, kv_bytes = kTokens * kKv * 2;
  const double gather = 3 * 5e-6 + 0.75 * 4 * kv_bytes / (450e9 * 0.80);
  ASSERT_NEAR(all_gather_seconds(4 * kv_bytes, ring, c), gather, 1e-9);
  const double dkv = 5e-6 + 2 * kv_bytes / (450e9 * 0.80);
  const double core_fwd = 0.020, core_bwd = 0.050;  // 5 and 12.5 ms per step: every transfer fits
  ContextParallelTime r = context_parallel_time(kTokens, kQ, kKv, kCp, core_fwd, core_bwd, Stack::kPytorch, ring, c);
  EXPECT_NEAR(r.exposed_comm, dkv, 1e-12);  // the last dK/dV send, after the loop
  EXPECT_NEAR(r.merge_fwd, (4 * kTokens * kKv + kTokens * kQ * (12 + 32.5 * 3)) / hbm, 1e-12);
  EXPECT_NEAR(r.merge_bwd, (kTokens * kQ * (10 + 14 * 4) + kTokens * kKv * (10 + 22 * 4)) / hbm, 1e-12);
  // Without compute to hide behind: both gathers and all cp dK/dV sends.
  r = context_parallel_time(kTokens, kQ, kKv, kCp, 0, 0, Stack::kPytorch, ring, c);
  EXPECT_NEAR(r.exposed_comm, 2 * gather + 4 * dkv, 1e-12);
}

// The layer carries the merges inside its attention time (full
// recomputation repeats them) and the exposed exchange as cp_comm.
TEST(ContextParallel, LayerAddsTheRingToAttention) {
  ModelSpec m = *find_model_preset("llama3-8b");
  m.seq = 32768;
  TrainingSettings t;
  t.global_batch = 2;
  t.stack = Stack::kPytorch;
  t.attention = AttentionKernel::kFlash2;
  ParallelConfig one, four;
  one.dp = 2;
  four.dp = 2, four.cp = 4;
  const ClusterSpec c = h100();
  const LayerTime a = estimate_layer(m, t, c, one), b = estimate_layer(m, t, c, four);
  // A quarter of the queries against all keys: a quarter of the kernel time, plus the merges.
  const double q = 8192.0 * 4096, kv = 8192.0 * 2048, hbm = 3350e9 * 0.85;
  EXPECT_NEAR(b.attention_fwd, a.attention_fwd / 4 + (4 * kv + q * (12 + 32.5 * 3)) / hbm, 1e-9);
  EXPECT_NEAR(b.attention_bwd, a.attention_bwd / 4 + (q * (10 + 14 * 4) + kv * (10 + 22 * 4)) / hbm, 1e-9);
  EXPECT_GT(b.cp_comm, 0);
  EXPECT_EQ(a.cp_comm, 0);
}

}  // namespace
}  // namespace stepscope::model
