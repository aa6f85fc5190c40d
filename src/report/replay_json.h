// Per rank "replay" in the analyze JSON: the what-if replay's fidelity and
// what it could not model (docs/whatif.md, docs/json_schema.md).
#pragma once

#include <nlohmann/json.hpp>

#include "whatif/rank_replay.h"

namespace stepscope::report {

nlohmann::ordered_json replay_json(const whatif::RankReplay& r);

}  // namespace stepscope::report
