// Shared arithmetic of how a model is cut over the parallel dimensions:
// layers per stage, parameters per GPU of the first and last pipeline stage,
// micro-batches per step, and the communicator shapes of each dimension.
// Used by the memory and the step-time models so both cut the model the same way.
#pragma once

#include "model/cluster_spec.h"
#include "model/collective_model.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::model {

struct StageLayout {
  double layers_per_stage = 0;      // transformer layers on the fullest stage's GPU (all its virtual chunks)
  double first_stage_layers = 0;    // on a first-stage GPU (= layers_per_stage when stages are even)
  double last_stage_layers = 0;     // on a last-stage GPU
  double middle_stage_layers = 0;   // on each stage between them (pp > 2)
  double layer_params_per_gpu = 0;  // one layer's parameters on one GPU (split by TP; experts also by EP)
  double layer_expert_params_per_gpu = 0;  // of which the experts' (0 without MoE)
  double first_stage_params = 0;    // parameters held by a first-stage GPU
  double last_stage_params = 0;     // by a last-stage GPU (same as first when pp = 1)
  int micro_batches = 0;            // per pipeline per step
  CommGroup tp_group, dp_group;     // dp_group spans dp × cp ranks (gradients are reduced over both)
  CommGroup cp_group;               // the context-parallel ring: cp ranks, next to each other after tp
  CommGroup ep_group;               // the experts' all-to-all: ep ranks of the dp × cp dimension
  int expert_shards = 1;            // data-parallel replicas of an expert: dp × cp / ep
  bool pp_inter_node = false;       // adjacent pipeline stages sit in different nodes
};

StageLayout stage_layout(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, const ParallelConfig& p);

// Transformer layers of the first and last pipeline stage as configured: the
// explicit counts, or what embedding/loss accounting leaves them
// ((layers + accounted ends) / pp, less one at an accounted end); 0 = the
// even split.
struct StageSplit {
  int first = 0, last = 0;
};
StageSplit stage_split(const ModelSpec& m, const ParallelConfig& p);

// The share of a stage's layers that recompute (ParallelConfig::recompute_layers
// of the fullest stage's layers; 1 when all do).
double recomputed_share(const StageLayout& s, const ParallelConfig& p);

}  // namespace stepscope::model
