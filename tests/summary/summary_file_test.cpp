// The summary file: what goes in comes back field for field, and a damaged,
// truncated, foreign or newer file is a one-line error, never a summary.
#include <gtest/gtest.h>

#include <cmath>

#include "summary/summary_fixtures.h"
#include "summary/summary_json.h"
#include "test_paths.h"

namespace stepscope::summary {
namespace {

std::string trace_file() { return testing::test_data_dir() + "/dist_gloo_cpu/straggler/rank3.json.gz"; }

RankSummary summarized() {
  SummarizeResult r = summarize_rank({trace_file()}, {});
  EXPECT_TRUE(r.ok) << r.error;
  return r.summary;
}

TEST(SummaryFile, RoundTripKeepsEveryField) {
  const RankSummary s = summarized();
  EXPECT_EQ(s.kind, SummaryKind::kRank);
  EXPECT_EQ(s.declared_rank, 3);
  EXPECT_EQ(s.analysis.rank, 3);
  ASSERT_TRUE(s.process.has_value());
  EXPECT_GT(s.analysis.collectives.calls.size(), 0u);
  const DecodedSummary d = decode_summary(encode_summary(s));
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(summary_to_json(d.summary), summary_to_json(s));
  // The rendered rank section is the same too (fields the JSON form would miss would show here).
  report::AnalyzeReport a, b;
  a.ranks.push_back(s.analysis);
  b.ranks.push_back(d.summary.analysis);
  EXPECT_EQ(report::build_analyze_json(a), report::build_analyze_json(b));
}

TEST(SummaryFile, IsAFractionOfTheTrace) {
  const RankSummary s = summarized();
  const std::string bytes = encode_summary(s);
  EXPECT_LT(bytes.size() * 100, s.uncompressed_bytes) << bytes.size() << " B for " << s.uncompressed_bytes << " B of JSON";
}

TEST(SummaryFile, ForeignBytesAreRefused) {
  EXPECT_EQ(decode_summary("").error, "not a stepscope summary (no STPSCSUM header)");
  EXPECT_EQ(decode_summary("{\"traceEvents\": []}").error, "not a stepscope summary (no STPSCSUM header)");
  EXPECT_EQ(decode_summary(std::string(kSummaryMagic, 8) + "abc").error, "truncated summary header");
}

TEST(SummaryFile, TruncatedAndDamagedBodiesAreRefused) {
  const std::string good = encode_summary(summarized());
  const DecodedSummary cut = decode_summary(good.substr(0, good.size() - 10));
  EXPECT_FALSE(cut.ok);
  EXPECT_NE(cut.error.find("(truncated)"), std::string::npos) << cut.error;
  std::string flipped = good;
  flipped[kSummaryHeaderBytes + flipped.size() / 3] ^= 0x40;
  EXPECT_EQ(decode_summary(flipped).error, "summary checksum mismatch (the file is damaged)");
  const DecodedSummary longer = decode_summary(good + "x");
  EXPECT_FALSE(longer.ok);
  EXPECT_NE(longer.error.find("the header says"), std::string::npos) << longer.error;
}

TEST(SummaryFile, AnotherFormatVersionIsRefusedByName) {
  std::string newer = encode_summary(summarized());
  newer[8] = static_cast<char>(kSummaryFormatVersion + 1);
  const DecodedSummary d = decode_summary(newer);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error.rfind("summary format version 4; this stepscope reads version 3", 0), 0u) << d.error;
}

TEST(SummaryFile, InflationBombIsRefusedBeforeAllocating) {
  std::string bomb = encode_summary(summarized());
  for (int i = 16; i < 24; ++i) bomb[i] = static_cast<char>(0xff);  // the inflated size: 2^64 - 1
  const DecodedSummary d = decode_summary(bomb);
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.error.find("(damaged)"), std::string::npos) << d.error;
}

TEST(SummaryFile, OutOfRangeValuesAreRefusedByField) {
  const nlohmann::json good = summary_to_json(summarized());
  nlohmann::json bad = good;
  bad["analysis"]["kernels"]["classes"][0]["cls"] = 9;
  EXPECT_THROW(
      {
        try {
          summary_from_json(bad);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "kernel class 9 out of range");
          throw;
        }
      },
      std::runtime_error);
  bad = good;
  bad["kind"] = 3;
  EXPECT_THROW(summary_from_json(bad), std::runtime_error);
  bad = good;
  bad["analysis"].erase("steps");
  try {
    summary_from_json(bad);
    ADD_FAILURE() << "a summary without steps was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'steps'"), std::string::npos) << e.what();
  }
  // An import log longer than its counter: the counts would lie.
  bad = good;
  bad["analysis"]["origin"]["import"]["log"] = {{{"counter", 0}, {"byte_offset", 1}, {"message", "x"}}};
  bad["analysis"]["origin"]["import"]["counts"][0] = 0;
  EXPECT_THROW(summary_from_json(bad), std::runtime_error);
}

// What the diagnosis reports of the rank (format 3): arrays of another length,
// an enum out of range or a missing field are refused by name.
TEST(SummaryFile, RankDiagnosisFieldsAreRefusedByField) {
  const nlohmann::json good = summary_to_json(summarized());
  auto error_of = [](const nlohmann::json& bad) -> std::string {
    try {
      summary_from_json(bad);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "accepted";
  };
  nlohmann::json bad = good;
  bad["rank_diagnosis"]["attribution"]["total"]["ns"].erase(0);
  EXPECT_EQ(error_of(bad), "attribution buckets: expected an array of 10 integers");
  bad = good;
  bad["rank_diagnosis"]["replay"]["edges"].push_back(1);
  EXPECT_EQ(error_of(bad), "replay edges: expected an array of 6 integers");
  bad = good;
  bad["rank_diagnosis"]["critical_path"]["total_ns"] = "x";
  EXPECT_EQ(error_of(bad), "critical path categories: expected an array of 10 integers");
  bad = good;
  bad["rank_diagnosis"]["critical_path"]["steps"] = {{{"step", 1}, {"start_ns", 0}, {"end_ns", 1},
                                                      {"by_category_ns", good["rank_diagnosis"]["critical_path"]["total_ns"]},
                                                      {"top", {{{"kind", "kernel"}, {"category", 10}, {"name", "k"},
                                                                {"start_ns", 0}, {"dur_ns", 1}}}}}};
  EXPECT_EQ(error_of(bad), "path category 10 out of range");
  bad = good;
  bad["rank_diagnosis"]["replay"].erase("unprofiled");
  EXPECT_NE(error_of(bad).find("'unprofiled'"), std::string::npos) << error_of(bad);
  bad = good;
  bad.erase("rank_diagnosis");
  EXPECT_NE(error_of(bad).find("'rank_diagnosis'"), std::string::npos) << error_of(bad);
  bad = good;
  bad["rank_diagnosis"]["hardware"] = 7;
  EXPECT_NE(error_of(bad), "accepted");
}

TEST(SummaryFile, InvalidUtf8IsRefused) {
  // Found by fuzz_summary: CBOR text that is not UTF-8 decoded fine, then
  // threw when the JSON report was written.
  RankSummary s = summarized();
  s.analysis.source_path = "rank\xa2.json";
  const DecodedSummary d = decode_summary(encode_summary(s));
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error, "bad summary body: text that is not UTF-8 (\"rank\xef\xbf\xbd.json\")");
}

TEST(SummaryFile, TheMessageStaysOneLine) {
  // Found by fuzz_summary: the offending text, quoted in the message, held a newline.
  RankSummary s = summarized();
  s.analysis.source_path = std::string("a\nb\xa2") + std::string(100, 'x');
  const DecodedSummary d = decode_summary(encode_summary(s));
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error.find('\n'), std::string::npos) << d.error;
  EXPECT_EQ(d.error.rfind("bad summary body: text that is not UTF-8 (\"a\\x0ab\xef\xbf\xbd", 0), 0u) << d.error;
  EXPECT_NE(d.error.find("x...\")"), std::string::npos) << d.error;
}

TEST(SummaryFile, AFloatWhereAnIntegerBelongsIsRefused) {
  // Found by fuzz_summary (2026-12-06): a NaN among the import counts was
  // cast to an integer, undefined behaviour; so was any float out of range.
  for (const double bad : {std::nan(""), 1e300, 2.5}) {
    nlohmann::json body = summary_to_json(summarized());
    body["analysis"]["origin"]["import"]["counts"][0] = bad;
    const DecodedSummary d = decode_summary(wrap_summary_body(nlohmann::json::to_cbor(body)));
    EXPECT_FALSE(d.ok) << bad;
    EXPECT_EQ(d.error, "bad summary body: a float where an integer is expected") << bad;
  }
}

TEST(SummaryFile, DeepNestingIsRefusedNotRecursedInto) {
  // Found by fuzz_summary: 100,000 nested one-element arrays overflowed the
  // stack of the CBOR parser, which recurses once per level.
  std::vector<uint8_t> body(100'000, 0x81);
  body.push_back(0x00);
  const DecodedSummary d = decode_summary(wrap_summary_body(body));
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error, "bad summary body: nested more than 32 levels deep");
}

TEST(SummaryFile, ReadNamesTheFile) {
  const DecodedSummary d = read_summary_file(trace_file());
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error, trace_file() + ": not a stepscope summary (no STPSCSUM header)");
  EXPECT_EQ(read_summary_file("/nonexistent/x.stepscope-summary").error, "/nonexistent/x.stepscope-summary: cannot open");
}

TEST(Summarize, MemberOfSetCarriesAnalyzesNoteAndWarning) {
  SummarizeOptions o;
  o.member_of_set = true;
  const std::string meta = testing::test_data_dir() + "/dist_gloo_cpu/straggler/meta.json";
  SummarizeResult r = summarize_rank({meta}, o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.summary.kind, SummaryKind::kSkipped);
  ASSERT_EQ(r.summary.notes.size(), 1u);
  EXPECT_EQ(r.summary.notes[0].rfind("skipped " + meta + ": valid JSON but not a trace", 0), 0u) << r.summary.notes[0];
  // Alone, the same file is an error, as for analyze.
  EXPECT_FALSE(summarize_rank({meta}, {}).ok);
}

TEST(Summarize, DisplayPathNamesTheFileEverywhere) {
  // A worker that copied s3://bucket/run/rank5.json.gz to a scratch file names the URL.
  SummarizeOptions o;
  o.member_of_set = true;
  o.display_path = "s3://bucket/run/worker5.json.gz";
  SummarizeResult r = summarize_rank({trace_file()}, o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.summary.files, std::vector<std::string>{o.display_path});
  EXPECT_EQ(r.summary.analysis.source_path, o.display_path);
  EXPECT_EQ(r.summary.file_name_rank, 5);   // from the name the user knows, not the scratch file's
  EXPECT_EQ(r.summary.declared_rank, 3);    // distributedInfo still decides first
  EXPECT_EQ(r.summary.analysis.rank, 3);
}

TEST(Summarize, SeveralRanksAreRefused) {
  SummarizeResult r = summarize_rank({testing::test_data_dir() + "/dist_gloo_cpu/straggler"}, {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("hold 8 ranks: a summary is of one rank"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace stepscope::summary
