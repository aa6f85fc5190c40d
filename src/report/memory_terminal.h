// The terminal report of `stepscope memory`: per device the levels and
// peaks, the state at the peak of allocated memory, and each OOM with its
// cause and the live memory by allocation site.
#pragma once

#include <string>

#include "memory/snapshot_report.h"

namespace stepscope::report {

std::string render_memory_terminal(const memory::MemoryReport& report, size_t top_sites = 10);

}  // namespace stepscope::report
