// The versioned JSON output of `stepscope analyze --json` (schema in
// docs/json_schema.md). Durations are µs as doubles (ns / 1000), shares are
// percentages, bytes are integers.
#pragma once

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "report/analyze_report.h"

namespace stepscope::report {

nlohmann::ordered_json build_analyze_json(const AnalyzeReport& report);

// Receives the report's text piece by piece; false stops the writing.
using JsonSink = std::function<bool(std::string_view)>;

// The same bytes as build_analyze_json(report).dump(indent), written a rank
// at a time: a report of 16,384 ranks (~500 MB of text) never exists whole in
// memory, as text or as a JSON value. False when the sink refused a piece.
bool write_analyze_json(const AnalyzeReport& report, int indent, const JsonSink& sink);

}  // namespace stepscope::report
