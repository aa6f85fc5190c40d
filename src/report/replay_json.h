// Per rank "replay" and the top-level "job_replay" in the analyze JSON: the
// what-if replay's fidelity and what it could not model (docs/whatif.md,
// docs/json_schema.md).
#pragma once

#include "report/json_emit.h"

#include <nlohmann/json.hpp>

#include "whatif/job_replay.h"
#include "whatif/rank_replay.h"

namespace stepscope::report {

nlohmann::ordered_json replay_json(const whatif::RankReplay& r);
void emit_replay(JsonEmit& e, const whatif::RankReplay& r);  // the same, through `e`

// The top-level "job_replay": the ranks replayed as one job.
nlohmann::ordered_json job_replay_json(const whatif::JobReplay& r);

}  // namespace stepscope::report
