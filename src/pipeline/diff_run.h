// The orchestrator of `stepscope diff` (and stepscope.diff in Python): both
// runs through analyze_run, their diff, and the --fail-if gate.
#pragma once

#include <string>
#include <vector>

#include "diff/regression_gate.h"
#include "diff/run_diff.h"
#include "pipeline/analyze_run.h"
#include "report/diff_report.h"

namespace stepscope::pipeline {

struct DiffedRuns {
  bool ok = false;
  std::string error;        // one line, "before: ..." or "after: ..." (or the bad condition), when !ok
  std::string error_file;
  int64_t error_byte = -1;
  bool bad_option = false;  // a bad --fail-if condition or option, not a trace
  AnalyzedRun before;       // own the stores the diff read
  AnalyzedRun after;
  report::DiffReport report;  // report.gate is set when conditions were given
};

// `run` is used for both sides (its allocator tuning once, for both).
DiffedRuns diff_run(const std::vector<std::string>& before, const std::vector<std::string>& after, RunOptions run,
                    const diff::DiffOptions& options, const std::vector<std::string>& fail_if);

}  // namespace stepscope::pipeline
