// Summaries of real trace files, and the analyze report they must reproduce.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pipeline/analyze_run.h"
#include "pipeline/merge_diagnosis.h"
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

// `analyze` of the folder (with the diagnosis unless told not to).
inline nlohmann::ordered_json analyzed(const std::string& folder, unsigned threads = 0, bool diagnose = true) {
  pipeline::RunOptions options;
  options.diagnose = diagnose;
  options.threads = threads;
  options.tune_allocator = false;
  pipeline::AnalyzedRun run = pipeline::analyze_run({folder}, options);
  EXPECT_TRUE(run.ok) << run.error;
  return comparable(report::build_analyze_json(run.report));
}

// The fields of a load_imbalance finding that its replay sets in analyze
// (the merge keeps the detector's bound).
inline constexpr const char* kReplayFields[] = {"estimated_saving_us", "estimated_saving_pct", "saving_rank", "saving_basis",
                                         "severity"};

// The report less the detectors' run times and what the merge says it does
// not make from summaries (merge_diagnosis.h): `merged` must say it.
inline nlohmann::ordered_json comparable_diagnosis(nlohmann::ordered_json j, bool merged) {
  for (nlohmann::ordered_json& r : j["ranks"])
    if (r.contains("replay")) r["replay"].erase("combined_saving_us");
  j.erase("job_replay");
  j.erase("job_critical_path");
  nlohmann::ordered_json& d = j["diagnosis"];
  for (const char* k : {"combined_saving_us", "combined_saving_pct", "combined_saving_rank"}) d.erase(k);
  for (nlohmann::ordered_json& r : d["detectors"]) r.erase("seconds");
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  size_t left_out = 0;
  for (nlohmann::ordered_json& n : d["not_assessed"]) {
    if (n["reason"].get<std::string>().starts_with(pipeline::kNotFromSummaries))
      ++left_out;
    else
      notes.push_back(n);
  }
  if (merged) {
    EXPECT_GE(left_out, 1u) << "the merge must say what it leaves out";
  }
  d["not_assessed"] = notes;
  // load_imbalance's finding less its replay, apart: with the bound for its
  // saving in the merge, its place in the ranking may differ; the rest
  // keep their order.
  nlohmann::ordered_json imbalance = nlohmann::ordered_json::array();
  for (const char* list : {"findings", "minor_findings"}) {
    nlohmann::ordered_json rest = nlohmann::ordered_json::array();
    for (nlohmann::ordered_json& f : d[list]) {
      if (f["detector"] != "load_imbalance") {
        rest.push_back(f);
        continue;
      }
      for (const char* k : kReplayFields) f.erase(k);
      imbalance.push_back(f);
    }
    d[list] = rest;
  }
  d["load_imbalance"] = imbalance;
  return j;
}

inline nlohmann::ordered_json merged(std::vector<pipeline::NamedSummary> summaries) {
  pipeline::MergedRun m = pipeline::merge_summaries(std::move(summaries), {});
  EXPECT_TRUE(m.ok) << m.error;
  return comparable(report::build_analyze_json(m.report));
}

}  // namespace stepscope::testing_support
