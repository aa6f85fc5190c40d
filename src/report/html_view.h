// Drawing data of the HTML report that the JSON report does not carry: the
// GPU timeline and the allocator's footprint, downsampled onto a fixed
// number of time columns so a trace of millions of kernels draws as fast as a
// small one. Nothing here is a new metric: each column holds how long each
// kernel class ran (or the largest allocator value seen) inside it.
#pragma once

#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "report/analyze_report.h"

namespace stepscope::report {

struct HtmlViewOptions {
  int timeline_columns = 1600;  // time columns of the GPU timeline (about one per pixel)
  int memory_columns = 800;     // time columns of the memory chart
  size_t max_ranks = 8;         // ranks drawn on the timeline and memory chart (the first ones)
};

// {"axis": {...}, "timeline": [...], "memory": {...}}; times are µs from the
// axis start on a clock shared by all ranks (each rank shifted by its
// baseTimeNanoseconds, as in the Perfetto output). See html/report.js.
nlohmann::ordered_json build_html_view(const AnalyzeReport& report, const HtmlViewOptions& options = {});

}  // namespace stepscope::report
