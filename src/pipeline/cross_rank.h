// The cross-rank half of an analysis, shared by `analyze` (ranks analysed
// from the stores it read) and `merge` (ranks from summaries): the salvage
// check, the check that the ranks are of one job, and the multi-rank
// analysis, with their warnings in the order `analyze` reports them. The
// same code on the same RankAnalysis values gives the same report.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "report/analyze_report.h"

namespace stepscope::pipeline {

struct CrossRankResult {
  std::string error;       // one line naming the file (a salvaged rank with no whole step)
  std::string error_file;
};

// `report.ranks` holds the ranks in rank order; `set_warnings` the trace
// set's warnings so far. Fills report.multi and report.warnings.
CrossRankResult finish_cross_rank(report::AnalyzeReport& report, std::vector<std::string> set_warnings,
                                  const analysis::AnalysisOptions& options);

}  // namespace stepscope::pipeline
