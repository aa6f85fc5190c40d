// The five-line summary under the findings of the default terminal report:
// the step with and without the profiler, the one GPU idle figure, the
// kernels, memory and ranks. The statistics tables behind each line are
// printed with --details.
#pragma once

#include <string>

#include "report/analyze_report.h"

namespace stepscope::report {

// The rank the single-rank lines describe: the only one, or the one with the
// longest GPU span (the slowest), as in the detail tables.
const analysis::RankAnalysis& focus_rank(const AnalyzeReport& report);

std::string render_terminal_summary(const AnalyzeReport& report);

}  // namespace stepscope::report
