// When a layout does not fit memory: the nearest layouts that do. Each
// alternative changes the layout the least a user would (one setting, or a
// few together when no single change is enough), keeps the model, the GPU
// and the global batch, and is checked and predicted with the same models
// as the layout itself. Those on the same GPUs come first, fastest first,
// then those that need more GPUs.
#pragma once

#include <string>
#include <vector>

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::plan {

using model::ClusterSpec;
using model::ModelSpec;
using model::ParallelConfig;
using model::TrainingSettings;

struct FitAlternative {
  std::string change;       // what differs, e.g. "recompute full", "micro-batch 1", "tp 8 (16 GPUs)"
  ParallelConfig layout;
  int gpus = 0;             // tp × pp × dp × cp of the alternative
  double memory_bytes = 0;  // peak per GPU (fullest stage)
  double step_seconds = 0;
};

// The single changes tried: a smaller micro-batch (halving to 1); selective,
// then full recomputation; each stronger optimizer-state sharding the layout
// allows (ZeRO-1, ZeRO-2, ZeRO-3/FSDP); on the same GPUs, data-parallel
// replicas traded for 2, 4 or 8 times the tensor-parallel size or the
// pipeline stages; on more GPUs, 2, 4 or 8 times the tensor-parallel size
// (inside a node, dividing the heads) or the pipeline stages (dividing the
// layers). Layouts must pass the planner's constraints and the search's
// rules (config_search.h). For each kind only the least change
// that fits is kept. When none fits alone, the combination of the strongest
// settings (micro-batch 1, full recomputation, the strongest sharding) is
// tried with each of the GPU increases. At most `limit` results.
std::vector<FitAlternative> fit_alternatives(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                             const ParallelConfig& p, size_t limit = 5);

}  // namespace stepscope::plan
