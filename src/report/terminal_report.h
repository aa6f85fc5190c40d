// The human-readable report of `stepscope analyze`: aligned tables with units,
// ranks side by side (summarised by min/median/max past kMaxSideBySide ranks).
#pragma once

#include <string>

#include "report/analyze_report.h"

namespace stepscope::report {

struct TerminalOptions {
  size_t max_side_by_side = 8;  // ranks shown as columns before switching to a summary
  size_t top_kernels = 10;      // kernel rows shown
  size_t name_width = 60;       // kernel names are cut to this many characters
  size_t max_findings = 8;      // findings printed with their remedies
  size_t max_rank_rows = 16;    // ranks listed one per row (lateness, HTA tables) before keeping the notable ones
  // The statistics tables (GPU time breakdown, steps, kernels, idle per
  // stream, launches, queues, copies, allocator, ranks) after the summary;
  // without it the report ends with the summary (every line within
  // kTerminalWidth columns).
  bool details = false;
  // ANSI colours for titles, the primary bottleneck and severities (the CLI
  // sets it for a terminal unless NO_COLOR is set).
  bool color = false;
};

std::string render_terminal(const AnalyzeReport& report, const TerminalOptions& options = {});

}  // namespace stepscope::report
