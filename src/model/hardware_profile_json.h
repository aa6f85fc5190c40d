// The one reader of hardware profiles (docs/hardware_profile.md,
// docs/planner.md "Hardware profile JSON"): one JSON file, two views with the
// same bounds and messages. The planner's view is the top level (gpu,
// gpus_per_node, hbm_gbps, nccl, gemm), which a hand-written profile may hold
// alone; the bench's view is "gpu" and the "stepscope_bench" section that
// `stepscope bench` writes (hwbench/profile_json.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/cluster_spec.h"
#include "model/hardware_profile.h"

namespace stepscope::model {

// The bench's view: what `stepscope bench` measured.
// Reads back what profile_to_json wrote (verdicts are recomputed, not read).
// On failure nullopt and `error` names `where` and the field, e.g.
// "p.json: field \"stepscope_bench.memory[1].gbps\" must be a non-negative number".
std::optional<HardwareProfile> profile_from_json(const nlohmann::json& doc, const std::string& where,
                                                 std::string& error);

// Reads a profile file; errors as above, and those of read_json_file
// ("<path>: cannot open", "<path>: not valid JSON (at byte N)",
// "<path>: field \"...\" holds a number out of range (1e309)").
// Rates (GB/s, TFLOP/s) must be at most 1e6 and the measured ceilings (GEMM
// TFLOP/s, memory and host-copy GB/s) above 0; other numbers at most 1e15,
// integer fields whole and within their type.
std::optional<HardwareProfile> read_profile_file(const std::string& path, std::string& error);
// The same from the JSON text in memory; `where` names it in errors.
std::optional<HardwareProfile> read_profile_text(std::string_view text, const std::string& where, std::string& error);


// The planner's view: the catalog row of "gpu" with the measured rates.
// Reads a hardware profile JSON (docs/planner.md): its "gpu" names the
// catalog row it refines; measured numbers replace the fractions. On failure
// nullopt and `error` names the file and field. Measured rates must be from
// 0.001 to 1e6 (GB/s, TFLOP/s), GEMM sizes from 1 to 2^24, gpus_per_node an
// integer from 1 to 1024.
std::optional<ClusterSpec> load_hardware_profile(const std::string& path, std::string& error);
// The same from the JSON text in memory; `where` names it in errors.
std::optional<ClusterSpec> hardware_profile_from_json_text(std::string_view text, const std::string& where,
                                                           std::string& error);

}  // namespace stepscope::model
