// Renders plan results (memory, step time, validation) as terminal tables
// and JSON. Computes nothing: every number comes from the models.
#pragma once

#include <string>

#include "plan/cluster_spec.h"
#include "plan/config_search.h"
#include "plan/fit_alternatives.h"
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
  // When the layout does not fit: the nearest that do (fit_alternatives.h).
  std::vector<FitAlternative> alternatives;
  // What the planner chose for the user (a default it filled in), one line each.
  std::vector<std::string> notes;
};

std::string plan_text(const PlanResult& r, bool explain);
std::string plan_json(const PlanResult& r);

// `plan search`: the fastest fitting layouts, each with its MFU.
struct LayoutSearchResult {
  ModelSpec model;
  TrainingSettings settings;
  ClusterSpec cluster;
  SearchResult search;
  std::vector<double> mfu;  // one per search.top row
  double seconds = 0;       // the search's own wall time
  std::vector<std::string> notes;  // defaults the planner chose, one line each
};

std::string search_text(const LayoutSearchResult& r);
// {"model", "gpu", "gpus", "global_batch", "candidates", "fitting", "search_seconds", "top": [{"tp", ...}]}
std::string search_json(const LayoutSearchResult& r);
std::string validation_text(const ValidationSummary& s);
// {"rows": [{"index", "predicted_step_seconds", "metric", "measured", "predicted", "error_pct", ...}], "summary":
// {...}}
std::string validation_json(const ValidationSummary& s);

}  // namespace stepscope::plan
