// An analysed run as one side of `diff` (diff/run_summary.h).
#pragma once

#include "diff/run_summary.h"
#include "pipeline/analyze_run.h"

namespace stepscope::pipeline {

inline diff::RunInput run_input_of(const AnalyzedRun& run) {
  const report::AnalyzeReport& r = run.report;
  return {&r.stores, &r.ranks, r.diagnosis ? &*r.diagnosis : nullptr};
}

}  // namespace stepscope::pipeline
