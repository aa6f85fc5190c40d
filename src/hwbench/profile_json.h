// The hardware profile's JSON form (docs/hardware_profile.md). The top level
// is the planner's hardware-profile schema (docs/planner.md: gpu,
// gpus_per_node, hbm_gbps, nccl, gemm), so `plan --profile` reads it as is;
// everything else the bench measured sits under "stepscope_bench".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hwbench/hardware_profile.h"

namespace stepscope::hwbench {

// The profile as JSON, with the golden comparison's verdicts added.
nlohmann::json profile_to_json(const HardwareProfile& profile);

// Reads back what profile_to_json wrote (verdicts are recomputed, not read).
// On failure nullopt and `error` names `where` and the field, e.g.
// "p.json: field \"stepscope_bench.memory[1].gbps\" must be a non-negative number".
std::optional<HardwareProfile> profile_from_json(const nlohmann::json& doc, const std::string& where,
                                                 std::string& error);

// Reads a profile file; errors as above, and those of model::read_json_file
// ("<path>: cannot open", "<path>: not valid JSON (at byte N)",
// "<path>: field \"...\" holds a number out of range (1e309)").
// Rates (GB/s, TFLOP/s) must be at most 1e6 and the measured ceilings (GEMM
// TFLOP/s, memory and host-copy GB/s) above 0; other numbers at most 1e15,
// integer fields whole and within their type.
std::optional<HardwareProfile> read_profile_file(const std::string& path, std::string& error);
// The same from the JSON text in memory; `where` names it in errors.
std::optional<HardwareProfile> read_profile_text(std::string_view text, const std::string& where, std::string& error);

}  // namespace stepscope::hwbench
