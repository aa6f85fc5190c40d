// `stepscope memory --html FILE`: one self-contained HTML page (no network
// fetch, no library) per snapshot: active memory over the history stacked by
// allocation site with reserved memory and the OOMs, the live memory at the
// peak, and each OOM's state. The page carries the --json report and draws it
// with src/report/html/memory.js.
#pragma once

#include <string>

#include <vector>

#include "diagnose/finding.h"
#include "memory/snapshot_report.h"

namespace stepscope::report {

// `findings` (pipeline/memory_run.h) open the page.
std::string render_memory_html(const memory::MemoryReport& report, const std::vector<diagnose::Finding>& findings = {});

}  // namespace stepscope::report
