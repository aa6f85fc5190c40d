// Per rank "critical_path" and the top-level "job_critical_path" in the
// analyze JSON: each step's critical path by category (and, across ranks, by
// rank), its longest segments (docs/whatif.md, docs/json_schema.md).
#pragma once

#include "report/json_emit.h"

#include <nlohmann/json.hpp>

#include "whatif/job_critical_path.h"
#include "whatif/rank_critical_path.h"

namespace stepscope::report {

nlohmann::ordered_json critical_path_json(const whatif::RankCriticalPath& r);
void emit_critical_path(JsonEmit& e, const whatif::RankCriticalPath& r);  // the same, through `e`

// The top-level "job_critical_path": each step's path across the ranks.
nlohmann::ordered_json job_critical_path_json(const whatif::JobCriticalPath& p);

}  // namespace stepscope::report
