// Renders plan results (memory, step time, validation) as terminal tables
// and JSON. Computes nothing: every number comes from the models.
#pragma once

#include <string>

#include "plan/plan_result.h"
#include "plan/plan_validation.h"

namespace stepscope::report {

std::string plan_text(const plan::PlanResult& r, bool explain);
std::string plan_json(const plan::PlanResult& r);

std::string search_text(const plan::LayoutSearchResult& r);
// {"model", "gpu", "gpus", "global_batch", "candidates", "fitting", "search_seconds", "top": [{"tp", ...}]}
std::string search_json(const plan::LayoutSearchResult& r);

std::string validation_text(const plan::ValidationSummary& s);
// {"rows": [{"index", "predicted_step_seconds", "metric", "measured", "predicted", "error_pct", ...}],
//  "skipped": [...], "summary": {...}}
std::string validation_json(const plan::ValidationSummary& s);

}  // namespace stepscope::report
