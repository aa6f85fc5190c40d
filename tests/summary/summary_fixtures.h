// Summaries of real trace files, and the analyze report they must reproduce.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pipeline/analyze_run.h"
#include "pipeline/merge_run.h"
#include "report/json_report.h"
#include "summary/summarize.h"
#include "summary/summary_file.h"
#include "trace/trace_set.h"

namespace stepscope::testing_support {

// A summary of one file, as `stepscope summarize --member-of-set` writes it,
// through the file encoding and back.
inline pipeline::NamedSummary summary_of(const std::string& file, const summary::SummarizeOptions& options = {}) {
  summary::SummarizeOptions o = options;
  o.member_of_set = true;
  summary::SummarizeResult r = summary::summarize_rank({file}, o);
  EXPECT_TRUE(r.ok) << r.error;
  summary::DecodedSummary d = summary::decode_summary(summary::encode_summary(r.summary));
  EXPECT_TRUE(d.ok) << d.error;
  return {file + summary::kSummaryExtension, std::move(d.summary)};
}

inline std::vector<pipeline::NamedSummary> summaries_of(const std::string& folder) {
  std::string error;
  std::vector<pipeline::NamedSummary> out;
  for (const std::string& f : trace::expand_inputs({folder}, error)) out.push_back(summary_of(f));
  EXPECT_TRUE(error.empty()) << error;
  return out;
}

// The report JSON less what says how it was made (the inputs as given, wall times).
inline nlohmann::ordered_json comparable(nlohmann::ordered_json j) {
  for (const char* key : {"inputs", "read_seconds", "analysis_seconds"}) j.erase(key);
  return j;
}

// `analyze` of the folder without the diagnosis (which merge does not reproduce yet).
inline nlohmann::ordered_json analyzed(const std::string& folder, unsigned threads = 0) {
  pipeline::RunOptions options;
  options.diagnose = false;
  options.threads = threads;
  options.tune_allocator = false;
  pipeline::AnalyzedRun run = pipeline::analyze_run({folder}, options);
  EXPECT_TRUE(run.ok) << run.error;
  return comparable(report::build_analyze_json(run.report));
}

inline nlohmann::ordered_json merged(std::vector<pipeline::NamedSummary> summaries) {
  pipeline::MergedRun m = pipeline::merge_summaries(std::move(summaries), {});
  EXPECT_TRUE(m.ok) << m.error;
  return comparable(report::build_analyze_json(m.report));
}

}  // namespace stepscope::testing_support
