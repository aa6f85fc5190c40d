#include "model/stage_layout.h"

#include <algorithm>

namespace stepscope::model {

StageLayout stage_layout(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, const ParallelConfig& p) {
  StageLayout s;
  const int tp = std::max(1, p.tp), pp = std::max(1, p.pp), dp = std::max(1, p.dp), cp = std::max(1, p.cp);
  const int per_node = std::max(1, c.gpu.gpus_per_node);
  s.layers_per_stage = static_cast<double>(m.layers) / pp;
  s.layer_params_per_gpu = static_cast<double>(m.layer_params()) / tp;
  const double layers = s.layers_per_stage * s.layer_params_per_gpu;
  const double embedding = static_cast<double>(m.embedding_params()) / tp;
  // Tied embeddings with pp > 1: Megatron keeps a copy of the word embedding
  // on the last stage for the output projection and syncs its gradient.
  double output = static_cast<double>(m.output_params()) / tp;
  if (m.tied_embeddings && pp > 1) output += static_cast<double>(m.vocab) * m.hidden / tp;
  if (pp == 1) {
    s.first_stage_params = s.last_stage_params = layers + embedding + output;
  } else {
    s.first_stage_params = layers + embedding;
    s.last_stage_params = layers + output;
  }
  const int per_replica = dp * std::max(1, p.micro_batch);
  s.micro_batches = t.global_batch > 0 ? std::max(1, t.global_batch / per_replica) : 1;
  // Megatron's rank order: tensor fastest, then context, then data, then pipeline.
  s.tp_group = {tp, std::min(tp, per_node)};
  s.dp_group = {dp * cp, std::max(1, std::min(dp * cp, per_node / tp))};
  s.pp_inter_node = static_cast<int64_t>(tp) * cp * dp >= per_node;
  return s;
}

}  // namespace stepscope::model
