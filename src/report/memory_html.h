// `stepscope memory --html FILE`: one self-contained HTML page (no network
// fetch, no library) per snapshot: active memory over the history stacked by
// allocation site with reserved memory and the OOMs, the live memory at the
// peak, and each OOM's state. The page carries the --json report and draws it
// with src/report/html/memory.js.
#pragma once

#include <string>

#include "memory/snapshot_report.h"

namespace stepscope::report {

std::string render_memory_html(const memory::MemoryReport& report);

}  // namespace stepscope::report
