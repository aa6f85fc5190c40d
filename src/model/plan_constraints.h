// The layouts that cannot run: each failed check names the constraint.
#pragma once

#include <string>
#include <vector>

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::model {

// The largest layout the planner takes (docs/planner.md "Limits"): products
// of these stay exact in int, and the CLI refuses options above them.
struct LayoutLimits {
  static constexpr int kSize = 1 << 20;         // tp, pp, dp, cp, vpp, micro-batch each
  static constexpr int kGpus = 1 << 24;         // tp × pp × dp × cp, and --gpus
  static constexpr int kGlobalBatch = 1 << 24;  // sequences per step
};

// One message per violated constraint, e.g. "heads (96) not divisible by tp (5)";
// empty when the configuration is valid. `check_gpu_count` compares
// tp·pp·dp·cp to c.gpus.
std::vector<std::string> check_constraints(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                           const ParallelConfig& p, bool check_gpu_count = true);

}  // namespace stepscope::model
