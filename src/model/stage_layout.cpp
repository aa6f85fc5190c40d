#include "model/stage_layout.h"

#include <algorithm>

namespace stepscope::model {

StageSplit stage_split(const ModelSpec& m, const ParallelConfig& p) {
  const int pp = std::max(1, p.pp);
  if (pp < 2 || !(p.embedding_stage || p.loss_stage)) return {p.first_stage_layers, p.last_stage_layers};
  const int ends = (p.embedding_stage ? 1 : 0) + (p.loss_stage ? 1 : 0);
  const int per_stage = (m.layers + ends) / pp;  // plan_constraints refuses a sum pp does not divide
  return {p.embedding_stage ? per_stage - 1 : 0, p.loss_stage ? per_stage - 1 : 0};
}

StageLayout stage_layout(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, const ParallelConfig& p) {
  StageLayout s;
  const int tp = std::max(1, p.tp), pp = std::max(1, p.pp), dp = std::max(1, p.dp), cp = std::max(1, p.cp);
  const int per_node = std::max(1, c.gpu.gpus_per_node);
  // Stages without a stated count share the layers the stated ones leave.
  const StageSplit split = stage_split(m, p);
  const bool has_first = pp > 1 && split.first > 0, has_last = pp > 1 && split.last > 0;
  const int others = pp - has_first - has_last;
  const double rest = m.layers - (has_first ? split.first : 0) - (has_last ? split.last : 0);
  const double each = others > 0 ? rest / others : 0;
  s.first_stage_layers = has_first ? split.first : each;
  s.last_stage_layers = has_last ? split.last : each;
  s.middle_stage_layers = pp > 2 ? each : 0;
  if (pp == 1) s.first_stage_layers = s.last_stage_layers = m.layers;
  s.layers_per_stage = std::max({s.first_stage_layers, s.last_stage_layers, s.middle_stage_layers});
  const int ep = std::max(1, p.ep);
  // Megatron-Core: experts split over the ep ranks, each expert's MLP over tp
  // (expert tensor parallelism = tp); the rest of the layer over tp.
  s.layer_expert_params_per_gpu =
      m.is_moe() ? static_cast<double>(m.moe_experts) * m.expert_params() / (static_cast<double>(ep) * tp) : 0;
  s.layer_params_per_gpu =
      (m.is_moe() ? static_cast<double>(m.layer_dense_params()) / tp : static_cast<double>(m.layer_params()) / tp) +
      s.layer_expert_params_per_gpu;
  const double embedding = static_cast<double>(m.embedding_params()) / tp;
  // Tied embeddings with pp > 1: Megatron keeps a copy of the word embedding
  // on the last stage for the output projection and syncs its gradient.
  double output = static_cast<double>(m.output_params()) / tp;
  if (m.tied_embeddings && pp > 1) output += static_cast<double>(m.vocab) * m.hidden / tp;
  if (pp == 1) {
    s.first_stage_params = s.last_stage_params = s.first_stage_layers * s.layer_params_per_gpu + embedding + output;
  } else {
    s.first_stage_params = s.first_stage_layers * s.layer_params_per_gpu + embedding;
    s.last_stage_params = s.last_stage_layers * s.layer_params_per_gpu + output;
  }
  const int per_replica = dp * std::max(1, p.micro_batch);
  s.micro_batches = t.global_batch > 0 ? std::max(1, t.global_batch / per_replica) : 1;
  // Megatron's rank order: tensor fastest, then context, then data, then pipeline.
  s.tp_group = {tp, std::min(tp, per_node)};
  s.dp_group = {dp * cp, std::max(1, std::min(dp * cp, per_node / tp))};
  s.cp_group = {cp, std::max(1, std::min(cp, per_node / tp))};
  s.ep_group = {ep, std::max(1, std::min(ep, per_node / tp))};
  s.expert_shards = std::max(1, dp * cp / ep);
  s.pp_inter_node = static_cast<int64_t>(tp) * cp * dp >= per_node;
  return s;
}

double recomputed_share(const StageLayout& s, const ParallelConfig& p) {
  if (p.recompute_layers <= 0 || s.layers_per_stage <= 0) return 1;
  return std::min(1.0, p.recompute_layers / s.layers_per_stage);
}

}  // namespace stepscope::model
