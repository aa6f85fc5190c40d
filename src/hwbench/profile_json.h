// Writes the hardware profile's JSON form (docs/hardware_profile.md); the
// model layer reads it (model/hardware_profile_json.h). The top level is the
// planner's hardware-profile schema (docs/planner.md: gpu, gpus_per_node,
// hbm_gbps, nccl, gemm), so `plan --profile` reads it as is; everything else
// the bench measured sits under "stepscope_bench".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/hardware_profile.h"
#include "model/hardware_profile_json.h"

namespace stepscope::hwbench {

using model::HardwareProfile;

// The profile as JSON, with the golden comparison's verdicts added.
nlohmann::json profile_to_json(const HardwareProfile& profile);

}  // namespace stepscope::hwbench
