// The JSON report written a rank at a time is byte for byte the report
// dumped whole, pretty and compact: with the diagnosis, with HTA's tables,
// with one rank, merged from summaries, and with notes that spell the
// writer's placeholder.
#include <gtest/gtest.h>

#include <string>

#include "report/json_report.h"
#include "report_fixtures.h"
#include "summary/summary_fixtures.h"
#include "synthetic/rank_writer.h"
#include "trace/trace_fixtures.h"

namespace stepscope::report {
namespace {

std::string streamed(const AnalyzeReport& r, int indent, size_t* pieces = nullptr) {
  std::string out;
  size_t n = 0;
  EXPECT_TRUE(write_analyze_json(r, indent, [&](std::string_view p) {
    out += p;
    ++n;
    return true;
  }));
  if (pieces) *pieces = n;
  return out;
}

void expect_same_bytes(const AnalyzeReport& r) {
  for (int indent : {1, 2, -1}) {
    size_t pieces = 0;
    EXPECT_EQ(streamed(r, indent, &pieces), build_analyze_json(r).dump(indent)) << "indent " << indent;
    EXPECT_GE(pieces, r.ranks.size() + 2);  // one piece per rank at least
  }
}

TEST(JsonStream, EightRanksWithDiagnosis) {
  auto r = testing_support::report_of({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler"});
  ASSERT_EQ(r->report.ranks.size(), 8u);
  ASSERT_TRUE(r->report.diagnosis.has_value());
  expect_same_bytes(r->report);
}

TEST(JsonStream, OneRankExample) {
  auto r = testing_support::report_of({testing_support::example_trace("eager_bf16_baseline")});
  expect_same_bytes(r->report);
}

TEST(JsonStream, NotesThatSpellThePlaceholder) {
  auto r = testing_support::report_of({testing_support::example_trace("eager_bf16_baseline")});
  r->report.notes.push_back("\"ranks\": \"\x01ranks\x01\"");
  r->report.warnings.push_back("\"ranks\":\"\\u0001ranks\\u0001\"");
  expect_same_bytes(r->report);
}

TEST(JsonStream, HtaTablesPerRank) {
  pipeline::RunOptions o;
  o.compat = "hta";
  pipeline::AnalyzedRun run =
      pipeline::analyze_run({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/healthy"}, o);
  ASSERT_TRUE(run.ok) << run.error;
  ASSERT_TRUE(run.report.hta.has_value());
  expect_same_bytes(run.report);
}

TEST(JsonStream, MergedFromSummaries) {
  testing::TempDir traces;
  synth::SyntheticSpec spec;
  spec.ranks = 3;
  spec.layers = 2;
  spec.steps = 3;
  for (int r = 0; r < spec.ranks; ++r)
    ASSERT_TRUE(synth::write_rank(spec, r, spec.steps, traces.path().string()).error.empty());
  pipeline::MergedRun m = pipeline::merge_summaries(stepscope::testing_support::summaries_of(traces.path().string()), {});
  ASSERT_TRUE(m.ok) << m.error;
  ASSERT_TRUE(m.report.diagnosis.has_value());
  ASSERT_FALSE(m.report.diagnosis->critical_path.front().steps.empty());
  expect_same_bytes(m.report);
}

TEST(JsonStream, NoRanks) {
  AnalyzeReport empty;
  expect_same_bytes(empty);
}

TEST(JsonStream, ARefusedPieceStopsTheWriting) {
  auto r = testing_support::report_of({stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler"});
  size_t calls = 0;
  EXPECT_FALSE(write_analyze_json(r->report, 1, [&](std::string_view) { return ++calls < 3; }));
  EXPECT_EQ(calls, 3u);
}

}  // namespace
}  // namespace stepscope::report
