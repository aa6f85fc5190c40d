// `stepscope merge`: the report of a trace set from its ranks' summaries
// (summary/), made by the same cross-rank code as `analyze` over the same
// per-rank values, so the two reports are equal (tests/cli/merge_test.cpp).
// Refused, with an error naming the files: summaries of another format
// version, damaged or foreign files, summaries made with different settings,
// one trace file in two summaries, two summaries of one process.
#pragma once

#include <string>
#include <vector>

#include "report/analyze_report.h"
#include "summary/rank_summary.h"

namespace stepscope::pipeline {

struct NamedSummary {
  std::string name;  // the summary file (for messages)
  summary::RankSummary summary;
};

struct MergedRun {
  bool ok = false;
  std::string error;       // one line naming the file(s)
  std::string error_file;  // the file the error is about, when one is
  summary::SummarySettings settings;  // what every summary was made with
  // With the diagnosis merged from the ranks' parts (merge_diagnosis.h: what
  // needs every rank's replay graph is left out, and the report says so).
  report::AnalyzeReport report;
};

// `inputs` in any order; `names` of the report's "inputs" (the summary files as given).
MergedRun merge_summaries(std::vector<NamedSummary> summaries, std::vector<std::string> inputs);

// Reads and decodes the files, `threads` at a time (0 = hardware threads), then merges.
MergedRun merge_summary_files(const std::vector<std::string>& paths, unsigned threads = 0);

}  // namespace stepscope::pipeline
