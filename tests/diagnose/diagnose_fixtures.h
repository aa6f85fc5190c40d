// Helpers for diagnosis tests: run the whole pipeline (read, analyse,
// diagnose) on a real trace folder or on a tiny inline trace, and look
// findings up by category.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis_fixtures.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_analysis.h"
#include "diagnose/diagnose.h"
#include "test_paths.h"
#include "trace/trace_set.h"

namespace stepscope::diagnose::testing_support {

struct Diagnosed {
  std::vector<std::unique_ptr<trace::EventStore>> stores;
  std::vector<analysis::RankAnalysis> ranks;
  analysis::MultiRankAnalysis multi;
  Diagnosis d;
};

inline void run_pipeline(Diagnosed& out, const DiagnoseOptions& options) {
  std::vector<const trace::EventStore*> ptrs;
  for (const auto& s : out.stores) ptrs.push_back(s.get());
  for (const auto* s : ptrs) out.ranks.push_back(analysis::analyze_rank(*s, options.analysis));
  if (out.ranks.size() >= 2) {
    std::vector<const analysis::RankAnalysis*> rp;
    for (const auto& r : out.ranks) rp.push_back(&r);
    out.multi = analysis::analyze_ranks(rp, options.analysis);
  }
  out.d = diagnose(ptrs, out.ranks, out.multi, options);
}

// Every rank file in `folder`, diagnosed.
inline std::unique_ptr<Diagnosed> diagnose_folder(const std::string& folder, const DiagnoseOptions& options = {}) {
  auto out = std::make_unique<Diagnosed>();
  trace::LoadResult r = trace::load_traces({folder}, trace::ReadOptions{});
  EXPECT_TRUE(r.ok) << folder << ": " << r.error;
  for (auto& s : r.set.ranks) out->stores.push_back(std::move(s));
  run_pipeline(*out, options);
  return out;
}

// A one-rank inline trace (events as analysis_fixtures.h writes them).
inline std::unique_ptr<Diagnosed> diagnose_inline(const std::vector<std::string>& events, const std::string& header = "",
                                                  const DiagnoseOptions& options = {}) {
  auto out = std::make_unique<Diagnosed>();
  out->stores.push_back(analysis::testing_support::load_inline(events, header));
  run_pipeline(*out, options);
  return out;
}

inline std::string examples_dir() { return stepscope::testing::source_dir() + "/examples"; }
inline std::string shared_h200_dir() { return stepscope::testing::shared_dir() + "/traces/h200"; }

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The finding of a category among the reported ones, or nullptr.
inline const Finding* reported(const Diagnosis& d, Category c) {
  for (const auto& f : d.findings)
    if (f.category == c) return &f;
  return nullptr;
}

// The finding of a category, reported or minor, or nullptr.
inline const Finding* any_finding(const Diagnosis& d, Category c) {
  if (const Finding* f = reported(d, c)) return f;
  for (const auto& f : d.minor)
    if (f.category == c) return &f;
  return nullptr;
}

inline std::optional<double> metric(const Finding& f, const std::string& name) {
  for (const auto& m : f.evidence.metrics)
    if (m.name == name) return m.value;
  return std::nullopt;
}

// The first three distinct categories of the reported findings, in rank order.
inline std::vector<std::string> top3_categories(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const auto& f : d.findings) {
    std::string c(to_string(f.category));
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    if (out.size() == 3) break;
  }
  return out;
}

inline bool has_note(const Diagnosis& d, const std::string& detector, const std::string& what_part) {
  for (const auto& n : d.not_assessed)
    if (n.detector == detector && n.what.find(what_part) != std::string::npos) return true;
  return false;
}

}  // namespace stepscope::diagnose::testing_support
