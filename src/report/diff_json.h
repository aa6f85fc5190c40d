// The versioned JSON output of `stepscope diff --json` (schema in
// docs/json_schema.md, "stepscope diff"). Same conventions as the analyze
// JSON: durations in µs, shares in %, a value that does not apply is null.
#pragma once

#include <nlohmann/json.hpp>

#include "report/diff_report.h"

namespace stepscope::report {

inline constexpr int kDiffJsonSchemaVersion = 2;

nlohmann::ordered_json build_diff_json(const DiffReport& report);

}  // namespace stepscope::report
