// The inputs of the uniform recomputation optimiser (recompute_uniform.h)
// taken from the planner's cost models for one layout: per-layer saved bytes
// per policy (layer_activation_bytes), per-layer recomputation time per step
// (estimate_layer × micro-batches), and the memory left for activations on
// the device once weights, gradients, optimizer states and buffers are placed.
#pragma once

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "plan/recompute_uniform.h"
#include "model/training_settings.h"

namespace stepscope::plan {

using model::ClusterSpec;
using model::ModelSpec;
using model::ParallelConfig;
using model::TrainingSettings;

struct UniformRecomputeInputs {
  UniformLayerCosts costs;    // the first pipeline stage's layers
  // capacity - everything but the layers' saved activations, without
  // recomputation, on the first stage (the stage these costs describe; the
  // last stage, with the output layer, is not checked here).
  double budget_bytes = 0;
  double other_bytes = 0;     // that "everything but": states, buffers, the embedding's dropout mask
};

// p.recompute is ignored: all three policies are evaluated.
// copies = micro-batches in flight on the first 1F1B stage, min(pp, micro-batches),
// times 1 + (pp-1)/(pp*vpp) when interleaved (Korthikanti et al. 2022, 4.2.3).
UniformRecomputeInputs uniform_recompute_inputs(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                                const ParallelConfig& p);

}  // namespace stepscope::plan
