#include "model/memory_model.h"

#include <algorithm>

#include "model/stage_layout.h"

namespace stepscope::model {
namespace {

constexpr double kBucketBytes = 2 * 25e6;  // PyTorch DDP: bucket_cap_mb = 25, two buckets in flight

double weight_bytes(const TrainingSettings&) { return 2; }  // 16-bit weights (fp8 keeps 16-bit copies too)
double grad_bytes(const TrainingSettings& t) { return t.grad_fp32 ? 4 : 2; }

// Saved tensors of the output layer and loss on the last stage, one
// micro-batch (Korthikanti et al. 2022, Section 4.3): final norm and
// projection inputs (4sbh, /t with SP) and the fp32 logits for the
// cross-entropy (4sbv/t).
double output_activation_bytes(const ModelSpec& m, const ParallelConfig& p, double scale) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq / std::max(1, p.cp);
  const double tp = std::max(1, p.tp);
  const double rep = (p.sequence_parallel && p.tp > 1) ? 1 / tp : 1;
  return tokens * (4.0 * m.hidden * rep * scale + 4.0 * m.vocab / tp);
}

int shard_count(const ModelSpec&, const ClusterSpec& c, const ParallelConfig& p) {
  const int group = std::max(1, p.dp) * std::max(1, p.cp);
  if (p.sharding == Sharding::kFsdpHybrid) return std::max(1, std::min(group, c.gpu.gpus_per_node / std::max(1, p.tp)));
  return group;
}

}  // namespace

double optimizer_bytes_per_param(const TrainingSettings& t) {
  // fp32 master weights (4) + Adam's two fp32 moments (8), or SGD's one momentum (4).
  return t.optimizer == Optimizer::kSgd ? 8 : 12;
}

double layer_activation_bytes(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq / std::max(1, p.cp);
  const double tp = std::max(1, p.tp);
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double rep = sp ? 1 / tp : 1;             // tensors outside the TP region: replicated unless SP
  const double scale = t.activation_bits / 16.0;  // compressed saved activations (masks stay 1 byte)
  const double h = m.hidden, f = m.ffn_hidden, a = m.heads;
  const double kv_split = std::min<double>(tp, m.kv_heads);  // K/V heads replicate when kv_heads < tp
  const double kvd = static_cast<double>(m.kv_heads) * m.head_dim();
  if (p.recompute == Recompute::kFull) return tokens * 2 * h * rep * scale;  // the layer input only
  // Outside the TP region: inputs of the two norms, of the QKV and first MLP GEMMs (2h each).
  double replicated = 8 * h * scale + (m.dropout ? 2 * h : 0);  // + the two 1-byte dropout masks
  // Inside: Q, K, V, the projection input, the MLP internals.
  double split = (2 * h + 2 * 2 * kvd * tp / kv_split + 2 * h) / tp * scale;
  split += (m.gated_mlp ? 6 * f : 4 * f) / tp * scale;  // SwiGLU input (2f wide) + FC2 input; or GeLU in + FC2 in
  double per_token = replicated * rep + split;
  const double s_keys = m.seq;
  if (t.attention == AttentionKernel::kUnfused && p.recompute == Recompute::kNone) {
    // Softmax output (2), dropout mask (1) and dropout output (2) bytes per score: 5as per token.
    double per_score = m.dropout ? 2 * scale + 1 + 2 * scale : 2 * scale;
    per_token += per_score * a * s_keys / tp;
  } else if (t.attention == AttentionKernel::kFlash) {
    per_token += 4 * a / tp;  // fp32 log-sum-exp per head
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

  // 1F1B: stage i keeps (pp - i) micro-batches in flight, the first stage pp;
  // with fewer micro-batches than stages, only those. Interleaving raises the
  // first stage's share by 1 + (p-1)/(p·v) (Korthikanti et al. Section 4.2.3).
  const double in_flight = pp == 1 ? 1 : std::min(pp, layout.micro_batches);
  const double interleave = vpp > 1 ? 1 + (pp - 1.0) / (pp * vpp) : 1;

  {
    MemoryEstimate e;
    e.stage = stage;
    const bool first = stage == 0, last = stage == pp - 1;
    const double params = first ? layout.first_stage_params : layout.last_stage_params;
    e.params_per_gpu = params;
    const double w = weight_bytes(t) * params, g = grad_bytes(t) * params;
    const double o = optimizer_bytes_per_param(t) * params;
    switch (p.sharding) {
      case Sharding::kDdp:
        e.weights = w, e.gradients = g, e.optimizer = o;
        break;
      case Sharding::kZero1:
        e.weights = w, e.gradients = g, e.optimizer = o / shards;
        break;
      case Sharding::kZero2:
        e.weights = w, e.gradients = g / shards, e.optimizer = o / shards;
        break;
      case Sharding::kZero3:
      case Sharding::kFsdpHybrid:
        e.weights = w / shards, e.gradients = g / shards, e.optimizer = o / shards;
        break;
    }
    if (p.cpu_offload) e.optimizer = 0;

    const double stage_in_flight = first ? in_flight : 1;
    e.activations = per_layer * layout.layers_per_stage * stage_in_flight * (first ? interleave : 1);
    if (first && m.dropout) e.activations += tokens * m.hidden * rep * stage_in_flight;  // embedding dropout mask
    if (last) e.activations += output_activation_bytes(m, p, scale);

    // Transient: the gradient of the fp32 logits on the last stage; the one
    // layer being recomputed (full) or its attention scores (selective); the
    // gathered weights and gradients of two layers under ZeRO-3 (current +
    // prefetched); the gradient buckets being reduced otherwise.
    double temp = last ? tokens * 4.0 * m.vocab / std::max(1, p.tp) : 0;
    if (p.recompute != Recompute::kNone) {
      ParallelConfig none = p;
      none.recompute = Recompute::kNone;
      double full_layer = layer_activation_bytes(m, t, none);
      temp += p.recompute == Recompute::kFull ? full_layer : full_layer - per_layer;
    }
    if (p.sharding == Sharding::kZero3 || p.sharding == Sharding::kFsdpHybrid)
      temp += 2 * layout.layer_params_per_gpu * (weight_bytes(t) + grad_bytes(t));
    else
      temp += std::min(kBucketBytes, g);
    e.temporary = temp;
    e.total = e.weights + e.gradients + e.optimizer + e.activations + e.temporary;
    e.capacity = c.gpu.memory_gb * 1e9;
    e.headroom = e.capacity - e.total;
    e.fits = e.headroom >= 0;
    return e;
  }
}

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                               const ParallelConfig& p) {
  // Only the first stage (most activations in flight) and the last (output
  // layer, logits) can be the most loaded; the middle ones are below both.
  const MemoryEstimate first = estimate_stage_memory(m, t, c, p, 0);
  const int last_stage = std::max(1, p.pp) - 1;
  if (last_stage == 0) return first;
  const MemoryEstimate last = estimate_stage_memory(m, t, c, p, last_stage);
  return last.total > first.total ? last : first;
}

}  // namespace stepscope::model
