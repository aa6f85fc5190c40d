// Renders plan results (memory, step time, validation) as terminal tables
// and JSON. Computes nothing: every number comes from the models.
#pragma once

#include <string>

#include "plan/cluster_spec.h"
#include "plan/memory_model.h"
#include "plan/model_spec.h"
#include "plan/parallel_config.h"
#include "plan/plan_validation.h"
#include "plan/step_time_model.h"
#include "plan/training_settings.h"

namespace stepscope::plan {

struct PlanResult {
  ModelSpec model;
  TrainingSettings settings;
  ClusterSpec cluster;
  ParallelConfig parallel;
  MemoryEstimate memory;
  StepEstimate step;
};

std::string plan_text(const PlanResult& r, bool explain);
std::string plan_json(const PlanResult& r);
std::string validation_text(const ValidationSummary& s);
// {"rows": [{"index", "predicted_step_seconds", "metric", "measured", "predicted", "error_pct", ...}], "summary":
// {...}}
std::string validation_json(const ValidationSummary& s);

}  // namespace stepscope::plan
