// The diagnosis parts of the analyze JSON: "diagnosis" at the top level
// (primary bottleneck, findings, what could not be assessed) and per rank
// "attribution" (exclusive buckets per step).
#pragma once

#include "report/json_emit.h"

#include <nlohmann/json.hpp>

#include "diagnose/diagnose.h"

namespace stepscope::report {

nlohmann::ordered_json diagnosis_json(const diagnose::Diagnosis& d);
// One finding as "findings" lists it (also `stepscope memory --json`).
nlohmann::ordered_json finding_json(const diagnose::Finding& f);
nlohmann::ordered_json attribution_json(const diagnose::RankAttribution& a);
void emit_attribution(JsonEmit& e, const diagnose::RankAttribution& a);  // the same, through `e`

}  // namespace stepscope::report
