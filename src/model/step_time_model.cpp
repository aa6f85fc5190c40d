#include "model/step_time_model.h"

#include <algorithm>
#include <vector>

#include "model/collective_model.h"
#include "model/gemm_model.h"
#include "model/memory_model.h"
#include "model/stage_layout.h"

namespace stepscope::model {
namespace {

// Forward and backward time of one linear layer C[M×N] = A[M×K]·W[K×N]:
// backward is the data gradient (M×K from M×N and N×K) and the weight
// gradient (K×N from K×M and M×N).
struct LinearTime {
  double fwd = 0, bwd = 0;
};
// `batch` equal GEMMs at once: an MoE layer's local experts as one grouped GEMM.
LinearTime linear(double m, double n, double k, const ClusterSpec& c, Dtype d, double batch = 1) {
  return {gemm_seconds({m, n, k, batch}, c, d),
          gemm_seconds({m, k, n, batch}, c, d) + gemm_seconds({k, n, m, batch}, c, d)};
}

// Bytes per token that the forward's memory-bound kernels move (read +
// write, 16-bit): norms, bias-dropout-residual adds, the MLP activation,
// rotary embeddings. `rep` scales the tensors outside the TP region.
// Fused (Megatron / Transformer Engine, or torch.compile): one kernel each.
// Eager PyTorch modules run each op as its own kernel over the whole tensor
// (HF's LlamaRMSNorm, torchtitan without compile), per element: RMSNorm
// casts to fp32 (r2 w4), squares (r4 w4), takes the mean (r4), multiplies by
// the reciprocal root (r4 w4), casts back (r4 w2) and multiplies by the
// weight (r2 w2) = 36 B; SiLU (r2 w2) then the product with up (r4 w2) =
// 10 B per f element; rotary embeddings 20 B per Q/K element (HF: two
// multiplies, rotate_half's negate and concatenate, an add; torchtitan: the
// fp32 complex multiply between two casts); attention's output made
// contiguous for the projection (r2 w2).
double elementwise_bytes_per_token(const ModelSpec& m, const TrainingSettings& t, double tp, double rep) {
  const double h = m.hidden, f = mlp_width_per_token(m, t);
  const double kvd = static_cast<double>(m.kv_heads) * m.head_dim();
  const bool eager = t.eager_activations();
  double norms = 2 * (eager ? 36 * h : 2 * h + 2 * h);  // two norms
  double residual =
      2 * (2 * h + 2 * h + 2 * h + (m.dropout ? h : 0));  // (dropout +) add: read out, residual; write; mask
  double act = m.gated_mlp ? (eager ? 10 * f : 2 * 2 * f + 2 * f) / tp : (2 * f + 2 * f) / tp;  // SwiGLU / bias-GeLU
  double rope = m.learned_positions ? 0 : (eager ? 20 : 2 * 2) * (h + kvd) / tp;  // rotate Q and K
  double copies = eager ? 4 * h / tp : 0;
  return (norms + residual) * rep + act + rope + copies;
}

}  // namespace

ContextParallelTime context_parallel_time(double tokens, double q_width, double kv_width, double cp, double core_fwd,
                                          double core_bwd, Stack stack, const CommGroup& ring, const ClusterSpec& c) {
  ContextParallelTime r;
  const double hbm = c.gpu.hbm_achievable_Bps();
  const double q = tokens * q_width, kv = tokens * kv_width;  // this rank's query/output and K+V elements
  const double kv_bytes = kv * 2;                             // 16-bit
  const bool inter_node = ring.size > ring.per_node;
  if (stack == Stack::kMegatron) {
    // Transformer Engine's P2P ring: the next K/V block is sent while this
    // step's attention runs (cp − 1 sends forward); backward sends K/V and
    // the running dK/dV together (twice the bytes). Only the excess over the
    // attention compute shows. The partial outputs are corrected after the
    // loop, one fused pass per step in 16 bits (read the output and the
    // partial, write: 6 B per element); dQ accumulates in 16 bits the same
    // way, and each step adds its dK/dV into the travelling buffer (6 B).
    const double step = p2p_seconds(kv_bytes, inter_node, c);
    r.exposed_comm = std::max(0.0, (cp - 1) * step - core_fwd) + std::max(0.0, 2 * (cp - 1) * step - core_bwd);
    r.merge_fwd = (cp - 1) * 6 * q / hbm;
    r.merge_bwd = (cp - 1) * 6 * (q + kv) / hbm;
    return r;
  }
  // PyTorch's context_parallel (torch.distributed.tensor.experimental,
  // torchtitan's default: all-gather rotation, head-tail load balancing):
  // K and V are concatenated (read + write 4 B per element) and all-gathered
  // once; only the first step's attention (1/cp of it) can hide the gather.
  // Each later step merges its partial output into an fp32 accumulator
  // (_SDPAMerger, eager): cast the block to fp32 (r2 w4), subtract (r4 r4
  // w4), scale (r4 w4), subtract (r4 r4 w4) = 38 B per element; on half the
  // steps only half the queries attend and the half-update is concatenated
  // back into a full copy (half the work + r4 w4): 27 B; average 32.5 B.
  // The first block is cast up (6 B) and the result down (r4 w2).
  const double gather = all_gather_seconds(cp * kv_bytes, ring, c);
  const double step_fwd = core_fwd / cp, step_bwd = core_bwd / cp;
  r.merge_fwd = (4 * kv + q * (12 + 32.5 * (cp - 1))) / hbm;
  // Backward gathers K/V again; dK/dV (fp32: twice the 16-bit bytes,
  // concatenated into one buffer: r4 w4) travel the ring one send per step,
  // each behind one step's backward kernel except the last, received after
  // the loop. Per step dQ += (fp32 += 16-bit: r4 r2 w4 = 10 B, plus the
  // half-step concatenation on half the steps: 14 B on average) and dK, dV
  // += likewise (10 B + 4 B + the 8 B concatenation for the send); zeroed
  // accumulators (w4) and the casts back (r4 w2) at the ends.
  const double dkv = p2p_seconds(2 * kv_bytes, inter_node, c);
  r.exposed_comm = std::max(0.0, gather - step_fwd) + std::max(0.0, gather - step_bwd) +
                   (cp - 1) * std::max(0.0, dkv - step_bwd) + dkv;
  r.merge_bwd = (q * (10 + 14 * cp) + kv * (10 + 22 * cp)) / hbm;
  return r;
}

KernelCount layer_kernels(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p) {
  const bool eager = t.eager_activations();
  const bool tp = p.tp > 1, sp = p.sequence_parallel && tp;
  KernelCount k;
  // Forward. Fused (Megatron / Transformer Engine, torch.compile): two
  // norms, the QKV, projection, FC1 and FC2 GEMMs, rotary embedding,
  // attention, the activation and two residual adds = 12. Eager torchtitan
  // block: two RMSNorms of 7 kernels (cast, square, mean, add, rsqrt,
  // multiply, cast back and weight: one fewer where fused by PyTorch),
  // separate Q, K, V GEMMs, rotary 3 per Q and K (upcast, complex multiply,
  // cast back), attention, the output made contiguous, the projection, the
  // residual add twice, gate and up GEMMs, SiLU, the product, FC2 = 33.
  k.fwd = eager ? 33 : 12;
  if (m.is_moe()) k.fwd += 5 + (m.moe_shared_ffn > 0 ? 3 : 0);  // router GEMM, softmax, top-k, permute, unpermute
  if (tp) k.fwd += sp ? 4 : 2;                                  // the TP collectives
  // Low precision: a cast per GEMM input, fused (Transformer Engine,
  // compile) or 7 kernels in eager torchao (abs, max, scale, upcast,
  // multiply, clamp, cast).
  if (is_low_precision(t.dtype)) k.fwd += (eager ? 7 : 4) * (t.fused_casts() ? 1 : 7);
  if (p.sharding == Sharding::kZero3 || p.sharding == Sharding::kFsdpHybrid)
    k.fwd += 3;  // FSDP: copy-in, all-gather, copy-out
  // Backward: each forward kernel has about two (data and weight gradients
  // of a GEMM; the input gradient of an elementwise op and its reduction or
  // accumulation); FSDP gathers again and reduce-scatters (+ copies).
  k.bwd = 2 * k.fwd;
  if (p.recompute == Recompute::kFull) k.bwd += k.fwd;
  else if (p.recompute == Recompute::kOp) k.bwd += k.fwd / 2;
  return k;
}

double launch_seconds(const TrainingSettings& t) { return t.cuda_graphs ? 1e-6 : 10e-6; }

double optimizer_pass_bytes(const TrainingSettings& t) {
  const double g = t.grad_fp32 ? 4 : 2;
  double bytes = t.grad_fp32 ? 0 : 2 + 4;        // 16-bit grads → fp32 copy
  const double gm = 4;                           // the optimizer works on fp32 gradients from here on
  if (t.dtype == Dtype::kFp16) bytes += 2 * gm;  // loss-scale unscale + inf check
  bytes += gm + 2 * gm;                          // norm, clip
  bytes += (t.optimizer == Optimizer::kSgd ? 16 : 24) + gm;
  bytes += 4 + 2;  // fp32 master → 16-bit weights
  bytes += g;      // zero the gradient buffer
  return bytes;
}

double bubble_fraction(int pp, int micro_batches, int vpp) {
  if (pp <= 1 || micro_batches <= 0) return 0;
  return (pp - 1.0) / (std::max(1, vpp) * static_cast<double>(micro_batches));
}

double layer_forward_flops(const ModelSpec& m, int micro_batch) {
  const double tokens = static_cast<double>(micro_batch) * m.seq;
  const double h = m.hidden, f = m.ffn_hidden;
  const double kvd = static_cast<double>(m.kv_heads) * m.head_dim();
  double qkv = 2 * tokens * h * (h + 2 * kvd);
  double core = 2 * 2 * tokens * m.seq * h;  // QK^T and scores·V, full (uncausal) count as in Megatron's formula
  double proj = 2 * tokens * h * h;
  double mlp = 2 * tokens * h * f * (m.gated_mlp ? 3 : 2);
  if (m.is_moe())  // each token through top-k experts and the shared ones, plus the router's scores
    mlp = 2 * tokens * h * (static_cast<double>(m.expert_ffn()) * m.moe_topk + m.moe_shared_ffn) * (m.gated_mlp ? 3 : 2) +
          2 * tokens * h * m.moe_experts;
  return qkv + core + proj + mlp;
}

LayerTime estimate_layer(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, const ParallelConfig& p) {
  LayerTime lt;
  const double tp = std::max(1, p.tp), cp = std::max(1, p.cp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double b = std::max(1, p.micro_batch);
  const double s_q = m.seq / cp, s_k = m.seq;
  const double tokens = b * s_q;
  const double h = m.hidden, f = m.ffn_hidden, d = m.head_dim();
  const double kv_split = std::min<double>(tp, m.kv_heads);
  const double kvd_local = static_cast<double>(m.kv_heads) * d / kv_split;
  const double heads_local = m.heads / tp;
  const Dtype dt = t.dtype;

  // Linear layers, per GPU (Megatron column/row split).
  LinearTime qkv = linear(tokens, h / tp + 2 * kvd_local, h, c, dt);
  LinearTime proj = linear(tokens, h, h / tp, c, dt);
  LinearTime fc1 = linear(tokens, (m.gated_mlp ? 2 : 1) * f / tp, h, c, dt);
  LinearTime fc2 = linear(tokens, h, f / tp, c, dt);
  LinearTime router, shared1, shared2;
  if (m.is_moe()) {
    // Balanced routing: this GPU's T tokens go to k experts each; its E/ep
    // experts receive T·k·ep/E token copies each (times the routed share
    // under a capacity factor), run as one grouped GEMM.
    const double ep = std::max(1, p.ep), experts = m.moe_experts, fe = m.expert_ffn();
    const double per_expert = tokens * m.moe_topk * ep / experts * t.moe_routed_share();
    fc1 = linear(per_expert, (m.gated_mlp ? 2 : 1) * fe / tp, h, c, dt, experts / ep);
    fc2 = linear(per_expert, h, fe / tp, c, dt, experts / ep);
    router = linear(tokens, experts, h, c, Dtype::kBf16);
    // Shared experts: a dense MLP over every token, column/row split by tp.
    if (m.moe_shared_ffn > 0) {
      const double fs = m.moe_shared_ffn;
      shared1 = linear(tokens, (m.gated_mlp ? 2 : 1) * fs / tp, h, c, dt);
      shared2 = linear(tokens, h, fs / tp, c, dt);
    }
  }
  lt.gemm_fwd = qkv.fwd + proj.fwd + fc1.fwd + fc2.fwd + router.fwd + shared1.fwd + shared2.fwd;
  lt.gemm_bwd = qkv.bwd + proj.bwd + fc1.bwd + fc2.bwd + router.bwd + shared1.bwd + shared2.bwd;

  // Attention core. FP8 recipes (Transformer Engine) keep attention in 16 bits.
  const double hbm = c.gpu.hbm_achievable_Bps();
  const Dtype at = is_low_precision(dt) ? Dtype::kBf16 : dt;
  double core_fwd = 0, core_bwd = 0;
  if (t.attention == AttentionKernel::kUnfused) {
    const double batch = b * heads_local;
    const double scores = batch * s_q * s_k;
    double gemm_f = gemm_seconds({s_q, s_k, d, batch}, c, at) + gemm_seconds({s_q, d, s_k, batch}, c, at);
    double gemm_b = gemm_seconds({s_q, s_k, d, batch}, c, at)     // dP = dO·V^T
                    + gemm_seconds({s_k, d, s_q, batch}, c, at)   // dV = P^T·dO
                    + gemm_seconds({s_q, d, s_k, batch}, c, at)   // dQ = dS·K
                    + gemm_seconds({s_k, d, s_q, batch}, c, at);  // dK = dS^T·Q
    // Fused scale-mask-softmax: read + write the scores (4 B each); dropout:
    // read, write, 1-byte mask (5 B). Backward: dropout (read grad + mask,
    // write: 5 B), softmax (read y and dy, write dx: 6 B).
    double mem_f = scores * (4 + (m.dropout ? 5 : 0)) / hbm;
    double mem_b = scores * (6 + (m.dropout ? 5 : 0)) / hbm;
    core_fwd = gemm_f + mem_f;
    core_bwd = gemm_b + mem_b;
  } else {
    // One fused kernel; causal masking skips half the blocks, a block-sparse
    // mask all but its live share (at the same fraction of peak on the
    // blocks it computes). Backward does 5 matmuls to the forward's 2
    // (FlashAttention-2), so 2.5× the FLOPs.
    const double live = t.attention_density > 0 ? t.attention_density : 0.5;
    double flops_f = live * 4 * b * heads_local * s_q * s_k * d;
    double rate = c.gpu.peak_tflops(at) * 1e12 *
                  (t.attention == AttentionKernel::kFlash2 ? c.gpu.fa2_fraction : c.gpu.flash_fraction);
    core_fwd = flops_f / rate;
    core_bwd = 2.5 * flops_f / rate;
  }
  lt.attention_fwd = core_fwd;
  lt.attention_bwd = core_bwd;

  // Memory-bound kernels; backward reads the saved input and the incoming
  // gradient and writes a gradient: twice the forward's traffic.
  const double rep = sp ? 1 / tp : 1;
  lt.elementwise_fwd = tokens * elementwise_bytes_per_token(m, t, tp, rep) / hbm;
  // MoE: permuting the token copies to their experts and back (read + write
  // 2h each way per copy), the router's softmax and top-k.
  if (m.is_moe()) lt.elementwise_fwd += tokens * (8.0 * h * m.moe_topk * t.moe_routed_share() + 8.0 * m.moe_experts) / hbm;
  lt.elementwise_bwd = 2 * lt.elementwise_fwd;

  // Tensor parallel: two all-reduces of the [tokens × h] activation per pass
  // (after the projection and FC2 forward; after QKV and FC1 data gradients
  // backward). With SP each becomes reduce-scatter + all-gather: same bytes.
  const StageLayout layout = stage_layout(m, t, c, p);
  const double act_bytes = tokens * h * 2;
  double one =
      sp ? reduce_scatter_seconds(act_bytes, layout.tp_group, c) + all_gather_seconds(act_bytes, layout.tp_group, c)
         : all_reduce_seconds(act_bytes, layout.tp_group, c);
  lt.tp_comm_fwd = 2 * one;
  lt.tp_comm_bwd = 2 * one;
  // Sequence parallelism keeps only the sequence-sharded inputs of the QKV
  // and first MLP GEMMs (that is where its memory saving comes from), so
  // backward all-gathers them again for the weight gradients (Korthikanti et
  // al. 2022, Section 4.2.2). Like every TP collective here it is counted as
  // exposed: Megatron launches it beside the data-gradient GEMM, but the two
  // share SMs and HBM.
  if (sp) lt.tp_comm_bwd += 2 * all_gather_seconds(act_bytes, layout.tp_group, c);
  // Communication overlapped with the GEMMs it feeds (Megatron-Core's
  // --tp-comm-overlap with userbuffers, torchtitan's async TP: both need
  // SP): the all-gather before QKV and FC1 and the reduce-scatter after the
  // projection and FC2 are cut into tp chunks that run while the GEMM works
  // on the previous chunk, so only the first chunk and any excess of the
  // collective over its GEMM show; backward the same against the
  // data-gradient GEMMs (half of each linear's backward), and the SP
  // re-gathers against the weight-gradient GEMMs.
  if (sp && t.tp_comm_overlap) {
    const double ag = all_gather_seconds(act_bytes, layout.tp_group, c);
    const double rs = reduce_scatter_seconds(act_bytes, layout.tp_group, c);
    auto hidden = [&](double comm, double gemm) { return std::max(0.0, comm - gemm) + comm / tp; };
    lt.tp_comm_fwd = hidden(ag, qkv.fwd) + hidden(rs, proj.fwd) + hidden(ag, fc1.fwd) + hidden(rs, fc2.fwd);
    lt.tp_comm_bwd = hidden(rs, qkv.bwd / 2) + hidden(ag, proj.bwd / 2) + hidden(rs, fc1.bwd / 2) +
                     hidden(ag, fc2.bwd / 2) + hidden(ag, qkv.bwd / 2) + hidden(ag, fc1.bwd / 2);
  }

  // Expert parallelism: the token copies (T·k × h, 16-bit) go to their
  // experts' GPUs and come back (dispatch + combine), in forward and again
  // in backward; counted as exposed (Megatron-Core overlaps it only with
  // its 1F1B A2A overlap, not modelled).
  if (m.is_moe() && layout.ep_group.size > 1) {
    const double a2a = all_to_all_seconds(tokens * m.moe_topk * t.moe_routed_share() * h * 2, layout.ep_group, c);
    lt.ep_comm_fwd = 2 * a2a;
    lt.ep_comm_bwd = 2 * a2a;
  }

  if (cp > 1) {
    const ContextParallelTime ring = context_parallel_time(tokens, h / tp, 2 * kvd_local, cp, core_fwd, core_bwd,
                                                           t.stack, layout.cp_group, c);
    lt.cp_comm = ring.exposed_comm;
    lt.attention_fwd += ring.merge_fwd;
    lt.attention_bwd += ring.merge_bwd;
  }

  // Low-precision recipes cast every GEMM operand from its 16-bit copy
  // (memory-bound): the activation inputs and the weights in forward, the
  // output gradients in backward, each also in the transposed layout the
  // weight- or data-gradient GEMM reads (Hopper and Blackwell FP8 GEMMs take
  // both operands K-major). Per element, eager torchao float8 runs each op
  // of its dynamic scaling as its own kernel (torchao/float8: tensor_to_amax
  // = max(abs(x)), then x.to(float32) * scale, clamp, .to(fp8)): abs (r2 w2),
  // max (r2), the fp32 upcast (r2 w4), the scaling (r4 w4), the clamp (r4
  // w4) and the cast (r4 w1), plus the transposed copy the other GEMM reads
  // (r1 w1) = 35 B; Transformer Engine and torch.compile fuse the amax into
  // the cast and cast both layouts in one pass (read 2, write 1 + 1) = 4 B.
  // The weights are cast every micro-batch in eager torchao; the
  // Megatron stack's weight copies are cast once per step (TE's
  // is_first_microbatch caching). Block-scaled formats add their scales.
  if (is_low_precision(dt)) {
    const bool fused = t.fused_casts();
    // Eager modules project Q, K, V and gate, up separately.
    const bool split_projections = t.eager_activations();
    const double g8 = gemm_input_bytes(dt);
    const double per_elem = fused ? 2 + 2 * g8 : 4 + 2 + 6 + 8 + 8 + (4 + g8) + 2 * g8;
    // GEMM input elements per token: eager modules project Q, K, V and gate,
    // up separately, each casting the same input; fused QKV and FC1 once.
    // MoE: the MLP GEMMs see every token once per routed expert that
    // computes it, and once more in the shared experts.
    const double copies = m.is_moe() ? m.moe_topk * t.moe_routed_share() + (m.moe_shared_ffn > 0 ? 1 : 0) : 1;
    const double fm = mlp_width_per_token(m, t);
    const double in =
        (split_projections ? 3 * h : h) + h / tp + (m.gated_mlp && split_projections ? 2 * h : h) * copies + fm / tp;
    const double out = (h + 2 * kvd_local * kv_split) / tp + h + (m.gated_mlp ? 2 * fm : fm) / tp + h * copies;
    const double weights = layout.layer_params_per_gpu;
    double weight_casts = fused && t.stack == Stack::kMegatron ? 1.0 / std::max(1, layout.micro_batches) : 1.0;
    // Casting before an fp8 all-gather touches only this GPU's shard.
    if (t.fp8_all_gather) weight_casts /= std::max(1, layout.dp_group.size);
    lt.cast_fwd = (tokens * in * per_elem + weights * per_elem * weight_casts) / hbm;
    lt.cast_bwd = tokens * out * per_elem / hbm;
  }

  // FSDP2 (fully_shard) all-gathers each layer into a staging buffer and
  // copies every parameter out of it on the compute stream before the layer
  // runs (foreach_all_gather_copy_out: read + write, 16-bit): once for
  // forward and again for backward per micro-batch, or once per step where
  // pipelined FSDP keeps the stage gathered. FSDP1's flat parameters are
  // views of the gathered buffer: nothing to copy.
  const bool sharded_layers = p.sharding == Sharding::kZero3 || p.sharding == Sharding::kFsdpHybrid;
  if (sharded_layers && t.stack == Stack::kPytorch && !t.fsdp_flat_params) {
    const double gathered = t.fp8_all_gather ? 1 : 2;
    const double copy = layout.layer_params_per_gpu * 2 * gathered / hbm;
    const double per_mb = p.pp > 1 ? 1.0 / std::max(1, layout.micro_batches) : 1.0;
    lt.shard_copy_fwd = copy * per_mb;
    lt.shard_copy_bwd = p.pp > 1 || !t.reshard_after_forward ? 0 : copy;
  }

  // Weight gradients of every micro-batch are added into the gradient
  // buffer (Megatron's main_grad hook, autograd's .grad +=): read the new
  // 16-bit gradient, read and write the accumulator.
  const double g = t.grad_fp32 ? 4 : 2;
  lt.grad_accumulate = layout.layer_params_per_gpu * (2 + 2 * g) / hbm;

  switch (p.recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kFull:
      lt.recompute = lt.fwd();
      break;
    case Recompute::kSelective:
      // Flash attention already recomputes its scores in backward: nothing more.
      lt.recompute = t.attention == AttentionKernel::kUnfused ? core_fwd : 0;
      break;
    case Recompute::kOp:
      // Every second matmul in issue order (Q, K, V, projection, gate/FC1,
      // up, FC2) is not saved: K, the projection and the up GEMM (GeLU MLP:
      // K and the projection) run again, as do the memory-bound kernels.
      // Attention's output is saved, so its core does not.
      lt.recompute = linear(tokens, kvd_local, h, c, dt).fwd + proj.fwd +
                     (m.gated_mlp ? (m.is_moe() ? (fc1.fwd + shared1.fwd) / 2 : linear(tokens, f / tp, h, c, dt).fwd) : 0) +
                     lt.elementwise_fwd;
      break;
  }
  // Only some layers recomputed: the average layer pays that share.
  lt.recompute *= recomputed_share(layout, p);

  // Host launch: the host issues each kernel (dispatch + launch) while the
  // GPU runs earlier ones; the layer is host-bound when issuing takes
  // longer than the GPU work (launch_fwd / launch_bwd hold the issue time;
  // estimate_step counts only the excess).
  const KernelCount kernels = layer_kernels(m, t, p);
  lt.launch_fwd = kernels.fwd * launch_seconds(t);
  lt.launch_bwd = kernels.bwd * launch_seconds(t);

  // Activation offload: an offloaded layer's saved tensors go to host
  // memory while the next layer computes, and come back while the later one
  // runs backward; only what the copy takes beyond that compute shows.
  if (p.offload_layers > 0 && layout.layers_per_stage > 0) {
    const double copy = layer_activation_bytes(m, t, p) / c.gpu.host_link_Bps();
    const double share = std::min(1.0, p.offload_layers / layout.layers_per_stage);
    lt.offload_fwd = share * std::max(0.0, copy - lt.fwd());
    lt.offload_bwd = share * std::max(0.0, copy - lt.bwd());
  }
  return lt;
}

EndStageTime estimate_end_stages(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                 const ParallelConfig& p) {
  EndStageTime e;
  const double tp = std::max(1, p.tp), cp = std::max(1, p.cp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double tokens = static_cast<double>(std::max(1, p.micro_batch)) * m.seq / cp;
  const double h = m.hidden;
  const double hbm = c.gpu.hbm_achievable_Bps();
  const double g = t.grad_fp32 ? 4 : 2;
  const StageLayout layout = stage_layout(m, t, c, p);
  const CommGroup& group = layout.tp_group;
  const double act_bytes = tokens * h * 2;

  // Embedding (first stage): gather forward, scatter-add backward (16-bit
  // rows read and written). Megatron's vocab-parallel embedding gives each
  // rank the rows of its vocabulary slice and zeros elsewhere, then
  // all-reduces the output over the TP group (reduce-scatter with SP).
  const double embed_comm = sp ? reduce_scatter_seconds(act_bytes, group, c) : all_reduce_seconds(act_bytes, group, c);
  // PyTorch's dense embedding backward materialises the whole V/t × h
  // gradient each micro-batch (zero-fill, write 2 B) before the hook adds it
  // into the gradient buffer (read 2 B, read + write g); learned positions
  // (s × h, replicated) the same.
  const double embed_params = m.vocab / tp * h + (m.learned_positions ? static_cast<double>(m.seq) * h : 0);
  const double embed_acc = embed_params * (2 + 2 + 2 * g) / hbm;
  e.embed_fwd = 3 * tokens * h * 2 / hbm + embed_comm;
  e.embed_bwd = 3 * tokens * h * 2 / hbm + embed_acc;

  // Output layer + loss (last stage): logits GEMM [tokens × V/t], its two
  // gradients, and the vocab-parallel cross-entropy over fp32 logits, per
  // element: cast to fp32 (r2 w4), max (r4), subtract (r4 w4), exp (r4 w4),
  // sum (r4), normalise (r4 w4) = 38 B forward; gradient (r4 w4) and cast
  // back (r4 w2) = 14 B backward.
  LinearTime logits = linear(tokens, m.vocab / tp, h, c, t.dtype);
  const double logit_elems = tokens * (m.vocab / tp);
  // Megatron's vocab-parallel cross-entropy all-reduces three fp32 values
  // per token over the TP group (the maximum logit, the target's logit, the
  // sum of exponentials). The projection's input is copied into the TP
  // region: identity forward, all-reduce of its gradient backward; with SP
  // an all-gather forward and a reduce-scatter backward instead.
  double out_comm_fwd = 3 * all_reduce_seconds(tokens * 4, group, c);
  if (sp) out_comm_fwd += all_gather_seconds(act_bytes, group, c);
  const double out_comm_bwd =
      sp ? reduce_scatter_seconds(act_bytes, group, c) : all_reduce_seconds(act_bytes, group, c);
  // The projection's weight gradient (V/t × h) is added into the buffer
  // every micro-batch like a layer's (read 2 B, read + write g).
  const double out_acc = m.vocab / tp * h * (2 + 2 * g) / hbm;
  e.output_fwd = logits.fwd + logit_elems * 38 / hbm + out_comm_fwd;
  e.output_bwd = logits.bwd + logit_elems * 14 / hbm + out_comm_bwd + out_acc;
  e.tp_comm = embed_comm + out_comm_fwd + out_comm_bwd;
  e.grad_accumulate = embed_acc + out_acc;
  return e;
}

StepEstimate estimate_step(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                           const ParallelConfig& p) {
  StepEstimate e;
  const StageLayout layout = stage_layout(m, t, c, p);
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp);
  const double tp = std::max(1, p.tp), cp = std::max(1, p.cp);
  const int mb = layout.micro_batches;
  e.micro_batches = mb;
  e.layer = estimate_layer(m, t, c, p);
  const LayerTime& L = e.layer;
  const double lps = layout.layers_per_stage;
  const double tokens = static_cast<double>(std::max(1, p.micro_batch)) * m.seq / cp;
  const Dtype dt = t.dtype;
  const double hbm = c.gpu.hbm_achievable_Bps();

  const EndStageTime ends = estimate_end_stages(m, t, c, p);
  const double embed = ends.embed_fwd + ends.embed_bwd;
  const double out_fwd = ends.output_fwd, out_bwd = ends.output_bwd;

  // Stage times per micro-batch (forward + backward); uneven stages differ in layers.
  std::vector<double> stage(pp, layout.middle_stage_layers * L.total());
  stage.front() = layout.first_stage_layers * L.total() + embed;
  stage.back() = (pp == 1 ? stage.front() : layout.last_stage_layers * L.total()) + out_fwd + out_bwd;
  double t_max = *std::max_element(stage.begin(), stage.end());
  double t_sum = 0;
  for (double s : stage) t_sum += s;

  // Pipeline point-to-point: activations forward and gradients backward at
  // every chunk boundary (v per micro-batch with interleaving), each cut
  // into tp pieces (Megatron's scatter/gather) then all-gathered in the node.
  double p2p_one = 0;
  if (pp > 1) {
    const double piece = tokens * m.hidden * 2 / tp;
    p2p_one =
        p2p_seconds(piece, layout.pp_inter_node, c) + all_gather_seconds(tokens * m.hidden * 2, layout.tp_group, c);
  }
  e.pp_p2p = pp > 1 ? 2 * p2p_one * (static_cast<double>(vpp) * mb + (pp - 1)) : 0;

  // 1F1B: the slowest stage sets the steady-state rate; filling and draining
  // adds the other stages once (÷ v when interleaved).
  const double fill_drain = (t_sum - t_max) / vpp;
  const double pipeline = mb * t_max + fill_drain + e.pp_p2p;
  e.bubble = fill_drain;
  e.bubble_fraction = pipeline > 0 ? fill_drain / pipeline : 0;

  const double per_step_layers = mb * lps;
  // Everything of the layers' time not listed on its own below: GEMMs,
  // memory-bound kernels, casts, FSDP copies, gradient accumulation.
  e.compute_fwd = per_step_layers * (L.fwd() - L.attention_fwd - L.tp_comm_fwd - L.ep_comm_fwd - L.offload_fwd);
  e.compute_bwd = per_step_layers * (L.bwd() - L.attention_bwd - L.tp_comm_bwd - L.recompute - L.cp_comm -
                                     L.ep_comm_bwd - L.offload_bwd);
  e.attention = per_step_layers * (L.attention_fwd + L.attention_bwd);
  e.recompute = per_step_layers * L.recompute;
  e.tp_comm = per_step_layers * (L.tp_comm_fwd + L.tp_comm_bwd);
  e.ep_comm = per_step_layers * (L.ep_comm_fwd + L.ep_comm_bwd);
  e.offload = per_step_layers * (L.offload_fwd + L.offload_bwd);
  // Host-bound layers: the GPU waits for the kernels it has not been given yet.
  e.launch = per_step_layers * (std::max(0.0, L.launch_fwd - L.fwd()) + std::max(0.0, L.launch_bwd - L.bwd()));
  e.cp_comm = per_step_layers * L.cp_comm;
  e.embedding_and_loss = mb * ((pp == 1 ? embed : 0) + out_fwd + out_bwd);

  // Data parallel. The most loaded stage's gradients (16-bit or fp32).
  const double params = std::max(layout.first_stage_params, layout.last_stage_params);
  const double grad_bytes = t.grad_fp32 ? 4 : 2;
  const double gbytes = params * grad_bytes;
  const double wbytes = params * 2;
  double dp_comm = 0, dp_exposed = 0;
  const double bwd_last = lps * L.bwd();
  switch (p.sharding) {
    case Sharding::kDdp:
    case Sharding::kZero1:
    case Sharding::kZero2: {
      // All-reduce, or reduce-scatter + all-gather of the updated weights
      // (ZeRO-1/2, Megatron's distributed optimizer): the same ring volume.
      dp_comm = p.sharding == Sharding::kDdp ? all_reduce_seconds(gbytes, layout.dp_group, c)
                                             : reduce_scatter_seconds(gbytes, layout.dp_group, c) +
                                                   all_gather_seconds(wbytes, layout.dp_group, c);
      // Overlap: buckets reduce while the last micro-batch's backward runs;
      // the last bucket (25 MB) is always exposed.
      double tail = gbytes > 0 ? dp_comm * std::min(1.0, 25e6 / gbytes) : 0;
      dp_exposed = t.overlap_dp_comm ? std::max(0.0, dp_comm - bwd_last) + tail : dp_comm;
      break;
    }
    case Sharding::kZero3:
    case Sharding::kFsdpHybrid: {
      // Per micro-batch, layer by layer (FSDP / ZeRO-3): each layer's weights
      // are all-gathered for forward and again for backward, its gradients
      // reduce-scattered after its backward. Prefetching issues the next
      // layer's gather while this layer computes, so per layer only what
      // exceeds that layer's compute shows — except at the ends: the first
      // layer's forward gather has nothing before it to hide behind, and the
      // last reduce-scatter of backward (the first layer's) nothing after it.
      // The PyTorch stack reduces in fp32 (torchtitan's and llm-foundry's
      // default reduce dtype) and gathers 16-bit copies.
      CommGroup shard = layout.dp_group;
      if (p.sharding == Sharding::kFsdpHybrid)
        shard = {std::max(1, std::min(shard.size, shard.per_node)), std::max(1, std::min(shard.size, shard.per_node))};
      const double reduce_bytes = t.stack == Stack::kPytorch ? 4 : grad_bytes;
      const double layer = layout.layer_params_per_gpu;
      const double gather_bytes = t.fp8_all_gather ? 1 : 2;  // fp8 all-gather: 1 byte per parameter
      const double ag = all_gather_seconds(layer * gather_bytes, shard, c),
                   rs = reduce_scatter_seconds(layer * reduce_bytes, shard, c);
      // The embedding and output layer: gathered once per pass, reduced once.
      const double ends_params = std::max(0.0, params - lps * layer);
      const double ag_ends = all_gather_seconds(ends_params * 2, shard, c);
      const double rs_ends = reduce_scatter_seconds(ends_params * reduce_bytes, shard, c);
      double across = 0;
      if (p.sharding == Sharding::kFsdpHybrid && layout.dp_group.size > shard.size) {
        CommGroup replicas{layout.dp_group.size / shard.size, 1};
        across = all_reduce_seconds(params * reduce_bytes / shard.size, replicas, c);
      }
      const double layers_after_first = std::max(0.0, lps - 1);
      if (t.stack == Stack::kPytorch && pp > 1) {
        // Pipelined FSDP (memory_model.cpp): the stage is gathered once in
        // the first micro-batch's forward and reduced once after the last
        // one's backward.
        dp_comm = lps * (ag + rs) + ag_ends + rs_ends + across;
        const double exposed = ag_ends + ag + layers_after_first * std::max(0.0, ag - L.fwd()) +
                               layers_after_first * std::max(0.0, rs - L.bwd()) + rs + rs_ends;
        dp_exposed = t.overlap_dp_comm ? exposed + std::max(0.0, across - lps * L.bwd()) : dp_comm;
        break;
      }
      // Without resharding after forward the layers stay gathered into
      // backward: one gather per micro-batch.
      const double ag_bwd = t.reshard_after_forward ? ag : 0;
      const double per_mb = lps * (ag + ag_bwd + rs) + 2 * ag_ends + rs_ends;
      dp_comm = mb * per_mb + across;
      const double exposed_mb = ag_ends + ag + layers_after_first * std::max(0.0, ag - L.fwd()) +
                                layers_after_first * std::max(0.0, ag_bwd + rs - L.bwd()) + rs + rs_ends;
      dp_exposed = t.overlap_dp_comm ? mb * exposed_mb + std::max(0.0, across - lps * L.bwd()) : dp_comm;
      break;
    }
  }
  // Tied embeddings across pipeline ends: their gradient is all-reduced
  // between the first and last stage after backward.
  if (m.tied_embeddings && pp > 1) {
    double emb = static_cast<double>(m.vocab) * m.hidden / tp * (t.grad_fp32 ? 4 : 2);
    double x = all_reduce_seconds(emb, {2, 1}, c);
    dp_comm += x;
    dp_exposed += x;
  }
  e.dp_comm_total = dp_comm;
  e.dp_comm_exposed = dp_exposed;

  // Optimizer: streaming passes over this GPU's shard, as a mixed-precision
  // framework runs them (Megatron / Apex): 16-bit gradients are first copied
  // into fp32 (read 2 + write 4); fp16 only: unscale and check for inf/nan
  // (read + write g); gradient norm (read g); clipping scale (read + write g);
  // the update (Adam: read weight, m, v, grad, write weight, m, v = 24 + g;
  // SGD with momentum: 16 + g); the copy back to 16-bit weights (read 4 +
  // write 2); zeroing the gradients (write g). Offloaded: gradients down and
  // weights up over PCIe (≈ 25 GB/s) plus the same passes at host DRAM speed (≈ 100 GB/s).
  const bool sharded_opt = p.sharding != Sharding::kDdp;
  const int shards = std::max(1, p.dp) * std::max(1, p.cp);
  const double opt_params = sharded_opt ? params / shards : params;
  e.optimizer = p.cpu_offload ? opt_params * (grad_bytes + 2) / c.gpu.host_link_Bps() + opt_params * optimizer_pass_bytes(t) / 100e9
                              : opt_params * optimizer_pass_bytes(t) / hbm;

  e.total = pipeline + e.launch + dp_exposed + e.optimizer;

  // FLOPs: per layer forward × 3 (forward + two backward GEMMs), logits 6·s·h·V per sequence.
  const double B = std::max(0, t.global_batch);
  e.layer_flops_fwd = layer_forward_flops(m, std::max(1, p.micro_batch));
  const double per_seq_layer = layer_forward_flops(m, 1);
  e.model_flops = B * (3 * per_seq_layer * m.layers + 6.0 * m.seq * m.hidden * m.vocab);
  double extra = 0;
  const double share = recomputed_share(layout, p);
  if (p.recompute == Recompute::kFull)
    extra = per_seq_layer * m.layers * share;
  else if (p.recompute == Recompute::kSelective && t.attention == AttentionKernel::kUnfused)
    extra = 4.0 * m.seq * m.seq * m.hidden * m.layers * share;
  else if (p.recompute == Recompute::kOp)  // the K, projection and up GEMMs again (layer_forward_flops' terms)
    extra = 2.0 * m.seq * m.hidden *
            (static_cast<double>(m.kv_heads) * m.head_dim() + m.hidden + (m.gated_mlp ? m.ffn_hidden : 0)) * m.layers *
            share;
  e.hardware_flops = e.model_flops + B * extra;
  const double gpus = std::max(1, p.gpus());
  if (e.total > 0) {
    e.model_tflops_per_gpu = e.model_flops / e.total / gpus / 1e12;
    e.mfu = e.model_tflops_per_gpu / c.gpu.peak_tflops(dt);
  }
  return e;
}

}  // namespace stepscope::model
