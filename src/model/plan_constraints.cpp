#include "model/plan_constraints.h"

#include <fmt/core.h>

#include <cstdint>
#include "model/stage_layout.h"

namespace stepscope::model {
namespace {
constexpr int kMaxSize = LayoutLimits::kSize;
constexpr int64_t kMaxGpus = LayoutLimits::kGpus;
}  // namespace

std::vector<std::string> check_constraints(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                           const ParallelConfig& p, bool check_gpu_count) {
  std::vector<std::string> out;
  if (std::string bad = validate_model(m); !bad.empty()) out.push_back("model: " + bad);
  for (auto [name, v] : {std::pair{"tp", p.tp},
                         {"pp", p.pp},
                         {"dp", p.dp},
                         {"cp", p.cp},
                         {"vpp", p.vpp},
                         {"micro-batch", p.micro_batch}})
    if (v < 1)
      out.push_back(fmt::format("{} ({}) must be at least 1", name, v));
    else if (v > kMaxSize)
      out.push_back(fmt::format("{} ({}) must be at most {}", name, v, kMaxSize));
  if (!out.empty()) return out;
  // Products below are taken in int: refuse layouts whose products could overflow it.
  const double gpus = static_cast<double>(p.tp) * p.pp * p.dp * p.cp;  // exact: each factor ≤ 2^20
  if (gpus > kMaxGpus || static_cast<double>(p.dp) * p.micro_batch > kMaxGpus ||
      static_cast<double>(p.pp) * p.vpp > kMaxGpus) {
    out.push_back(fmt::format("tp × pp × dp × cp ({:.0f}), dp × micro-batch or pp × vpp exceeds {}", gpus, kMaxGpus));
    return out;
  }
  if (t.global_batch < 1) out.push_back(fmt::format("global batch ({}) must be at least 1", t.global_batch));
  if (t.global_batch > LayoutLimits::kGlobalBatch)
    out.push_back(fmt::format("global batch ({}) must be at most {}", t.global_batch, LayoutLimits::kGlobalBatch));
  if (t.activation_bits != 16 && t.activation_bits != 8 && t.activation_bits != 4)
    out.push_back(fmt::format("activation bits ({}) must be 16, 8 or 4", t.activation_bits));
  if ((t.dtype == Dtype::kMxfp8 && c.gpu.mxfp8_tflops <= 0) || (t.dtype == Dtype::kNvfp4 && c.gpu.fp4_tflops <= 0))
    out.push_back(fmt::format("{} needs a GPU with {} tensor cores (Blackwell: b200, b300, gb200, gb300); {} has none",
                              to_string(t.dtype), to_string(t.dtype), c.gpu.name));
  if (p.ep > 1 && !m.is_moe()) out.push_back(fmt::format("ep ({}) > 1 needs a model with experts", p.ep));
  if ((t.moe_capacity_factor > 0 || t.moe_pad_to_capacity) && !m.is_moe())
    out.push_back("an expert capacity factor needs a model with experts");
  if (t.moe_pad_to_capacity && t.moe_capacity_factor <= 0)
    out.push_back("padding to capacity needs a capacity factor");
  if (m.is_moe() && p.ep >= 1) {
    if (m.moe_experts % p.ep != 0)
      out.push_back(fmt::format("experts ({}) not divisible by ep ({})", m.moe_experts, p.ep));
    if ((static_cast<int64_t>(p.dp) * p.cp) % p.ep != 0)
      out.push_back(fmt::format("dp × cp ({} × {}) not divisible by ep ({}): experts split over data-parallel ranks",
                                p.dp, p.cp, p.ep));
    if (m.expert_ffn() % p.tp != 0)
      out.push_back(fmt::format("expert ffn hidden ({}) not divisible by tp ({})", m.expert_ffn(), p.tp));
  }
  if (m.heads > 0 && m.heads % p.tp != 0)
    out.push_back(fmt::format("heads ({}) not divisible by tp ({})", m.heads, p.tp));
  if (m.kv_heads > 0 && m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    out.push_back(fmt::format("kv heads ({}) and tp ({}): neither divides the other", m.kv_heads, p.tp));
  if (m.ffn_hidden > 0 && m.ffn_hidden % p.tp != 0)
    out.push_back(fmt::format("ffn hidden ({}) not divisible by tp ({})", m.ffn_hidden, p.tp));
  const bool accounted = p.embedding_stage || p.loss_stage;
  const int accounted_ends = (p.embedding_stage ? 1 : 0) + (p.loss_stage ? 1 : 0);
  if (accounted && (p.first_stage_layers > 0 || p.last_stage_layers > 0))
    out.push_back("embedding/loss accounting and first/last stage layers together: give one or the other");
  else if (accounted && p.pp < 2)
    out.push_back(fmt::format("embedding/loss accounting needs pp > 1 (pp = {})", p.pp));
  else if (accounted && (m.layers + accounted_ends) % p.pp != 0)
    out.push_back(fmt::format("layers ({}) + {} accounted end stage layer{} = {} not divisible by pp ({})", m.layers,
                              accounted_ends, accounted_ends > 1 ? "s" : "", m.layers + accounted_ends, p.pp));
  const StageSplit split = stage_split(m, p);
  const bool uneven = split.first > 0 || split.last > 0;
  if (uneven) {
    const int first = split.first > 0 ? split.first : 0;
    const int last = split.last > 0 ? split.last : 0;
    const int rest = m.layers - first - last;
    const int middle = p.pp - (first > 0) - (last > 0);
    if (p.pp < 2)
      out.push_back(fmt::format("first/last stage layers need pp > 1 (pp = {})", p.pp));
    else if (p.vpp > 1)
      out.push_back(fmt::format("first/last stage layers with vpp ({}) > 1 are not modelled", p.vpp));
    else if (rest < 0 || (middle > 0 && (rest == 0 || rest % middle != 0)) || (middle == 0 && rest != 0))
      out.push_back(fmt::format(
          "layers ({}) minus first ({}) and last ({}) stage layers leave {} for {} other stages: not an even split",
          m.layers, first, last, rest, middle));
  } else if (m.layers > 0 && m.layers % (p.pp * p.vpp) != 0) {
    out.push_back(
        fmt::format("layers ({}) not divisible by pp × vpp ({} × {} = {})", m.layers, p.pp, p.vpp, p.pp * p.vpp));
  }
  if (t.fp8_all_gather && !(is_low_precision(t.dtype) &&
                            (p.sharding == Sharding::kZero3 || p.sharding == Sharding::kFsdpHybrid)))
    out.push_back("fp8 all-gather needs an 8-bit dtype and FSDP / ZeRO-3 weight sharding");
  if (!t.reshard_after_forward &&
      !(t.stack == Stack::kPytorch && (p.sharding == Sharding::kZero3 || p.sharding == Sharding::kFsdpHybrid)))
    out.push_back("keeping gathered weights after forward (reshard_after_forward off) needs FSDP on the pytorch stack");
  if (t.attention_density > 0 && t.attention == AttentionKernel::kUnfused)
    out.push_back("a block-sparse attention density needs a fused attention kernel (flash or fa2), not unfused");
  if (t.tp_comm_overlap && !(p.sequence_parallel && p.tp > 1))
    out.push_back("TP communication overlap needs tensor parallelism with sequence parallelism (tp > 1, SP on)");
  if (p.offload_layers > m.layers)
    out.push_back(fmt::format("{} offloaded layers per stage, more than the model has ({})", p.offload_layers,
                              m.layers));
  if (p.recompute_layers > 0 && p.recompute == Recompute::kNone)
    out.push_back(fmt::format("{} recomputed layers per stage, but recompute is none", p.recompute_layers));
  else if (p.recompute_layers > m.layers)
    out.push_back(fmt::format("{} recomputed layers per stage, more than the model has ({})", p.recompute_layers,
                              m.layers));
  if (p.vpp > 1 && p.pp < 2) out.push_back(fmt::format("vpp ({}) > 1 needs pp > 1 (pp = {})", p.vpp, p.pp));
  const int per_step = p.dp * p.micro_batch;
  if (t.global_batch >= 1 && t.global_batch % per_step != 0)
    out.push_back(fmt::format("global batch ({}) not divisible by dp × micro-batch ({} × {} = {})", t.global_batch,
                              p.dp, p.micro_batch, per_step));
  else if (p.vpp > 1 && t.global_batch >= 1 && (t.global_batch / per_step) % p.pp != 0)
    out.push_back(
        fmt::format("micro-batches per step ({}) not divisible by pp ({}), which the interleaved schedule needs",
                    t.global_batch / per_step, p.pp));
  if (m.seq > 0 && m.seq % p.cp != 0)
    out.push_back(fmt::format("sequence length ({}) not divisible by cp ({})", m.seq, p.cp));
  if (check_gpu_count && p.gpus() != c.gpus)
    out.push_back(fmt::format("GPU count mismatch: tp × pp × dp × cp = {} × {} × {} × {} = {}, but the cluster has {}",
                              p.tp, p.pp, p.dp, p.cp, p.gpus(), c.gpus));
  return out;
}

}  // namespace stepscope::model
