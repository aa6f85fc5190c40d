// What the planner answers, as plain values the renderers take
// (report/plan_report.h): one layout's prediction, and a search's layouts.
#pragma once

#include <string>
#include <vector>

#include "model/cluster_spec.h"
#include "model/memory_model.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/step_time_model.h"
#include "model/training_settings.h"
#include "plan/config_search.h"
#include "plan/fit_alternatives.h"

namespace stepscope::plan {

// `stepscope plan`: one layout's memory per GPU and step time.
struct PlanResult {
  model::ModelSpec model;
  model::TrainingSettings settings;
  model::ClusterSpec cluster;
  model::ParallelConfig parallel;
  model::MemoryEstimate memory;
  model::StepEstimate step;
  // When the layout does not fit: the nearest that do (fit_alternatives.h).
  std::vector<FitAlternative> alternatives;
  // What the planner chose for the user (a default it filled in), one line each.
  std::vector<std::string> notes;
};

// `plan search`: the fastest fitting layouts, each with its MFU.
struct LayoutSearchResult {
  model::ModelSpec model;
  model::TrainingSettings settings;
  model::ClusterSpec cluster;
  SearchResult search;
  std::vector<double> mfu;         // one per search.top row
  double seconds = 0;              // the search's own wall time
  std::vector<std::string> notes;  // defaults the planner chose, one line each
};

}  // namespace stepscope::plan
