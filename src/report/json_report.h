// The versioned JSON output of `stepscope analyze --json` (schema in
// docs/json_schema.md). Durations are µs as doubles (ns / 1000), shares are
// percentages, bytes are integers.
#pragma once

#include <nlohmann/json.hpp>

#include "report/analyze_report.h"

namespace stepscope::report {

nlohmann::ordered_json build_analyze_json(const AnalyzeReport& report);

}  // namespace stepscope::report
