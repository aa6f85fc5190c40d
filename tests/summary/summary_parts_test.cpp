// A rank's summary carries every detector's part of that rank (diagnose/
// rank_parts.h): the parts `analyze` collects for the rank in its set, with
// each remedy replayed on the rank, as one encoded CBOR item; a part that
// does not load is a one-line error naming the detector, and loading
// renumbers the parts with the rank the merge gives it.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "analysis/multi_rank.h"
#include "diagnose/detector_registry.h"
#include "diagnose/rank_parts.h"
#include "summary/summary_fixtures.h"
#include "summary/summary_json.h"
#include "test_paths.h"

namespace stepscope::summary {
namespace {

// Every rank of a set summarized apart (told the set's size) carries the
// parts analyze collects for that rank with every remedy replayed as
// collected: here, on the 8-rank DDP-over-gloo run with a straggler (its
// traces record their world size) and PARAM's 8-rank DLRM trace.
void expect_parts_as_analyze_collects(const std::string& folder, bool with_savings) {
  trace::LoadResult loaded = trace::load_traces({folder}, trace::ReadOptions{});
  ASSERT_TRUE(loaded.ok) << loaded.error;
  const size_t n = loaded.set.ranks.size();
  diagnose::DiagnoseOptions options;
  options.replay_as_collected = true;
  SummarizeOptions so;
  so.ranks_in_set = n;
  size_t with_findings = 0;
  const std::vector<diagnose::Detector> detectors = diagnose::default_detectors();
  for (const auto& store : loaded.set.ranks) {
    const analysis::RankAnalysis a = analysis::analyze_rank(*store, options.analysis);
    const nlohmann::json want = diagnose::collect_rank_parts(*store, a, options, n).parts;
    const pipeline::NamedSummary got = testing_support::summary_of(store->source_path, so);
    EXPECT_EQ(got.summary.ranks_in_set, n);
    // Summarized alone, the rank is numbered as if alone; the merge
    // renumbers its parts with the rank the set gives it.
    const auto parts = diagnose::load_rank_parts(diagnosis_parts(got.summary), detectors, store->rank);
    nlohmann::json renumbered = nlohmann::json::object();
    for (size_t d = 0; d < detectors.size(); ++d)
      if (parts[d]) renumbered[detectors[d].name] = parts[d]->save();
    EXPECT_EQ(renumbered, want) << store->source_path;
    EXPECT_EQ(renumbered.size(), detectors.size());
    for (const auto& [name, part] : want.items())
      if (part.contains("saving") && part["saving"].value("valid", false) && part["saving"].value("us", 0.0) > 0)
        ++with_findings;
  }
  if (with_savings) EXPECT_GT(with_findings, 0u) << "no rank's part had a saving: the comparison shows little";
}

TEST(SummaryParts, AreThePartsAnalyzeCollectsForTheRank) {
  // Its cause is a straggler (load_imbalance's steps, no per-rank saving).
  expect_parts_as_analyze_collects(testing::test_data_dir() + "/dist_gloo_cpu/straggler", false);
}

TEST(SummaryParts, AreThePartsAnalyzeCollectsOnParamsDlrm) {
  const std::string folder = testing::shared_dir() + "/conformance/param/dlrm_8rank";
  if (!std::filesystem::exists(folder)) GTEST_SKIP() << folder << " is not here";
  expect_parts_as_analyze_collects(folder, true);
}

TEST(SummaryParts, LoadRenumbersAndBadPartsAreRefusedByDetector) {
  const pipeline::NamedSummary s = testing_support::summary_of(testing::test_data_dir() +
                                                               "/dist_gloo_cpu/straggler/rank3.json.gz");
  const std::vector<diagnose::Detector> detectors = diagnose::default_detectors();
  // Renumbered: every rank the parts name is the new one.
  const auto parts = diagnose::load_rank_parts(diagnosis_parts(s.summary), detectors, 11);
  ASSERT_EQ(parts.size(), detectors.size());
  for (size_t d = 0; d < parts.size(); ++d) {
    ASSERT_TRUE(parts[d]) << detectors[d].name;
    const nlohmann::json form = parts[d]->save();
    if (form.contains("saving") && form["saving"].value("valid", false))
      EXPECT_EQ(form["saving"]["rank"], 11) << detectors[d].name;
  }
  // A part that does not load is named by its detector.
  auto message = [&](const nlohmann::json& forms) -> std::string {
    try {
      (void)diagnose::load_rank_parts(forms, detectors, 0);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "accepted";
  };
  const nlohmann::json good = diagnosis_parts(s.summary);
  nlohmann::json bad = good;
  bad["communication"]["kernels"] = "many";
  EXPECT_EQ(message(bad).rfind("diagnosis part of communication: ", 0), 0u) << message(bad);
  bad = good;
  bad["made_up"] = nlohmann::json::object();
  EXPECT_EQ(message(bad), "diagnosis part of an unknown detector 'made_up'");
  EXPECT_EQ(message(nlohmann::json::array()), "diagnosis parts: not an object");
  // The parts are one encoded CBOR item in the summary, parsed with the
  // body's limits when they are used.
  RankSummary deep = s.summary;
  deep.diagnosis.assign(100, 0x81);
  deep.diagnosis.push_back(0x00);
  try {
    (void)diagnosis_parts(deep);
    ADD_FAILURE() << "parts nested 100 deep were parsed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "diagnosis parts: nested more than 32 levels deep");
  }
  // A summary without a rank carries none.
  nlohmann::json body = summary_to_json(s.summary);
  body["kind"] = 1;
  body["notes"] = {"skipped x"};
  try {
    (void)summary_from_json(body);
    ADD_FAILURE() << "a skipped file's summary with parts was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a summary without a rank carries diagnosis parts");
  }
  body = summary_to_json(s.summary);
  body["diagnosis"] = good;  // the tree itself, not its encoding
  try {
    (void)summary_from_json(body);
    ADD_FAILURE() << "parts not in a byte string were accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "diagnosis: not a byte string");
  }
}

TEST(SummaryParts, SummariesOfOtherDiagnosisOptionsDoNotMerge) {
  SummarizeOptions other;
  other.diagnosis.tiny_kernel_us = 20;
  const std::string dir = testing::test_data_dir() + "/dist_gloo_cpu/straggler/";
  EXPECT_NE(settings_key(testing_support::summary_of(dir + "rank0.json.gz").summary.settings),
            settings_key(testing_support::summary_of(dir + "rank1.json.gz", other).summary.settings));
  EXPECT_EQ(settings_key(testing_support::summary_of(dir + "rank0.json.gz").summary.settings),
            settings_key(testing_support::summary_of(dir + "rank1.json.gz").summary.settings));
}

}  // namespace
}  // namespace stepscope::summary
