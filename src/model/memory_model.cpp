#include "model/memory_model.h"

#include <algorithm>

#include "model/stage_layout.h"

namespace stepscope::model {
namespace {

constexpr double kBucketBytes = 2 * 25e6;  // PyTorch DDP: bucket_cap_mb = 25, two buckets in flight
constexpr double kGiB = 1073741824.0;

// Megatron stack: 16-bit weights (fp8 recipes keep 16-bit copies too) and a
// gradient buffer of 16 or 32 bits. PyTorch stack: fp32 parameters and fp32
// gradients (FSDP2 casts the reduced gradient to the parameter's dtype).
double weight_bytes(const TrainingSettings& t) { return t.stack == Stack::kPytorch ? 4 : 2; }
double grad_bytes(const TrainingSettings& t) { return t.stack == Stack::kPytorch || t.grad_fp32 ? 4 : 2; }

// Saved tensors of the output layer and loss on the last stage, one
// micro-batch. Megatron (Korthikanti et al. 2022, Section 4.3): final norm
// and projection inputs (4sbh, /t with SP) and the fp32 logits for the
// cross-entropy (4sbv/t). Eager PyTorch: the final RMSNorm saves its fp32
// upcast (4h) and 16-bit normalised input (2h), the output projection its
// input (2h), and log_softmax its fp32 output (4v) — the logits are cast to
// fp32 before the loss (Hugging Face, torchtitan).
double output_activation_bytes(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p,
                               double scale) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq / std::max(1, p.cp);
  const double tp = std::max(1, p.tp);
  const double rep = (p.sequence_parallel && p.tp > 1) ? 1 / tp : 1;
  const double norm = t.eager_activations() ? 8.0 : 4.0 * scale;
  return tokens * (norm * m.hidden * rep + 4.0 * m.vocab / tp);
}

// Transient bytes of the loss backward on the last stage: the gradient of
// the fp32 logits (Megatron's fused cross-entropy, 4v per token); eager
// PyTorch also holds the gradient of log_softmax's output (4v more), measured
// as 8 B per token × vocab above the end of forward on the H200
// (workloads/plan_memory/h200_2026-12-04).
double loss_backward_bytes(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq / std::max(1, p.cp);
  return tokens * (t.stack == Stack::kPytorch ? 8.0 : 4.0) * m.vocab / std::max(1, p.tp);
}

int shard_count(const ModelSpec&, const ClusterSpec& c, const ParallelConfig& p) {
  const int group = std::max(1, p.dp) * std::max(1, p.cp);
  if (p.sharding == Sharding::kFsdpHybrid) return std::max(1, std::min(group, c.gpu.gpus_per_node / std::max(1, p.tp)));
  return group;
}

bool shards_weights(const ParallelConfig& p) {
  return p.sharding == Sharding::kZero3 || p.sharding == Sharding::kFsdpHybrid;
}

// Model states of one GPU: persistent weights, gradients (when they exist)
// and optimizer states under the sharding scheme.
struct States {
  double weights = 0, gradients = 0, optimizer = 0;
};

States model_states(const TrainingSettings& t, const ParallelConfig& p, double params, int shards) {
  States s;
  const double w = weight_bytes(t) * params, g = grad_bytes(t) * params;
  const double o = optimizer_bytes_per_param(t) * params;
  switch (p.sharding) {
    case Sharding::kDdp:
      s = {w, g, o};
      break;
    case Sharding::kZero1:
      s = {w, g, o / shards};
      break;
    case Sharding::kZero2:
      s = {w, g / shards, o / shards};
      break;
    case Sharding::kZero3:
    case Sharding::kFsdpHybrid:
      s = {w / shards, g / shards, o / shards};
      break;
  }
  if (p.cpu_offload) {
    s.optimizer = 0;
    // FSDP2's CPUOffloadPolicy keeps the sharded fp32 parameters and their
    // gradients in host memory too; Megatron / DeepSpeed offload the optimizer.
    if (t.stack == Stack::kPytorch && shards_weights(p)) s.weights = s.gradients = 0;
  }
  return s;
}

void finish(MemoryEstimate& e, const ClusterSpec& c) {
  e.reserve = e.total * MemoryConstants::kAllocatorReserve;
  e.context = MemoryConstants::kContextBytes;
  e.capacity = c.gpu.memory_gb * kGiB * MemoryConstants::kUsableFraction;
  // Near the limit the allocator frees its cache and retries before it
  // reports an out-of-memory, so what it reserves never exceeds the device.
  e.reserved = std::min(e.total + e.reserve, std::max(e.total, e.capacity - e.context));
  e.reserve = e.reserved - e.total;
  e.headroom = e.capacity - e.reserved - e.context;
  e.fits = e.headroom >= 0;
}

}  // namespace

std::string_view to_string(MemoryPeak p) {
  switch (p) {
    case MemoryPeak::kSteady:
      return "steady";
    case MemoryPeak::kBackwardStart:
      return "start of backward";
    case MemoryPeak::kBackwardEnd:
      return "end of backward";
    case MemoryPeak::kOptimizerStep:
      return "optimizer step";
  }
  return "steady";
}

double optimizer_bytes_per_param(const TrainingSettings& t) {
  // Adam's two fp32 moments (8) or SGD's one momentum (4), + the fp32 master
  // weights (4) where the weights themselves are 16-bit.
  const double moments = t.optimizer == Optimizer::kSgd ? 4 : 8;
  return t.stack == Stack::kPytorch ? moments : moments + 4;
}

double mlp_width_per_token(const ModelSpec& m, const TrainingSettings& t) {
  if (!m.is_moe()) return m.ffn_hidden;
  return static_cast<double>(m.expert_ffn()) * m.moe_topk * t.moe_routed_share() + m.moe_shared_ffn;
}

double layer_activation_bytes(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq / std::max(1, p.cp);
  const double tp = std::max(1, p.tp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double rep = sp ? 1 / tp : 1;             // tensors outside the TP region: replicated unless SP
  const double scale = t.activation_bits / 16.0;  // compressed saved activations (masks stay 1 byte)
  const double h = m.hidden, a = m.heads;
  const double f = mlp_width_per_token(m, t);
  // MoE routing per token: the router's fp32 probabilities (4E), the
  // permuted copies sent to the experts and their outputs before the
  // weighted combine (2h each per routed expert that computes it).
  const double routing = m.is_moe() ? 4.0 * m.moe_experts + 2 * 2.0 * h * m.moe_topk * t.moe_routed_share() : 0;
  const double kv_split = std::min<double>(tp, m.kv_heads);  // K/V heads replicate when kv_heads < tp
  const double kvd = static_cast<double>(m.kv_heads) * m.head_dim();
  const double kv_local = 2 * kvd / kv_split;     // one of K or V, 16-bit, per GPU
  const double lse = t.attention != AttentionKernel::kUnfused ? 4 * a / tp : 0;  // fp32 log-sum-exp per head
  if (p.recompute == Recompute::kFull) return tokens * 2 * h * rep * scale;  // the layer input only
  if (p.recompute == Recompute::kOp) {
    // The layer input, attention's output (+ log-sum-exp) and every second
    // matmul's output: Q, V, gate (or FC1), and FC2, whose row-parallel
    // output is the full h wide before its reduction.
    const double split = 2 * h / tp + kv_local + 2 * f / tp + 2 * h / tp;
    return tokens * ((2 * h * rep + 2 * h) * scale + split * scale + lse + routing * scale);
  }
  double per_token = 0;
  if (t.eager_activations()) {
    // Eager modules: each RMSNorm saves its fp32 upcast (4h) and the
    // normalised 16-bit input of its weight multiply (2h); the QKV and MLP
    // GEMMs their 16-bit input; attention Q, K, V and its output; the output
    // projection its own (contiguous) input; SwiGLU the gate and up outputs,
    // SiLU's output and the product (8f) — or GeLU's input and output (4f).
    const double replicated = 2 * (4 * h + 2 * h) + 2 * h + 2 * h + (m.dropout ? 2 * h : 0);
    double split = (2 * h + 2 * kv_local * tp + 2 * h + 2 * h) / tp;
    split += (m.gated_mlp ? 8 * f : 4 * f) / tp;
    per_token = replicated * rep * scale + split * scale + lse + routing * scale;
  } else {
    // Outside the TP region: inputs of the two norms, of the QKV and first MLP GEMMs (2h each).
    const double replicated = 8 * h * scale + (m.dropout ? 2 * h : 0);  // + the two 1-byte dropout masks
    // Inside: Q, K, V, the projection input, the MLP internals.
    double split = (2 * h + 2 * kv_local * tp + 2 * h) / tp * scale;
    split += (m.gated_mlp ? 6 * f : 4 * f) / tp * scale;  // SwiGLU input (2f wide) + FC2 input; or GeLU in + FC2 in
    per_token = replicated * rep + split + lse + routing * scale;
  }
  if (t.attention == AttentionKernel::kUnfused && p.recompute == Recompute::kNone) {
    // Softmax output (2), dropout mask (1) and dropout output (2) bytes per score: 5as per token.
    const double per_score = m.dropout ? 2 * scale + 1 + 2 * scale : 2 * scale;
    per_token += per_score * a * m.seq / tp;
  }
  return tokens * per_token;
}

MemoryEstimate estimate_stage_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                     const ParallelConfig& p, int stage) {
  const StageLayout layout = stage_layout(m, t, c, p);
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp);
  const int shards = shard_count(m, c, p);
  const double scale = t.activation_bits / 16.0;
  const double per_layer = layer_activation_bytes(m, t, p);
  const double tokens = static_cast<double>(p.micro_batch) * m.seq / std::max(1, p.cp);
  const double rep = (p.sequence_parallel && p.tp > 1) ? 1.0 / p.tp : 1;
  const double tp = std::max(1, p.tp);

  // 1F1B: stage i keeps (pp - i) micro-batches in flight, the first stage pp;
  // with fewer micro-batches than stages, only those. Interleaving raises the
  // first stage's share by 1 + (p-1)/(p·v) (Korthikanti et al. Section 4.2.3).
  const double in_flight = pp == 1 ? 1 : std::min(pp, layout.micro_batches);
  const double interleave = vpp > 1 ? 1 + (pp - 1.0) / (pp * vpp) : 1;

  MemoryEstimate e;
  e.stage = stage;
  const bool first = stage == 0, last = stage == pp - 1;
  const double stage_layers =
      first ? layout.first_stage_layers : last ? layout.last_stage_layers : layout.middle_stage_layers;
  const double params = first  ? layout.first_stage_params
                        : last ? layout.last_stage_params
                               : stage_layers * layout.layer_params_per_gpu;
  e.params_per_gpu = params;
  // Experts are replicated over dp × cp / ep ranks, so sharding splits them that many ways.
  const double expert_params = stage_layers * layout.layer_expert_params_per_gpu;
  const States dense = model_states(t, p, params - expert_params, shards);
  const States experts = model_states(t, p, expert_params, std::max(1, std::min(layout.expert_shards, shards)));
  const States s{dense.weights + experts.weights, dense.gradients + experts.gradients,
                 dense.optimizer + experts.optimizer};

  const double stage_in_flight = first ? in_flight : std::min<double>(pp - stage, in_flight);
  // With recompute_layers, that many layers of the stage recompute; the others keep everything.
  ParallelConfig kept_all = p;
  kept_all.recompute = Recompute::kNone;
  const double recomputed = p.recompute_layers > 0 ? std::min<double>(p.recompute_layers, stage_layers) : stage_layers;
  const double stage_bytes = per_layer * recomputed +
                             (recomputed < stage_layers ? layer_activation_bytes(m, t, kept_all) * (stage_layers - recomputed) : 0);
  double activations = stage_bytes * stage_in_flight * (first ? interleave : 1);
  // Offloaded layers keep their saved tensors in host memory; two layers'
  // worth stay on the GPU, the one being copied out and the one copied back.
  if (p.offload_layers > 0 && stage_layers > 0) {
    const double offloaded = std::min<double>(p.offload_layers, stage_layers);
    activations -= stage_bytes * offloaded / stage_layers * stage_in_flight * (first ? interleave : 1);
    activations += std::min(2.0, offloaded) * per_layer;
  }
  if (first && m.dropout) activations += tokens * m.hidden * rep * stage_in_flight;  // embedding dropout mask
  if (last) activations += output_activation_bytes(m, t, p, scale);
  e.activations = activations;

  // The layer being recomputed (full) or the part of it that was not saved.
  double recompute = 0;
  if (p.recompute != Recompute::kNone) {
    ParallelConfig none = p;
    none.recompute = Recompute::kNone;
    const double full_layer = layer_activation_bytes(m, t, none);
    recompute = p.recompute == Recompute::kFull ? full_layer : full_layer - per_layer;
  }
  const double loss = last ? loss_backward_bytes(m, t, p) : 0;

  if (t.stack == Stack::kMegatron) {
    // Gradient buffers persist across steps: every part is live at once.
    // Transient: the logits' gradient, the recomputed layer, the gathered
    // weights and gradients of two layers under ZeRO-3 (current +
    // prefetched), or the gradient buckets being reduced.
    double temp = loss + recompute;
    if (shards_weights(p))
      temp += 2 * layout.layer_params_per_gpu * (weight_bytes(t) + grad_bytes(t));
    else
      temp += std::min(kBucketBytes, s.gradients);
    e.weights = s.weights, e.gradients = s.gradients, e.optimizer = s.optimizer, e.temporary = temp;
    e.total = e.weights + e.gradients + e.optimizer + e.activations + e.temporary;
    e.peak = MemoryPeak::kSteady;
    finish(e, c);
    return e;
  }

  // PyTorch stack. 16-bit compute copies of the weights: under FSDP the
  // first stage's embedding and the last stage's output layer stay gathered
  // from forward into backward (FSDP2's root module), and two layers are
  // gathered at a time (the current one and the prefetched next); without
  // weight sharding autocast's 16-bit casts of every weight are saved for
  // backward. With pipelining, FSDP keeps the whole stage gathered
  // (torchtitan: reshard_after_forward off when PP is on, to avoid a gather
  // per micro-batch) and torch.distributed.pipelining turns gradient sync
  // off until the last micro-batch, so the stage's unsharded 16-bit
  // gradients accumulate meanwhile.
  const bool stage_gathered = shards_weights(p) && pp > 1;
  // reshard_after_forward off: every layer stays gathered from its forward
  // to its backward, so the start of backward holds them all; gradients
  // are still reduce-scattered layer by layer.
  const bool kept_gathered = shards_weights(p) && pp == 1 && !t.reshard_after_forward;
  const double root_params =
      ((first ? m.embedding_params() : 0) + (last ? m.output_params() : 0)) / tp;
  const double gathered_bytes = t.fp8_all_gather ? 1 : 2;  // fp8 all-gather: the gathered copies are fp8
  const double copies = stage_gathered || kept_gathered ? gathered_bytes * params
                        : shards_weights(p)               ? 2 * root_params
                                                          : 2 * params;
  const double gathered =
      shards_weights(p) && !stage_gathered && !kept_gathered ? 2 * gathered_bytes * layout.layer_params_per_gpu : 0;
  // DDP's reducer holds a gradient bucket for every parameter (gradient_as_bucket_view off by default).
  const double buckets = p.sharding == Sharding::kDdp ? s.gradients : 0;
  // Gradients from earlier micro-batches are live while the next one runs.
  const double accumulated = layout.micro_batches > 1 ? (stage_gathered ? 2 * params : s.gradients) : 0;
  const double end_copies = stage_gathered ? gathered_bytes * params : shards_weights(p) ? 2 * root_params : 0;
  const double foreach_temp =
      t.foreach_optimizer() && s.optimizer > 0 ? s.optimizer / optimizer_bytes_per_param(t) * 4 : 0;

  struct Phase {
    MemoryPeak peak;
    double weights, gradients, activations, temporary;
  };
  const Phase phases[] = {
      // Start of backward: every activation, the loss gradients (last stage)
      // or the first recomputed layer, whichever is larger.
      {MemoryPeak::kBackwardStart, s.weights + copies, accumulated, activations,
       gathered + buckets + std::max(loss, recompute)},
      // End of backward: every gradient, the root's 16-bit weights and their 16-bit gradients.
      {MemoryPeak::kBackwardEnd, s.weights + end_copies, s.gradients, 0, buckets + end_copies},
      // Optimizer step: a foreach implementation's fp32 temporary per parameter.
      {MemoryPeak::kOptimizerStep, s.weights, s.gradients, 0, buckets + foreach_temp},
  };
  double best = -1;
  for (const Phase& ph : phases) {
    const double total = ph.weights + ph.gradients + s.optimizer + ph.activations + ph.temporary;
    if (total <= best) continue;
    best = total;
    e.peak = ph.peak;
    e.weights = ph.weights, e.gradients = ph.gradients, e.optimizer = s.optimizer;
    e.activations = ph.activations, e.temporary = ph.temporary, e.total = total;
  }
  finish(e, c);
  return e;
}

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                               const ParallelConfig& p) {
  // Only the first stage (most activations in flight) and the last (output
  // layer, logits) can be the most loaded when stages are even; with a
  // shorter first stage the second (pp − 1 micro-batches in flight, all of
  // its layers) can be.
  MemoryEstimate most = estimate_stage_memory(m, t, c, p, 0);
  const int last_stage = std::max(1, p.pp) - 1;
  if (last_stage == 0) return most;
  for (int stage : {1, last_stage}) {
    if (stage == 1 && last_stage < 2) continue;
    const MemoryEstimate e = estimate_stage_memory(m, t, c, p, stage);
    if (e.total > most.total) most = e;
  }
  return most;
}

}  // namespace stepscope::model
