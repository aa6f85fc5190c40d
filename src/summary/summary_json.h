// A rank summary as a JSON value (nlohmann::json), the body of a summary file
// (summary_file.h) before it is encoded as CBOR. Every field of the analyses
// is kept as it is (numbers exactly: CBOR stores doubles as binary64), so a
// report rendered from a decoded summary equals one rendered from the store.
// The schema is in docs/distributed.md.
#pragma once

#include <nlohmann/json.hpp>

#include "diagnose/diagnose_options.h"
#include "summary/body_json.h"
#include "summary/rank_summary.h"

namespace stepscope::summary {

nlohmann::json summary_to_json(const RankSummary& s);

// Throws std::runtime_error naming the field for a missing field, a wrong
// type or a value out of range (an enum, an import counter).
RankSummary summary_from_json(const nlohmann::json& j);
// The same from a file's body, decoded into the arena (body_json.h).
RankSummary summary_from_body(const BodyJson& j);

// A summary's detector parts as the JSON object diagnose::load_rank_parts
// reads (an empty object for a summary without them). Throws
// std::runtime_error when the bytes are not a CBOR item; a part that does
// not load is load_rank_parts's error.
nlohmann::json diagnosis_parts(const RankSummary& s);

// The settings alone, to compare two summaries' (settings_key(a) == settings_key(b)).
std::string settings_key(const SummarySettings& s);

// The options a rank's detector parts depend on, as SummarySettings::diagnosis
// holds them: disabled detectors, the thresholds, the replay and its
// measured unprofiled step (what_if and the reporting bars of the ranking
// act only on the merged findings; a GPU override cannot be given to
// summarize).
nlohmann::json diagnosis_settings(const diagnose::DiagnoseOptions& o);

}  // namespace stepscope::summary
