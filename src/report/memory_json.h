// The versioned JSON output of `stepscope memory --json` (schema in
// docs/json_schema.md, "stepscope memory"): bytes as integers, times in µs
// as the snapshot gives them, a value that is not known is null.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "diagnose/finding.h"
#include "memory/snapshot_report.h"

namespace stepscope::report {

inline constexpr int kMemoryJsonSchemaVersion = 2;

// `findings`: the snapshot's (pipeline/memory_run.h), as "findings".
nlohmann::ordered_json build_memory_json(const memory::MemoryReport& report,
                                         const std::vector<diagnose::Finding>& findings = {});

}  // namespace stepscope::report
