// The diagnosis of a set from its ranks' summaries: the steps of
// diagnose::diagnose (diagnose/diagnose.h) on what each summary carries
// instead of the store: the detectors' parts, loaded, renumbered and merged
// in rank order, then finished, validated and ranked; each rank's
// attribution, replay, critical path and hardware row as summarized.
// What needs every rank's replay graph at once is not made, and the report
// says so (docs/distributed.md, "What the merge gives today"): the combined
// saving of the reported findings, load_imbalance's replay saving (its
// bound is kept), the job replay and job critical path.
#pragma once

#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "pipeline/merge_run.h"
#include "report/analyze_report.h"

namespace stepscope::pipeline {

struct MergedDiagnosis {
  std::string error;       // one line naming the summary (a part that does not load, missing or extra)
  std::string error_file;
  diagnose::Diagnosis diagnosis;
};

// `ranks`: the rank summaries in rank order, parallel to `analyses` (their
// analyses, numbered); `settings` the set's (one for all).
MergedDiagnosis merge_diagnosis(const std::vector<NamedSummary*>& ranks,
                                const std::vector<analysis::RankAnalysis>& analyses,
                                const analysis::MultiRankAnalysis& multi, const summary::SummarySettings& settings);

// What the merge leaves out, said in the report (reason of its not-assessed notes).
inline constexpr const char* kNotFromSummaries = "not made from summaries";

}  // namespace stepscope::pipeline
