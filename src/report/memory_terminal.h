// The terminal report of `stepscope memory`: per device the levels and
// peaks, the state at the peak of allocated memory, and each OOM with its
// cause and the live memory by allocation site.
#pragma once

#include <string>

#include <vector>

#include "diagnose/finding.h"
#include "memory/snapshot_report.h"

namespace stepscope::report {

// `findings` (pipeline/memory_run.h) close the report, as analyze prints them.
std::string render_memory_terminal(const memory::MemoryReport& report, size_t top_sites = 10,
                                   const std::vector<diagnose::Finding>& findings = {});

}  // namespace stepscope::report
