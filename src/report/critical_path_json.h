// Per rank "critical_path" in the analyze JSON: each step's critical path by
// category and its longest segments (docs/whatif.md, docs/json_schema.md).
#pragma once

#include <nlohmann/json.hpp>

#include "whatif/rank_critical_path.h"

namespace stepscope::report {

nlohmann::ordered_json critical_path_json(const whatif::RankCriticalPath& r);

}  // namespace stepscope::report
