// Wires the planner's cost models (memory_model.h, step_time_model.h) into
// the configuration search: the search space a model, its training settings
// and a cluster imply, and an evaluator that scores a layout with
// estimate_memory and estimate_step.
#pragma once

#include "model/cluster_spec.h"
#include "plan/config_search.h"
#include "model/model_spec.h"
#include "model/training_settings.h"

namespace stepscope::plan {

using model::ClusterSpec;
using model::ModelSpec;
using model::TrainingSettings;

// GPUs, GPUs per node, layers, heads, sequence and global batch from the
// inputs; the candidate lists keep their defaults, except that under flash
// attention selective recomputation is left out (it costs exactly what none
// costs there, so it would duplicate every layout).
SearchSpace search_space_for(const ModelSpec& model, const TrainingSettings& settings, const ClusterSpec& cluster);

// fits = the memory model's verdict, step_seconds = estimate_step().total,
// memory_bytes = estimate_memory().total. The inputs are copied into the evaluator.
Evaluator model_evaluator(const ModelSpec& model, const TrainingSettings& settings, const ClusterSpec& cluster);

}  // namespace stepscope::plan
